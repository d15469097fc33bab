#include "nvsvp/platform/calibration.hpp"

#include <iomanip>
#include <sstream>
#include <string>

namespace nvsvp::platform {

namespace {

// The calibration's short names: nvls and ring.
std::string short_name(const std::string& algorithm) {
  const std::string prefix = "allreduce_";
  return algorithm.rfind(prefix, 0) == 0 ? algorithm.substr(prefix.size()) : algorithm;
}

}  // namespace

std::vector<CollectiveResult> run_allreduce_calibration(const PlatformSpec& platform, const fw::CollectiveSpec& spec,
                                                        const std::vector<LogSetting>& logs) {
  fw::CollectiveSpec nvls = spec;
  nvls.collective = fw::Collective::allreduce_nvls;
  fw::CollectiveSpec ring = spec;
  ring.collective = fw::Collective::allreduce_ring;
  return run_collectives(platform, {nvls, ring}, logs);
}

void print_calibration(std::ostream& os, const PlatformSpec& platform, const std::vector<CollectiveResult>& runs) {
  os << "all-reduce calibration on " << platform.preset << " (" << platform.gpus << " GPUs)";
  if (!runs.empty()) os << ", " << runs.front().bytes << " bytes per GPU";
  os << "\n";
  os << std::left << std::setw(6) << "algo" << std::right << std::setw(12) << "time_us" << std::setw(12) << "algBW_GBps"
     << std::setw(12) << "busBW_GBps" << std::setw(16) << "anchor_busBW" << std::setw(10) << "ratio"
     << "  check\n";
  for (const CollectiveResult& run : runs) {
    const std::string name = short_name(run.algorithm);
    const AllReduceAnchor& anchor = name == "nvls" ? kNvlsAnchor : kRingAnchor;
    const double middle = (anchor.low_gbps + anchor.high_gbps) / 2.0;
    std::ostringstream anchor_text;
    if (anchor.low_gbps == anchor.high_gbps) {
      anchor_text << anchor.low_gbps;
    } else {
      anchor_text << anchor.low_gbps << "-" << anchor.high_gbps;
    }
    os << std::left << std::setw(6) << name << std::right << std::fixed << std::setprecision(3) << std::setw(12)
       << run.time_us << std::setprecision(1) << std::setw(12) << run.algorithm_bandwidth_gbps << std::setw(12)
       << run.bus_bandwidth_gbps << std::setw(16) << anchor_text.str() << std::setprecision(3) << std::setw(10)
       << run.bus_bandwidth_gbps / middle << "  " << (run.ok() ? "sums ok" : run.problems) << "\n";
  }
}

}  // namespace nvsvp::platform
