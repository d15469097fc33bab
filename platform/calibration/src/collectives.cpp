#include "nvsvp/platform/collectives.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include <systemc>

#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"
#include "nvsvp/platform/scheme_collect.hpp"

namespace nvsvp::platform {

namespace {

// Wire bytes of the messages a GPU sends / receives under `link`'s packet format.
uint64_t sent_wire_bytes(const model::LinkParams& link, const fw::GpuTraffic& t, uint64_t message_bytes) {
  return ((t.messages_sent - t.requests_sent) * link.wire_flits(message_bytes) + t.requests_sent * link.wire_flits(0)) *
         link.flit_bytes;
}
uint64_t received_wire_bytes(const model::LinkParams& link, const fw::GpuTraffic& t, uint64_t message_bytes) {
  return ((t.messages_received - t.requests_received) * link.wire_flits(message_bytes) +
          t.requests_received * link.wire_flits(0)) *
         link.flit_bytes;
}

// What the counters of the platform said at one instant: the links' wire bytes (link_statistics'
// rows) and the GPUs' traffic.
struct Snapshot {
  std::vector<LinkStatistics> links;
  std::vector<fw::GpuTraffic> gpus;
};

Snapshot snapshot(const Platform& platform) {
  Snapshot s;
  DirectionTotals totals[2];
  s.links = link_statistics(platform, 0.0, totals);
  for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
    const model::GpuStats& stats = platform.gpu(g).stats();
    fw::GpuTraffic& t = s.gpus.emplace_back();
    t.payload_bytes_sent = stats.payload_bytes_sent;
    t.payload_bytes_received = stats.payload_bytes_received;
    t.messages_sent = stats.messages_sent;
    t.messages_received = stats.messages_received;
  }
  return s;
}

// The busiest and mean link of one direction between two snapshots.
LinkLoad link_load(const Snapshot& before, const Snapshot& after, bool gpu_to_switch) {
  LinkLoad load;
  uint64_t total = 0;
  uint64_t links = 0;
  for (size_t i = 0; i < after.links.size(); ++i) {
    const LinkStatistics& row = after.links[i];
    if (row.gpu_to_switch != gpu_to_switch) continue;
    const uint64_t wire = row.wire_bytes - before.links[i].wire_bytes;
    total += wire;
    ++links;
    if (wire > load.busiest_wire_bytes) {
      load.busiest_wire_bytes = wire;
      load.busiest_gpu = row.gpu;
      load.busiest_link = row.link;
    }
  }
  load.mean_wire_bytes = links > 0 ? static_cast<double>(total) / static_cast<double>(links) : 0.0;
  return load;
}

// The run's figures, the platform's counts over it, and the checks against the implied traffic
// and the link bound.
CollectiveResult make_result(const PlatformSpec& spec, const fw::CollectiveSpec& collective, const fw::CollectiveRun& run,
                             const Snapshot& before, const Snapshot& after) {
  CollectiveResult r;
  r.algorithm = run.algorithm;
  r.gpus = run.gpus;
  r.bytes = run.bytes;
  r.time_us = run.time_us;
  r.algorithm_bandwidth_gbps = run.algorithm_bandwidth_gbps;
  r.bus_bandwidth_gbps = run.bus_bandwidth_gbps;
  r.values_ok = run.values_ok;
  r.check_message = run.check_message;
  r.implied = fw::implied_traffic(spec.gpus, collective);
  r.bound = link_bound(spec, collective);
  r.gpu_to_switch = link_load(before, after, true);
  r.switch_to_gpu = link_load(before, after, false);
  uint64_t busiest_sent = 0;
  uint64_t busiest_received = 0;
  for (uint32_t g = 0; g < spec.gpus; ++g) {
    fw::GpuTraffic& m = r.measured.emplace_back();
    m.payload_bytes_sent = after.gpus[g].payload_bytes_sent - before.gpus[g].payload_bytes_sent;
    m.payload_bytes_received = after.gpus[g].payload_bytes_received - before.gpus[g].payload_bytes_received;
    m.messages_sent = after.gpus[g].messages_sent - before.gpus[g].messages_sent;
    m.messages_received = after.gpus[g].messages_received - before.gpus[g].messages_received;
    busiest_sent = std::max(busiest_sent, sent_wire_bytes(spec.link, r.implied[g], collective.message_bytes));
    busiest_received = std::max(busiest_received, received_wire_bytes(spec.link, r.implied[g], collective.message_bytes));
  }
  r.gpu_to_switch.implied_wire_bytes = static_cast<double>(busiest_sent) / spec.links_per_gpu();
  r.switch_to_gpu.implied_wire_bytes = static_cast<double>(busiest_received) / spec.links_per_gpu();
  std::ostringstream problems;
  auto problem = [&](const std::string& text) { problems << (problems.tellp() > 0 ? "; " : "") << text; };
  if (!r.values_ok) problem(r.check_message);
  r.bytes_ok = true;
  for (uint32_t g = 0; g < spec.gpus && r.bytes_ok; ++g) {
    if (r.measured[g] == r.implied[g]) continue;
    r.bytes_ok = false;
    const fw::GpuTraffic& m = r.measured[g];
    const fw::GpuTraffic& i = r.implied[g];
    std::ostringstream text;
    text << "GPU " << g << " sent " << m.payload_bytes_sent << " B in " << m.messages_sent << " messages, received "
         << m.payload_bytes_received << " B in " << m.messages_received << "; the collective implies "
         << i.payload_bytes_sent << " B in " << i.messages_sent << ", " << i.payload_bytes_received << " B in "
         << i.messages_received;
    problem(text.str());
  }
  r.within_link_bound = r.bus_bandwidth_gbps <= r.bound.bus_bandwidth_gbps * (1.0 + 1e-9);
  if (!r.within_link_bound) {
    std::ostringstream text;
    text << "bus bandwidth " << r.bus_bandwidth_gbps << " GB/s beats the link bound " << r.bound.bus_bandwidth_gbps;
    problem(text.str());
  }
  r.problems = problems.str();
  return r;
}

}  // namespace

LinkBound link_bound(const PlatformSpec& platform, const fw::CollectiveSpec& spec) {
  // GB/s = bytes/ns, the GPU's links together.
  const double rate = platform.links_per_gpu() * platform.link.line_rate_gbps * platform.link.efficiency;
  uint64_t busiest = 0;
  for (const fw::GpuTraffic& t : fw::implied_traffic(platform.gpus, spec)) {
    busiest = std::max({busiest, sent_wire_bytes(platform.link, t, spec.message_bytes),
                        received_wire_bytes(platform.link, t, spec.message_bytes)});
  }
  LinkBound bound;
  bound.time_us = static_cast<double>(busiest) / rate / 1000.0;
  bound.bus_bandwidth_gbps = bound.time_us > 0 ? fw::bus_bandwidth_gbps(spec.collective, platform.gpus, spec.bytes, bound.time_us) : 0.0;
  return bound;
}

std::vector<CollectiveResult> run_collectives(const PlatformSpec& platform_spec, std::vector<fw::CollectiveSpec> specs,
                                              const std::vector<LogSetting>& logs) {
  std::vector<CollectiveResult> results;
  std::exception_ptr failure;
  // Modules live to the process's end, as SystemC wants them.
  auto& platform = *new Platform("platform", platform_spec);
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    try {
      fw::SwitchFabric fabric(hal);
      fabric.bring_up(platform.fabric_topology());
      fw::MulticastAllocator allocator(hal, fabric.report().chips);
      uint32_t next_counter = 0;
      for (fw::CollectiveSpec& spec : specs) {
        spec.first_counter = next_counter;  // the GPUs' counters keep the previous ones' arrivals
        const Snapshot before = snapshot(platform);
        const auto wall_start = std::chrono::steady_clock::now();
        const fw::CollectiveRun run = fw::run_collective(hal, allocator, spec);
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - wall_start;
        next_counter = run.counters_end;
        results.push_back(make_result(platform_spec, spec, run, before, snapshot(platform)));
        results.back().wall_seconds = wall.count();
      }
    } catch (...) {
      failure = std::current_exception();  // a refused spec: no work was submitted, the run ends
    }
  });
  configure_logs(platform, hal, logs);
  sc_core::sc_start();
  if (failure) std::rethrow_exception(failure);
  if (!host.done()) throw std::runtime_error("collectives: the firmware did not finish");
  return results;
}

CollectiveResult run_collective(const PlatformSpec& platform, const fw::CollectiveSpec& spec) {
  return run_collectives(platform, {spec}).front();
}

void print_collectives(std::ostream& os, const std::vector<CollectiveResult>& results) {
  os << std::left << std::setw(18) << "collective" << std::right << std::setw(12) << "bytes" << std::setw(12) << "time_us"
     << std::setw(12) << "algBW_GBps" << std::setw(12) << "busBW_GBps" << std::setw(12) << "bound_GBps" << std::setw(14)
     << "up_max_MB" << std::setw(14) << "up_mean_MB" << std::setw(14) << "down_max_MB" << std::setw(14) << "down_mean_MB"
     << std::setw(9) << "wall_s" << "  check\n";
  for (const CollectiveResult& r : results) {
    os << std::left << std::setw(18) << r.algorithm << std::right << std::setw(12) << r.bytes << std::fixed
       << std::setprecision(3) << std::setw(12) << r.time_us << std::setprecision(1) << std::setw(12)
       << r.algorithm_bandwidth_gbps << std::setw(12) << r.bus_bandwidth_gbps << std::setw(12)
       << r.bound.bus_bandwidth_gbps << std::setprecision(3) << std::setw(14) << r.gpu_to_switch.busiest_wire_bytes / 1e6
       << std::setw(14) << r.gpu_to_switch.mean_wire_bytes / 1e6 << std::setw(14)
       << r.switch_to_gpu.busiest_wire_bytes / 1e6 << std::setw(14) << r.switch_to_gpu.mean_wire_bytes / 1e6
       << std::setprecision(2) << std::setw(9) << r.wall_seconds << "  " << (r.ok() ? "ok" : r.problems) << "\n";
    os.unsetf(std::ios::fixed);
  }
}

}  // namespace nvsvp::platform
