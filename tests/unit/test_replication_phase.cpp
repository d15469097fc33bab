// The replication phase's firmware against a mocked HAL and plain GpuMemory objects: what each
// broadcast method sends and from where, which messages every GPU must receive, the counters it
// takes, the SM split, and the check that finds a replica chunk that did not land.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../common/mock_hal.hpp"
#include "nvsvp/fw/expert_replication.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/model/gpu_memory.hpp"

namespace nvsvp::fw {
namespace {

using ::testing::_;
using ::testing::Invoke;
using ::testing::NiceMock;

constexpr uint32_t kGpus = 4;
constexpr uint32_t kExperts = 8;  // 2 per GPU
constexpr uint32_t kSlots = 1;
constexpr uint64_t kChunk = 4096;
constexpr uint64_t kWeights = 3ull * 256 * 64;  // hidden 256, moe_hidden 64, fp8: 12 chunks
constexpr uint64_t kChunks = kWeights / kChunk;

// A layer of 4 GPUs whose expert 0 (owner GPU 0) is replicated on GPUs 1-3 (the group of all four,
// slot 0) by `method`, with one shared expert.
std::shared_ptr<MoeLayerSpec> replicated_layer(BroadcastMethod method) {
  auto spec = std::make_shared<MoeLayerSpec>();
  spec->model.name = "tiny";
  spec->model.hidden = 256;
  spec->model.moe_hidden = 64;
  spec->model.experts = kExperts;
  spec->model.top_k = 2;
  spec->top_k = 2;
  spec->tokens_per_gpu = 4;
  spec->shared_experts = 1;
  MoeRouting original;
  original.gpus = kGpus;
  original.experts = kExperts;
  original.top_k = 2;
  original.tokens_per_gpu = 4;
  for (uint32_t t = 0; t < kGpus * 4; ++t) {
    original.expert_ids.push_back(0);  // expert 0 is hot: every token
    original.expert_ids.push_back(static_cast<uint16_t>(1 + t % (kExperts - 1)));
  }
  auto decision = std::make_shared<ReplicationDecision>();
  decision->policy = ReplicationPolicy::iser;
  decision->method = method;
  decision->groups = make_fixed_groups(kGpus, {2, 4});  // {0,1}, {2,3}, {0..3}
  decision->slots_per_gpu = kSlots;
  decision->broadcast_sms = 8;
  decision->chunk_bytes = kChunk;
  decision->weight_bytes = expert_weight_bytes(spec->model, WeightDtype::fp8);
  decision->schedule.replicas = {ReplicaPlacement{0, 0, 2, 0, {1, 2, 3}}};
  ReplicatedRouting rerouted = reroute_tokens(original, decision->schedule.replicas, kSlots, TokenSplit::even);
  spec->routing = std::move(rerouted.routing);
  spec->routing.weights_of = std::move(rerouted.weights_of);
  spec->replication = decision;
  return spec;
}

struct Built {
  std::shared_ptr<MoeLayerSpec> spec;
  LayerPlan plan;
  ReplicationPhase phase;
};

Built build(BroadcastMethod method) {
  Built b;
  b.spec = replicated_layer(method);
  b.plan = build_layer("deepep", b.spec);
  b.phase = build_replication_phase(*b.spec, b.plan);
  return b;
}

TEST(ReplicationPhase, TheTestExpertsWeightsAreWholeChunks) {
  EXPECT_EQ(expert_weight_bytes(replicated_layer(BroadcastMethod::p2p)->model, WeightDtype::fp8), kWeights);
  EXPECT_EQ(kWeights % kChunk, 0u);
}

TEST(ReplicationPhase, EachMethodSendsWhatItShouldFromWhereItShould) {
  struct Expected {
    BroadcastMethod method;
    std::vector<uint64_t> bytes_sent;  // per GPU
    std::vector<uint64_t> arrivals;    // per GPU
  };
  const uint64_t w = kWeights, c = kChunks;
  const std::vector<Expected> expected = {
      // The owner copies to each replica.
      {BroadcastMethod::p2p, {3 * w, 0, 0, 0}, {0, c, c, c}},
      // The owner multicasts to the group, itself included.
      {BroadcastMethod::multicast, {w, 0, 0, 0}, {c, c, c, c}},
      // The owner multicasts a quarter and scatters the rest, a quarter to each member, which
      // multicasts it: every member gets every chunk once more, the others their quarter too.
      {BroadcastMethod::multiport, {w, w / 4, w / 4, w / 4}, {c, c + c / 4, c + c / 4, c + c / 4}},
      // 0 -> 1 -> 2 -> 3.
      {BroadcastMethod::ring, {w, w, w, 0}, {0, c, c, c}},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(to_string(e.method));
    const Built b = build(e.method);
    EXPECT_EQ(b.phase.expected_bytes_sent, e.bytes_sent);
    EXPECT_EQ(b.phase.expected_link_arrivals, e.arrivals);
    EXPECT_EQ(b.phase.chunks_expected, 3 * kChunks);
    // The tasks themselves: bytes by source GPU, over every stream.
    std::vector<uint64_t> issued(kGpus, 0);
    for (uint32_t g = 0; g < kGpus; ++g) {
      for (const hw::WorkSequence& s : b.phase.sequences[g]) {
        for (const hw::Task& t : s.tasks) {
          if (t.kind == hw::TaskKind::send || t.kind == hw::TaskKind::multimem_store) issued[g] += t.bytes;
        }
      }
    }
    EXPECT_EQ(issued, e.bytes_sent);
  }
}

TEST(ReplicationPhase, MulticastMethodsCreateEveryFixedGroupTheOthersNone) {
  for (BroadcastMethod m : {BroadcastMethod::multicast, BroadcastMethod::multiport}) {
    const Built b = build(m);
    ASSERT_EQ(b.phase.multicast_groups.size(), 3u) << to_string(m);
    EXPECT_EQ(b.phase.multicast_groups[0].members, 0b0011u);
    EXPECT_EQ(b.phase.multicast_groups[1].members, 0b1100u);
    EXPECT_EQ(b.phase.multicast_groups[2].members, 0b1111u);
    for (const MulticastGroupRequest& g : b.phase.multicast_groups) {
      EXPECT_EQ(g.base % (2u << 20), 0u);
      EXPECT_EQ(g.size % (2u << 20), 0u);
      EXPECT_GE(g.size, kSlots * kWeights);
    }
  }
  for (BroadcastMethod m : {BroadcastMethod::p2p, BroadcastMethod::ring}) {
    EXPECT_TRUE(build(m).phase.multicast_groups.empty()) << to_string(m);
  }
}

TEST(ReplicationPhase, CountsAboveTheLayersCountersAndOnlySmStoresArePaced) {
  for (BroadcastMethod m : {BroadcastMethod::p2p, BroadcastMethod::multicast, BroadcastMethod::multiport,
                            BroadcastMethod::ring}) {
    SCOPED_TRACE(to_string(m));
    const Built b = build(m);
    uint32_t layer_counters = 0;
    for (const hw::WorkSequence& s : b.plan.sequences) layer_counters = std::max(layer_counters, s.counters);
    const bool sm_issued = m == BroadcastMethod::multicast || m == BroadcastMethod::multiport;
    for (uint32_t g = 0; g < kGpus; ++g) {
      for (const hw::WorkSequence& s : b.phase.sequences[g]) {
        for (const hw::Task& t : s.tasks) {
          if (t.kind == hw::TaskKind::send || t.kind == hw::TaskKind::wait_counter ||
              t.kind == hw::TaskKind::multimem_store) {
            EXPECT_GE(t.counter, layer_counters) << "GPU " << g << " stream " << s.stream;
            EXPECT_LT(t.counter, s.counters);
          }
        }
        if (s.stream == 0) {  // the shared expert, on what the broadcast leaves
          EXPECT_EQ(s.sms, sm_issued ? b.spec->gpu_sms - 8 : 0);
          EXPECT_EQ(s.tasks.front().kind, hw::TaskKind::gemm);
        }
        EXPECT_EQ(s.issue_sms, sm_issued && s.stream == 2 ? 8 : 0) << "GPU " << g << " stream " << s.stream;
      }
    }
  }
}

// The phase runs through the HAL, and the check reads every replica chunk from the replicas'
// memories: here the landing is done by hand, one chunk left out.
TEST(ReplicationPhase, RunsThroughTheHalAndTheCheckNamesAChunkThatDidNotLand) {
  Built b = build(BroadcastMethod::multiport);
  NiceMock<test::MockHal> hal;
  std::vector<model::GpuMemory> memories(kGpus);
  ON_CALL(hal, gpu_count()).WillByDefault(::testing::Return(kGpus));
  ON_CALL(hal, memory(_)).WillByDefault(Invoke([&](uint32_t g) -> hw::MemoryAccess& { return memories[g]; }));
  size_t sequences = 0;
  for (const auto& streams : b.phase.sequences) sequences += streams.size();
  EXPECT_CALL(hal, submit(_, _)).Times(static_cast<int>(sequences));
  EXPECT_CALL(hal, wait_all_finished()).Times(1);

  load_expert_weights(hal, b.phase, *b.spec);
  run_replication_phase(hal, b.phase);
  EXPECT_EQ(verify_replication(hal, b.phase).chunks_landed, 0u);  // nothing moved yet

  // Every chunk of expert 0's weights at GPU 0 into slot 0 of GPUs 1-3, but chunk 5 on GPU 2.
  // The owner's expert 0 and the replicas' slot 0 are the first elements of their buffers.
  const uint64_t expert_base = 0x0B00'0000'0000, slot_base = 0x0C00'0000'0000;
  for (uint32_t r : {1u, 2u, 3u}) {
    for (uint64_t j = 0; j < kChunks; ++j) {
      if (r == 2 && j == 5) continue;
      uint8_t bytes[16];
      memories[0].read(expert_base + j * kChunk, bytes, sizeof bytes);
      memories[r].write(slot_base + j * kChunk, bytes, sizeof bytes);
    }
  }
  const ReplicationCheck check = verify_replication(hal, b.phase);
  EXPECT_EQ(check.chunks_expected, 3 * kChunks);
  EXPECT_EQ(check.chunks_landed, 3 * kChunks - 1);
  EXPECT_FALSE(check.passed());
  ASSERT_EQ(check.violations.size(), 1u);
  EXPECT_EQ(check.violations[0], "GPU 2 slot 0: chunk 5 of expert 0 (owner 0) did not land");
}

TEST(ReplicationPhase, NothingToDoWithoutSharedExpertsOrBroadcasts) {
  auto spec = replicated_layer(BroadcastMethod::p2p);
  spec->shared_experts = 0;
  auto none = std::make_shared<ReplicationDecision>(*spec->replication);
  none->policy = ReplicationPolicy::none;
  none->schedule.replicas.clear();
  spec->replication = none;
  const LayerPlan plan = build_layer("deepep", spec);
  EXPECT_TRUE(build_replication_phase(*spec, plan).empty());
  spec->shared_experts = 1;
  const ReplicationPhase shared_only = build_replication_phase(*spec, plan);
  ASSERT_EQ(shared_only.sequences.size(), kGpus);
  for (const auto& streams : shared_only.sequences) {
    ASSERT_EQ(streams.size(), 1u);  // the shared expert alone
    EXPECT_EQ(streams[0].stream, 0u);
  }
}

}  // namespace
}  // namespace nvsvp::fw
