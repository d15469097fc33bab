#include "nvsvp/model/switch_csr.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace nvsvp::model {

namespace regs = hw::switch_regs;

namespace {

constexpr uint32_t kCounterEnd = regs::kCounterForwardedRequests + 8 * kSwitchCounters;
constexpr uint32_t kRouteTableEnd = regs::kRouteTable + regs::kRouteStride * SwitchCsr::kRouteTableEntries;
constexpr uint32_t kLinkDownPortsEnd = regs::link_down_ports_word(regs::kMaskWords);
constexpr uint32_t kGroupMembersEnd = regs::group_members_word(regs::kMaskWords);

bool is_link_down_word(uint32_t offset) { return offset >= regs::kLinkDownPorts && offset < kLinkDownPortsEnd; }

uint32_t low_half(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t high_half(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
void set_half(uint64_t& v, bool high, uint32_t half) {
  v = high ? (v & 0xFFFF'FFFFull) | (uint64_t{half} << 32) : (v & ~0xFFFF'FFFFull) | half;
}

// Identity and pool registers: read-only words outside the tables.
bool is_read_only_word(uint32_t offset) {
  switch (offset) {
    case regs::kId:
    case regs::kVersion:
    case regs::kChipIndex:
    case regs::kPortCount:
    case regs::kMulticastSlots:
    case regs::kReductionContexts:
    case regs::kRouteEntries:
    case regs::kIntPending:
    case regs::kContextsInUse:
    case regs::kContextsPeak:
      return true;
    default:
      return is_link_down_word(offset) || (offset >= regs::kCounterForwardedRequests && offset < kCounterEnd);
  }
}

}  // namespace

const std::vector<uint16_t> SwitchCsr::no_ports_;

const char* to_string(RegisterAccess access) {
  switch (access) {
    case RegisterAccess::ok: return "ok";
    case RegisterAccess::unaligned: return "unaligned";
    case RegisterAccess::unknown_offset: return "unknown offset";
    case RegisterAccess::read_only: return "read-only register";
    case RegisterAccess::rejected_value: return "value rejected";
  }
  return "?";
}

SwitchCsr::SwitchCsr(const SwitchCsrConfig& config)
    : config_(config),
      contexts_enabled_(config.reduction_contexts_per_port),
      port_link_errors_(config.ports),
      port_partitions_(config.ports, 0),
      gpu_partitions_(kRouteTableEntries, regs::kPartitionIsolated),
      route_masks_(kRouteTableEntries),
      route_ports_(kRouteTableEntries),
      groups_(config.multicast_slots) {
  if (config.ports < 1 || config.ports > kMaxPorts) {
    throw std::invalid_argument("switch register block: " + std::to_string(config.ports) +
                                " ports; a route entry is a " + std::to_string(kMaxPorts) + "-bit port mask, so 1 to " +
                                std::to_string(kMaxPorts) + " ports");
  }
  if (config.multicast_slots < 1 || config.multicast_slots > kMaxMulticastSlots) {
    throw std::invalid_argument("switch register block: " + std::to_string(config.multicast_slots) +
                                " multicast slots; expected 1 to " + std::to_string(kMaxMulticastSlots));
  }
  if (config.reduction_contexts_per_port > 65536) {
    throw std::invalid_argument("switch register block: " + std::to_string(config.reduction_contexts_per_port) +
                                " reduction contexts per port; at most 65536 (16-bit context index)");
  }
}

RegisterAccess SwitchCsr::refuse(RegisterAccess why) {
  raise_error(regs::error_bad_register_access);
  return why;
}

RegisterAccess SwitchCsr::read(uint32_t offset, uint32_t& value) {
  value = 0;
  if (offset % 4 != 0) return refuse(RegisterAccess::unaligned);
  switch (offset) {
    case regs::kId: value = regs::kIdValue; return RegisterAccess::ok;
    case regs::kVersion: value = regs::kVersionValue; return RegisterAccess::ok;
    case regs::kChipIndex: value = config_.chip_index; return RegisterAccess::ok;
    case regs::kPortCount: value = config_.ports; return RegisterAccess::ok;
    case regs::kMulticastSlots: value = config_.multicast_slots; return RegisterAccess::ok;
    case regs::kReductionContexts: value = config_.reduction_contexts_per_port; return RegisterAccess::ok;
    case regs::kRouteEntries: value = kRouteTableEntries; return RegisterAccess::ok;
    case regs::kErrorStatus: value = error_status_; return RegisterAccess::ok;
    case regs::kIntEnable: value = interrupt_enable_; return RegisterAccess::ok;
    case regs::kIntPending: value = interrupt_pending(); return RegisterAccess::ok;
    case regs::kContextsInUse: value = contexts_in_use_; return RegisterAccess::ok;
    case regs::kContextsPeak: value = contexts_peak_; return RegisterAccess::ok;
    case regs::kContextsEnabled: value = contexts_enabled_; return RegisterAccess::ok;
    case regs::kDynamicExpertsPerGpu: value = dynamic_experts_per_gpu_; return RegisterAccess::ok;
    case regs::kChipControl: value = 0; return RegisterAccess::ok;  // write-only: reads 0
    default: break;
  }
  if (is_link_down_word(offset)) {
    value = link_down_ports_.word32((offset - regs::kLinkDownPorts) / 4);
    return RegisterAccess::ok;
  }
  if (offset >= regs::kCounterForwardedRequests && offset < kCounterEnd) {
    // Reading LO latches HI, so LO then HI gives one coherent 64-bit value while the datapath
    // keeps counting.
    const uint32_t index = (offset - regs::kCounterForwardedRequests) / 8;
    if ((offset - regs::kCounterForwardedRequests) % 8 == 0) {
      value = low_half(counters_[index]);
      latched_high_[index] = high_half(counters_[index]);
    } else {
      value = latched_high_[index];
    }
    return RegisterAccess::ok;
  }
  if (offset >= regs::kRouteTable && offset < kRouteTableEnd) {
    const uint32_t gpu = (offset - regs::kRouteTable) / regs::kRouteStride;
    value = route_masks_[gpu].word32((offset - regs::kRouteTable) % regs::kRouteStride / 4);
    return RegisterAccess::ok;
  }
  if (offset >= regs::kPortErrorTable && offset < port_error_end()) {
    const uint32_t port = (offset - regs::kPortErrorTable) / regs::kPortErrorStride;
    value = port_link_errors_[port][(offset - regs::kPortErrorTable) % regs::kPortErrorStride / 4];
    return RegisterAccess::ok;
  }
  if (offset >= regs::kPortPartitionTable && offset < regs::port_partition_register(config_.ports)) {
    value = port_partitions_[(offset - regs::kPortPartitionTable) / regs::kPortPartitionStride];
    return RegisterAccess::ok;
  }
  const uint64_t group_end = regs::kGroupTable + uint64_t{regs::kGroupStride} * config_.multicast_slots;
  if (offset >= regs::kGroupTable && offset < group_end) {
    const RegisterAccess access = read_group((offset - regs::kGroupTable) / regs::kGroupStride,
                                             (offset - regs::kGroupTable) % regs::kGroupStride, value);
    return access == RegisterAccess::ok ? access : refuse(access);
  }
  return refuse(RegisterAccess::unknown_offset);
}

RegisterAccess SwitchCsr::write(uint32_t offset, uint32_t value) {
  if (offset % 4 != 0) return refuse(RegisterAccess::unaligned);
  if (is_read_only_word(offset)) return refuse(RegisterAccess::read_only);
  if (offset == regs::kErrorStatus) {
    set_error_state(error_status_ & ~value, interrupt_enable_);  // write 1 to clear
    return RegisterAccess::ok;
  }
  if (offset == regs::kIntEnable) {
    set_error_state(error_status_, value & kErrorBits);
    return RegisterAccess::ok;
  }
  if (offset == regs::kChipControl) {
    if ((value & ~regs::kChipControlFlush) != 0) return refuse(RegisterAccess::rejected_value);
    if ((value & regs::kChipControlFlush) != 0 && flush_listener_) flush_listener_();
    return RegisterAccess::ok;
  }
  if (offset == regs::kDynamicExpertsPerGpu) {
    if (value > regs::kMaxDynamicExpertsPerGpu) return refuse(RegisterAccess::rejected_value);
    dynamic_experts_per_gpu_ = value;
    return RegisterAccess::ok;
  }
  if (offset == regs::kContextsEnabled) {
    // At least one (a port without contexts could never serve a ld_reduce), at most the port has,
    // and only while the pool is idle: no reduction ever holds a context beyond the limit.
    if (value == 0 || value > config_.reduction_contexts_per_port || contexts_in_use_ != 0) {
      return refuse(RegisterAccess::rejected_value);
    }
    contexts_enabled_ = value;
    return RegisterAccess::ok;
  }
  if (offset >= regs::kRouteTable && offset < kRouteTableEnd) {
    const uint32_t gpu = (offset - regs::kRouteTable) / regs::kRouteStride;
    return write_route(gpu, (offset - regs::kRouteTable) % regs::kRouteStride / 4, value);
  }
  if (offset >= regs::kPortErrorTable && offset < port_error_end()) return refuse(RegisterAccess::read_only);
  if (offset >= regs::kPortPartitionTable && offset < regs::port_partition_register(config_.ports)) {
    port_partitions_[(offset - regs::kPortPartitionTable) / regs::kPortPartitionStride] = value;
    update_partitions();
    return RegisterAccess::ok;
  }
  const uint64_t group_end = regs::kGroupTable + uint64_t{regs::kGroupStride} * config_.multicast_slots;
  if (offset >= regs::kGroupTable && offset < group_end) {
    return write_group((offset - regs::kGroupTable) / regs::kGroupStride,
                       (offset - regs::kGroupTable) % regs::kGroupStride, value);
  }
  return refuse(RegisterAccess::unknown_offset);
}

void SwitchCsr::reset() {
  std::fill(route_masks_.begin(), route_masks_.end(), hw::PortMask{});
  for (std::vector<uint16_t>& ports : route_ports_) ports.clear();
  std::fill(groups_.begin(), groups_.end(), MulticastGroup{});
  group_index_.clear();
  counters_.fill(0);
  latched_high_.fill(0);
  for (auto& port : port_link_errors_) port.fill(0);
  std::fill(port_partitions_.begin(), port_partitions_.end(), 0);
  update_partitions();
  contexts_in_use_ = 0;
  contexts_peak_ = 0;
  contexts_enabled_ = config_.reduction_contexts_per_port;
  dynamic_experts_per_gpu_ = 0;
  link_down_ports_ = hw::PortMask{};
  set_error_state(0, 0);
}

void SwitchCsr::set_port_link_down(uint32_t port, bool down) {
  if (port >= config_.ports) throw std::out_of_range("link state of a port the chip does not have");
  if (link_down_ports_.test(port) == down) return;
  hw::PortMask state = link_down_ports_;
  state.set(port, down);
  link_down_ports_ = state;
  raise_error(regs::error_link_state);
}

RegisterAccess SwitchCsr::write_route(uint32_t gpu, uint32_t word, uint32_t value) {
  hw::PortMask mask = route_masks_[gpu];
  mask.set_word32(word, value);
  if (!mask.fits(config_.ports)) return refuse(RegisterAccess::rejected_value);
  set_route_mask(gpu, mask);
  return RegisterAccess::ok;
}

void SwitchCsr::set_route_ports(uint32_t gpu, const std::vector<uint16_t>& ports) {
  if (gpu >= kRouteTableEntries) {
    throw std::out_of_range("route to GPU " + std::to_string(gpu) + ": the route table has " +
                            std::to_string(kRouteTableEntries) + " entries");
  }
  hw::PortMask mask;
  for (uint16_t p : ports) {
    if (p >= config_.ports) {
      throw std::out_of_range("route to GPU " + std::to_string(gpu) + " names port " + std::to_string(p) +
                              "; the chip has " + std::to_string(config_.ports));
    }
    mask.set(p);
  }
  set_route_mask(gpu, mask);
}

void SwitchCsr::set_route_mask(uint32_t gpu, const hw::PortMask& mask) {
  const hw::PortMask old = route_masks_[gpu];
  route_masks_[gpu] = mask;
  std::vector<uint16_t>& ports = route_ports_[gpu];
  ports.clear();
  for (uint32_t p : mask) ports.push_back(static_cast<uint16_t>(p));
  update_gpu_partition(gpu);
  // A port leaving a route: what waits for it must be routed again (the chip's listener).
  if ((old & ~mask).any() && !ports.empty() && route_listener_) route_listener_(gpu);
}

void SwitchCsr::set_port_partition(uint32_t port, uint32_t partition) {
  if (port >= config_.ports) {
    throw std::out_of_range("partition of port " + std::to_string(port) + "; the chip has " +
                            std::to_string(config_.ports));
  }
  port_partitions_[port] = partition;
  update_partitions();
}

void SwitchCsr::update_gpu_partition(uint32_t gpu) {
  const std::vector<uint16_t>& ports = route_ports_[gpu];
  uint32_t partition = ports.empty() ? regs::kPartitionIsolated : port_partitions_[ports.front()];
  for (uint16_t p : ports) {
    if (port_partitions_[p] != partition) partition = regs::kPartitionIsolated;
  }
  gpu_partitions_[gpu] = partition;
}

void SwitchCsr::update_partitions() {
  partitioned_ = std::any_of(port_partitions_.begin(), port_partitions_.end(), [](uint32_t id) { return id != 0; });
  for (uint32_t gpu = 0; gpu < kRouteTableEntries; ++gpu) update_gpu_partition(gpu);
}

RegisterAccess SwitchCsr::read_group(uint32_t slot, uint32_t field, uint32_t& value) const {
  const MulticastGroup& g = groups_[slot];
  if (field >= regs::kGroupMembers && field < kGroupMembersEnd) {
    value = g.members.word32((field - regs::kGroupMembers) / 4);
    return RegisterAccess::ok;
  }
  switch (field) {
    case regs::kGroupControl: value = g.valid ? 1u : 0u; return RegisterAccess::ok;
    case regs::kGroupBaseLo: value = low_half(g.base); return RegisterAccess::ok;
    case regs::kGroupBaseHi: value = high_half(g.base); return RegisterAccess::ok;
    case regs::kGroupSizeLo: value = low_half(g.size); return RegisterAccess::ok;
    case regs::kGroupSizeHi: value = high_half(g.size); return RegisterAccess::ok;
    case regs::kGroupLocalLo: value = low_half(g.local_base); return RegisterAccess::ok;
    case regs::kGroupLocalHi: value = high_half(g.local_base); return RegisterAccess::ok;
    default: value = 0; return RegisterAccess::unknown_offset;
  }
}

RegisterAccess SwitchCsr::write_group(uint32_t slot, uint32_t field, uint32_t value) {
  MulticastGroup& g = groups_[slot];
  if (field >= regs::kGroupMembers && field < kGroupMembersEnd) {
    if (g.valid) return refuse(RegisterAccess::rejected_value);  // locked, as every field below
    g.members.set_word32((field - regs::kGroupMembers) / 4, value);
    return RegisterAccess::ok;
  }
  uint64_t* target = nullptr;
  switch (field) {
    case regs::kGroupControl: {
      // Bits other than `valid` are reserved: they read as 0 and writes to them are ignored.
      const bool valid = (value & 1u) != 0;
      if (valid == g.valid) return RegisterAccess::ok;
      if (valid && !group_acceptable(slot)) return refuse(RegisterAccess::rejected_value);
      g.valid = valid;
      rebuild_group_index();
      return RegisterAccess::ok;
    }
    case regs::kGroupBaseLo:
    case regs::kGroupBaseHi: target = &g.base; break;
    case regs::kGroupSizeLo:
    case regs::kGroupSizeHi: target = &g.size; break;
    case regs::kGroupLocalLo:
    case regs::kGroupLocalHi: target = &g.local_base; break;
    default: return refuse(RegisterAccess::unknown_offset);
  }
  // A valid group's fields are locked, so every valid group always satisfies the checks made
  // when it became valid; firmware clears CONTROL.valid to change one.
  if (g.valid) return refuse(RegisterAccess::rejected_value);
  set_half(*target, field % 8 != 0, value);
  return RegisterAccess::ok;
}

bool SwitchCsr::group_acceptable(uint32_t slot) const {
  const MulticastGroup& g = groups_[slot];
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (g.size == 0 || g.base % regs::kMulticastGranule != 0 || g.size % regs::kMulticastGranule != 0) return false;
  if (g.size - 1 > kMax - g.base || g.size - 1 > kMax - g.local_base) return false;  // the range wraps
  if (g.members.none()) return false;
  const uint64_t last = g.base + (g.size - 1);
  for (const auto& [other_base, other_slot] : group_index_) {
    const MulticastGroup& o = groups_[other_slot];
    if (g.base <= o.base + (o.size - 1) && o.base <= last) return false;  // the ranges overlap
  }
  return true;
}

void SwitchCsr::rebuild_group_index() {
  group_index_.clear();
  for (uint32_t s = 0; s < groups_.size(); ++s) {
    if (groups_[s].valid) group_index_.emplace_back(groups_[s].base, s);
  }
  std::sort(group_index_.begin(), group_index_.end());
}

const MulticastGroup* SwitchCsr::group_for(uint64_t address) const {
  auto after = std::upper_bound(group_index_.begin(), group_index_.end(), address,
                                [](uint64_t a, const std::pair<uint64_t, uint32_t>& e) { return a < e.first; });
  if (after == group_index_.begin()) return nullptr;
  const MulticastGroup& g = groups_[std::prev(after)->second];
  return g.covers(address) ? &g : nullptr;
}

void SwitchCsr::count_link_error(uint32_t port, PortLinkCounter counter, uint32_t amount) {
  port_link_errors_.at(port)[static_cast<uint32_t>(counter)] += amount;  // 32 bits, wrapping, as the register
  const bool crc = counter == PortLinkCounter::rx_crc_errors || counter == PortLinkCounter::tx_replays;
  raise_error(crc ? regs::error_link_crc : regs::error_credit_resync);
}

void SwitchCsr::raise_error(uint32_t bits) { set_error_state(error_status_ | (bits & kErrorBits), interrupt_enable_); }

void SwitchCsr::set_error_state(uint32_t status, uint32_t enable) {
  const bool was = interrupt_line();
  error_status_ = status;
  interrupt_enable_ = enable;
  if (interrupt_line() != was && interrupt_listener_) interrupt_listener_(interrupt_line());
}

bool SwitchCsr::acquire_reduction_context() {
  if (contexts_in_use_ >= reduction_context_capacity()) {
    raise_error(regs::error_context_pool_exhausted);
    return false;
  }
  contexts_peak_ = std::max(contexts_peak_, ++contexts_in_use_);
  return true;
}

void SwitchCsr::release_reduction_context() {
  if (contexts_in_use_ == 0) throw std::logic_error("reduction context released while none is in use");
  --contexts_in_use_;
}

}  // namespace nvsvp::model
