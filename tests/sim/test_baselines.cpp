// The baselines as their own schemes (docs/background/baselines.md) on dgx-h100 (model S, top-8,
// 256 tokens per GPU, through run_scenario as the command runs it): every check passing; tutel's
// capacity padding on the wire but not in the payload, and its degree the fastest of the
// candidates it tried; fastermoe moving the same rows without padding; ccfuser pulling its
// dispatch as reads (their responses cross the switch) where the others write.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_data.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

const char* const kScenario =
    "name: baselines_test\n"
    "platform: dgx-h100\n"
    "workload:\n"
    "  model: S\n"
    "  top_k: 8\n"
    "  tokens_per_gpu: 256\n"
    "  dispatch_dtype: bf16\n"
    "  routing: {kind: uniform, seed: 8}\n"
    "schemes: [deepep, tutel, fastermoe, ccfuser]\n"
    "simulation: {max_time_us: 20000}\n";

using test::result_of;

// fastermoe's payload of rows and counts: without its clear-to-send flags (16 bytes each, once
// per direction), the rendezvous of its two-sided NCCL calls.
uint64_t fastermoe_row_payload(const json& faster, const char* direction) {
  const auto flags = faster.at("plan").at("clear_to_send_flags").get<uint64_t>();
  return faster.at("payload_bytes").at(direction).get<uint64_t>() - 16 * flags;
}

// Each test runs in its own process (ctest), so each runs the scenario once.
class Baselines : public ::testing::Test {
 protected:
  void SetUp() override {
    const Scenario scenario = load_scenario(dir_.write("s.yaml", kScenario), {}, test::config_dir());
    report_ = test::run_and_read_report(scenario, dir_.path() + "/out");
  }
  static constexpr uint32_t kGpus = 8;
  static constexpr uint64_t kHidden = 2048;
  static constexpr uint64_t kLocalExperts = 64 / kGpus;
  // One row both ways: bf16 dispatch and bf16 combine.
  static uint64_t row_bytes() {
    return fw::vector_bytes(fw::DataType::bf16, kHidden) + fw::vector_bytes(fw::DataType::bf16, kHidden);
  }
  // The count exchange's bytes in one direction: 16 to every peer.
  static constexpr uint64_t kCountBytes = 16ull * kGpus * (kGpus - 1);
  test::TempDir dir_;
  json report_;
};

TEST_F(Baselines, EveryNewSchemePassesEveryCheck) {
  for (const char* scheme : {"tutel", "fastermoe", "ccfuser"}) {
    SCOPED_TRACE(scheme);
    const json& r = result_of(report_, scheme);
    EXPECT_TRUE(r.at("checks").at("passed").get<bool>()) << r.at("checks").dump(2);
    EXPECT_EQ(r.at("checks").at("token_copies_delivered"), result_of(report_, "deepep").at("checks").at("token_copies_delivered"));
    EXPECT_LE(r.at("ideal_comm_time_us").get<double>(), r.at("layer_time_us").get<double>());
  }
}

// Padding: GPUs x (GPUs - 1) pairs x local experts x capacity rows cross the fabric, of which the
// remote (token, expert) rows are payload (fastermoe moves exactly those) and the rest padding:
// on the wire, not in the payload.
TEST_F(Baselines, TutelPadsToTheCapacityOnTheWireButNotInThePayload) {
  const json& tutel = result_of(report_, "tutel");
  const json& faster = result_of(report_, "fastermoe");
  const auto capacity = tutel.at("plan").at("capacity").get<uint64_t>();
  for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
    SCOPED_TRACE(direction);
    EXPECT_EQ(tutel.at("payload_bytes").at(direction).get<uint64_t>(), fastermoe_row_payload(faster, direction));
    const uint64_t remote_rows = (fastermoe_row_payload(faster, direction) - kCountBytes) / row_bytes();
    const uint64_t padded_rows = uint64_t{kGpus} * (kGpus - 1) * kLocalExperts * capacity;
    EXPECT_EQ(tutel.at("plan").at("padding_wire_bytes").get<uint64_t>(), (padded_rows - remote_rows) * row_bytes());
    EXPECT_GT(tutel.at("traffic_bytes").at(direction).get<uint64_t>(),
              faster.at("traffic_bytes").at(direction).get<uint64_t>() + (padded_rows - remote_rows) * row_bytes());
  }
}

TEST_F(Baselines, TutelKeepsTheFastestDegreeItTried) {
  const json& tutel = result_of(report_, "tutel");
  const json& candidates = tutel.at("tutel_search").at("candidates");
  ASSERT_EQ(candidates.size(), 4u);
  double fastest = 1e30;
  double fastest_degree = 0;
  for (const json& c : candidates) {
    if (c.at("layer_time_us").get<double>() < fastest) {
      fastest = c.at("layer_time_us").get<double>();
      fastest_degree = c.at("planned_degree").get<double>();
    }
  }
  EXPECT_EQ(tutel.at("layer_time_us").get<double>(), fastest);
  EXPECT_EQ(tutel.at("plan").at("degree").get<double>(), fastest_degree);
}

// fastermoe runs FastMoE's smart schedule at its default pipeline granularity: the 8 GPUs in two
// groups of 4, so two steps, each with one NCCL call per local expert, dispatch and combine.
TEST_F(Baselines, FastermoeExchangesWithGroupsOfFourOneCallPerLocalExpert) {
  const json& plan = result_of(report_, "fastermoe").at("plan");
  EXPECT_EQ(plan.at("group_size").get<double>(), 4.0);
  EXPECT_EQ(plan.at("steps").get<double>(), 2.0);
  EXPECT_EQ(plan.at("calls").get<double>(), 2.0 * 2.0 * kLocalExperts);
  EXPECT_GT(plan.at("clear_to_send_flags").get<double>(), 0.0);
}

// ccfuser's expert GPUs read their rows: one response through the switch per remote (token,
// expert) row; the write-based schemes send none.
TEST_F(Baselines, CcfuserPullsItsDispatchAsReads) {
  const json& faster = result_of(report_, "fastermoe");
  const uint64_t remote_rows = (fastermoe_row_payload(faster, "gpu_to_switch") - kCountBytes) / row_bytes();
  EXPECT_EQ(result_of(report_, "ccfuser").at("switch").at("forwarded_responses").get<uint64_t>(), remote_rows);
  for (const char* scheme : {"deepep", "tutel", "fastermoe"}) {
    EXPECT_EQ(result_of(report_, scheme).at("switch").at("forwarded_responses").get<uint64_t>(), 0u) << scheme;
  }
}

}  // namespace
}  // namespace nvsvp::platform
