// The calibration anchors (docs/calibration.md) at reduced size: each case runs as `nvsvp anchors`
// runs it, passes its run's checks, puts on the wire exactly the bytes its algorithm implies, and
// does not beat its link bound. The full-size figures are in docs/calibration.md.
#include <gtest/gtest.h>

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
  EXPECT_EQ(c.scenario.platform.preset, "hgx-h800");
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
  EXPECT_EQ(d["pair_bytes"].get<uint64_t>(), phase == "dispatch" ? 7168u + 56u * 4u : 7168u * 2u);
  EXPECT_EQ(entry["anchor_low"].get<double>(), phase == "dispatch" ? 153.0 : 158.0);
}

TEST(Anchors, DeepepDispatchAtReducedSize) { expect_deepep_case("deepep-h800-ep8-dispatch", "dispatch"); }
TEST(Anchors, DeepepCombineAtReducedSize) { expect_deepep_case("deepep-h800-ep8-combine", "combine"); }

}  // namespace
}  // namespace nvsvp::platform
