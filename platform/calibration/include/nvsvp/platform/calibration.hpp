// The all-reduce calibration (the anchors of
// docs/background/nvlink_nvswitch.md#nvls-all-reduce-calibration-anchor: NCCL on 8x H100, NVLS
// about 480 GB/s and ring about 365-370 GB/s bus bandwidth): one simulation that brings the
// switches up, runs the NVLS all-reduce and then the ring all-reduce of the same buffer
// (platform/collectives.hpp), and reports both bus bandwidths. `nvsvp calibrate` prints it;
// docs/results.md records the numbers.
#pragma once

#include <ostream>
#include <vector>

#include "nvsvp/fw/collectives.hpp"
#include "nvsvp/platform/collectives.hpp"
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

// Elaborates `platform` and runs allreduce_nvls, then allreduce_ring, with `spec`'s sizes (its
// collective is ignored). Call at most once per process (SystemC elaborates once). Throws
// std::invalid_argument for sizes the plans refuse, std::runtime_error if the firmware does not
// finish. `logs` as for run_collectives.
std::vector<CollectiveResult> run_allreduce_calibration(const PlatformSpec& platform, const fw::CollectiveSpec& spec,
                                                        const std::vector<LogSetting>& logs = {});

// The table: algorithm, time, algorithm and bus bandwidth, the anchor, the ratio, the check.
void print_calibration(std::ostream& os, const PlatformSpec& platform, const std::vector<CollectiveResult>& runs);

}  // namespace nvsvp::platform
