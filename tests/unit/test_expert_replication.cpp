// In-switch replication of hot experts (expert_replication.hpp): the fixed groups, the greedy
// scheduler's promises (max load never rises, slots and budget respected, most of a skewed
// layer's excess removed, deterministic) and the re-routing of tokens over expert copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nvsvp/fw/expert_replication.hpp"
#include "nvsvp/platform/routing_generator.hpp"
#include "../common/test_workloads.hpp"

namespace nvsvp::fw {
namespace {

constexpr double kNoBudget = std::numeric_limits<double>::infinity();

template <class F>
void expect_invalid(F&& call, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "no std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    for (const std::string& word : words) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos)
          << "message \"" << e.what() << "\" does not name " << word;
    }
  }
}

// A zipf-routed layer (exponent 0.6: the per-expert skew of real traces,
// docs/background/hot_expert_replication.md#sizes-and-skew).
MoeRouting zipf_routing(uint32_t gpus, uint32_t experts, uint32_t top_k, uint32_t tokens_per_gpu, uint64_t seed) {
  platform::WorkloadSpec w = test::generated_workload(experts, top_k, tokens_per_gpu, "zipf", seed);
  w.routing.exponent = 0.6;
  return platform::generate_routing(w, gpus);
}

std::vector<double> expert_loads(const MoeRouting& routing) {
  std::vector<double> loads(routing.experts, 0.0);
  for (uint16_t expert : routing.expert_ids) loads[expert] += 1.0;
  return loads;
}

ReplicationInput layer_input(const MoeRouting& routing, std::vector<uint32_t> group_sizes, uint32_t slots) {
  ReplicationInput input;
  input.gpus = routing.gpus;
  input.experts = routing.experts;
  input.expert_loads = expert_loads(routing);
  input.groups = make_fixed_groups(routing.gpus, group_sizes);
  input.slots_per_gpu = slots;
  return input;
}

// 32 GPUs, 256 experts, top-8, zipf 0.6: the skewed layer of the scheduler tests.
ReplicationInput skewed_layer(uint64_t seed, uint32_t slots) {
  return layer_input(zipf_routing(32, 256, 8, 256, seed), {2, 4, 8, 32}, slots);
}

double max_of(const std::vector<double>& loads) { return *std::max_element(loads.begin(), loads.end()); }

double removed_fraction(const ReplicationSchedule& schedule) {
  return 1.0 - excess_load(schedule.load_after) / excess_load(schedule.load_before);
}

// What every schedule must satisfy, whatever the input: placements well formed, slots used once
// per GPU and the same on every replica GPU, load conserved and moved only by placements, the max
// load not raised, the broadcast estimate as defined and within the budget.
void expect_valid_schedule(const ReplicationInput& input, const ReplicationSchedule& schedule) {
  const uint32_t per_gpu = input.experts / input.gpus;
  ASSERT_EQ(schedule.load_before.size(), input.gpus);
  ASSERT_EQ(schedule.load_after.size(), input.gpus);
  std::set<uint32_t> experts;
  std::set<std::pair<uint32_t, uint32_t>> gpu_slots;
  std::vector<bool> touched(input.gpus, false);
  std::vector<double> busy_ns(input.gpus, 0.0);
  for (const ReplicaPlacement& r : schedule.replicas) {
    EXPECT_TRUE(experts.insert(r.expert).second) << "expert " << r.expert << " placed twice";
    EXPECT_EQ(r.owner, r.expert / per_gpu) << "expert " << r.expert;
    ASSERT_LT(r.group, input.groups.size());
    const FixedGroup& group = input.groups[r.group];
    std::vector<uint32_t> members;
    for (uint32_t gpu = group.first_gpu; gpu < group.first_gpu + group.size; ++gpu) {
      if (gpu != r.owner) members.push_back(gpu);
    }
    EXPECT_EQ(r.replica_gpus, members) << "expert " << r.expert << ": the group's members other than the owner";
    EXPECT_FALSE(r.replica_gpus.empty());
    EXPECT_LT(r.slot, input.slots_per_gpu);
    for (uint32_t gpu : r.replica_gpus) {
      EXPECT_TRUE(gpu_slots.insert({gpu, r.slot}).second) << "slot " << r.slot << " on GPU " << gpu << " used twice";
      touched[gpu] = true;
    }
    // A multicast writes the owner's slot too when the owner is in the group.
    if (input.owner_slot_in_group && group.contains(r.owner)) {
      EXPECT_TRUE(gpu_slots.insert({r.owner, r.slot}).second)
          << "slot " << r.slot << " on GPU " << r.owner << " (the owner of expert " << r.expert << ") used twice";
    }
    touched[r.owner] = true;
    // A kept replica is one of the input's resident ones, in its group and slot, and costs nothing.
    if (r.resident) {
      const bool was_resident = std::any_of(input.resident.begin(), input.resident.end(), [&](const ReplicaPlacement& k) {
        return k.expert == r.expert && k.group == r.group && k.slot == r.slot;
      });
      EXPECT_TRUE(was_resident) << "expert " << r.expert << " kept, but it was not resident there";
    }
    const double cost = r.resident || !input.broadcast_ns ? 0.0 : input.broadcast_ns(r.owner, group);
    busy_ns[r.owner] += cost;
    for (uint32_t gpu : r.replica_gpus) busy_ns[gpu] += cost;
  }
  for (uint32_t gpu = 0; gpu < input.gpus; ++gpu) {
    EXPECT_LE(static_cast<uint32_t>(std::count_if(gpu_slots.begin(), gpu_slots.end(),
                                                  [&](const auto& used) { return used.first == gpu; })),
              input.slots_per_gpu)
        << "GPU " << gpu;
    if (!touched[gpu]) {
      EXPECT_EQ(schedule.load_after[gpu], schedule.load_before[gpu]) << "GPU " << gpu;
    }
  }
  const double total = std::accumulate(input.expert_loads.begin(), input.expert_loads.end(), 0.0);
  EXPECT_NEAR(std::accumulate(schedule.load_before.begin(), schedule.load_before.end(), 0.0), total, 1e-6 * total);
  EXPECT_NEAR(std::accumulate(schedule.load_after.begin(), schedule.load_after.end(), 0.0), total, 1e-6 * total);
  EXPECT_LE(max_of(schedule.load_after), max_of(schedule.load_before));
  EXPECT_DOUBLE_EQ(schedule.estimated_broadcast_ns, max_of(busy_ns));
  EXPECT_LE(schedule.estimated_broadcast_ns, input.time_budget_ns);
  const std::set<std::string> reasons = {"replica slots ran out", "broadcast budget reached",
                                         "no common free replica slot", "no choice lowers the max load"};
  EXPECT_EQ(reasons.count(schedule.stop_reason), 1u) << schedule.stop_reason;
}

TEST(ExpertReplication, NamesRoundTrip) {
  for (ReplicationPolicy policy : {ReplicationPolicy::none, ReplicationPolicy::fixed, ReplicationPolicy::iser}) {
    ReplicationPolicy parsed = ReplicationPolicy::none;
    ASSERT_TRUE(parse_replication_policy(to_string(policy), parsed)) << to_string(policy);
    EXPECT_EQ(parsed, policy);
  }
  EXPECT_STREQ(to_string(ReplicationPolicy::fixed), "static");
  for (BroadcastMethod method :
       {BroadcastMethod::p2p, BroadcastMethod::multicast, BroadcastMethod::multiport, BroadcastMethod::ring}) {
    BroadcastMethod parsed = BroadcastMethod::p2p;
    ASSERT_TRUE(parse_broadcast_method(to_string(method), parsed)) << to_string(method);
    EXPECT_EQ(parsed, method);
  }
  ReplicationPolicy policy = ReplicationPolicy::iser;
  EXPECT_FALSE(parse_replication_policy("fixed", policy));  // the name is "static"
  EXPECT_EQ(policy, ReplicationPolicy::iser);
  BroadcastMethod method = BroadcastMethod::ring;
  EXPECT_FALSE(parse_broadcast_method("broadcast", method));
  EXPECT_EQ(method, BroadcastMethod::ring);
}

TEST(ExpertReplication, FixedGroupsPartitionTheGpusForEachSize) {
  const std::vector<FixedGroup> groups = make_fixed_groups(8, {2, 4, 8});
  ASSERT_EQ(groups.size(), 4u + 2u + 1u);
  size_t index = 0;
  for (uint32_t size : {2u, 4u, 8u}) {
    std::vector<uint32_t> covered(8, 0);
    for (uint32_t first = 0; first < 8; first += size, ++index) {
      EXPECT_EQ(groups[index].first_gpu, first) << "size " << size;
      EXPECT_EQ(groups[index].size, size);
      for (uint32_t gpu = 0; gpu < 8; ++gpu) covered[gpu] += groups[index].contains(gpu) ? 1 : 0;
    }
    EXPECT_EQ(covered, std::vector<uint32_t>(8, 1)) << "size " << size << " does not partition the GPUs";
  }
  EXPECT_FALSE(groups[1].contains(1));  // GPUs 2..3
  EXPECT_TRUE(groups[1].contains(3));
  EXPECT_FALSE(groups[1].contains(4));
}

TEST(ExpertReplication, FixedGroupsRefuseBadSizes) {
  expect_invalid([] { make_fixed_groups(8, {1}); }, {"size 1", "8 GPUs"});
  expect_invalid([] { make_fixed_groups(8, {0}); }, {"size 0", "8 GPUs"});
  expect_invalid([] { make_fixed_groups(8, {16}); }, {"size 16", "8 GPUs"});
  expect_invalid([] { make_fixed_groups(8, {2, 3}); }, {"size 3", "8 GPUs", "divide"});
  expect_invalid([] { make_fixed_groups(8, {4, 2, 4}); }, {"size 4", "twice"});
  EXPECT_TRUE(make_fixed_groups(8, {}).empty());
}

// One hot expert, one expert per GPU: owner and all three others level at (10 + 2 + 2 + 2) / 4.
TEST(ExpertReplication, SchedulerSpreadsAHotExpertOverTheGroupThatLevelsBest) {
  ReplicationInput input;
  input.gpus = 4;
  input.experts = 4;
  input.expert_loads = {10, 2, 2, 2};
  input.groups = make_fixed_groups(4, {2, 4});  // {0,1}, {2,3}, {0..3}
  input.slots_per_gpu = 1;
  const ReplicationSchedule schedule = schedule_replicas(input);
  expect_valid_schedule(input, schedule);
  ASSERT_EQ(schedule.replicas.size(), 1u);
  EXPECT_EQ(schedule.replicas[0].expert, 0u);
  EXPECT_EQ(schedule.replicas[0].group, 2u);
  EXPECT_EQ(schedule.replicas[0].slot, 0u);
  EXPECT_EQ(schedule.replicas[0].replica_gpus, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(schedule.load_before, (std::vector<double>{10, 2, 2, 2}));
  EXPECT_EQ(schedule.load_after, (std::vector<double>{4, 4, 4, 4}));
  EXPECT_EQ(schedule.stop_reason, "no choice lowers the max load");
}

// Worked by hand. Expert 0 (10) goes to group {2,3}, which does not hold its owner: copies on
// GPUs 0, 2, 3 level at 4 (group {0,1} would leave 6). Three GPUs now sit at 4: expert 2 relieves
// GPU 2 over group {0,1} (GPUs 1 and 2 end at 3), which keeps the max but leaves two GPUs at it.
// Expert 3 would relieve GPU 3 over either group, but every GPU's one slot is taken.
TEST(ExpertReplication, SchedulerUsesGroupsWithoutTheOwnerAndBreaksTiesAtTheMax) {
  ReplicationInput input;
  input.gpus = 4;
  input.experts = 4;
  input.expert_loads = {10, 2, 1, 1};
  input.groups = make_fixed_groups(4, {2});
  input.slots_per_gpu = 1;
  const ReplicationSchedule schedule = schedule_replicas(input);
  expect_valid_schedule(input, schedule);
  ASSERT_EQ(schedule.replicas.size(), 2u);
  EXPECT_EQ(schedule.replicas[0].expert, 0u);
  EXPECT_EQ(schedule.replicas[0].group, 1u);
  EXPECT_EQ(schedule.replicas[0].replica_gpus, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(schedule.replicas[1].expert, 2u);
  EXPECT_EQ(schedule.replicas[1].group, 0u);
  EXPECT_EQ(schedule.replicas[1].replica_gpus, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(schedule.load_after, (std::vector<double>{4, 3, 3, 4}));
  EXPECT_EQ(schedule.stop_reason, "replica slots ran out");

  // With two slots, expert 3 relieves GPU 3 too: over {2,3} (both end at 3.5) rather than over
  // {0,1} (its copies would include GPU 0 at 4), in slot 1, as slot 0 on GPU 2 is taken. Only
  // GPU 0 is left at the max, and its one expert is placed.
  input.slots_per_gpu = 2;
  const ReplicationSchedule more = schedule_replicas(input);
  expect_valid_schedule(input, more);
  ASSERT_EQ(more.replicas.size(), 3u);
  EXPECT_EQ(more.replicas[2].expert, 3u);
  EXPECT_EQ(more.replicas[2].group, 1u);
  EXPECT_EQ(more.replicas[2].slot, 1u);
  EXPECT_EQ(more.replicas[2].replica_gpus, (std::vector<uint32_t>{2}));
  EXPECT_EQ(more.load_after, (std::vector<double>{4, 3, 3.5, 3.5}));
  EXPECT_EQ(more.stop_reason, "no choice lowers the max load");
}

TEST(ExpertReplication, SchedulerNeverRaisesTheMaxLoad) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (uint32_t slots : {1u, 2u, 8u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(slots) + " slots");
      ReplicationInput input = skewed_layer(seed, slots);
      input.broadcast_ns = [](uint32_t, const FixedGroup& group) { return 1000.0 + 100.0 * group.size; };
      input.time_budget_ns = seed % 2 == 0 ? kNoBudget : 20000.0;
      const ReplicationSchedule schedule = schedule_replicas(input);
      expect_valid_schedule(input, schedule);
      EXPECT_FALSE(schedule.replicas.empty());
      EXPECT_LT(max_of(schedule.load_after), max_of(schedule.load_before));
    }
  }
}

// With a multicast broadcast the owner's own slot is written too: no placement may share it.
// Without the budget and with few slots, slots are contended, which is where this went wrong.
TEST(ExpertReplication, SchedulerKeepsTheOwnersSlotFreeWhenTheMulticastWritesIt) {
  size_t owners_in_group = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (uint32_t slots : {1u, 2u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(slots) + " slots");
      ReplicationInput input = skewed_layer(seed, slots);
      input.owner_slot_in_group = true;
      const ReplicationSchedule schedule = schedule_replicas(input);
      expect_valid_schedule(input, schedule);
      for (const ReplicaPlacement& r : schedule.replicas) owners_in_group += input.groups[r.group].contains(r.owner);
    }
  }
  EXPECT_GT(owners_in_group, 0u) << "no placement had its owner in the group: the rule was never exercised";
}

TEST(ExpertReplication, SchedulerRemovesMostOfASkewedLayersExcess) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const ReplicationInput input = skewed_layer(seed, 8);
    const ReplicationSchedule schedule = schedule_replicas(input);
    expect_valid_schedule(input, schedule);
    const double mean = std::accumulate(schedule.load_before.begin(), schedule.load_before.end(), 0.0) / input.gpus;
    EXPECT_GT(max_of(schedule.load_before), 1.5 * mean) << "seed " << seed << ": the layer is not skewed";
    EXPECT_GT(removed_fraction(schedule), 0.9) << "seed " << seed;
    EXPECT_LT(max_of(schedule.load_after), 1.05 * mean) << "seed " << seed;
  }
}

TEST(ExpertReplication, SchedulerRespectsReplicaSlots) {
  for (uint32_t slots : {1u, 2u}) {
    const ReplicationInput input = skewed_layer(3, slots);
    const ReplicationSchedule schedule = schedule_replicas(input);
    expect_valid_schedule(input, schedule);  // slots per GPU, distinct, one index per placement
    EXPECT_LE(schedule.replicas.size(), static_cast<size_t>(input.gpus) * slots);
  }
  const ReplicationInput none = skewed_layer(3, 0);
  const ReplicationSchedule schedule = schedule_replicas(none);
  EXPECT_TRUE(schedule.replicas.empty());
  EXPECT_EQ(schedule.load_after, schedule.load_before);
  EXPECT_EQ(schedule.stop_reason, "replica slots ran out");
}

TEST(ExpertReplication, SchedulerRespectsTheBroadcastBudget) {
  ReplicationInput input = skewed_layer(2, 8);
  input.broadcast_ns = [](uint32_t, const FixedGroup& group) { return 1000.0 + 100.0 * group.size; };
  const ReplicationSchedule unbounded = schedule_replicas(input);
  expect_valid_schedule(input, unbounded);
  ASSERT_GT(unbounded.estimated_broadcast_ns, 10000.0) << "the budget below would not bind";

  input.time_budget_ns = 10000.0;
  const ReplicationSchedule bounded = schedule_replicas(input);
  expect_valid_schedule(input, bounded);  // the estimate as defined, within the budget
  EXPECT_FALSE(bounded.replicas.empty());
  EXPECT_LT(bounded.replicas.size(), unbounded.replicas.size());
  EXPECT_EQ(bounded.stop_reason, "broadcast budget reached");
  EXPECT_LT(max_of(bounded.load_after), max_of(bounded.load_before));

  input.time_budget_ns = 0.0;
  const ReplicationSchedule nothing = schedule_replicas(input);
  EXPECT_TRUE(nothing.replicas.empty());
  EXPECT_EQ(nothing.load_after, nothing.load_before);
  EXPECT_EQ(nothing.estimated_broadcast_ns, 0.0);
  EXPECT_EQ(nothing.stop_reason, "broadcast budget reached");
}

TEST(ExpertReplication, SchedulerIsDeterministic) {
  ReplicationInput input = skewed_layer(5, 2);
  input.broadcast_ns = [](uint32_t owner, const FixedGroup& group) { return 500.0 * group.size + owner; };
  input.time_budget_ns = 40000.0;
  const ReplicationSchedule a = schedule_replicas(input);
  const ReplicationSchedule b = schedule_replicas(input);
  ASSERT_FALSE(a.replicas.empty());
  ASSERT_EQ(a.replicas.size(), b.replicas.size());
  for (size_t i = 0; i < a.replicas.size(); ++i) {
    EXPECT_EQ(a.replicas[i].expert, b.replicas[i].expert) << i;
    EXPECT_EQ(a.replicas[i].owner, b.replicas[i].owner) << i;
    EXPECT_EQ(a.replicas[i].group, b.replicas[i].group) << i;
    EXPECT_EQ(a.replicas[i].slot, b.replicas[i].slot) << i;
    EXPECT_EQ(a.replicas[i].replica_gpus, b.replicas[i].replica_gpus) << i;
  }
  EXPECT_EQ(a.load_before, b.load_before);
  EXPECT_EQ(a.load_after, b.load_after);
  EXPECT_EQ(a.estimated_broadcast_ns, b.estimated_broadcast_ns);
  EXPECT_EQ(a.stop_reason, b.stop_reason);
}

TEST(ExpertReplication, SchedulerPlacesNothingForUniformLoads) {
  ReplicationInput input;
  input.gpus = 32;
  input.experts = 256;
  input.expert_loads.assign(256, 100.0);
  input.groups = make_fixed_groups(32, {2, 4, 8, 32});
  input.slots_per_gpu = 4;
  const ReplicationSchedule schedule = schedule_replicas(input);
  EXPECT_TRUE(schedule.replicas.empty());
  EXPECT_EQ(schedule.load_after, std::vector<double>(32, 800.0));
  EXPECT_EQ(schedule.stop_reason, "no choice lowers the max load");
}

TEST(ExpertReplication, SchedulerRefusesInconsistentInput) {
  ReplicationInput input;
  input.gpus = 4;
  input.experts = 6;
  input.expert_loads.assign(6, 1.0);
  expect_invalid([&] { schedule_replicas(input); }, {"6 experts", "4 GPUs"});
  input.experts = 8;
  expect_invalid([&] { schedule_replicas(input); }, {"6 expert loads", "8 experts"});
  input.expert_loads.assign(8, 1.0);
  input.expert_loads[5] = -1.0;
  expect_invalid([&] { schedule_replicas(input); }, {"expert 5"});
  input.expert_loads[5] = 1.0;
  input.groups = {FixedGroup{2, 4}};
  expect_invalid([&] { schedule_replicas(input); }, {"group 0", "4 GPUs"});
}

TEST(ExpertReplication, ExcessLoadIsTheLoadAboveTheMean) {
  EXPECT_EQ(excess_load({}), 0.0);
  EXPECT_EQ(excess_load({5, 5, 5}), 0.0);
  EXPECT_DOUBLE_EQ(excess_load({10, 2, 2, 2}), 6.0);  // mean 4
  EXPECT_DOUBLE_EQ(excess_load({1, 3}), 1.0);
}

// The re-routing of a scheduled zipf layer: the skewed layer, 2 replica slots.
struct ReroutedLayer {
  MoeRouting original;
  ReplicationSchedule schedule;
  uint32_t slots = 2;
};

ReroutedLayer scheduled_layer(uint64_t seed) {
  ReroutedLayer layer;
  layer.original = zipf_routing(32, 256, 8, 256, seed);
  layer.schedule = schedule_replicas(layer_input(layer.original, {2, 4, 8, 32}, layer.slots));
  return layer;
}

std::vector<uint64_t> pairs_per_copy(const MoeRouting& routing) {
  std::vector<uint64_t> pairs(routing.experts, 0);
  for (uint16_t copy : routing.expert_ids) ++pairs[copy];
  return pairs;
}

TEST(ExpertReplication, RerouteKeepsEachTokensExpertsAsDistinctCopiesOfThem) {
  const ReroutedLayer layer = scheduled_layer(1);
  ASSERT_FALSE(layer.schedule.replicas.empty());
  for (TokenSplit split : {TokenSplit::even, TokenSplit::water_fill}) {
    const ReplicatedRouting r = reroute_tokens(layer.original, layer.schedule.replicas, layer.slots, split);
    ASSERT_EQ(r.routing.gpus, 32u);
    ASSERT_EQ(r.routing.experts, 32u * (8 + 2));
    ASSERT_EQ(r.routing.top_k, 8u);
    ASSERT_EQ(r.routing.tokens_per_gpu, layer.original.tokens_per_gpu);
    ASSERT_EQ(r.routing.expert_ids.size(), layer.original.expert_ids.size());
    ASSERT_EQ(r.weights_of.size(), r.routing.experts);
    for (uint64_t token = 0; token < r.routing.tokens(); ++token) {
      std::set<uint16_t> copies;
      for (uint32_t k = 0; k < 8; ++k) {
        const uint16_t copy = r.routing.experts_of(token)[k];
        ASSERT_LT(copy, r.routing.experts) << "token " << token;
        copies.insert(copy);
        ASSERT_EQ(r.weights_of[copy], layer.original.experts_of(token)[k])
            << "token " << token << ", k " << k << ": copy " << copy << " holds other weights";
      }
      ASSERT_EQ(copies.size(), 8u) << "token " << token << " repeats a copy";
    }
  }
}

TEST(ExpertReplication, RerouteNumbersCopiesPerGpuAndKeepsEveryExpertsPairs) {
  const ReroutedLayer layer = scheduled_layer(2);
  const std::vector<double> original_pairs = expert_loads(layer.original);
  for (TokenSplit split : {TokenSplit::even, TokenSplit::water_fill}) {
    const ReplicatedRouting r = reroute_tokens(layer.original, layer.schedule.replicas, layer.slots, split);
    // Original expert e keeps its place on its GPU; slots follow the GPU's experts.
    for (uint32_t expert = 0; expert < 256; ++expert) {
      EXPECT_EQ(r.weights_of[(expert / 8) * 10 + expert % 8], expert);
    }
    std::set<uint32_t> replica_copies;
    for (const ReplicaPlacement& placement : layer.schedule.replicas) {
      for (uint32_t gpu : placement.replica_gpus) {
        const uint32_t copy = gpu * 10 + 8 + placement.slot;
        EXPECT_EQ(r.weights_of[copy], placement.expert);
        replica_copies.insert(copy);
      }
    }
    const std::vector<uint64_t> per_copy = pairs_per_copy(r.routing);
    std::vector<double> per_expert(256, 0.0);
    for (uint32_t copy = 0; copy < r.routing.experts; ++copy) {
      const bool slot = copy % 10 >= 8;
      if (slot && replica_copies.count(copy) == 0) {
        EXPECT_EQ(r.weights_of[copy], kEmptyReplicaSlot) << "copy " << copy;
        EXPECT_EQ(per_copy[copy], 0u) << "a token went to the empty slot " << copy;
        continue;
      }
      per_expert[r.weights_of[copy]] += static_cast<double>(per_copy[copy]);
    }
    EXPECT_EQ(per_expert, original_pairs);
  }
}

TEST(ExpertReplication, RerouteGpuLoadIsTheNewRoutingsLoad) {
  const ReroutedLayer layer = scheduled_layer(3);
  for (TokenSplit split : {TokenSplit::even, TokenSplit::water_fill}) {
    const ReplicatedRouting r = reroute_tokens(layer.original, layer.schedule.replicas, layer.slots, split);
    std::vector<double> recomputed(32, 0.0);
    for (uint16_t copy : r.routing.expert_ids) recomputed[r.routing.gpu_of_expert(copy)] += 1.0;
    EXPECT_EQ(r.gpu_load, recomputed);
    EXPECT_EQ(std::accumulate(r.gpu_load.begin(), r.gpu_load.end(), 0.0),
              static_cast<double>(layer.original.expert_ids.size()));
  }
}

TEST(ExpertReplication, RerouteEvenSplitQuotasDifferByAtMostOne) {
  const ReroutedLayer layer = scheduled_layer(4);
  const ReplicatedRouting r = reroute_tokens(layer.original, layer.schedule.replicas, layer.slots, TokenSplit::even);
  const std::vector<uint64_t> per_copy = pairs_per_copy(r.routing);
  ASSERT_FALSE(layer.schedule.replicas.empty());
  for (const ReplicaPlacement& placement : layer.schedule.replicas) {
    std::vector<uint64_t> quotas = {per_copy[placement.owner * 10 + placement.expert % 8]};
    for (uint32_t gpu : placement.replica_gpus) quotas.push_back(per_copy[gpu * 10 + 8 + placement.slot]);
    const auto [low, high] = std::minmax_element(quotas.begin(), quotas.end());
    EXPECT_LE(*high - *low, 1u) << "expert " << placement.expert;
    // The remainder goes to the first copies (owner first).
    EXPECT_TRUE(std::is_sorted(quotas.rbegin(), quotas.rend())) << "expert " << placement.expert;
  }
}

TEST(ExpertReplication, RerouteWaterFillMatchesTheSchedulersEstimate) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const ReroutedLayer layer = scheduled_layer(seed);
    const ReplicatedRouting water =
        reroute_tokens(layer.original, layer.schedule.replicas, layer.slots, TokenSplit::water_fill);
    const ReplicatedRouting even = reroute_tokens(layer.original, layer.schedule.replicas, layer.slots, TokenSplit::even);
    EXPECT_NEAR(max_of(water.gpu_load), max_of(layer.schedule.load_after), 2.0) << "seed " << seed;
    for (uint32_t gpu = 0; gpu < 32; ++gpu) {
      EXPECT_NEAR(water.gpu_load[gpu], layer.schedule.load_after[gpu], 2.0) << "seed " << seed << ", GPU " << gpu;
    }
    EXPECT_LE(max_of(water.gpu_load), max_of(even.gpu_load)) << "seed " << seed;
  }
}

// 2 GPUs, one expert each, top-1: tokens 0..4 choose expert 0, tokens 5..7 expert 1. Expert 0 is
// replicated to GPU 1, slot 0. Copies: 0 = expert 0, 1 = GPU 0's slot, 2 = expert 1, 3 = GPU 1's
// slot. Even: 3 + 2. Water-fill: GPU 1 carries 3 already, so 4 + 1 levels both GPUs at 4.
TEST(ExpertReplication, RerouteFillsCopiesInTokenOrderOwnerFirst) {
  MoeRouting original;
  original.gpus = 2;
  original.experts = 2;
  original.top_k = 1;
  original.tokens_per_gpu = 4;
  original.expert_ids = {0, 0, 0, 0, 0, 1, 1, 1};
  ReplicaPlacement placement;
  placement.expert = 0;
  placement.owner = 0;
  placement.group = 0;
  placement.slot = 0;
  placement.replica_gpus = {1};

  const ReplicatedRouting even = reroute_tokens(original, {placement}, 1, TokenSplit::even);
  EXPECT_EQ(even.routing.experts, 4u);
  EXPECT_EQ(even.weights_of, (std::vector<uint16_t>{0, kEmptyReplicaSlot, 1, 0}));
  EXPECT_EQ(even.routing.expert_ids, (std::vector<uint16_t>{0, 0, 0, 3, 3, 2, 2, 2}));
  EXPECT_EQ(even.gpu_load, (std::vector<double>{3, 5}));

  const ReplicatedRouting water = reroute_tokens(original, {placement}, 1, TokenSplit::water_fill);
  EXPECT_EQ(water.routing.expert_ids, (std::vector<uint16_t>{0, 0, 0, 0, 3, 2, 2, 2}));
  EXPECT_EQ(water.gpu_load, (std::vector<double>{4, 4}));

  // Without replicas the routing is only renumbered.
  const ReplicatedRouting plain = reroute_tokens(original, {}, 1, TokenSplit::water_fill);
  EXPECT_EQ(plain.routing.expert_ids, (std::vector<uint16_t>{0, 0, 0, 0, 0, 2, 2, 2}));
  EXPECT_EQ(plain.gpu_load, (std::vector<double>{5, 3}));
}

TEST(ExpertReplication, RerouteRefusesBadPlacements) {
  MoeRouting original;
  original.gpus = 4;
  original.experts = 8;
  original.top_k = 2;
  original.tokens_per_gpu = 1;
  original.expert_ids = {0, 1, 2, 3, 4, 5, 6, 7};
  ReplicaPlacement good;
  good.expert = 2;
  good.owner = 1;
  good.slot = 0;
  good.replica_gpus = {0, 3};
  EXPECT_NO_THROW(reroute_tokens(original, {good}, 1, TokenSplit::even));

  auto refused = [&](ReplicaPlacement bad, const std::vector<std::string>& words) {
    expect_invalid([&] { reroute_tokens(original, {bad}, 1, TokenSplit::even); }, words);
  };
  ReplicaPlacement bad = good;
  bad.expert = 8;
  refused(bad, {"expert 8", "8 experts"});
  bad = good;
  bad.owner = 2;
  refused(bad, {"owner GPU 2", "GPU 1"});
  bad = good;
  bad.replica_gpus = {0, 4};
  refused(bad, {"replica GPU 4", "4 GPUs"});
  bad = good;
  bad.replica_gpus = {1, 3};
  refused(bad, {"replica GPU 1", "owner"});
  bad = good;
  bad.replica_gpus = {3, 0};
  refused(bad, {"ascending"});
  bad = good;
  bad.replica_gpus = {};
  refused(bad, {"no replica GPUs"});
  bad = good;
  bad.slot = 1;
  refused(bad, {"slot 1", "1 replica slots"});

  ReplicaPlacement other = good;
  other.expert = 6;
  other.owner = 3;
  other.replica_gpus = {0, 2};  // slot 0 on GPU 0 holds expert 2 already
  expect_invalid([&] { reroute_tokens(original, {good, other}, 1, TokenSplit::even); },
                 {"slot 0", "GPU 0", "expert 2"});
  other = good;
  other.replica_gpus = {2};
  expect_invalid([&] { reroute_tokens(original, {good, other}, 2, TokenSplit::even); }, {"expert 2", "placement 0"});

  // 256 GPUs x (1 expert + 255 slots) = 65536 copies still fit 16-bit IDs; one more slot does not.
  MoeRouting wide;
  wide.gpus = 256;
  wide.experts = 256;
  wide.top_k = 1;
  wide.tokens_per_gpu = 0;
  EXPECT_EQ(reroute_tokens(wide, {}, 255, TokenSplit::even).weights_of.size(), 65536u);
  expect_invalid([&] { reroute_tokens(wide, {}, 256, TokenSplit::even); }, {"65792", "16-bit"});
}

}  // namespace
}  // namespace nvsvp::fw

namespace nvsvp::fw {
namespace {

// Replicas kept from the layer's previous iteration (ReplicationInput::resident).
ReplicationInput budgeted_layer(uint64_t seed, double broadcasts_in_budget) {
  ReplicationInput input = skewed_layer(seed, 4);
  input.broadcast_ns = [](uint32_t, const FixedGroup&) { return 100.0; };
  input.time_budget_ns = 100.0 * broadcasts_in_budget;
  return input;
}

std::vector<ReplicaPlacement> as_resident(std::vector<ReplicaPlacement> replicas) {
  for (ReplicaPlacement& r : replicas) r.resident = false;
  return replicas;
}

// The same loads again with last iteration's replicas resident: they are kept in their group
// and slot (the first choices are the same again), nothing is broadcast for them, and the budget
// they no longer need places more replicas, so more of the excess goes.
TEST(ExpertReplication, ResidentReplicasAreKeptAtNoCostAndFreeTheBudget) {
  ReplicationInput input = budgeted_layer(7, 3.0);
  const ReplicationSchedule first = schedule_replicas(input);
  expect_valid_schedule(input, first);
  ASSERT_FALSE(first.replicas.empty());
  EXPECT_EQ(first.stop_reason, "broadcast budget reached");
  for (const ReplicaPlacement& r : first.replicas) EXPECT_FALSE(r.resident);

  input.resident = as_resident(first.replicas);
  const ReplicationSchedule second = schedule_replicas(input);
  expect_valid_schedule(input, second);
  uint32_t kept = 0;
  for (const ReplicaPlacement& r : second.replicas) kept += r.resident ? 1 : 0;
  EXPECT_GT(kept, 0u);
  EXPECT_TRUE(second.replicas[0].resident) << "the hottest expert's choice is the same as last time";
  EXPECT_GT(second.replicas.size(), first.replicas.size());
  EXPECT_LT(excess_load(second.load_after), excess_load(first.load_after));

  // Negative check: without residency the second schedule is the first one again.
  input.resident.clear();
  const ReplicationSchedule again = schedule_replicas(input);
  EXPECT_EQ(again.replicas.size(), first.replicas.size());
  EXPECT_DOUBLE_EQ(excess_load(again.load_after), excess_load(first.load_after));
}

// A resident replica whose expert went cold is not kept (evicted); a new replica leaves slots that
// resident replicas of still-unplaced experts hold alone while another is free.
TEST(ExpertReplication, ColdResidentReplicasAreEvictedAndHeldSlotsAvoided) {
  ReplicationInput input;
  input.gpus = 4;
  input.experts = 4;
  input.expert_loads = {10, 2, 2, 2};
  input.groups = make_fixed_groups(4, {4});
  input.slots_per_gpu = 2;
  // Expert 3 was hot last iteration, in slot 0 of the whole group; now it is not.
  ReplicaPlacement cold;
  cold.expert = 3;
  cold.owner = 3;
  cold.group = 0;
  cold.slot = 0;
  cold.replica_gpus = {0, 1, 2};
  input.resident = {cold};
  const ReplicationSchedule schedule = schedule_replicas(input);
  expect_valid_schedule(input, schedule);
  ASSERT_EQ(schedule.replicas.size(), 1u);
  EXPECT_EQ(schedule.replicas[0].expert, 0u);
  EXPECT_FALSE(schedule.replicas[0].resident);
  EXPECT_EQ(schedule.replicas[0].slot, 1u) << "slot 0 is held for expert 3 while slot 1 is free";

  // With one slot only, the new replica evicts expert 3's.
  input.slots_per_gpu = 1;
  const ReplicationSchedule evicting = schedule_replicas(input);
  expect_valid_schedule(input, evicting);
  ASSERT_EQ(evicting.replicas.size(), 1u);
  EXPECT_EQ(evicting.replicas[0].expert, 0u);
  EXPECT_EQ(evicting.replicas[0].slot, 0u);
}

// keep_resident: a replica still in its slot on a pair of GPUs, while spreading the expert over
// all four would lower the peak further. on_tie broadcasts it to the four; when_improving keeps it
// on the pair (it still lowers the peak) at no broadcast.
TEST(ExpertReplication, PreferResidentKeepsAReplicaThatStillLowersThePeak) {
  ReplicationInput input;
  input.gpus = 4;
  input.experts = 4;
  input.expert_loads = {12, 2, 2, 2};
  input.groups = make_fixed_groups(4, {2, 4});
  input.slots_per_gpu = 1;
  input.broadcast_ns = [](uint32_t, const FixedGroup&) { return 1.0; };
  ReplicaPlacement pair;
  pair.expert = 0;
  pair.owner = 0;
  pair.group = 0;  // GPUs 0 and 1
  pair.slot = 0;
  pair.replica_gpus = {1};
  input.resident = {pair};
  ASSERT_EQ(input.groups[0].size, 2u);

  auto expert_0 = [](const ReplicationSchedule& schedule) {
    const auto it = std::find_if(schedule.replicas.begin(), schedule.replicas.end(),
                                 [](const ReplicaPlacement& r) { return r.expert == 0; });
    EXPECT_NE(it, schedule.replicas.end());
    return it == schedule.replicas.end() ? ReplicaPlacement{} : *it;
  };
  const ReplicationSchedule on_tie = schedule_replicas(input);
  expect_valid_schedule(input, on_tie);
  EXPECT_EQ(input.groups[expert_0(on_tie).group].size, 4u);
  EXPECT_FALSE(expert_0(on_tie).resident);
  EXPECT_DOUBLE_EQ(*std::max_element(on_tie.load_after.begin(), on_tie.load_after.end()), 4.5);

  input.prefer_resident = true;
  const ReplicationSchedule kept = schedule_replicas(input);
  expect_valid_schedule(input, kept);
  EXPECT_EQ(expert_0(kept).group, 0u);
  EXPECT_TRUE(expert_0(kept).resident);
  // The pair's 12 + 2 pairs split 7 and 7: a higher peak than the four's 4.5, for no broadcast.
  EXPECT_DOUBLE_EQ(*std::max_element(kept.load_after.begin(), kept.load_after.end()), 7.0);
}

TEST(ExpertReplication, ResidentReplicasMustExist) {
  ReplicationInput input = budgeted_layer(3, 2.0);
  ReplicaPlacement bad;
  bad.expert = 256;
  input.resident = {bad};
  expect_invalid([&] { schedule_replicas(input); }, {"resident", "expert 256", "no such expert"});
  bad.expert = 5;
  bad.group = 99;
  input.resident = {bad};
  expect_invalid([&] { schedule_replicas(input); }, {"resident", "no group 99"});
  bad.group = 0;
  bad.slot = 4;
  input.resident = {bad};
  expect_invalid([&] { schedule_replicas(input); }, {"resident", "no slot 4"});
  bad.slot = 0;
  input.resident = {bad, bad};
  expect_invalid([&] { schedule_replicas(input); }, {"resident", "twice"});
}

}  // namespace
}  // namespace nvsvp::fw
