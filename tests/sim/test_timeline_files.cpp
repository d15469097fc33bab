// The timeline files of a run (dgx-h100, model S, 64 tokens per GPU, through run_scenario as the
// command runs it): utilization_<scheme>.csv holds per bin the links' busy fraction per
// direction, mean and per GPU, and summed over the bins it gives back each link direction's busy
// time of report.json; trace_<scheme>.json is Chrome trace-event JSON with every GPU's phases and
// compute intervals inside the layer and the links' utilization as counters; the statistics
// files agree with report.json's `statistics`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

const char* const kScenario =
    "name: timeline_test\n"
    "platform: dgx-h100\n"
    "workload:\n"
    "  model: S\n"
    "  top_k: 8\n"
    "  tokens_per_gpu: 64\n"
    "  routing: {kind: uniform, seed: 4}\n"
    "schemes: [deepep, dysharp-basic, dysharp]\n"
    "simulation: {max_time_us: 10000, timeline_bin_us: 0.5}\n";

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    std::string cell;
    while (std::getline(fields, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

TEST(TimelineFiles, UtilizationSeriesAndTraceAgreeWithTheReport) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(dir.write("s.yaml", kScenario), {}, test::config_dir());
  const std::string out_dir = dir.path() + "/out";
  const json report = test::run_and_read_report(scenario, out_dir);
  ASSERT_FALSE(report.at("results").at(0).contains("timeline")) << "bulky data stays out of report.json";

  for (const json& result : report.at("results")) {
    const std::string scheme = result.at("scheme").get<std::string>();
    SCOPED_TRACE(scheme);
    const double layer_us = result.at("layer_time_us").get<double>();
    const uint32_t gpus = report.at("scenario").at("gpus").get<uint32_t>();

    // The series: a header, then bins 0.5 us apart from the layer's start to its end.
    const auto rows = read_csv(out_dir + "/utilization_" + scheme + ".csv");
    ASSERT_GT(rows.size(), 2u);
    ASSERT_EQ(rows[0].size(), 3 + 2 * gpus);
    EXPECT_EQ(rows[0][0], "time_us");
    EXPECT_EQ(rows[0][1], "gpu_to_switch");
    EXPECT_EQ(rows[0][3], "gpu0_to_switch");
    const size_t bins = rows.size() - 1;
    EXPECT_EQ(bins, static_cast<size_t>(std::ceil(layer_us / 0.5)));
    double up = 0.0, down = 0.0;
    for (size_t b = 1; b < rows.size(); ++b) {
      EXPECT_DOUBLE_EQ(std::stod(rows[b][0]), 0.5 * static_cast<double>(b - 1));
      for (size_t c = 1; c < rows[b].size(); ++c) {
        const double u = std::stod(rows[b][c]);
        EXPECT_GE(u, 0.0);
        EXPECT_LE(u, 1.0 + 1e-9) << "bin " << b - 1 << " column " << rows[0][c];
      }
      up += std::stod(rows[b][1]) * 0.5;
      down += std::stod(rows[b][2]) * 0.5;
    }
    // Summed over the bins, the mean busy fraction gives back report.json's utilization (busy time
    // over links x layer time); the CSV keeps 6 significant digits.
    EXPECT_NEAR(up / layer_us, result.at("utilization").at("gpu_to_switch").get<double>(), 1e-4);
    EXPECT_NEAR(down / layer_us, result.at("utilization").at("switch_to_gpu").get<double>(), 1e-4);

    // The trace: every GPU's three phases and its compute, inside the layer; counters per GPU and
    // for the fabric. Slices are told apart by their track's name: phases that overlap (the fused
    // schedule's dispatch, experts and combine) are on tracks "phases", "phases (2)", ... so that
    // none is dropped, and TempDir checks Perfetto's nesting rule on each track.
    std::ifstream trace_file(out_dir + "/trace_" + scheme + ".json");
    const json trace = json::parse(trace_file);
    std::map<std::pair<int, int>, std::string> track_names;
    for (const json& e : trace.at("traceEvents")) {
      if (e.at("ph") == "M" && e.at("name") == "thread_name") {
        track_names[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
      }
    }
    std::map<int, std::vector<std::string>> phases;
    std::map<int, std::set<int>> phase_tracks;
    std::map<int, int> compute, counters;
    for (const json& e : trace.at("traceEvents")) {
      const std::string ph = e.at("ph").get<std::string>();
      const int pid = e.at("pid").get<int>();
      if (ph == "X") {
        const double ts = e.at("ts").get<double>();
        EXPECT_GE(ts, 0.0);
        EXPECT_LE(ts + e.at("dur").get<double>(), layer_us + 5e-4);  // times in whole ns
        const int tid = e.at("tid").get<int>();
        const std::string& track = track_names[{pid, tid}];
        if (track.rfind("phases", 0) == 0) {
          phases[pid].push_back(e.at("name").get<std::string>());
          phase_tracks[pid].insert(tid);
        } else if (track.rfind("compute, stream ", 0) == 0) {
          compute[pid]++;
        } else {
          ADD_FAILURE() << "a slice on track \"" << track << "\" (pid " << pid << ", tid " << tid << ")";
        }
      } else if (ph == "C") {
        counters[pid]++;
      }
    }
    size_t gpus_with_overlapping_phases = 0;
    for (uint32_t g = 0; g < gpus; ++g) {
      std::vector<std::string>& names = phases[static_cast<int>(g)];
      std::sort(names.begin(), names.end());
      EXPECT_EQ(names, (std::vector<std::string>{"combine", "dispatch", "experts"})) << "GPU " << g;
      EXPECT_GE(compute[static_cast<int>(g)], 1) << "GPU " << g;
      EXPECT_GT(counters[static_cast<int>(g)], 1) << "GPU " << g;
      if (phase_tracks[static_cast<int>(g)].size() > 1) ++gpus_with_overlapping_phases;
    }
    // The fused schedule overlaps its phases on every GPU; the basic ones run them in sequence.
    EXPECT_EQ(gpus_with_overlapping_phases, scheme == "dysharp" ? gpus : 0u);
    EXPECT_GT(counters[static_cast<int>(gpus)], 1) << "the fabric's counter";
  }
}

// The statistics files against report.json: latency_<scheme>.csv's messages per class are the
// section's counts, stats_<scheme>.csv's messages per direction are the links' and its input
// buffer means per chip are occupancy_<scheme>.csv's bins averaged over the layer.
TEST(TimelineFiles, StatisticsFilesAgreeWithTheReport) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(dir.write("s.yaml", kScenario), {}, test::config_dir());
  const std::string out_dir = dir.path() + "/out";
  const json report = test::run_and_read_report(scenario, out_dir);
  for (const json& result : report.at("results")) {
    const std::string scheme = result.at("scheme").get<std::string>();
    SCOPED_TRACE(scheme);
    const json& statistics = result.at("statistics");
    const double layer_us = result.at("layer_time_us").get<double>();

    const auto latency = read_csv(out_dir + "/latency_" + scheme + ".csv");
    ASSERT_GT(latency.size(), 1u);
    EXPECT_EQ(latency[0], (std::vector<std::string>{"class", "bin_start_ns", "bin_end_ns", "messages"}));
    std::map<std::string, uint64_t> per_class;
    for (size_t r = 1; r < latency.size(); ++r) {
      EXPECT_LT(std::stod(latency[r][1]), std::stod(latency[r][2]));
      per_class[latency[r][0]] += std::stoull(latency[r][3]);
    }
    ASSERT_EQ(per_class.size(), statistics.at("latency_ns").size());
    for (const auto& [name, messages] : per_class) {
      const json& figures = statistics.at("latency_ns").at(name);
      EXPECT_EQ(messages, figures.at("messages").get<uint64_t>()) << name;
      EXPECT_LE(figures.at("p50").get<double>(), figures.at("p90").get<double>()) << name;
      EXPECT_LE(figures.at("p90").get<double>(), figures.at("p99").get<double>()) << name;
      EXPECT_LE(figures.at("p99").get<double>(), figures.at("max").get<double>()) << name;
    }

    const auto hops = read_csv(out_dir + "/stats_" + scheme + ".csv");
    ASSERT_GT(hops.size(), 1u);
    EXPECT_EQ(hops[0][0], "component");
    EXPECT_EQ(hops[0].size(), 16u);
    EXPECT_EQ(hops[0][7], "messages");
    EXPECT_EQ(hops[0][8], "packets");
    uint64_t up = 0, down = 0, up_packets = 0, down_packets = 0;
    std::map<std::string, double> input_mean;  // per chip
    for (size_t r = 1; r < hops.size(); ++r) {
      const bool gpu_to_switch = hops[r][1] == "gpu_to_switch";
      (gpu_to_switch ? up : down) += std::stoull(hops[r][7]);
      (gpu_to_switch ? up_packets : down_packets) += std::stoull(hops[r][8]);
      if (gpu_to_switch) input_mean[hops[r][4]] += std::stod(hops[r][14]);
    }
    EXPECT_EQ(up, result.at("messages").at("gpu_to_switch").get<uint64_t>());
    EXPECT_EQ(down, result.at("messages").at("switch_to_gpu").get<uint64_t>());
    EXPECT_EQ(up_packets, result.at("packets").at("gpu_to_switch").get<uint64_t>());
    EXPECT_EQ(down_packets, result.at("packets").at("switch_to_gpu").get<uint64_t>());
    EXPECT_GE(up_packets, up) << "a message is at least one packet";

    const auto occupancy = read_csv(out_dir + "/occupancy_" + scheme + ".csv");
    ASSERT_GT(occupancy.size(), 1u);
    ASSERT_EQ(occupancy[0].size(), 1 + 4 * input_mean.size());
    for (const auto& [chip, mean] : input_mean) {
      const size_t column = 1 + 4 * std::stoul(chip);
      EXPECT_EQ(occupancy[0][column], "switch" + chip + "_input_mean_flits");
      double area = 0.0;  // flits x us
      for (size_t b = 1; b < occupancy.size(); ++b) area += std::stod(occupancy[b][column]) * 0.5;
      EXPECT_GT(mean, 0.0) << "chip " << chip;
      EXPECT_NEAR(area / layer_us, mean, 1e-4 * mean) << "chip " << chip;
    }
  }
}

// A scheme whose process fails is in report.json as an error, its links CSV holds only the header
// and it has no timeline files.
TEST(TimelineFiles, AFailedSchemeHasAnErrorAndNoTimeline) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(dir.write("s.yaml", kScenario), {}, test::config_dir());
  const auto layer = make_layer_spec(scenario);
  auto broken = std::make_shared<fw::MoeLayerSpec>(*layer);
  broken->routing.gpus = 0;  // the plan refuses a routing that does not fit the layer
  std::vector<SchemeRun> runs;
  runs.push_back(run_scheme_in_child(scenario, "deepep", broken, true));
  ASSERT_TRUE(runs[0].result.contains("error")) << runs[0].result.dump();
  EXPECT_EQ(runs[0].result.at("scheme"), "deepep");
  EXPECT_TRUE(runs[0].links.empty());
  EXPECT_FALSE(runs[0].timeline.has_value());

  const Report report = make_report(scenario, resolve_layer(scenario, layer), std::move(runs), 0.0);
  EXPECT_FALSE(report.passed);
  const std::string out_dir = dir.path() + "/out";
  write_report_files(report, out_dir);
  const auto rows = read_csv(out_dir + "/links_deepep.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "direction");
  EXPECT_EQ(read_csv(out_dir + "/stats_deepep.csv").size(), 1u);
  EXPECT_EQ(read_csv(out_dir + "/latency_deepep.csv").size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(out_dir + "/occupancy_deepep.csv"));
  EXPECT_FALSE(std::filesystem::exists(out_dir + "/utilization_deepep.csv"));
  EXPECT_FALSE(std::filesystem::exists(out_dir + "/trace_deepep.json"));
}

}  // namespace
}  // namespace nvsvp::platform
