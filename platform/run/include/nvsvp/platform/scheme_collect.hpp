// The collect step of one scheme's run, private to platform/: what the platform and the firmware
// show once the simulation is over, as pieces of the scheme's entry of report.json, the rows of
// links_<scheme>.csv and the timeline files' data. runner.cpp runs the steps and puts the pieces
// together; link_statistics.cpp holds the links and the timeline, fabric_statistics.cpp the
// statistics, scheme_result.cpp the rest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/report.hpp"

namespace nvsvp::platform {

inline double to_us(const sc_core::sc_time& t) { return t.to_seconds() * 1e6; }

// The layer's time span: from its start to its end, or to where the simulation stopped when the
// firmware did not finish. Times in the result are measured from the start.
struct LayerWindow {
  sc_core::sc_time start;
  sc_core::sc_time end;

  double seconds() const { return (end - start).to_seconds(); }
  // `t` in microseconds from the start (0 before it).
  double since_start_us(const sc_core::sc_time& t) const { return t > start ? to_us(t - start) : 0.0; }
};

// --- links and timeline (link_statistics.cpp) -------------------------------------------------

// One direction's links over the layer, summed.
struct DirectionTotals {
  uint64_t wire_bytes = 0;
  uint64_t payload_bytes = 0;
  uint64_t messages = 0;
  uint64_t packets = 0;
  uint64_t sends = 0;  // transactions (messages or packets, as the fabric moves them)
  double busy_s = 0.0;
  uint64_t links = 0;
  // The ideal time of this direction: the busiest GPU's wire time with its links as one pipe
  // (its links' serialization time summed, over the number of links), and that GPU.
  double ideal_s = 0.0;
  uint32_t ideal_gpu = 0;
};

// A row per link and direction; fills `totals`, [0] gpu_to_switch and [1] switch_to_gpu.
std::vector<LinkStatistics> link_statistics(const Platform& platform, double layer_s, DirectionTotals totals[2]);

// The result's figures of the links as a whole: ideal communication time and efficiency, traffic,
// messages and utilization per direction.
nlohmann::json link_figures(const DirectionTotals totals[2], double layer_s);

// What the timeline files need: per GPU and direction the links' utilization per bin of `bin_ps`
// over the layer, and every GPU's phases and compute intervals.
Timeline timeline_of(const Platform& platform, uint64_t bin_ps, const LayerWindow& layer);

// --- statistics (fabric_statistics.cpp) --------------------------------------------------------

// A row per GPU link, direction and traffic class: stats_<scheme>.csv.
std::vector<HopStatistics> hop_statistics(const Platform& platform, const LayerWindow& layer);
// The fabric-wide latency histogram, a row per message kind and bin with messages.
std::vector<LatencyBin> latency_bins(const Platform& platform);
// The `statistics` section: latency percentiles per message kind, per direction and VC class
// figures over the links, the switch ports' mean and worst, the reduction buffers.
nlohmann::json statistics_json(const Platform& platform, const std::vector<HopStatistics>& hops,
                               const LayerWindow& layer);
// Fills the timeline's occupancy series (its bins already set by timeline_of).
void add_occupancy(const Platform& platform, uint64_t bin_ps, const LayerWindow& layer, Timeline& timeline);

// --- the rest of the result (scheme_result.cpp) ------------------------------------------------

// The phases' names, from the first GPU that ran a layer (an isolated GPU of a partitioned run
// has none).
const std::vector<std::string>& phase_names(const Platform& platform);
// The layer's phases, each from its first start to its last end over the GPUs.
nlohmann::json phases_json(const Platform& platform, const LayerWindow& layer);
// Per GPU: its finish time, messages, compute time and phases.
nlohmann::json gpus_json(const Platform& platform, const LayerWindow& layer);
// The switch chips summed, with what bring-up found and the errors firmware serviced.
nlohmann::json switch_json(const Platform& platform, const fw::SwitchFabric& fabric);
// Dynamic multimem: the destination Hubs' table-entry caches and the source queues, over GPUs.
nlohmann::json hub_json(const Platform& platform);
// Token-centric fusion: notifications and the fused kernel's tables, over GPUs.
nlohmann::json fusion_json(const Platform& platform, const fw::MoeCheckResult& checks);
// The `replication` section: what the scheduler decided, the loads before and after, and what the
// broadcasts cost (`phases` as phases_json gave them; `phase_end_us` when the replication phase
// ended, `bytes_sent` what each GPU's links sent by then). Null without replication.
nlohmann::json replication_json(const fw::MoeLayerSpec& layer, const fw::ReplicationPhase& phase,
                                const fw::ReplicationCheck& check, const nlohmann::json& phases, double phase_end_us,
                                const std::vector<uint64_t>& bytes_sent);
// The `load` section: how evenly the gate's routing (before any replica) loads the experts and
// the GPUs holding them, as the largest load over the mean (token-expert pairs).
nlohmann::json load_json(const fw::MoeLayerSpec& layer);
// The `time_breakdown` section: per GPU, the layer's time with communication alone active (a
// link of the GPU, either direction, serializing), compute alone (an executor stream running a
// GEMM or a compute task with work; fixed delays are not compute), both, and neither; the critical GPU's (the last to finish) and the mean
// over GPUs.
nlohmann::json time_breakdown_json(const Platform& platform, const LayerWindow& layer);
// The `checks` section: what verification found, `stuck` the outstanding work (empty: none).
// --- faults (fault_report.cpp) ----------------------------------------------------------------

// The scheme's `faults` section: what was injected, the links' replays and credit losses, and
// what firmware read of them from the chips. `accounted` is whether every replay and
// resynchronisation reached firmware through its switch port's counters and an interrupt.
// With link and chip outages, `outages`: firmware's recoveries (each with the time from its fault,
// `layer_start_ns` being the layer's start on firmware's clock), what the chips lost and the GPUs
// re-issued; `accounted` also needs every outage within the layer's `layer_us` detected and
// everything lost re-issued.
nlohmann::json faults_json(const Platform& platform, const std::vector<FaultSpec>& faults,
                           const fw::SwitchFabric& fabric, double layer_start_ns, double layer_us, bool& accounted);

nlohmann::json checks_json(const fw::MoeCheckResult& checks, const fw::ReplicationCheck& replication_checks,
                           const std::string& stuck, bool passed);

}  // namespace nvsvp::platform
