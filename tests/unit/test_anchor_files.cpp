// The anchor case files (configs/anchors/, docs/calibration.md): every shipped case loads, is
// named as its file, and names its figure's source; a malformed case is rejected naming its file,
// line and key.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../common/test_support.hpp"
#include "nvsvp/platform/anchors.hpp"

namespace nvsvp::platform {
namespace {

using test::TempDir;

TEST(AnchorFiles, EveryCaseLoadsAndNamesItsSource) {
  const std::vector<std::string> files = anchor_case_files(test::config_dir());
  ASSERT_FALSE(files.empty());
  for (const std::string& file : files) {
    const AnchorCase c = load_anchor_case(file, test::config_dir());
    EXPECT_EQ(c.name, std::filesystem::path(file).stem().string());
    EXPECT_FALSE(c.what.empty()) << file;
    EXPECT_FALSE(c.anchor.source.empty()) << file;
    EXPECT_GT(c.anchor.low, 0.0) << file;
    EXPECT_GE(c.anchor.high, c.anchor.low) << file;
  }
}

const char* const kCase =
    "name: t\n"                                                         // 1
    "what: a case\n"                                                    // 2
    "anchor: {metric: m, unit: GB/s, low: 1, high: 2, source: s}\n"     // 3
    "measure: {kind: moe_phase, scheme: deepep, phase: dispatch}\n"     // 4
    "platform: hgx-h800\n"                                              // 5
    "workload: {model: S, tokens_per_gpu: 64, routing: {kind: uniform}}\n"  // 6
    "schemes: [deepep]\n";                                              // 7

std::string anchor_error_of(const std::string& file) {
  try {
    load_anchor_case(file, test::config_dir());
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError for " << file;
  return "";
}

std::string anchor_with_line(const std::string& text, int line, const std::string& replacement) {
  std::string out;
  size_t start = 0;
  for (int i = 1; start < text.size(); ++i) {
    const size_t end = text.find('\n', start);
    out += i == line ? replacement + "\n" : text.substr(start, end - start + 1);
    start = end + 1;
  }
  return out;
}

// A collective on all 72 GPUs of an NVL72: no layer runs, so none has to fit the platform (the
// placeholder's 64 experts do not divide 72 GPUs); the platform's own checks still hold.
TEST(AnchorFiles, ACollectiveCaseOnSeventyTwoGpusNeedsNoLayer) {
  TempDir dir;
  const std::string collective =
      "name: c72\n"
      "what: a collective on 72 GPUs\n"
      "anchor: {metric: busBW, unit: GB/s, low: 1, high: 2, source: s}\n"
      "measure: {kind: collective, collective: allreduce_ring, bytes: 268435456}\n"
      "platform: gb200-nvl72\n";
  const AnchorCase c = load_anchor_case(dir.write("c72.yaml", collective), test::config_dir());
  EXPECT_EQ(c.scenario.platform.gpus, 72u);
  // A moe_phase case on the same platform still needs its layer to fit.
  const std::string layer = dir.write(
      "l72.yaml", "name: l72\nwhat: w\nanchor: {metric: m, unit: GB/s, low: 1, high: 2, source: s}\n"
                  "measure: {kind: moe_phase, scheme: deepep, phase: dispatch}\nplatform: gb200-nvl72\n"
                  "workload: {model: S, tokens_per_gpu: 64, routing: {kind: uniform}}\nschemes: [deepep]\n");
  EXPECT_NE(anchor_error_of(layer).find("experts"), std::string::npos) << anchor_error_of(layer);
  // The platform's checks are made: more GPUs than a switch chip's ports allow is refused.
  const std::string too_many = dir.write(
      "p.yaml", anchor_with_line(anchor_with_line(collective, 5, "platform: {preset: gb200-nvl72, gpus: 100}"), 1,
                                 "name: p"));
  EXPECT_NE(anchor_error_of(too_many).find("ports"), std::string::npos) << anchor_error_of(too_many);
}

TEST(AnchorFiles, MalformedCasesNameFileLineAndKey) {
  TempDir dir;
  EXPECT_NO_THROW(load_anchor_case(dir.write("t.yaml", kCase), test::config_dir()));
  // A case whose name is not its file's (a copy not renamed) would run under the other name.
  const std::string renamed = dir.write("other.yaml", kCase);
  EXPECT_NE(anchor_error_of(renamed).find(renamed + ":1: name: expected the case file's own name (other), got t"),
            std::string::npos)
      << anchor_error_of(renamed);
  const std::string unknown = dir.write("u.yaml", anchor_with_line(kCase, 3, "anchor: {metric: m, unit: u, low: 1, source: s, lo: 2}"));
  EXPECT_NE(anchor_error_of(unknown).find(unknown + ":3"), std::string::npos) << anchor_error_of(unknown);
  EXPECT_NE(anchor_error_of(unknown).find("anchor.lo"), std::string::npos);
  const std::string range = dir.write("r.yaml", anchor_with_line(kCase, 3, "anchor: {metric: m, unit: u, low: 3, high: 2, source: s}"));
  EXPECT_NE(anchor_error_of(range).find(range + ":3: anchor.high"), std::string::npos) << anchor_error_of(range);
  const std::string kind = dir.write("k.yaml", anchor_with_line(kCase, 4, "measure: {kind: magic, scheme: deepep, phase: dispatch}"));
  EXPECT_NE(anchor_error_of(kind).find("measure.kind: expected one of"), std::string::npos) << anchor_error_of(kind);
  const std::string phase = dir.write("p.yaml", anchor_with_line(kCase, 4, "measure: {kind: moe_phase, scheme: deepep, phase: experts}"));
  EXPECT_NE(anchor_error_of(phase).find(phase + ":4: measure.phase: expected dispatch or combine"), std::string::npos)
      << anchor_error_of(phase);
  const std::string missing = dir.write("m.yaml", anchor_with_line(kCase, 3, ""));
  EXPECT_NE(anchor_error_of(missing).find("anchor: expected"), std::string::npos) << anchor_error_of(missing);
  const std::string scenario_key = dir.write("s.yaml", anchor_with_line(kCase, 5, "platfrom: hgx-h800"));
  EXPECT_NE(anchor_error_of(scenario_key).find("platfrom"), std::string::npos) << anchor_error_of(scenario_key);
}

}  // namespace
}  // namespace nvsvp::platform
