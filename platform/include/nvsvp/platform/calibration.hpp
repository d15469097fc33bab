// The all-reduce calibration (the anchors of
// docs/background/nvlink_nvswitch.md#nvls-all-reduce-calibration-anchor: NCCL on 8x H100, NVLS
// about 480 GB/s and ring about 365-370 GB/s bus bandwidth): one simulation that brings the
// switches up, runs the NVLS all-reduce and then the ring all-reduce of the same buffer, and
// reports both bus bandwidths. `nvsvp calibrate` prints it; docs/results.md records the numbers.
#pragma once

#include <ostream>
#include <vector>

#include "nvsvp/fw/allreduce.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

struct AllReduceAnchor {
  const char* algorithm;
  double low_gbps;
  double high_gbps;
};
// NCCL on 8x H100: docs/background/nvlink_nvswitch.md#nvls-all-reduce-calibration-anchor.
inline constexpr AllReduceAnchor kNvlsAnchor{"nvls", 480.0, 480.0};
inline constexpr AllReduceAnchor kRingAnchor{"ring", 365.0, 370.0};

// Elaborates `platform` and runs both algorithms on it. Call at most once per process (SystemC
// elaborates once). Throws std::runtime_error if the firmware does not finish.
std::vector<fw::AllReduceRun> run_allreduce_calibration(const PlatformSpec& platform, const fw::AllReduceSpec& spec);

// The table: algorithm, time, algorithm and bus bandwidth, the anchor, the ratio, the check.
void print_calibration(std::ostream& os, const PlatformSpec& platform, const std::vector<fw::AllReduceRun>& runs);

}  // namespace nvsvp::platform
