// The overlapped software schedule `coarse-overlap` against `deepep` on dgx-h100 (model S,
// top-8, 256 tokens per GPU, through run_scenario as the command runs it): the same token copies
// and the same bytes per link direction, every check passing, the experts of the first chunks
// computing while later chunks are still being dispatched, and a shorter layer.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

const char* const kScenario =
    "name: overlap_test\n"
    "platform: dgx-h100\n"
    "workload:\n"
    "  model: S\n"
    "  top_k: 8\n"
    "  tokens_per_gpu: 256\n"
    "  routing: {kind: uniform, seed: 8}\n"
    "schemes: [deepep, coarse-overlap]\n"
    "software: {overlap_chunks: 4, comm_sms: 20}\n"
    "simulation: {max_time_us: 10000}\n";

const json& result_of(const json& report, const std::string& scheme) {
  for (const json& r : report.at("results")) {
    if (r.at("scheme") == scheme) return r;
  }
  throw std::runtime_error("no result for " + scheme);
}

TEST(OverlapSchedules, CoarseOverlapMovesWhatDeepepMovesAndOverlapsComputeWithDispatch) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(dir.write("s.yaml", kScenario), {}, test::config_dir());
  const json report = test::run_and_read_report(scenario, dir.path() + "/out");
  const json& deepep = result_of(report, "deepep");
  const json& overlap = result_of(report, "coarse-overlap");

  EXPECT_TRUE(overlap.at("checks").at("passed").get<bool>()) << overlap.at("checks").dump(2);
  EXPECT_EQ(overlap.at("checks").at("token_copies_delivered"), deepep.at("checks").at("token_copies_delivered"));
  // The same copies and partials, batched the same way but cut at chunk boundaries: the same
  // payload per direction, a few more messages (each chunk's last batches are partly filled).
  for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
    SCOPED_TRACE(direction);
    EXPECT_EQ(overlap.at("payload_bytes").at(direction), deepep.at("payload_bytes").at(direction));
    EXPECT_GE(overlap.at("messages").at(direction).get<uint64_t>(), deepep.at("messages").at(direction).get<uint64_t>());
  }
  // Overlap: the experts start while dispatch is still going on, and combine before the experts
  // end; deepep's phases follow each other (its experts wait for all of dispatch).
  const json& phases = overlap.at("phases");
  EXPECT_LT(phases.at("experts").at("start_us").get<double>(), phases.at("dispatch").at("end_us").get<double>());
  EXPECT_LT(phases.at("combine").at("start_us").get<double>(), phases.at("experts").at("end_us").get<double>());
  EXPECT_LT(overlap.at("layer_time_us").get<double>(), deepep.at("layer_time_us").get<double>());
  EXPECT_LE(overlap.at("ideal_comm_time_us").get<double>(), overlap.at("layer_time_us").get<double>());
}

}  // namespace
}  // namespace nvsvp::platform
