#include "nvsvp/platform/calibration.hpp"

#include <iomanip>
#include <sstream>
#include <stdexcept>

#include <systemc>

#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {

std::vector<fw::AllReduceRun> run_allreduce_calibration(const PlatformSpec& platform_spec, const fw::AllReduceSpec& spec) {
  // Checked before elaboration: a bad size is a usage error, not a failed run.
  fw::plan_nvls_allreduce(platform_spec.gpus, spec);
  std::vector<fw::AllReduceRun> runs;
  // Modules live to the process's end, as SystemC wants them.
  auto& platform = *new Platform("platform", platform_spec);
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology());
    fw::MulticastAllocator allocator(hal, fabric.report().chips);
    runs.push_back(fw::run_allreduce(hal, allocator, fw::AllReduceAlgorithm::nvls, spec));
    fw::AllReduceSpec ring = spec;
    ring.first_counter = runs.back().counters_end;  // the GPUs' counters keep nvls's arrivals
    runs.push_back(fw::run_allreduce(hal, allocator, fw::AllReduceAlgorithm::ring, ring));
  });
  sc_core::sc_start();
  if (!host.done()) throw std::runtime_error("all-reduce calibration: the firmware did not finish");
  return runs;
}

void print_calibration(std::ostream& os, const PlatformSpec& platform, const std::vector<fw::AllReduceRun>& runs) {
  os << "all-reduce calibration on " << platform.preset << " (" << platform.gpus << " GPUs)";
  if (!runs.empty()) os << ", " << runs.front().bytes << " bytes per GPU";
  os << "\n";
  os << std::left << std::setw(6) << "algo" << std::right << std::setw(12) << "time_us" << std::setw(12) << "algBW_GBps"
     << std::setw(12) << "busBW_GBps" << std::setw(16) << "anchor_busBW" << std::setw(10) << "ratio"
     << "  check\n";
  for (const fw::AllReduceRun& run : runs) {
    const AllReduceAnchor& anchor = run.algorithm == "nvls" ? kNvlsAnchor : kRingAnchor;
    const double middle = (anchor.low_gbps + anchor.high_gbps) / 2.0;
    std::ostringstream anchor_text;
    if (anchor.low_gbps == anchor.high_gbps) {
      anchor_text << anchor.low_gbps;
    } else {
      anchor_text << anchor.low_gbps << "-" << anchor.high_gbps;
    }
    os << std::left << std::setw(6) << run.algorithm << std::right << std::fixed << std::setprecision(3)
       << std::setw(12) << run.time_us << std::setprecision(1) << std::setw(12) << run.algorithm_bandwidth_gbps
       << std::setw(12) << run.bus_bandwidth_gbps << std::setw(16) << anchor_text.str() << std::setprecision(3)
       << std::setw(10) << run.bus_bandwidth_gbps / middle << "  "
       << (run.values_ok ? "sums ok" : run.check_message) << "\n";
  }
}

}  // namespace nvsvp::platform
