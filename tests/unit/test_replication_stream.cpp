// Hot-expert replication over a serving run: the drifting routing's promises (deterministic, hot
// set kept hot_lifetime iterations on average) and fw::LayerReplicationStream's policies (none
// moves nothing; static refreshed every N iterations; iser keeps what stays hot; no pair lost).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "nvsvp/fw/replication_stream.hpp"
#include "nvsvp/platform/routing_generator.hpp"
#include "../common/test_workloads.hpp"

namespace nvsvp {
namespace {

platform::WorkloadSpec drifting_workload(uint32_t experts, uint32_t top_k, uint32_t tokens_per_gpu,
                                         double hot_lifetime) {
  platform::WorkloadSpec w = test::generated_workload(experts, top_k, tokens_per_gpu, "drifting", 11);
  w.model.hidden = 1024;
  w.model.moe_hidden = 512;
  w.routing.exponent = 0.8;
  w.routing.hot_lifetime = hot_lifetime;
  return w;
}

uint32_t hottest(const std::vector<double>& weights) {
  return static_cast<uint32_t>(std::max_element(weights.begin(), weights.end()) - weights.begin());
}

TEST(DriftingRouting, IsDeterministicPerLayerAndIteration) {
  platform::WorkloadSpec w = drifting_workload(64, 4, 64, 50.0);
  const fw::MoeRouting a = platform::generate_routing(w, 8);
  const fw::MoeRouting b = platform::generate_routing(w, 8);
  EXPECT_EQ(a.expert_ids, b.expert_ids);
  w.routing.iteration = 1;
  EXPECT_NE(platform::generate_routing(w, 8).expert_ids, a.expert_ids) << "each iteration draws its own tokens";
  w.routing.iteration = 0;
  w.routing.layer = 1;
  EXPECT_NE(platform::drifting_popularity(w.routing, 64), platform::drifting_popularity(drifting_workload(64, 4, 64, 50.0).routing, 64))
      << "each layer deals its own hot set";
}

// A layer's popularity at an iteration is the same whichever iterations were asked before (a
// stream steps on from the last one, so that its iterations cost linear time; asking for an
// earlier one starts again).
TEST(DriftingRouting, APopularityIsTheSameInAnyOrderOfAsking) {
  platform::RoutingSpec spec = drifting_workload(64, 4, 64, 20.0).routing;
  spec.iteration = 700;
  const std::vector<double> direct = platform::drifting_popularity(spec, 64);
  std::vector<std::vector<double>> ascending;
  for (spec.iteration = 0; spec.iteration <= 700; ++spec.iteration) {
    ascending.push_back(platform::drifting_popularity(spec, 64));
  }
  EXPECT_EQ(ascending[700], direct);
  spec.iteration = 300;  // earlier than the last asked: computed again from the start
  EXPECT_EQ(platform::drifting_popularity(spec, 64), ascending[300]);
  platform::RoutingSpec other_layer = spec;
  other_layer.layer = 3;  // interleaved layers each keep their own place
  for (other_layer.iteration = 0; other_layer.iteration < 50; ++other_layer.iteration) {
    platform::drifting_popularity(other_layer, 64);
  }
  spec.iteration = 301;
  EXPECT_EQ(platform::drifting_popularity(spec, 64), ascending[301]);
}

// The hottest expert keeps its rank hot_lifetime iterations on average: the mean length of its
// runs over 1200 iterations is within 25 % of it, for a short and a long lifetime.
TEST(DriftingRouting, TheHotSetPersistsHotLifetimeIterationsOnAverage) {
  for (double lifetime : {8.0, 40.0}) {
    platform::RoutingSpec spec = drifting_workload(64, 4, 64, lifetime).routing;
    uint32_t runs = 1;
    uint32_t previous = hottest(platform::drifting_popularity(spec, 64));
    constexpr uint32_t kIterations = 1200;
    for (spec.iteration = 1; spec.iteration < kIterations; ++spec.iteration) {
      const uint32_t now = hottest(platform::drifting_popularity(spec, 64));
      runs += now != previous ? 1 : 0;
      previous = now;
    }
    const double mean_run = static_cast<double>(kIterations) / runs;
    EXPECT_NEAR(mean_run, lifetime, 0.25 * lifetime) << "hot_lifetime " << lifetime << ": " << runs << " runs";
  }
}

fw::StreamSettings settings(uint32_t static_refresh, double budget_ns) {
  fw::StreamSettings s;
  s.params.groups = {2, 4, 8};
  s.params.slots_per_gpu = 2;
  s.params.broadcast = "multicast";
  s.model.hidden = 1024;
  s.model.moe_hidden = 512;
  s.costs.gpu_link_gbps = 450.0;
  s.shared_expert_ns = budget_ns;
  s.static_refresh = static_refresh;
  return s;
}

// Twelve iterations of one layer: none moves nothing; static is re-placed at iterations 4 and 8
// only; iser keeps the replicas that stay hot (its hot set lives 200 iterations) and broadcasts
// only the new ones; no policy loses or makes up a token-expert pair.
TEST(ReplicationStream, EachPolicyKeepsWhatItKeepsBetweenIterations) {
  platform::WorkloadSpec w = drifting_workload(64, 4, 512, 200.0);
  fw::MoeRouting routing = platform::generate_routing(w, 8);
  fw::LayerReplicationStream stream(settings(4, 60e3), platform::expected_expert_loads(w, routing));
  uint64_t kept = 0, fresh_bytes = 0;
  for (uint32_t it = 0; it < 12; ++it) {
    w.routing.iteration = it;
    routing = platform::generate_routing(w, 8);
    const fw::StreamStep step = stream.step(routing);
    const double pairs = static_cast<double>(routing.expert_ids.size());
    for (const fw::StreamPolicyStep& s : step.policies) {
      EXPECT_EQ(s.pairs_before, pairs);
      EXPECT_EQ(s.pairs_after, pairs);
      EXPECT_LE(s.max_over_mean_after, s.max_over_mean_before + 1e-12);
    }
    const fw::StreamPolicyStep& none = step.policies[0];
    EXPECT_EQ(none.policy, fw::ReplicationPolicy::none);
    EXPECT_EQ(none.excess_after, none.excess_before);
    EXPECT_EQ(none.replicas, 0u);
    const fw::StreamPolicyStep& fixed = step.policies[1];
    EXPECT_EQ(fixed.refreshed, it == 4 || it == 8) << "iteration " << it;
    EXPECT_EQ(fixed.weight_bytes_broadcast, 0u) << "a static balancer's weights are resident";
    const fw::StreamPolicyStep& iser = step.policies[2];
    EXPECT_GT(iser.replicas, 0u);
    EXPECT_LT(iser.excess_after, iser.excess_before);
    EXPECT_LE(iser.estimated_broadcast_ns, iser.budget_ns);
    const uint64_t expert_bytes = fw::expert_weight_bytes(settings(4, 0).model, fw::WeightDtype::fp8);
    EXPECT_EQ(iser.weight_bytes_broadcast, (iser.replicas - iser.kept) * expert_bytes);
    if (it == 0) {
      EXPECT_EQ(iser.kept, 0u);
    }
    kept += iser.kept;
    fresh_bytes += iser.weight_bytes_broadcast;
  }
  EXPECT_GT(kept, 0u) << "a hot set that lives 200 iterations keeps replicas from one iteration to the next";
  EXPECT_GT(fresh_bytes, 0u);
}

TEST(ReplicationStream, RefusesARoutingOfAnotherShape) {
  platform::WorkloadSpec w = drifting_workload(64, 4, 64, 50.0);
  const fw::MoeRouting routing = platform::generate_routing(w, 8);
  fw::LayerReplicationStream stream(settings(0, 1e6), std::vector<double>(32, 1.0));
  EXPECT_THROW(stream.step(routing), std::invalid_argument);
}

// What makes a stream fail names the policy and the pairs: a step that conserved its pairs says
// nothing; one that lost or made up pairs says how many.
TEST(ReplicationStream, APairsViolationNamesThePolicyAndTheCounts) {
  fw::StreamPolicyStep step;
  step.policy = fw::ReplicationPolicy::iser;
  step.pairs_before = 96.0;
  step.pairs_after = 96.0;
  EXPECT_EQ(fw::pairs_violation(step, 96.0), "");
  step.pairs_after = 95.0;
  EXPECT_EQ(fw::pairs_violation(step, 96.0),
            "policy iser: 96 token-expert pairs routed, the GPUs' loads hold 96 before and 95 after the re-routing");
  step.policy = fw::ReplicationPolicy::fixed;
  step.pairs_after = 96.0;
  step.pairs_before = 97.0;
  EXPECT_NE(fw::pairs_violation(step, 96.0).find("policy static: 96 token-expert pairs routed"), std::string::npos);
}

}  // namespace
}  // namespace nvsvp
