// Studies: the points (product order, explicit points, names, values), the strict reading of study
// files, the speedups and their statistics, the CSV; and the running of points, with a stand-in
// for `nvsvp run` so that nothing simulates.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../common/test_support.hpp"
#include "nvsvp/platform/child_processes.hpp"
#include "nvsvp/platform/study.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;
using test::TempDir;

const std::string kConfigDir = test::config_dir();

// The head of a study with an inline base scenario (lines 1-9); tests add the points.
const char* const kHead =
    "base:\n"                         // 1
    "  platform: dgx-h100\n"          // 2
    "  workload:\n"                   // 3
    "    model: S\n"                  // 4
    "    top_k: 8\n"                  // 5
    "    tokens_per_gpu: 16\n"        // 6
    "    routing: {kind: uniform}\n"  // 7
    "schemes: [deepep, nvls]\n"       // 8
    "reference: nvls\n";              // 9

std::string study_error(const std::string& file) {
  try {
    load_study(file, {}, kConfigDir);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

std::vector<std::string> names_of(const Study& study) {
  std::vector<std::string> names;
  for (const StudyPoint& point : study.points) names.push_back(point.name);
  return names;
}

// ---------------------------------------------------------------------------------------------
// Points

TEST(Study, PointsAreTheSweepsProductFirstKeyOutermostThenTheExplicitPoints) {
  TempDir dir;
  const std::string file = dir.write("models.yaml", std::string(kHead) +
                                                        "sweep:\n"
                                                        "  workload.model: [S, M]\n"
                                                        "  workload.top_k: [2, 4]\n"
                                                        "points:\n"
                                                        "  - {platform: gh200-nvl32, workload.top_k: 16}\n");
  const Study study = load_study(file, {}, kConfigDir);
  EXPECT_EQ(study.name, "models");  // the file's name, as the study has no name key
  EXPECT_EQ(study.schemes, (std::vector<std::string>{"deepep", "nvls"}));
  EXPECT_EQ(study.reference, "nvls");
  EXPECT_EQ(study.keys, (std::vector<std::string>{"workload.model", "workload.top_k", "platform"}));
  // An explicit point is named in the keys' order, whatever order it writes them in.
  EXPECT_EQ(names_of(study), (std::vector<std::string>{"model=S,top_k=2", "model=S,top_k=4", "model=M,top_k=2",
                                                       "model=M,top_k=4", "top_k=16,platform=gh200-nvl32"}));
  // A key a point does not set shows the value the base writes.
  EXPECT_EQ(study.points[0].values, (std::vector<std::string>{"S", "2", "dgx-h100"}));
  EXPECT_EQ(study.points[4].values, (std::vector<std::string>{"S", "16", "gh200-nvl32"}));
  EXPECT_EQ(study.points[2].scenario.workload.model.name, "M");
  EXPECT_EQ(study.points[2].scenario.workload.top_k, 2u);
  EXPECT_EQ(study.points[4].scenario.platform.gpus, 32u);
  EXPECT_EQ(study.points[4].scenario.workload.top_k, 16u);
  EXPECT_EQ(study.points[4].scenario.name, "models");  // every point's report names the study
  EXPECT_EQ(study.points[0].directory, "1_model=S,top_k=2");
  EXPECT_EQ(study.points[4].directory, "5_top_k=16,platform=gh200-nvl32");
}

TEST(Study, PointsAreBoundedBeforeTheyAreMade) {
  TempDir dir;
  // 101 x 100 = 10 100 points: refused at the second axis, before any value is compared or run.
  std::string hundred = "[";
  for (int i = 0; i < 100; ++i) hundred += (i ? ", " : "") + std::to_string(i + 1);
  hundred += "]";
  std::string hundred_and_one = hundred.substr(0, hundred.size() - 1) + ", 101]";
  const std::string sweep = dir.write("sweep.yaml", std::string(kHead) + "sweep:\n  workload.tokens_per_gpu: " +
                                                        hundred_and_one + "\n  workload.top_k: " + hundred + "\n");
  EXPECT_EQ(study_error(sweep), sweep + ":12: sweep.workload.top_k: expected a sweep of at most 10000 points (an input "
                                        "limit), got 101 x 100 points so far");
  // A sweep of 100 points and 9 901 more listed: 10 001.
  std::string listed = "points:\n";
  for (int i = 0; i < 9901; ++i) listed += "  - {workload.tokens_per_gpu: " + std::to_string(i + 1000) + "}\n";
  const std::string both = dir.write("both.yaml", std::string(kHead) + "sweep:\n  workload.top_k: " + hundred + "\n" + listed);
  EXPECT_NE(study_error(both).find("points: expected at most 10000 points with the sweep's (an input limit), got 100 + 9901"),
            std::string::npos)
      << study_error(both);
}

TEST(Study, DirectoriesAreNumberedWithEqualWidthInPointOrder) {
  TempDir dir;
  const std::string file =
      dir.write("ten.yaml", std::string(kHead) + "sweep:\n  workload.top_k: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n");
  const Study study = load_study(file, {}, kConfigDir);
  ASSERT_EQ(study.points.size(), 10u);
  EXPECT_EQ(study.points[0].directory, "01_top_k=1");
  EXPECT_EQ(study.points[9].directory, "10_top_k=10");
}

TEST(Study, NamesUseTheShortestDistinctTailOfEachKeyAndValuesAsWritten) {
  TempDir dir;
  const std::string file = dir.write("names.yaml", std::string(kHead) +
                                                       "name: routing\n"
                                                       "sweep:\n"
                                                       "  workload.top_k: [2]\n"
                                                       "  workload.model.top_k: [4]\n"
                                                       "  workload.routing: [{kind: zipf, exponent: 2}]\n");
  const Study study = load_study(file, {}, kConfigDir);
  EXPECT_EQ(study.name, "routing");
  ASSERT_EQ(study.points.size(), 1u);
  const StudyPoint& point = study.points[0];
  EXPECT_EQ(point.name, "workload.top_k=2,model.top_k=4,routing={kind:zipf,exponent:2}");
  EXPECT_EQ(point.directory, "1_workload.top_k=2,model.top_k=4,routing=_kind_zipf,exponent_2_");
  EXPECT_EQ(point.values, (std::vector<std::string>{"2", "4", "{kind:zipf,exponent:2}"}));
  EXPECT_EQ(point.scenario.workload.routing.kind, "zipf");
  EXPECT_EQ(point.scenario.workload.routing.exponent, 2.0);
}

TEST(Study, SetChangesTheBaseBeforeThePointsValues) {
  TempDir dir;
  const std::string file = dir.write("set.yaml", std::string(kHead) + "sweep:\n  workload.top_k: [2, 4]\n");
  const Study study = load_study(file, {"workload.tokens_per_gpu=8", "workload.top_k=16"}, kConfigDir);
  ASSERT_EQ(study.points.size(), 2u);
  for (const StudyPoint& point : study.points) EXPECT_EQ(point.scenario.workload.tokens_per_gpu, 8u);
  EXPECT_EQ(study.points[0].scenario.workload.top_k, 2u);
  EXPECT_EQ(study.points[1].scenario.workload.top_k, 4u);
}

TEST(Study, BaseFileAndTracePathsAreRelativeToTheFileThatWritesThem) {
  TempDir dir;
  dir.write("scenarios/one_token.yaml",
            "name: one_token\nplatform: dgx-h100\n"
            "workload: {model: S, top_k: 1, tokens_per_gpu: 1, routing: {kind: uniform}}\n"
            "schemes: [deepep]\n");
  dir.write("studies/trace.csv", "0\n1\n2\n3\n4\n5\n6\n7\n");  // one expert per token, 8 GPUs x 1 token
  const std::string file = dir.write("studies/trace.yaml",
                                     "scenario: ../scenarios/one_token.yaml\n"
                                     "reference: deepep\n"
                                     "sweep:\n"
                                     "  workload.routing: [{kind: trace, file: trace.csv}]\n");
  const Study study = load_study(file, {}, kConfigDir);
  ASSERT_EQ(study.points.size(), 1u);
  EXPECT_EQ(study.schemes, (std::vector<std::string>{"deepep"}));  // the base's, as the study names none
  EXPECT_EQ(study.points[0].scenario.workload.routing.file, dir.path() + "/studies/trace.csv");
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(StudyErrors, UnknownKeyNamesTheFileLineAndTheValidKeys) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", std::string(kHead) + "sweeep:\n  workload.top_k: [2]\n");
  EXPECT_EQ(study_error(file), file + ":10: sweeep: expected one of the keys name, scenario, base, schemes, "
                                      "reference, sweep, points, timelines, got unknown key sweeep");
}

TEST(StudyErrors, ReferenceMustBeAmongTheSchemes) {
  TempDir dir;
  std::string head = kHead;
  head.erase(head.find("reference: nvls\n"));
  const std::string named = dir.write("n.yaml", head + "reference: dysharp-basic\nsweep:\n  workload.top_k: [2]\n");
  EXPECT_EQ(study_error(named),
            named + ":9: reference: expected one of the study's schemes deepep, nvls, got dysharp-basic");
  const std::string by_default = dir.write("d.yaml", head + "sweep:\n  workload.top_k: [2]\n");
  EXPECT_EQ(study_error(by_default),
            by_default + ":1: reference: expected one of the study's schemes deepep, nvls, got dysharp (the default)");
}

TEST(StudyErrors, BadPointNamesTheStudyThePointAndTheKey) {
  TempDir dir;
  const std::string range = dir.write("range.yaml", std::string(kHead) + "sweep:\n  workload.top_k: [2,\n    0]\n");
  EXPECT_EQ(study_error(range), range + ": point top_k=0: " + range +
                                    ":12: workload.top_k: expected an integer in [1, 64], got 0");
  const std::string unknown = dir.write("unknown.yaml", std::string(kHead) + "points:\n  - workload.top_kk: 2\n");
  EXPECT_EQ(study_error(unknown).rfind(unknown + ": point top_kk=2: " + unknown + ":11: workload.top_kk: expected "
                                                 "one of the keys model, top_k",
                                       0),
            0u)
      << study_error(unknown);
  // A check across keys: the point's experts against the base's platform.
  const std::string across = dir.write("across.yaml", std::string(kHead) + "sweep:\n  workload.model.experts: [60]\n");
  EXPECT_EQ(study_error(across), across + ": point experts=60: " + across +
                                     ":11: workload.model.experts: expected a number of experts divisible by the "
                                     "number of GPUs (experts are spread evenly), got 60 experts over 8 GPUs");
}

TEST(StudyErrors, SweepsAndPointsAreChecked) {
  TempDir dir;
  auto error_of = [&](const std::string& points) {
    return study_error(dir.write("s.yaml", std::string(kHead) + points));
  };
  const std::string file = dir.path() + "/s.yaml";
  EXPECT_EQ(error_of(""), file + ":1: expected at least one point (keys sweep or points), got none");
  EXPECT_EQ(error_of("sweep: {}\n"),
            file + ":10: sweep: expected a mapping of scenario key paths to lists of values, got an empty mapping");
  EXPECT_EQ(error_of("sweep:\n  workload.top_k: 8\n"),
            file + ":11: sweep.workload.top_k: expected a non-empty list of values, got 8");
  EXPECT_EQ(error_of("sweep:\n  workload.top_k: [2, 4, 2]\n"),
            file + ":11: sweep.workload.top_k: expected each value once, got a second 2");
  EXPECT_EQ(error_of("sweep:\n  workload..top_k: [2]\n"),
            file + ":11: sweep.workload..top_k: expected a scenario key path a.b.c, got \"workload..top_k\"");
  EXPECT_EQ(error_of("sweep:\n  schemes: [[deepep]]\n"),
            file + ":11: sweep.schemes: expected a scenario key other than schemes (the study's key schemes lists "
                   "them), got schemes");
  EXPECT_EQ(error_of("points: [8]\n"),
            file + ":10: points[0]: expected a mapping of scenario key paths to values, got 8");
  EXPECT_EQ(error_of("sweep:\n  workload.top_k: [2]\npoints:\n  - workload.top_k: 2\n"),
            file + ":13: points[0]: expected each point once, got top_k=2 again (first at " + file + ":10)");
}

TEST(StudyErrors, BaseIsAScenarioFileOrAMappingNotBoth) {
  TempDir dir;
  const std::string sweep = "reference: deepep\nschemes: [deepep]\nsweep:\n  workload.top_k: [2]\n";
  const std::string neither = dir.write("neither.yaml", sweep);
  EXPECT_EQ(study_error(neither), neither + ":1: scenario: expected a base scenario: scenario (a file) or base (a "
                                            "mapping) (required key), got nothing");
  const std::string both = dir.write("both.yaml", "scenario: x.yaml\nbase: {}\n" + sweep);
  EXPECT_EQ(study_error(both),
            both + ":2: base: expected a base scenario: scenario (a file) or base (a mapping), not both, got both");
  const std::string list = dir.write("list.yaml", "base: [1]\n" + sweep);
  EXPECT_EQ(study_error(list), list + ":1: base: expected a scenario mapping, got a list");
  const std::string missing = dir.write("missing.yaml", "scenario: none.yaml\n" + sweep);
  EXPECT_EQ(study_error(missing), missing + ":1: scenario: expected an existing scenario file, got " + dir.path() +
                                      "/none.yaml (no such file)");
}

// ---------------------------------------------------------------------------------------------
// Speedups, statistics, CSV

// One scheme's entry of report.json's results[], with the fields the CSV reads.
json result(const std::string& scheme, double layer_time_us, bool passed) {
  return {{"scheme", scheme},
          {"layer_time_us", layer_time_us},
          {"ideal_comm_time_us", 5},
          {"comm_efficiency", 5.0 / layer_time_us},
          {"traffic_bytes", {{"gpu_to_switch", 1000}, {"switch_to_gpu", 2000}}},
          {"payload_bytes", {{"gpu_to_switch", 900}, {"switch_to_gpu", 1800}}},
          {"utilization", {{"gpu_to_switch", 0.25}, {"switch_to_gpu", 0.5}}},
          {"payload_efficiency", {{"total", 0.9}}},
          {"load", {{"max_mean_gpu", 1.25}, {"max_mean_expert", 2}}},
          {"hub", {{"cache_hit_rate", nullptr}}},
          {"switch", {{"reduction_no_eviction_rate", 0.75}}},
          {"time_breakdown", {{"comm_only_us", 4}, {"compute_only_us", 3}, {"overlap_us", 2}, {"idle_us", 1}}},
          {"checks", {{"passed", passed}}},
          {"sim", {{"wall_seconds", 1.5}}}};
}

// The entry of a scheme whose simulation process died.
json died(const std::string& scheme) { return {{"scheme", scheme}, {"error", "the process died"}}; }

PointRun run_of(std::vector<json> results) {
  PointRun run;
  run.results = json(std::move(results));
  return run;
}

Study study_of(std::vector<std::string> schemes, std::vector<std::string> point_names) {
  Study study;
  study.schemes = std::move(schemes);
  study.reference = "ref";
  for (const std::string& name : point_names) {
    StudyPoint point;
    point.name = name;
    study.points.push_back(point);
  }
  return study;
}

TEST(StudySpeedup, IsTheSchemesTimeOverTheReferencesWhenBothPassed) {
  const json results = {result("deepep", 30.0, true), result("ref", 10.0, true), result("nvls", 5.0, false)};
  EXPECT_DOUBLE_EQ(speedup_of_reference(results, "deepep", "ref").value_or(0.0), 3.0);
  EXPECT_DOUBLE_EQ(speedup_of_reference(results, "ref", "ref").value_or(0.0), 1.0);
  EXPECT_FALSE(speedup_of_reference(results, "nvls", "ref"));   // failed its checks
  EXPECT_FALSE(speedup_of_reference(results, "other", "ref"));  // did not run
  EXPECT_FALSE(speedup_of_reference(json{result("deepep", 30.0, true), result("ref", 10.0, false)}, "deepep", "ref"));
  EXPECT_FALSE(speedup_of_reference(json{result("deepep", 30.0, true), died("ref")}, "deepep", "ref"));
}

TEST(StudySpeedup, StatisticsAreTheGeometricMeanAndMaximumOverThePointsThatHaveOne) {
  const Study study = study_of({"deepep", "ref", "nvls", "never"}, {"a", "b", "c", "d"});
  const std::vector<PointRun> runs = {
      run_of({result("deepep", 20.0, true), result("ref", 10.0, true), result("nvls", 5.0, false)}),
      run_of({result("deepep", 80.0, true), result("ref", 10.0, true), result("nvls", 10.0, true)}),
      run_of({result("deepep", 90.0, true), died("ref")}),
      run_of({}),  // the point's process died
  };
  const std::vector<SpeedupStatistics> statistics = speedup_statistics(study, runs);
  ASSERT_EQ(statistics.size(), 3u);  // all but the reference, in the study's order

  EXPECT_EQ(statistics[0].scheme, "deepep");
  EXPECT_EQ(statistics[0].points, 2u);
  EXPECT_DOUBLE_EQ(statistics[0].geometric_mean.value_or(0.0), 4.0);  // sqrt(2 x 8)
  EXPECT_DOUBLE_EQ(statistics[0].max.value_or(0.0), 8.0);
  EXPECT_EQ(statistics[0].max_point, "b");

  EXPECT_EQ(statistics[1].scheme, "nvls");
  EXPECT_EQ(statistics[1].points, 1u);
  EXPECT_DOUBLE_EQ(statistics[1].geometric_mean.value_or(0.0), 1.0);
  EXPECT_EQ(statistics[1].max_point, "b");

  EXPECT_EQ(statistics[2].scheme, "never");
  EXPECT_EQ(statistics[2].points, 0u);
  EXPECT_FALSE(statistics[2].geometric_mean);
  EXPECT_FALSE(statistics[2].max);
}

// The study's summary (issue 19): the geometric mean and maximum over all points of the
// reference's speedup over each other scheme, with the point of the maximum, in summary.json and
// in the console's table.
TEST(StudySpeedup, SummaryAndConsoleGiveGeomeanMaxAndThePointOfTheMax) {
  const Study study = study_of({"deepep", "ref"}, {"a", "b", "c"});
  const std::vector<PointRun> runs = {
      run_of({result("deepep", 20.0, true), result("ref", 10.0, true)}),
      run_of({result("deepep", 80.0, true), result("ref", 10.0, true)}),
      run_of({result("deepep", 40.0, true), result("ref", 10.0, true)}),
  };
  const json summary = study_summary(study, runs);
  const json& s = summary.at("speedup_of_reference").at("deepep");
  EXPECT_EQ(s.at("points").get<size_t>(), 3u);
  EXPECT_DOUBLE_EQ(s.at("geometric_mean").get<double>(), 4.0);  // cube root of 2 x 8 x 4
  EXPECT_DOUBLE_EQ(s.at("max").get<double>(), 8.0);
  EXPECT_EQ(s.at("max_point").get<std::string>(), "b");
  std::ostringstream console;
  print_study_summary(summary, "out/x", console);
  EXPECT_NE(console.str().find("scheme  points  geomean    max  at point\ndeepep       3    4.000  8.000  b\n"),
            std::string::npos)
      << console.str();
}

TEST(StudyCsv, OneRowPerPointAndSchemeWithQuotingWhereNeeded) {
  Study study = study_of({"deepep", "ref"}, {"top_k=2,routing={kind:zipf,exponent:2}", "top_k=4", "top_k=8"});
  study.keys = {"workload.top_k", "workload.routing"};
  study.points[0].values = {"2", "{kind:zipf,exponent:2}"};
  study.points[1].values = {"4", "say \"hi\""};
  study.points[2].values = {"8", ""};
  const std::vector<PointRun> runs = {
      run_of({result("deepep", 30.0, true), result("ref", 12.5, true)}),
      run_of({result("deepep", 20.0, true), died("ref")}),
      run_of({}),
  };
  EXPECT_EQ(study_csv(study, runs),
            "point,workload.top_k,workload.routing,scheme,layer_time_us,ideal_comm_time_us,comm_efficiency,traffic_bytes.gpu_to_switch,"
            "traffic_bytes.switch_to_gpu,payload_bytes.gpu_to_switch,payload_bytes.switch_to_gpu,"
            "utilization.gpu_to_switch,utilization.switch_to_gpu,payload_efficiency.total,load.max_mean_gpu,"
            "load.max_mean_expert,hub.cache_hit_rate,switch.reduction_no_eviction_rate,time_breakdown.comm_only_us,"
            "time_breakdown.compute_only_us,time_breakdown.overlap_us,time_breakdown.idle_us,"
            "replication.max_mean_before,replication.max_mean_after,"
            "replication.excess_load_removed,replication.broadcast_time_us,replication.shared_expert_time_us,"
            "replication.hidden,checks.passed,faults.slowdown,faults.replays.packets,faults.replays.bytes,"
            "faults.credit_loss.resyncs,speedup_of_reference\n"
            "\"top_k=2,routing={kind:zipf,exponent:2}\",2,\"{kind:zipf,exponent:2}\",deepep,30,5,0.16666666666666666,1000,2000,900,"
            "1800,0.25,0.5,0.9,1.25,2,,0.75,4,3,2,1,,,,,,,true,,,,,2.4\n"
            "\"top_k=2,routing={kind:zipf,exponent:2}\",2,\"{kind:zipf,exponent:2}\",ref,12.5,5,0.4,1000,2000,900,1800,"
            "0.25,0.5,0.9,1.25,2,,0.75,4,3,2,1,,,,,,,true,,,,,1\n"
            "top_k=4,4,\"say \"\"hi\"\"\",deepep,20,5,0.25,1000,2000,900,1800,0.25,0.5,0.9,1.25,2,,0.75,4,3,2,1,,,,,,,true,,,,,\n");
}

// ---------------------------------------------------------------------------------------------
// Running

TEST(StudyRun, APointWhoseProcessFailsIsReportedAndTheOthersStillCount) {
  TempDir dir;
  // Stands in for `nvsvp --config-dir D run SCENARIO --out DIR`: kills itself at top_k=4, leaves no
  // report at top_k=8, else writes one.
  const std::string standin = dir.write(
      "standin.sh",
      "#!/bin/sh\n"
      "case \"$6\" in *top_k=4) kill -9 $$ ;; *top_k=8) exit 0 ;; esac\n"
      "echo '{\"results\": [{\"scheme\": \"deepep\", \"layer_time_us\": 20, \"checks\": {\"passed\": true}},"
      " {\"scheme\": \"nvls\", \"layer_time_us\": 10, \"checks\": {\"passed\": true}}]}' > \"$6/report.json\"\n");
  ASSERT_EQ(chmod(standin.c_str(), 0755), 0);
  const Study study = load_study(
      dir.write("run.yaml", std::string(kHead) + "sweep:\n  workload.top_k: [2, 4, 8]\n"), {}, kConfigDir);

  StudyOptions options;
  options.out_dir = dir.path() + "/out";
  options.jobs = 2;
  options.executable = standin;
  options.config_dir = kConfigDir;
  std::ostringstream console;
  EXPECT_EQ(run_study(study, options, console), 1);

  const std::string out = console.str();
  EXPECT_NE(out.find("top_k=4: FAILED (killed by signal 9"), std::string::npos) << out;
  EXPECT_NE(out.find("top_k=8: FAILED (no readable report.json), output in " + options.out_dir + "/3_top_k=8/run.log"),
            std::string::npos)
      << out;

  std::ifstream csv(options.out_dir + "/study.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);  // the header and top_k=2's two schemes
  EXPECT_EQ(lines[1].rfind("top_k=2,2,deepep,20,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("top_k=2,2,nvls,10,", 0), 0u) << lines[2];

  const json summary = json::parse(std::ifstream(options.out_dir + "/summary.json"));
  EXPECT_EQ(summary["passed"], false);
  EXPECT_EQ(summary["points"][0]["failure"], nullptr);
  EXPECT_EQ(summary["points"][1]["failure"].get<std::string>().rfind("killed by signal 9", 0), 0u);
  EXPECT_EQ(summary["points"][2]["failure"], "no readable report.json");
  EXPECT_EQ(summary["speedup_of_reference"]["deepep"]["points"], 1);
  EXPECT_EQ(summary["speedup_of_reference"]["deepep"]["geometric_mean"], 2.0);
  for (const StudyPoint& point : study.points) {
    EXPECT_TRUE(std::filesystem::exists(options.out_dir + "/" + point.directory + "/scenario.yaml")) << point.name;
  }
}

// ---------------------------------------------------------------------------------------------
// Points run apart (issue 22): shards, the study's manifest, the command lines

TEST(StudyShards, EveryPointIsInExactlyOneShardInterleaved) {
  EXPECT_EQ(shard_points(7, 1, 3), (std::vector<size_t>{0, 3, 6}));
  EXPECT_EQ(shard_points(7, 2, 3), (std::vector<size_t>{1, 4}));
  EXPECT_EQ(shard_points(7, 3, 3), (std::vector<size_t>{2, 5}));
  EXPECT_EQ(shard_points(2, 3, 4), (std::vector<size_t>{}));  // more shards than points: some are empty
  for (size_t shards = 1; shards <= 9; ++shards) {
    std::vector<int> seen(23, 0);
    for (size_t shard = 1; shard <= shards; ++shard) {
      for (size_t p : shard_points(seen.size(), shard, shards)) ++seen.at(p);
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 23) << shards << " shards";
  }
}

TEST(StudyManifest, NamesThePointsAndSurvivesARoundTrip) {
  TempDir dir;
  const std::string file = dir.write("m.yaml", std::string(kHead) + "sweep:\n  workload.top_k: [2, 4]\n");
  const Study study = load_study(file, {"workload.tokens_per_gpu=8"}, kConfigDir);
  const json manifest = study_manifest(study);
  EXPECT_EQ(manifest["command_line"], "nvsvp study " + file + " --set workload.tokens_per_gpu=8");
  EXPECT_EQ(manifest["points"][1]["directory"], "2_top_k=4");
  EXPECT_EQ(manifest["points"][1]["number"], 2);
  const Study back = study_of_manifest(manifest, "study.json");
  EXPECT_EQ(back.name, study.name);
  EXPECT_EQ(back.schemes, study.schemes);
  EXPECT_EQ(back.reference, study.reference);
  EXPECT_EQ(back.keys, study.keys);
  ASSERT_EQ(back.points.size(), 2u);
  EXPECT_EQ(back.points[1].name, "top_k=4");
  EXPECT_EQ(back.points[1].values, study.points[1].values);
}

TEST(StudyManifest, TheFingerprintFollowsTheResultsNotThePathOrTheCommand) {
  TempDir dir;
  const std::string text = std::string(kHead) + "sweep:\n  workload.top_k: [2, 4]\n";
  const std::string file = dir.write("f.yaml", text);
  const json base = study_manifest(load_study(file, {}, kConfigDir));
  // The same study through another path to the same file, and a copy elsewhere: the same fingerprint.
  const json other_path = study_manifest(load_study(dir.path() + "/./f.yaml", {}, kConfigDir));
  EXPECT_EQ(other_path["fingerprint"], base["fingerprint"]);
  EXPECT_NE(other_path["file"], base["file"]);
  // A point's scenario changed by --set: another scenario hash for every point, another fingerprint.
  const json other_set = study_manifest(load_study(file, {"workload.tokens_per_gpu=32"}, kConfigDir));
  EXPECT_NE(other_set["fingerprint"], base["fingerprint"]);
  EXPECT_NE(other_set["points"][0]["scenario_hash"], base["points"][0]["scenario_hash"]);
  // Another reference only (in a file of the same name, which names the study): the scenarios
  // are the same, the study is not.
  std::string swapped = text;
  swapped.replace(swapped.find("reference: nvls"), 15, "reference: deepep");
  std::filesystem::create_directories(dir.path() + "/other");
  const json other_reference = study_manifest(load_study(dir.write("other/f.yaml", swapped), {}, kConfigDir));
  EXPECT_EQ(other_reference["points"][0]["scenario_hash"], base["points"][0]["scenario_hash"]);
  EXPECT_NE(other_reference["fingerprint"], base["fingerprint"]);
}

TEST(StudyManifest, AnEditedOrBrokenManifestIsRefused) {
  TempDir dir;
  const json manifest =
      study_manifest(load_study(dir.write("e.yaml", std::string(kHead) + "sweep:\n  workload.top_k: [2, 4]\n"), {}, kConfigDir));
  auto error_of = [](const json& edited) {
    try {
      study_of_manifest(edited, "out/study.json");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json edited = manifest;
  edited["points"][0]["values"][0] = "3";
  EXPECT_EQ(error_of(edited).rfind("out/study.json: expected a fingerprint that matches its contents", 0), 0u)
      << error_of(edited);
  edited = manifest;
  edited.erase("schemes");
  EXPECT_NE(error_of(edited).find("expected keys study, file, command_line, schemes"), std::string::npos);
  edited = manifest;
  edited["points"][1]["number"] = 5;
  EXPECT_NE(error_of(edited).find("expected points numbered from 1"), std::string::npos);
  edited = manifest;
  edited["points"][1]["directory"] = "../elsewhere";
  EXPECT_NE(error_of(edited).find("a folder name"), std::string::npos);
  EXPECT_NE(error_of(json::array()).find("expected \"format\": 2"), std::string::npos);
}

TEST(ShellWord, PlainWordsStayAndOthersAreQuotedToReadBackAsThemselves) {
  EXPECT_EQ(shell_word("/a/b-c_d.yaml"), "/a/b-c_d.yaml");
  EXPECT_EQ(shell_word("workload.top_k=8"), "workload.top_k=8");
  EXPECT_EQ(shell_word("a b"), "'a b'");
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word("{kind: zipf}"), "'{kind: zipf}'");
}

// ---------------------------------------------------------------------------------------------
// A training step's columns

TEST(StudyStep, StepColumnsOnlyWhenTheScenarioRunsAStepEachSchemesOwn) {
  TempDir dir;
  const Study layer = load_study(dir.write("layer.yaml", std::string(kHead) + "sweep: {workload.top_k: [8]}\n"), {},
                                 kConfigDir);
  EXPECT_EQ(study_csv_header(layer).find("step_"), std::string::npos);
  const Study step = load_study(dir.write("step.yaml",
                                          "base:\n"
                                          "  platform: dgx-h100\n"
                                          "  workload: {model: S, top_k: 8, tokens_per_gpu: 16, routing: {kind: uniform}}\n"
                                          "  step: {kind: training}\n"
                                          "schemes: [deepep, dualpipe]\n"
                                          "reference: deepep\n"
                                          "sweep: {step.micro_batches: [2]}\n"),
                                {}, kConfigDir);
  const std::string header = study_csv_header(step);
  EXPECT_NE(header.find(",speedup_of_reference,step_time_us,step_tokens_per_second,step_attention_us,step_dense_us,"
                        "step_moe_compute_us,step_exposed_comm_us,step_pipeline_bubble_us"),
            std::string::npos)
      << header;
  // A point's report: the layer's results and, apart, the step per scheme.
  const json report = {
      {"results", {{{"scheme", "deepep"}, {"layer_time_us", 10.0}}, {{"scheme", "dualpipe"}, {"layer_time_us", 10.0}}}},
      {"step",
       {{"schemes",
         {{"deepep", {{"step_time_us", 500.0}, {"tokens_per_second", 7.0}, {"breakdown", {{"attention_us", 100.0}}}}},
          {"dualpipe", {{"step_time_us", 400.0}}}}}}}};
  const json results = point_results(report);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["step"]["step_time_us"], 500.0);
  EXPECT_EQ(results[1]["step"]["step_time_us"], 400.0);
  PointRun run;
  run.results = results;
  const std::string csv = study_csv(step, {run});
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  EXPECT_NE(line.find(",deepep,"), std::string::npos) << line;
  EXPECT_NE(line.find(",500,7,100,,,,"), std::string::npos) << line;
  std::getline(lines, line);
  EXPECT_NE(line.find(",400,,,,,,"), std::string::npos) << line;
  EXPECT_EQ(header.find("time_to_first_token"), std::string::npos);  // a training study's
  // A merge knows the study only from its study.json: the step columns come back from it.
  EXPECT_EQ(study_csv_header(study_of_manifest(study_manifest(step), "study.json")), header);
  EXPECT_EQ(study_csv_header(study_of_manifest(study_manifest(layer), "study.json")), study_csv_header(layer));
}

TEST(StudyStep, AnInferenceStudyAddsTheFirstTokensAndEachOutputTokensTime) {
  TempDir dir;
  const Study study = load_study(dir.write("inference.yaml",
                                           "base:\n"
                                           "  platform: dgx-h100\n"
                                           "  workload: {model: S, top_k: 8, tokens_per_gpu: 64, routing: {kind: uniform}}\n"
                                           "  step: {kind: inference, prompt_tokens: 32}\n"
                                           "schemes: [deepep, deepep-ll]\n"
                                           "reference: deepep\n"
                                           "sweep: {step.decode_steps: [8]}\n"),
                                 {}, kConfigDir);
  const std::string header = study_csv_header(study);
  EXPECT_NE(header.find(",step_pipeline_bubble_us,step_time_to_first_token_us,step_time_per_output_token_us"),
            std::string::npos)
      << header;
  const json report = {
      {"results", {{{"scheme", "deepep"}, {"layer_time_us", 10.0}}, {{"scheme", "deepep-ll"}, {"layer_time_us", 9.0}}}},
      {"step",
       {{"schemes",
         {{"deepep", {{"step_time_us", 900.0}, {"time_to_first_token_us", 100.0}, {"time_per_output_token_us", 100.0}}},
          {"deepep-ll", {{"step_time_us", 850.0}, {"time_to_first_token_us", 130.0}, {"time_per_output_token_us", 90.0}}}}}}}};
  PointRun run;
  run.results = point_results(report);
  std::istringstream lines(study_csv(study, {run}));
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  EXPECT_NE(line.find(",deepep,"), std::string::npos) << line;
  EXPECT_EQ(line.substr(line.size() - 8), ",100,100") << line;
  std::getline(lines, line);
  EXPECT_EQ(line.substr(line.size() - 7), ",130,90") << line;
  EXPECT_EQ(study_csv_header(study_of_manifest(study_manifest(study), "study.json")), header);
}

}  // namespace
}  // namespace nvsvp::platform
