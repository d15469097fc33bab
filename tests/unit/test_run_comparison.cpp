// `nvsvp compare`: two run folders written by hand, so that every figure the comparison reports is
// known in advance.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "nvsvp/platform/config_error.hpp"
#include "nvsvp/platform/run_comparison.hpp"

namespace nvsvp::platform {
namespace {

namespace fs = std::filesystem;

// A run folder with one scheme on two GPUs: its layer time, both GPUs' finishes, and link 0 of
// GPU 1 towards the switch carrying `payload` bytes.
fs::path write_run(const std::string& name, double layer_us, double gpu1_finish_us, uint64_t payload, bool passed = true) {
  const fs::path folder = fs::path(::testing::TempDir()) / ("run_comparison_" + name);
  fs::create_directories(folder);
  std::ofstream report(folder / "report.json");
  report << R"({"results": [{"scheme": "deepep", "layer_time_us": )" << layer_us
         << R"(, "phases": {"dispatch": {"start_us": 0, "end_us": 10}, "combine": {"start_us": 10, "end_us": )"
         << layer_us << R"(}}, "gpus": [{"gpu": 0, "finish_us": 20}, {"gpu": 1, "finish_us": )" << gpu1_finish_us
         << R"(}], "checks": {"passed": )" << (passed ? "true" : "false")
         << R"(}, "messages": {"gpu_to_switch": 4, "switch_to_gpu": 4}, "packets": {"gpu_to_switch": 8, "switch_to_gpu": 8},
             "sim": {"wall_seconds": 0.5, "transactions": 16}}]})";
  std::ofstream links(folder / "links_deepep.csv");
  links << "direction,gpu,link,chip,port,messages,packets,wire_bytes,payload_bytes,busy_us,utilization\n"
        << "gpu_to_switch,0,0,0,0,2,4,1088,1024,0.1,0.5\n"
        << "gpu_to_switch,1,0,0,1,2,4," << payload + 64 << "," << payload << ",0.1,0.5\n";
  return folder;
}

TEST(RunComparison, SameRunsAgreeWithinZeroTolerance) {
  const fs::path a = write_run("same_a", 25, 24, 1024);
  const fs::path b = write_run("same_b", 25, 24, 1024);
  const RunComparison c = compare_runs(a, b);
  ASSERT_EQ(c.schemes.size(), 1u);
  EXPECT_EQ(c.schemes[0].links_compared, 2u);
  EXPECT_EQ(c.schemes[0].links_differing, 0u);
  ComparisonTolerances exact;
  parse_tolerance("layer_time=0", exact);
  parse_tolerance("phase_end=0", exact);
  parse_tolerance("gpu_finish=0", exact);
  parse_tolerance("link_bytes=0", exact);
  EXPECT_TRUE(differences_beyond(c, exact).empty());
}

TEST(RunComparison, ReportsEachFigureBeyondItsTolerance) {
  const fs::path a = write_run("beyond_a", 25, 24, 1024);
  const fs::path b = write_run("beyond_b", 25.5, 24.2, 1040);  // layer +2 %, GPU 1 +0.83 %, one link +16 bytes
  const RunComparison c = compare_runs(a, b);
  const SchemeComparison& s = c.schemes[0];
  EXPECT_NEAR(s.layer_time_us.relative_difference(), 0.02, 1e-12);
  EXPECT_EQ(s.worst_gpu, 1u);
  EXPECT_NEAR(s.worst_gpu_difference, 0.2 / 24, 1e-12);
  EXPECT_EQ(s.links_differing, 1u);
  EXPECT_EQ(s.worst_link, "gpu_to_switch gpu 1 link 0");

  ComparisonTolerances loose;
  parse_tolerance("layer_time=0.03", loose);
  parse_tolerance("gpu_finish=0.01", loose);
  EXPECT_TRUE(differences_beyond(c, loose).empty());

  ComparisonTolerances tight;
  parse_tolerance("layer_time=0.01", tight);
  parse_tolerance("phase_end=0.01", tight);
  parse_tolerance("gpu_finish=0.005", tight);
  parse_tolerance("link_bytes=0", tight);
  const std::vector<std::string> lines = differences_beyond(c, tight);
  // The layer time, the combine phase's end (it ends with the layer), GPU 1, and link 0 of GPU 1.
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("layer time 25.000 us in A, 25.500 in B"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("combine ends"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("GPU 1 finishes"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("payload bytes 1024 / 1040"), std::string::npos) << lines[3];

  // Without tolerances nothing is a difference: the comparison only shows.
  EXPECT_TRUE(differences_beyond(c, ComparisonTolerances{}).empty());
  std::ostringstream table;
  print_comparison(table, c);
  EXPECT_NE(table.str().find("1.0200"), std::string::npos) << table.str();
}

TEST(RunComparison, FailedChecksDifferUnderAnyTolerance) {
  const RunComparison c = compare_runs(write_run("checks_a", 25, 24, 1024), write_run("checks_b", 25, 24, 1024, false));
  ComparisonTolerances any;
  parse_tolerance("layer_time=1", any);
  const std::vector<std::string> lines = differences_beyond(c, any);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "deepep: checks passed in A, failed in B");
}

TEST(RunComparison, RefusesWhatIsNotARunFolder) {
  const fs::path a = write_run("refuse_a", 25, 24, 1024);
  const fs::path empty = fs::path(::testing::TempDir()) / "run_comparison_empty";
  fs::create_directories(empty);
  EXPECT_THROW(compare_runs(a, empty), ConfigError);
  EXPECT_THROW(compare_runs(a, empty / "missing"), ConfigError);
  const fs::path broken = fs::path(::testing::TempDir()) / "run_comparison_broken";
  fs::create_directories(broken);
  std::ofstream(broken / "report.json") << R"({"results": [{"scheme": "deepep"}]})";
  try {
    compare_runs(a, broken);
    FAIL() << "a result without a layer time was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer_time_us"), std::string::npos) << e.what();
  }
  ComparisonTolerances t;
  EXPECT_THROW(parse_tolerance("layer=0.1", t), ConfigError);
  EXPECT_THROW(parse_tolerance("layer_time=-1", t), ConfigError);
  EXPECT_THROW(parse_tolerance("layer_time=1%", t), ConfigError);
  EXPECT_THROW(parse_tolerance("layer_time", t), ConfigError);
}

}  // namespace
}  // namespace nvsvp::platform
