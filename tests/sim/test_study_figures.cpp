// The study's per-scheme figures in report.json (the columns study.csv takes from it), end to end
// through run_scenario on dgx-h100 (model S, top-8, few tokens):
//  - time_breakdown: the critical GPU's communication alone, compute alone, both and neither sum
//    to the layer time, as do the mean's; with pure_communication there is no compute; the fused
//    dysharp overlaps more of its layer than phased deepep;
//  - load: the same for every scheme of a run, and per GPU the replication section's figure;
//  - the Hub's hit rate only for the schemes that translate through a Hub; the reduction buffer's
//    no-eviction rate 1 at the default size and below 1 with a buffer smaller than one load
//    window, with as many evicted reductions as the rate implies.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

std::string study_figures_scenario(const std::string& schemes, const std::string& extra) {
  return "name: study_figures\n"
         "platform:\n"
         "  preset: dgx-h100\n" + extra +
         "workload:\n"
         "  model: S\n"
         "  top_k: 8\n"
         "  tokens_per_gpu: 64\n"
         "  routing: {kind: normal, std: 0.032, seed: 3}\n"
         "schemes: [" + schemes + "]\n"
         "simulation:\n"
         "  max_time_us: 10000\n";
}

using test::result_of;

json run_study_point(const test::TempDir& dir, const std::string& name, const std::string& text) {
  return test::run_scenario_text(dir, name, text);
}

double sum_of_parts(const json& b) {
  return b.at("comm_only_us").get<double>() + b.at("compute_only_us").get<double>() +
         b.at("overlap_us").get<double>() + b.at("idle_us").get<double>();
}

TEST(StudyFigures, TimeBreakdownSumsToTheLayerAndFusionOverlapsMore) {
  test::TempDir dir;
  const json report = run_study_point(dir, "breakdown", study_figures_scenario("deepep, dysharp", ""));
  for (const char* scheme : {"deepep", "dysharp"}) {
    SCOPED_TRACE(scheme);
    const json& r = result_of(report, scheme);
    ASSERT_TRUE(r.at("checks").at("passed").get<bool>());
    const double layer = r.at("layer_time_us").get<double>();
    const json& b = r.at("time_breakdown");
    EXPECT_NEAR(sum_of_parts(b), layer, 1e-6 * layer);
    EXPECT_NEAR(sum_of_parts(b.at("mean")), layer, 1e-6 * layer);
    for (const char* part : {"comm_only_us", "compute_only_us", "overlap_us", "idle_us"}) {
      EXPECT_GE(b.at(part).get<double>(), 0.0) << part;
    }
    EXPECT_GT(b.at("comm_only_us").get<double>() + b.at("overlap_us").get<double>(), 0.0);
    EXPECT_GT(b.at("compute_only_us").get<double>() + b.at("overlap_us").get<double>(), 0.0);
  }
  auto overlap_share = [&](const char* scheme) {
    const json& r = result_of(report, scheme);
    return r.at("time_breakdown").at("overlap_us").get<double>() / r.at("layer_time_us").get<double>();
  };
  EXPECT_GT(overlap_share("dysharp"), overlap_share("deepep"));
  // The load is the routing's: the same for both, and per GPU what replication reports.
  EXPECT_EQ(result_of(report, "deepep").at("load"), result_of(report, "dysharp").at("load"));
  const json& d = result_of(report, "deepep");
  EXPECT_DOUBLE_EQ(d.at("load").at("max_mean_gpu").get<double>(), d.at("replication").at("max_mean_before").get<double>());
  EXPECT_GT(d.at("load").at("max_mean_expert").get<double>(), 1.0);
}

TEST(StudyFigures, PureCommunicationHasNoComputeInItsBreakdown) {
  test::TempDir dir;
  const json report = run_study_point(dir, "pure", "pure_communication: true\n" + study_figures_scenario("deepep, dysharp-basic", ""));
  for (const char* scheme : {"deepep", "dysharp-basic"}) {
    const json& b = result_of(report, scheme).at("time_breakdown");
    EXPECT_DOUBLE_EQ(b.at("compute_only_us").get<double>(), 0.0) << scheme;
    EXPECT_DOUBLE_EQ(b.at("overlap_us").get<double>(), 0.0) << scheme;
    EXPECT_GT(b.at("comm_only_us").get<double>(), 0.0) << scheme;
  }
}

TEST(StudyFigures, HubHitRateAndReductionNoEvictionRate) {
  test::TempDir dir;
  const json roomy = run_study_point(dir, "roomy", study_figures_scenario("deepep, dysharp-basic", ""));
  EXPECT_TRUE(result_of(roomy, "deepep").at("hub").at("cache_hit_rate").is_null());
  EXPECT_TRUE(result_of(roomy, "deepep").at("switch").at("reduction_no_eviction_rate").is_null());
  const json& dynamic = result_of(roomy, "dysharp-basic");
  const double hit_rate = dynamic.at("hub").at("cache_hit_rate").get<double>();
  EXPECT_GT(hit_rate, 0.0);
  EXPECT_LE(hit_rate, 1.0);
  EXPECT_DOUBLE_EQ(dynamic.at("switch").at("reduction_no_eviction_rate").get<double>(), 1.0);
  EXPECT_EQ(dynamic.at("switch").at("evicted_reductions").get<uint64_t>(), 0u);

  // A buffer of 4 KB holds no more than a few of model S's 4 KB partial sums at once.
  const json tight = run_study_point(dir, "tight", study_figures_scenario("dysharp-basic", "  switch: {reduction_buffer_bytes: 4096}\n"));
  const json& s = result_of(tight, "dysharp-basic").at("switch");
  ASSERT_TRUE(result_of(tight, "dysharp-basic").at("checks").at("passed").get<bool>());
  const double rate = s.at("reduction_no_eviction_rate").get<double>();
  EXPECT_LT(rate, 1.0);
  EXPECT_GE(rate, 0.0);
  const double reductions = s.at("reductions").get<double>();
  EXPECT_NEAR(rate, 1.0 - s.at("evicted_reductions").get<double>() / reductions, 1e-12);
}

}  // namespace
}  // namespace nvsvp::platform
