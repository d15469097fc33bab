// The register block (CSR) of one switch chip: the state behind the register map of
// nvsvp/hw/switch_registers.hpp and its semantics (docs/registers.md is the specification).
// Firmware reaches it through SwitchChip's `csr` socket; the datapath uses the C++ API below
// (route lookups, multicast group lookups, counters, errors), which never decodes a register.
// SystemC-free: the chip turns interrupt-line changes into an sc_event.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nvsvp/hw/bit_mask.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::model {

// The structural figures the identity registers report.
struct SwitchCsrConfig {
  uint32_t chip_index = 0;
  uint32_t ports = 64;             // at most kMaxPorts (the bits of a route entry)
  uint32_t multicast_slots = 128;  // at most kMaxMulticastSlots
  uint32_t reduction_contexts_per_port = 64;
};

// One entry of the multicast group table. When valid, multimem addresses [base, base + size)
// map to local_base + (address - base) in every member GPU (bit g of `members`: GPU g).
struct MulticastGroup {
  bool valid = false;
  uint64_t base = 0;
  uint64_t size = 0;
  uint64_t local_base = 0;
  hw::GpuMask members;

  bool covers(uint64_t address) const { return address - base < size; }
  uint64_t local_address(uint64_t address) const { return local_base + (address - base); }
  bool has_member(uint32_t gpu) const { return members.test(gpu); }
};

// The 64-bit counters, in register-map order (counter i lives at kCounterForwardedRequests + 8 i).
enum class SwitchCounter : uint32_t {
  forwarded_requests,
  forwarded_responses,
  replications,
  reductions,
  evictions,
  access_errors,
  partition_errors,
};
inline constexpr uint32_t kSwitchCounters = 7;

// A port's link-error counters, in register order (docs/registers.md, "Link errors per port").
enum class PortLinkCounter : uint32_t {
  rx_crc_errors,      // packets from the port's GPU that failed their CRC (the GPU replayed them)
  tx_replays,         // packets the port sent again after its GPU saw a bad CRC
  rx_credit_resyncs,  // resynchronisations of the GPU's credits for this input
  tx_credit_resyncs,  // resynchronisations of this output's credits
};
inline constexpr uint32_t kPortLinkCounters = 4;

// How a register access went. Everything but `ok` also sets error_bad_register_access; a refused
// write changes nothing and a refused read returns 0.
enum class RegisterAccess : uint8_t {
  ok,
  unaligned,       // offset not a multiple of 4
  unknown_offset,  // no register there (including the reserved words of a group slot)
  read_only,       // a write to a read-only register
  rejected_value,  // a write the register refuses: route bits for absent ports, a group field of
                   // a valid group, CONTROL.valid = 1 for a group that fails its checks, or a
                   // DYN_EXPERTS_PER_GPU / CONTEXTS_ENABLED value out of range
};
const char* to_string(RegisterAccess access);

class SwitchCsr {
 public:
  // What a route entry, a member mask and LINK_DOWN_PORTS can name.
  static constexpr uint32_t kRouteTableEntries = hw::kMaxGpus;
  static constexpr uint32_t kMaxPorts = hw::kMaxPortsPerChip;
  // A rack holds at most 1024 groups (docs/background/nvlink_nvswitch.md#multicast-groups); no chip
  // needs more slots than that.
  static constexpr uint32_t kMaxMulticastSlots = 1024;
  // The error bits the hardware defines; other ERROR_STATUS / INT_ENABLE bits read as 0.
  static constexpr uint32_t kErrorBits = hw::switch_regs::kErrorBitsDefined;

  // Throws std::invalid_argument when a figure is out of range.
  explicit SwitchCsr(const SwitchCsrConfig& config);

  const SwitchCsrConfig& config() const { return config_; }

  // --- Firmware's view: 32-bit register accesses at byte offsets. ---
  RegisterAccess read(uint32_t offset, uint32_t& value);
  RegisterAccess write(uint32_t offset, uint32_t value);
  // Back to the reset values (registers, routes, groups, counters, pool figures). The interrupt
  // listener hears the line fall if it was high.
  void reset();

  // --- The datapath's view. ---
  // The ports towards `gpu`, ascending (a message takes the one its address hashes to); empty
  // when there is no route. Kept decoded so that a message never pays a register decode.
  const std::vector<uint16_t>& route_ports(uint32_t gpu) const {
    return gpu < kRouteTableEntries ? route_ports_[gpu] : no_ports_;
  }
  hw::PortMask route_mask(uint32_t gpu) const { return gpu < kRouteTableEntries ? route_masks_[gpu] : hw::PortMask{}; }
  // Programs an entry directly (tests and tools; firmware writes ROUTE_LO/HI). Throws
  // std::out_of_range for a GPU beyond the table or a port the chip does not have.
  void set_route_ports(uint32_t gpu, const std::vector<uint16_t>& ports);

  // Partitions (docs/registers.md, "Partitions"). Whether any port's partition id is not 0: while
  // none is, every request is served as before and the datapath asks nothing more.
  bool partitioned() const { return partitioned_; }
  uint32_t port_partition(uint32_t port) const { return port_partitions_.at(port); }
  // The partition of GPU `gpu` as this chip sees it: the id its route's ports share, or
  // kPartitionIsolated (no route, ports that disagree, a GPU beyond the table).
  uint32_t gpu_partition(uint32_t gpu) const {
    return gpu < kRouteTableEntries ? gpu_partitions_[gpu] : hw::switch_regs::kPartitionIsolated;
  }
  // Whether a request arriving on `port` may reach GPU `gpu`.
  bool may_reach(uint32_t port, uint32_t gpu) const {
    const uint32_t from = port_partitions_[port];
    return from != hw::switch_regs::kPartitionIsolated && from == gpu_partition(gpu);
  }
  // Programs a port's id directly (tests and tools; firmware writes PORT_PARTITION). Throws
  // std::out_of_range for a port the chip does not have.
  void set_port_partition(uint32_t port, uint32_t partition);

  // The valid group whose range covers `address`, or nullptr.
  const MulticastGroup* group_for(uint64_t address) const;
  const MulticastGroup& group(uint32_t slot) const { return groups_.at(slot); }

  void count(SwitchCounter counter, uint64_t amount = 1) { counters_[static_cast<uint32_t>(counter)] += amount; }
  uint64_t counter(SwitchCounter counter) const { return counters_[static_cast<uint32_t>(counter)]; }

  // A link error on port `port` (the datapath's ports' fault listeners): counted (32 bits,
  // wrapping) and its error bit raised, error_link_crc for CRC failures and replays,
  // error_credit_resync for resynchronisations.
  void count_link_error(uint32_t port, PortLinkCounter counter, uint32_t amount = 1);
  uint32_t link_error_count(uint32_t port, PortLinkCounter counter) const {
    return port_link_errors_.at(port)[static_cast<uint32_t>(counter)];
  }

  // Sets error bits (sticky until firmware clears them with a write of 1).
  void raise_error(uint32_t bits);
  uint32_t error_status() const { return error_status_; }
  uint32_t interrupt_enable() const { return interrupt_enable_; }
  uint32_t interrupt_pending() const { return error_status_ & interrupt_enable_; }
  // The chip's interrupt line: high while any enabled error bit is set.
  bool interrupt_line() const { return interrupt_pending() != 0; }
  // Called with the new level whenever the interrupt line changes.
  void on_interrupt_change(std::function<void(bool)> listener) { interrupt_listener_ = std::move(listener); }

  // The reduction-context pool: ports x the contexts per port firmware enabled (CONTEXTS_ENABLED,
  // all reduction_contexts_per_port after reset). acquire returns false and raises
  // error_context_pool_exhausted when none is free.
  uint32_t reduction_contexts_enabled() const { return contexts_enabled_; }
  uint32_t reduction_context_capacity() const { return config_.ports * contexts_enabled_; }
  bool acquire_reduction_context();
  // Throws std::logic_error when no context is in use (a datapath bug, not a firmware error).
  void release_reduction_context();
  uint32_t reduction_contexts_in_use() const { return contexts_in_use_; }
  uint32_t reduction_contexts_peak() const { return contexts_peak_; }

  // Link state (LINK_DOWN_PORTS): the platform says when a port's link goes down or comes back
  // up (in either direction); a change raises error_link_state.
  void set_port_link_down(uint32_t port, bool down);
  const hw::PortMask& link_down_ports() const { return link_down_ports_; }
  // Called when a route entry loses a port and keeps at least one (the datapath re-routes what
  // waits for the lost port), and when firmware writes CHIP_CONTROL.FLUSH.
  void on_route_change(std::function<void(uint32_t gpu)> listener) { route_listener_ = std::move(listener); }
  void on_flush(std::function<void()> listener) { flush_listener_ = std::move(listener); }

  // Dynamic multimem: experts per GPU (target expert e is on GPU e / this); 0: not configured.
  uint32_t dynamic_experts_per_gpu() const { return dynamic_experts_per_gpu_; }

 private:
  RegisterAccess refuse(RegisterAccess why);
  RegisterAccess write_route(uint32_t gpu, uint32_t word, uint32_t value);
  RegisterAccess read_group(uint32_t slot, uint32_t field, uint32_t& value) const;
  RegisterAccess write_group(uint32_t slot, uint32_t field, uint32_t value);
  // Whether `slot`'s fields make a group that may become valid (docs/registers.md, "Multicast
  // group table").
  bool group_acceptable(uint32_t slot) const;
  void set_route_mask(uint32_t gpu, const hw::PortMask& mask);
  // Recomputes gpu_partitions_[gpu] from its route and the ports' ids.
  void update_gpu_partition(uint32_t gpu);
  void update_partitions();
  void rebuild_group_index();
  void set_error_state(uint32_t status, uint32_t enable);
  // The end of the port error table: kPortErrorStride bytes per port the chip has.
  uint32_t port_error_end() const { return hw::switch_regs::kPortErrorTable + hw::switch_regs::kPortErrorStride * config_.ports; }

  SwitchCsrConfig config_;
  uint32_t error_status_ = 0;
  uint32_t interrupt_enable_ = 0;
  std::array<uint64_t, kSwitchCounters> counters_{};
  std::array<uint32_t, kSwitchCounters> latched_high_{};  // upper halves latched by reading LO
  uint32_t contexts_in_use_ = 0;
  uint32_t contexts_peak_ = 0;
  uint32_t contexts_enabled_ = 0;  // per port; the constructor and reset() set it to all
  uint32_t dynamic_experts_per_gpu_ = 0;
  std::vector<std::array<uint32_t, kPortLinkCounters>> port_link_errors_;  // [port][counter]
  std::vector<uint32_t> port_partitions_;  // [port]
  std::vector<uint32_t> gpu_partitions_;   // [gpu], decoded from the route table and port_partitions_
  bool partitioned_ = false;
  std::vector<hw::PortMask> route_masks_;
  std::vector<std::vector<uint16_t>> route_ports_;
  std::vector<MulticastGroup> groups_;
  // Valid groups as (base, slot), sorted by base: group_for is a binary search.
  std::vector<std::pair<uint64_t, uint32_t>> group_index_;
  std::function<void(bool)> interrupt_listener_;
  std::function<void(uint32_t)> route_listener_;
  std::function<void()> flush_listener_;
  hw::PortMask link_down_ports_;
  static const std::vector<uint16_t> no_ports_;
};

}  // namespace nvsvp::model
