// Every collective of fw/collectives.hpp at a reduced size on the dgx-h100 preset, each in its own
// process: every GPU ends with the data the collective defines, every GPU sends and receives
// exactly the payload the collective implies, and no bandwidth beats the links' bound.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "../common/test_support.hpp"
#include "nvsvp/fw/collectives.hpp"
#include "nvsvp/platform/collectives.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::fw {
// The test names' parameter, readable.
void PrintTo(Collective collective, std::ostream* os) { *os << to_string(collective); }
}  // namespace nvsvp::fw

namespace nvsvp::platform {
namespace {

class CollectiveOnDgxH100 : public ::testing::TestWithParam<fw::Collective> {};

TEST_P(CollectiveOnDgxH100, ValuesBytesAndLinkBound) {
  const Scenario scenario = load_scenario(test::config_dir() + "/scenarios/default.yaml", {}, test::config_dir());
  ASSERT_EQ(scenario.platform.preset, "dgx-h100");
  fw::CollectiveSpec spec;
  spec.collective = GetParam();
  spec.bytes = 2ull << 20;  // ring: 2 messages per channel and step on 32 channels and 8 GPUs
  spec.slice_bytes = 4096;  // ring: two slices per step, pipelined
  spec.chunk_bytes = 32 * 1024;
  const CollectiveResult result = run_collective(scenario.platform, spec);

  EXPECT_EQ(result.algorithm, fw::to_string(GetParam()));
  EXPECT_EQ(result.gpus, 8u);
  EXPECT_EQ(result.bytes, spec.bytes);
  EXPECT_TRUE(result.values_ok) << result.check_message;
  EXPECT_TRUE(result.bytes_ok) << result.problems;
  EXPECT_TRUE(result.within_link_bound) << result.problems;
  EXPECT_TRUE(result.ok()) << result.problems;
  ASSERT_EQ(result.measured.size(), 8u);
  for (uint32_t g = 0; g < 8; ++g) {
    EXPECT_EQ(result.measured[g].payload_bytes_sent, result.implied[g].payload_bytes_sent) << "GPU " << g;
    EXPECT_EQ(result.measured[g].payload_bytes_received, result.implied[g].payload_bytes_received) << "GPU " << g;
  }
  EXPECT_GT(result.time_us, result.bound.time_us);
  EXPECT_LT(result.bus_bandwidth_gbps, result.bound.bus_bandwidth_gbps);
  EXPECT_GT(result.bus_bandwidth_gbps, 0.0);
  // The links carried at least what the busiest GPU implies, spread evenly.
  EXPECT_GE(static_cast<double>(result.switch_to_gpu.busiest_wire_bytes), result.switch_to_gpu.implied_wire_bytes);
  EXPECT_GE(static_cast<double>(result.gpu_to_switch.busiest_wire_bytes), result.gpu_to_switch.implied_wire_bytes);
}

INSTANTIATE_TEST_SUITE_P(All, CollectiveOnDgxH100, ::testing::ValuesIn(fw::all_collectives()),
                         [](const ::testing::TestParamInfo<fw::Collective>& param) {
                           return std::string(fw::to_string(param.param));
                         });

}  // namespace
}  // namespace nvsvp::platform
