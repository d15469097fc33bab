// A fabric past 64 GPUs and ports (the masks of issue 24): 72 GPUs on two switch chips of 72 ports,
// one link to each, so that a chip down still leaves every GPU a link. Whole layers: nvls's static
// multicast groups of 72 members (multimem st to every member, ld_reduce from every member),
// dynamic multimem, a link down on port 70 and a chip down whose lost loads had member reads at
// GPUs 64..71 (counted for those GPUs, not for GPUs 0..7: the receive-count check says so).
#include <gtest/gtest.h>

#include <string>

#include "../common/test_support.hpp"

namespace nvsvp::platform {
namespace {

constexpr uint64_t kGpus = 72;
constexpr uint64_t kTokensPerGpu = 8;

// A model of 144 experts (two per GPU): no preset divides over 72 GPUs.
const char* kWideScenario = R"(
name: wide
platform:
  preset: nvl64
  gpus: 72
  switch_chips: 2
  links_per_chip: [1, 1]
  switch: {ports: 72, register_access_ns: 1000}
workload:
  model: {preset: S, experts: 144}
  top_k: 8
  tokens_per_gpu: 8
  routing: {kind: uniform, seed: 5}
schemes: [deepep, nvls, dysharp]
simulation: {max_time_us: 20000}
)";

TEST(WideFabric, SeventyTwoMemberGroupsReplicateAndReduceOverEveryGpu) {
  test::TempDir dir;
  const nlohmann::json report = test::run_scenario_text(dir, "wide", kWideScenario);
  for (const char* scheme : {"deepep", "nvls", "dysharp"}) {
    const nlohmann::json& r = test::result_of(report, scheme);
    EXPECT_TRUE(r.at("checks").at("passed")) << scheme << r.at("checks").dump();
    EXPECT_EQ(r.at("checks").at("receive_count_errors"), 0) << scheme;
    EXPECT_EQ(r.at("switch").at("access_errors"), 0) << scheme;
  }
  // nvls: every token stored to all 72 members, and every combine a ld_reduce over all 72.
  const nlohmann::json& nvls = test::result_of(report, "nvls").at("switch");
  const uint64_t tokens = kGpus * kTokensPerGpu;
  EXPECT_EQ(nvls.at("reductions").get<uint64_t>(), tokens);
  EXPECT_EQ(nvls.at("replications").get<uint64_t>(), 2 * tokens * kGpus);
}

// GPU 70's link 0 is chip 0's port 70: the third word of LINK_DOWN_PORTS and of the route entry.
// Chip 0 has no other port to GPU 70, so firmware retires it and the GPUs go on over chip 1.
TEST(WideFabric, LinkDownOnPortSeventyIsSeenAndRecovered) {
  test::TempDir dir;
  const nlohmann::json report = test::run_scenario_text(
      dir, "port70", std::string(kWideScenario) + "faults: [{kind: link_down, gpu: 70, link: 0, at_us: 3}]\n");
  for (const char* scheme : {"deepep", "nvls", "dysharp"}) {
    const nlohmann::json& r = test::result_of(report, scheme);
    ASSERT_TRUE(r.at("checks").at("passed")) << scheme;
    const nlohmann::json& o = r.at("faults").at("outages");
    ASSERT_EQ(o.at("recoveries").size(), 2u) << scheme << o.dump();
    const nlohmann::json& retired = o.at("recoveries")[0];
    EXPECT_EQ(retired.at("kind"), "chip_retired") << scheme;
    EXPECT_EQ(retired.at("chip"), 0) << scheme;
    EXPECT_EQ(retired.at("gpu"), 70) << scheme;
    const nlohmann::json& down = o.at("recoveries")[1];
    EXPECT_EQ(down.at("kind"), "link_down") << scheme;
    EXPECT_EQ(down.at("chip"), 0) << scheme;
    EXPECT_EQ(down.at("port"), 70) << scheme;
    EXPECT_EQ(down.at("gpu"), 70) << scheme;
    EXPECT_EQ(down.at("link"), 0) << scheme;
    const uint64_t lost = o.at("lost").at("messages").get<uint64_t>() + o.at("lost").at("loads").get<uint64_t>();
    EXPECT_EQ(o.at("reissued").get<uint64_t>(), lost) << scheme;
    EXPECT_TRUE(o.at("accounted")) << scheme;
  }
}

// A chip down mid-layer: its loads are lost after some member reads reached their GPUs (GPUs up
// to 71); those answers count for nothing, and each GPU's receive count must leave out exactly its
// own.
TEST(WideFabric, LostLoadsChargeTheirMemberReadsToGpusAbove63) {
  test::TempDir dir;
  const nlohmann::json report = test::run_scenario_text(
      dir, "chip_down", std::string(kWideScenario) + "faults: [{kind: chip_down, chip: 1, at_us: 10}]\n");
  uint64_t lost_loads = 0;
  for (const char* scheme : {"nvls", "dysharp"}) {
    const nlohmann::json& r = test::result_of(report, scheme);
    EXPECT_TRUE(r.at("checks").at("passed")) << scheme << r.at("checks").dump();
    EXPECT_EQ(r.at("checks").at("receive_count_errors"), 0) << scheme;
    const nlohmann::json& o = r.at("faults").at("outages");
    const uint64_t lost = o.at("lost").at("messages").get<uint64_t>() + o.at("lost").at("loads").get<uint64_t>();
    EXPECT_EQ(o.at("reissued").get<uint64_t>(), lost) << scheme;
    lost_loads += o.at("lost").at("loads").get<uint64_t>();
  }
  EXPECT_GT(lost_loads, 0u) << "the chip held loads at 10 us";
}

}  // namespace
}  // namespace nvsvp::platform
