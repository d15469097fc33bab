// What a scenario's replication section decides before anything simulates (make_layer_spec): the
// static policy's history, iser's budget, and the routing over expert copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "../common/test_support.hpp"
#include "../common/test_workloads.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

std::shared_ptr<const fw::MoeLayerSpec> layer_of(const std::string& replication, uint32_t shared_experts = 1,
                                                  uint32_t tokens_per_gpu = 1024) {
  test::TempDir dir;
  const std::string text = "name: t\n"
                           "platform: gh200-nvl32\n"
                           "workload:\n"
                           "  model: deepseek-v4-pro-like\n"
                           "  tokens_per_gpu: " + std::to_string(tokens_per_gpu) + "\n"
                           "  shared_experts: " + std::to_string(shared_experts) + "\n"
                           "  routing: {kind: zipf, exponent: 1.0, seed: 1}\n"
                           "schemes: [deepep]\n"
                           "replication: " + replication + "\n";
  return make_layer_spec(load_scenario(dir.write("s.yaml", text), {}, test::config_dir()));
}

using test::max_over_mean;

// Placed from this layer's own popularity the static replicas level it; placed from another
// batch's (the hot experts have moved) they mostly sit on experts that are no longer hot.
TEST(ReplicationDecision, StaticReplicasPlacedFromAnotherPopularityLevelLess) {
  const auto own = layer_of("{policy: static, slots_per_gpu: 2}");
  const auto moved = layer_of("{policy: static, slots_per_gpu: 2, static_seed: 2}");
  ASSERT_FALSE(own->replication->schedule.replicas.empty());
  ASSERT_FALSE(moved->replication->schedule.replicas.empty());
  EXPECT_EQ(own->replication->load_before, moved->replication->load_before);  // the same layer
  EXPECT_LT(max_over_mean(own->replication->load_after), 0.8 * max_over_mean(moved->replication->load_after));
  EXPECT_LE(max_over_mean(moved->replication->load_after), max_over_mean(moved->replication->load_before) + 1e-9);
  EXPECT_FALSE(moved->replication->broadcasts());  // resident: nothing to broadcast
}

// iser's broadcasts must hide behind the shared experts: without them there is no time, and
// nothing is placed; the static policy broadcasts nothing and places anyway.
TEST(ReplicationDecision, IserWithoutSharedExpertsHasNoBudget) {
  const auto iser = layer_of("{policy: iser}", 0);
  EXPECT_EQ(iser->replication->time_budget_ns, 0.0);
  EXPECT_TRUE(iser->replication->schedule.replicas.empty());
  EXPECT_EQ(iser->replication->schedule.stop_reason, "broadcast budget reached");
  EXPECT_FALSE(layer_of("{policy: static}", 0)->replication->schedule.replicas.empty());
  // 4096 tokens: the shared expert's time hides a few 44 MB broadcasts (1024 tokens hide none).
  const auto with_shared = layer_of("{policy: iser}", 1, 4096);
  EXPECT_GT(with_shared->replication->time_budget_ns, 0.0);
  EXPECT_FALSE(with_shared->replication->schedule.replicas.empty());
  EXPECT_LE(with_shared->replication->schedule.estimated_broadcast_ns, with_shared->replication->time_budget_ns);
}

// The routing over copies keeps every token's experts, as copies holding their weights.
TEST(ReplicationDecision, TheLayersRoutingNamesCopiesOfTheSameExperts) {
  const auto none = layer_of("{policy: none}");
  const auto iser = layer_of("{policy: iser}");
  const fw::MoeRouting& a = none->routing;
  const fw::MoeRouting& b = iser->routing;
  ASSERT_EQ(a.expert_ids.size(), b.expert_ids.size());
  EXPECT_EQ(b.experts, a.experts + a.gpus * 2);  // two replica slots per GPU
  for (size_t i = 0; i < a.expert_ids.size(); ++i) {
    ASSERT_EQ(b.weights_of_copy(b.expert_ids[i]), a.expert_ids[i]) << "token-expert pair " << i;
  }
}

}  // namespace
}  // namespace nvsvp::platform
