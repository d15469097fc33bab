// The layer a run resolves once (layer_spec.hpp): one part, the layer itself, without partitions;
// a spec per partition, each that partition's own layer run alone, with them; and a degree
// search's candidate that changes the software parameters of every spec and nothing else.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "../common/test_support.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

Scenario small_scenario(const test::TempDir& dir, const std::string& extra) {
  const std::string text = "name: t\n"
                           "platform: dgx-h100\n"
                           "workload:\n"
                           "  model: S\n"
                           "  tokens_per_gpu: 32\n"
                           "  routing: {kind: uniform, seed: 5}\n"
                           "schemes: [deepep, tutel]\n" + extra;
  return load_scenario(dir.write("s.yaml", text), {}, test::config_dir());
}

TEST(ResolvedLayer, WithoutPartitionsTheOnePartIsTheLayer) {
  test::TempDir dir;
  const ResolvedLayer resolved = resolve_layer(small_scenario(dir, ""));
  ASSERT_EQ(resolved.parts.size(), 1u);
  EXPECT_EQ(resolved.parts[0], resolved.layer);
  EXPECT_EQ(resolved.layer->routing.gpus, 8u);
}

TEST(ResolvedLayer, EachPartitionRunsItsOwnLayerAsItWouldAlone) {
  test::TempDir dir;
  const Scenario scenario = small_scenario(dir, "partitions: [[6, 1], [0, 2, 3, 4]]\n");
  const ResolvedLayer resolved = resolve_layer(scenario);
  ASSERT_EQ(resolved.parts.size(), 2u);
  for (size_t p = 0; p < 2; ++p) {
    SCOPED_TRACE(p);
    const auto alone = make_layer_spec(partition_alone(scenario, p));
    EXPECT_EQ(resolved.parts[p]->routing.gpus, scenario.partitions[p].size());
    EXPECT_EQ(resolved.parts[p]->routing.expert_ids, alone->routing.expert_ids);
  }
  EXPECT_NE(resolved.parts[0]->routing.expert_ids, resolved.parts[1]->routing.expert_ids);
}

TEST(ResolvedLayer, ACandidatesSoftwareChangesNothingElse) {
  test::TempDir dir;
  const ResolvedLayer resolved = resolve_layer(small_scenario(dir, "partitions: [[0, 1, 2, 3], [4, 5, 6, 7]]\n"));
  fw::SoftwareParams software = resolved.layer->software;
  software.tutel_degree = 4;
  const ResolvedLayer candidate = with_software(resolved, software);
  ASSERT_EQ(candidate.parts.size(), resolved.parts.size());
  EXPECT_EQ(candidate.layer->software.tutel_degree, 4u);
  EXPECT_EQ(resolved.layer->software.tutel_degree, 0u) << "the resolved layer itself is left as it was";
  EXPECT_EQ(candidate.layer->routing.expert_ids, resolved.layer->routing.expert_ids);
  for (size_t p = 0; p < candidate.parts.size(); ++p) {
    EXPECT_EQ(candidate.parts[p]->software.tutel_degree, 4u);
    EXPECT_EQ(candidate.parts[p]->routing.expert_ids, resolved.parts[p]->routing.expert_ids);
  }
}

}  // namespace
}  // namespace nvsvp::platform
