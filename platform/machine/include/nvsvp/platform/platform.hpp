// The assembled machine: GPUs, switch chips and one NVLink port per link and direction, wired
// from a PlatformSpec. GPU link j of every GPU goes to the same chip (chips take consecutive
// links, links_per_chip[c] each). A source picks its link by hashing the target address over all
// its links, which fixes the chip; that chip picks among the destination's ports on it by the
// same hash over their number. The switch chips come up empty (no routes): firmware brings them
// up through their register blocks (fw::SwitchFabric) from the cabling fabric_topology() describes.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "nvsvp/fw/switch_bringup.hpp"

#include "nvsvp/model/component_log.hpp"
#include "nvsvp/model/fast_fabric.hpp"
#include "nvsvp/model/gpu.hpp"
#include "nvsvp/model/message_observer.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/switch_chip.hpp"
#include "nvsvp/model/traffic_statistics.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

enum class LinkDirection { gpu_to_switch, switch_to_gpu };

// Where one GPU link lands: its chip and the port on that chip.
struct LinkEnd {
  uint32_t chip;
  uint16_t port;
};

// The cabling of a platform as plain data, one cable per GPU link: GPU g's links go to chip 0
// first (links_per_chip[0] of them), then chip 1, ...; on chip c, GPU g's s-th link is port
// g x links_per_chip[c] + s. Platform wires its ports by it, and firmware brings the chips up
// from it (fw::SwitchFabric), in a run or on register models alone (check_fabric_resources).
fw::FabricTopology fabric_topology(const PlatformSpec& spec);

// Switch chip `chip`'s parameters: the spec's, with only its cabled ports instantiated
// (spec.switch_chip.ports is a chip's capacity).
model::SwitchParams switch_chip_params(const PlatformSpec& spec, uint32_t chip);

class Platform : public sc_core::sc_module {
 public:
  Platform(const sc_core::sc_module_name& name, const PlatformSpec& spec);

  const PlatformSpec& spec() const { return spec_; }
  uint32_t gpu_count() const { return spec_.gpus; }
  uint32_t links_per_gpu() const { return links_per_gpu_; }
  model::Gpu& gpu(uint32_t index) { return gpus_[index]; }
  const model::Gpu& gpu(uint32_t index) const { return gpus_[index]; }
  model::SwitchChip& chip(uint32_t index) { return chips_[index]; }
  const model::SwitchChip& chip(uint32_t index) const { return chips_[index]; }
  // The port of GPU `gpu`'s link `link` in `direction`.
  const model::NvlinkPort& link(LinkDirection direction, uint32_t gpu, uint32_t link) const;
  model::NvlinkPort& link(LinkDirection direction, uint32_t gpu, uint32_t link);
  LinkEnd link_end(uint32_t gpu, uint32_t link) const;
  // From now on every link records when it is busy, in bins of `bin_ps`, one timeline per GPU
  // and direction (its links together), and every switch chip its input buffers' and reduction
  // buffers' occupancy on the same bins. Call before the simulation starts.
  void record_link_timelines(uint64_t bin_ps);
  // Chip `chip`'s input buffers (flits) and reduction buffers (bytes) per bin; nullptr unless
  // record_link_timelines was called.
  const model::OccupancyTimeline* input_occupancy_timeline(uint32_t chip) const {
    return chip < input_occupancy_.size() ? &input_occupancy_[chip] : nullptr;
  }
  const model::OccupancyTimeline* reduction_occupancy_timeline(uint32_t chip) const {
    return chip < reduction_occupancy_.size() ? &reduction_occupancy_[chip] : nullptr;
  }
  // The injection-to-tail-arrival latency of every message a GPU received, per kind.
  const model::MessageLatencies& message_latencies() const { return latencies_; }
  // GPU `gpu`'s links in `direction`: busy picoseconds per bin, summed over its links; nullptr
  // unless record_link_timelines was called.
  const model::BusyTimeline* link_timeline(LinkDirection direction, uint32_t gpu) const;
  // When at least one of GPU `gpu`'s links, in either direction, was serializing a message.
  const model::ActivityIntervals& link_activity(uint32_t gpu) const { return activity_[gpu]; }
  uint32_t switch_count() const { return spec_.switch_chips; }
  // From now on `observer` (nullptr: nobody) hears of every message and credit return on every
  // link and of every register access over the management bus (model/message_observer.hpp).
  void attach_observer(model::MessageObserver* observer);
  // Only the register accesses: `observer` (nullptr: nobody) hears of each one on the management bus.
  void attach_register_observer(model::MessageObserver* observer) { observer_ = observer; }
  // The log of chip `chip`'s register block as the management bus sees it (component
  // switch_<chip>.csr): every access at debug level.
  model::ComponentLog& register_log(uint32_t chip) { return register_logs_[chip]; }

  // The cabling as plain data, for the firmware's bring-up: one cable per GPU link.
  fw::FabricTopology fabric_topology() const;
  // One access to chip `chip`'s register block over the management bus (b_transport; `delay`
  // grows by the access time). Throws std::out_of_range for a chip that does not exist.
  void register_transport(uint32_t chip, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  // Injects the scenario's faults into the links (docs/configuration.md#faults): bit errors from
  // now on, each link direction with a stream of its own; credit losses at `layer_start` plus
  // their time. Call from the firmware thread at the layer's start.
  // A link_down takes the link's ports down at its time (and up again), telling the chip at its
  // end (LINK_DOWN_PORTS) and the GPU (its link state); a chip_down kills the chip and takes
  // every link to it down. What the chips lose goes back to the GPUs that issued it, held there
  // until firmware has them re-issued.
  void inject_faults(const std::vector<FaultSpec>& faults, const sc_core::sc_time& layer_start);
  // What the chips lost and handed back (all chips together), and what the GPUs did about it.
  struct LossTotals {
    uint64_t messages_lost = 0;
    uint64_t loads_lost = 0;
    uint64_t messages_dropped = 0;    // member reads and partial sums of lost loads, in the chips
    uint64_t responses_dropped = 0;   // members' responses for a chip no link in use reaches, at the GPUs
    uint64_t operations_reissued = 0;
    uint64_t operations_held = 0;     // lost and not yet re-issued
    uint64_t messages_moved = 0;      // moved off GPU links out of use
  };
  LossTotals loss_totals() const;
  // Member reads GPU `gpu` received for loads a chip then lost: they were answered for nothing
  // (the loads went again with new reads), so the HAL's message count leaves them out.
  uint64_t void_member_reads(uint32_t gpu) const { return gpu < void_member_reads_.size() ? void_member_reads_[gpu] : 0; }

  // Lists what is not yet done (GPU work, queued and buffered messages, held credits), at most
  // `max_lines` per kind with a count of the rest; returns how many items there are (0 when the
  // machine is quiet).
  uint64_t describe_outstanding(std::ostream& os, uint64_t max_lines = 12) const;

 private:
  // simulation.fabric: fast: the fabric that moves every GPU's messages, wired as the ports are.
  void attach_fast_fabric();
  // Hands what a chip lost to the GPU that issued it.
  class LostOperations final : public model::LostOperationSink {
   public:
    explicit LostOperations(Platform& platform) : platform_(platform) {}
    void message_lost(tlm::tlm_generic_payload& message) override;
    void load_lost(tlm::tlm_generic_payload& request, const hw::GpuMask& members_read) override;

   private:
    Platform& platform_;
  };
  void schedule_link_down(const FaultSpec& fault, const sc_core::sc_time& layer_start);
  void schedule_chip_down(const FaultSpec& fault, const sc_core::sc_time& layer_start);

  PlatformSpec spec_;
  uint32_t links_per_gpu_;
  fw::FabricTopology cabling_;  // fabric_topology(spec_): cable g x links_per_gpu_ + l is GPU g's link l
  model::PayloadPool pool_;             // outlives every model that holds payloads
  sc_core::sc_vector<model::SwitchChip> chips_;
  sc_core::sc_vector<model::Gpu> gpus_;
  sc_core::sc_vector<model::NvlinkPort> up_;    // [gpu * links + link]: GPU -> switch
  sc_core::sc_vector<model::NvlinkPort> down_;  // [gpu * links + link]: switch -> GPU
  // simulation.fabric: fast: it moves the messages; the ports above then only count.
  std::unique_ptr<model::FastFabric> fast_fabric_;
  std::vector<model::BusyTimeline> timelines_[2];  // [direction][gpu], when recorded
  std::vector<model::ActivityIntervals> activity_;  // [gpu]: its links, both directions
  std::vector<model::OccupancyTimeline> input_occupancy_;      // [chip], when recorded
  std::vector<model::OccupancyTimeline> reduction_occupancy_;  // [chip], when recorded
  model::MessageLatencies latencies_;  // all GPUs' received messages
  // The firmware's management bus: one initiator socket per chip's `csr` target.
  sc_core::sc_vector<tlm_utils::simple_initiator_socket<Platform>> register_bus_;
  model::MessageObserver* observer_ = nullptr;
  std::vector<model::ComponentLog> register_logs_;  // [chip]
  LostOperations lost_operations_{*this};
  std::vector<uint64_t> void_member_reads_;  // [gpu]
};

}  // namespace nvsvp::platform
