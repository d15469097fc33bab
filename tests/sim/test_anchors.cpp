// The calibration anchors (docs/calibration.md) at reduced size: each case runs as `nvsvp anchors`
// runs it, passes its run's checks, puts on the wire exactly the bytes its algorithm implies, and
// does not beat its link bound. The full-size figures are in docs/calibration.md.
#include <gtest/gtest.h>

#include <cctype>
#include <stdexcept>
#include <string>

#include "../common/test_support.hpp"
#include "nvsvp/platform/anchors.hpp"

namespace nvsvp::platform {
namespace {

AnchorCase load_case(const std::string& name) {
  return load_anchor_case(test::config_dir() + "/anchors/" + name + ".yaml", test::config_dir());
}

// The DeepEP cases at 256 tokens per GPU (DeepEP's test runs 4096).
void expect_deepep_case(const std::string& name, const std::string& phase) {
  AnchorCase c = load_case(name);
  ASSERT_EQ(c.name, name);
  EXPECT_EQ(c.measure.phase, phase);
  EXPECT_TRUE(c.scenario.platform.preset == "hgx-h800" || c.scenario.platform.preset == "dgx-h100");
  c.scenario.workload.tokens_per_gpu = 256;
  const nlohmann::json entry = run_anchor_case(c);
  ASSERT_TRUE(entry["passed"].get<bool>()) << entry.dump(2);
  const nlohmann::json& d = entry["details"];
  EXPECT_TRUE(d["checks"]["passed"].get<bool>());
  EXPECT_EQ(d["physical"]["layer_wire_bytes_gpu_to_switch"], d["physical"]["layer_wire_bytes_implied"]);
  EXPECT_EQ(d["physical"]["layer_wire_bytes_switch_to_gpu"], d["physical"]["layer_wire_bytes_implied"]);
  EXPECT_GE(d["time_us"].get<double>(), d["link_bound_time_us"].get<double>());
  EXPECT_LE(entry["model"].get<double>(), d["link_bound_metric"].get<double>());
  // DeepEP's convention: every pair a GPU receives, its own included, in the phase's format.
  const double pairs = d["pairs_received_per_gpu"]["mean"].get<double>();
  EXPECT_DOUBLE_EQ(d["logical_bytes_per_gpu"].get<double>(), pairs * d["pair_bytes"].get<double>());
  const bool fp8 = c.scenario.workload.dispatch_dtype == fw::DataType::fp8;
  EXPECT_EQ(d["pair_bytes"].get<uint64_t>(), phase == "dispatch" && fp8 ? 7168u + 56u * 4u : 7168u * 2u);
}

TEST(Anchors, DeepepH800DispatchAtReducedSize) { expect_deepep_case("deepep-h800-ep8-dispatch", "dispatch"); }
TEST(Anchors, DeepepH800CombineAtReducedSize) { expect_deepep_case("deepep-h800-ep8-combine", "combine"); }
TEST(Anchors, DeepepH100DispatchAtReducedSize) { expect_deepep_case("deepep-h100-ep8-dispatch", "dispatch"); }
TEST(Anchors, DeepepH100CombineAtReducedSize) { expect_deepep_case("deepep-h100-ep8-combine", "combine"); }

// The NCCL and p2p cases at 2 MiB (their files: 256 MiB and 1 GiB): right values, every GPU's
// payload exactly what the collective implies, not above the link bound.
class CollectiveAnchor : public ::testing::TestWithParam<const char*> {};

TEST_P(CollectiveAnchor, AtReducedSize) {
  AnchorCase c = load_case(GetParam());
  ASSERT_EQ(c.measure.kind, "collective");
  c.measure.collective.bytes = 2ull << 20;
  c.measure.collective.slice_bytes = 4096;
  c.measure.collective.chunk_bytes = 32 * 1024;
  const nlohmann::json entry = run_anchor_case(c);
  ASSERT_TRUE(entry["passed"].get<bool>()) << entry.dump(2);
  const nlohmann::json& d = entry["details"];
  EXPECT_TRUE(d["values_ok"].get<bool>());
  EXPECT_TRUE(d["bytes_ok"].get<bool>());
  EXPECT_LE(entry["model"].get<double>(), d["link_bound_metric"].get<double>());
  EXPECT_GT(entry["model"].get<double>(), 0.0);
}

// Sizes a case's plan refuses are bad input (`nvsvp anchors` exits 2 for them), not a failed run.
TEST(Anchors, SizesThePlanRefusesAreBadInput) {
  AnchorCase c = load_case("nccl-h100x8-alltoall");
  c.measure.collective.bytes = 1000;  // not a multiple of 8 GPUs x 4096-byte messages
  EXPECT_THROW(run_anchor_case(c), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Cases, CollectiveAnchor,
                         ::testing::Values("nccl-h100x8-allreduce-ring", "nccl-h100x8-allreduce-nvls",
                                           "nccl-h100x8-allgather-ring", "nccl-h100x8-allgather-nvls",
                                           "nccl-h100x8-alltoall", "p2p-h100-write-oneway", "p2p-h100-write-bidir"),
                         [](const ::testing::TestParamInfo<const char*>& case_info) {
                           std::string name = case_info.param;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

}  // namespace
}  // namespace nvsvp::platform
