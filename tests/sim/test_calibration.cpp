// The all-reduce calibration on the dgx-h100 preset (a small buffer, so the test stays fast): both
// algorithms leave the sum in every GPU, and their bus bandwidths follow NCCL's definition from
// the measured times and stay below what the links physically allow.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "../common/test_support.hpp"
#include "nvsvp/fw/collectives.hpp"
#include "nvsvp/platform/calibration.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

TEST(AllReduceCalibration, NvlsAndRingOnDgxH100GiveSumsAndBusBandwidths) {
  const Scenario scenario = load_scenario(test::config_dir() + "/scenarios/default.yaml", {}, test::config_dir());
  const PlatformSpec& platform = scenario.platform;
  ASSERT_EQ(platform.preset, "dgx-h100");
  ASSERT_EQ(platform.gpus, 8u);
  fw::CollectiveSpec spec;
  spec.message_bytes = 4096;
  spec.bytes = 8 * 4096 * 64;  // 2 MiB: 64 messages per GPU share
  spec.chunk_bytes = 32 * 1024;
  const std::vector<CollectiveResult> runs = run_allreduce_calibration(platform, spec);

  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].algorithm, "allreduce_nvls");
  EXPECT_EQ(runs[1].algorithm, "allreduce_ring");
  // Every GPU receives the whole buffer once (nvls: the stores of every share; ring: N-1 chunks
  // reduced plus N-1 gathered, 2 (N-1)/N of it) over its 18 links at 25 GB/s at most.
  const double link_limit_bytes_per_us = 18 * 25e9 / 1e6;
  const double ring_bytes_in = 2.0 * 7 / 8 * static_cast<double>(spec.bytes);
  const double least_time_us[2] = {static_cast<double>(spec.bytes) / link_limit_bytes_per_us,
                                   ring_bytes_in / link_limit_bytes_per_us};
  for (size_t i = 0; i < runs.size(); ++i) {
    const CollectiveResult& run = runs[i];
    EXPECT_TRUE(run.ok()) << run.problems;
    EXPECT_EQ(run.gpus, 8u);
    EXPECT_EQ(run.bytes, spec.bytes);
    EXPECT_GT(run.time_us, least_time_us[i]) << run.algorithm;
    // NCCL's definitions, from the time.
    const double seconds = run.time_us * 1e-6;
    EXPECT_NEAR(run.algorithm_bandwidth_gbps, static_cast<double>(spec.bytes) / seconds / 1e9, 1e-9);
    EXPECT_NEAR(run.bus_bandwidth_gbps, 14.0 / 8.0 * static_cast<double>(spec.bytes) / seconds / 1e9, 1e-9);
  }
  EXPECT_GT(runs[0].bus_bandwidth_gbps, runs[1].bus_bandwidth_gbps) << "in-switch reduction beats the ring";

  std::ostringstream table;
  print_calibration(table, platform, runs);
  EXPECT_NE(table.str().find("480"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("365-370"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("nvls "), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("sums ok"), std::string::npos) << table.str();
}

}  // namespace
}  // namespace nvsvp::platform
