// Runs NCCL's collectives (fw/collectives.hpp) on a platform: elaborates it, brings the switches
// up through firmware, runs the plan, checks the values, and sets the result beside what the
// collective implies: the payload every GPU must send and receive (which the GPUs' counts must
// equal exactly) and the link bound (the best bus bandwidth the links allow, which the result must
// not beat). The issue-18 anchors (`nvsvp anchors`) and `nvsvp calibrate` call it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "nvsvp/fw/collectives.hpp"
#include "nvsvp/platform/observability.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// One direction's links over the collective, in wire bytes (headers included): GPU->switch is what
// the GPUs sent, switch->GPU what they received.
struct LinkLoad {
  uint64_t busiest_wire_bytes = 0;  // the busiest link of any GPU
  uint32_t busiest_gpu = 0;
  uint32_t busiest_link = 0;
  double mean_wire_bytes = 0.0;      // over every link of every GPU (idle GPUs' included)
  double implied_wire_bytes = 0.0;   // the busiest GPU's implied wire bytes spread evenly over its links
};

// The best the links allow: the implied wire bytes of the busiest GPU and direction at every one
// of its links' flit rate (line rate x efficiency; headers per LinkParams::wire_flits).
struct LinkBound {
  double time_us = 0.0;
  double bus_bandwidth_gbps = 0.0;
};
LinkBound link_bound(const PlatformSpec& platform, const fw::CollectiveSpec& spec);

struct CollectiveResult {
  std::string algorithm;  // fw::to_string(collective)
  uint32_t gpus = 0;
  uint64_t bytes = 0;     // as fw::CollectiveSpec::bytes counts it
  double time_us = 0.0;
  double algorithm_bandwidth_gbps = 0.0;
  double bus_bandwidth_gbps = 0.0;  // nccl-tests' convention (fw::bus_bandwidth_gbps)
  bool values_ok = false;
  std::string check_message;        // the first wrong value
  LinkLoad gpu_to_switch;
  LinkLoad switch_to_gpu;
  std::vector<fw::GpuTraffic> implied;   // per GPU, from the collective's definition
  std::vector<fw::GpuTraffic> measured;  // per GPU, its GpuStats over the collective
  LinkBound bound;
  bool bytes_ok = false;           // measured == implied for every GPU (payload and messages)
  bool within_link_bound = false;  // bus_bandwidth_gbps <= bound.bus_bandwidth_gbps
  std::string problems;            // every failed check, "; "-separated ("" when ok)
  double wall_seconds = 0.0;       // host time the collective's simulation took

  bool ok() const { return values_ok && bytes_ok && within_link_bound; }
};

// Elaborates `platform` and runs `spec` on it. Call at most once per process (SystemC elaborates
// once). Throws std::invalid_argument for a spec the plan refuses (sizes that do not divide, ...),
// std::runtime_error if the firmware does not finish.
CollectiveResult run_collective(const PlatformSpec& platform, const fw::CollectiveSpec& spec);
// The same for several collectives, one after the other in one simulation (each spec's
// first_counter is set after the previous one's counters). `logs`: the components' log levels
// (observability.hpp; the caller checks their patterns).
std::vector<CollectiveResult> run_collectives(const PlatformSpec& platform, std::vector<fw::CollectiveSpec> specs,
                                              const std::vector<LogSetting>& logs = {});

// A table: algorithm, bytes, time, algBW, busBW, link bound, busiest and mean link, checks.
void print_collectives(std::ostream& os, const std::vector<CollectiveResult>& results);

}  // namespace nvsvp::platform
