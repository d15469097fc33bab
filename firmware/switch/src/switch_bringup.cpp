#include "nvsvp/fw/switch_bringup.hpp"

#include "nvsvp/hw/hex_text.hpp"

#include <algorithm>
#include <limits>
#include <sstream>

#include "chip_name.hpp"
#include "nvsvp/fw/log.hpp"
#include "nvsvp/fw/register_masks.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {

namespace regs = hw::switch_regs;

namespace {

// Every error bit the register map defines interrupts, the link errors included.
constexpr uint32_t kAllErrors = regs::kErrorBitsDefined;
// The bits after which firmware reads the chip's per-port link-error counters.
constexpr uint32_t kLinkErrors = regs::error_link_crc | regs::error_credit_resync;

using hw::hex_text;

using detail::chip_name;

uint64_t combine(uint32_t low, uint32_t high) { return (uint64_t{high} << 32) | low; }

}  // namespace

std::string describe_switch_errors(uint32_t bits) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {regs::error_group_not_configured, "group_not_configured"},
      {regs::error_not_a_member, "not_a_member"},
      {regs::error_no_route, "no_route"},
      {regs::error_reduction, "reduction"},
      {regs::error_context_pool_exhausted, "context_pool_exhausted"},
      {regs::error_bad_register_access, "bad_register_access"},
      {regs::error_bad_target, "bad_target"},
      {regs::error_link_crc, "link_crc"},
      {regs::error_credit_resync, "credit_resync"},
      {regs::error_partition, "partition"},
      {regs::error_link_state, "link_state"},
  };
  std::string names;
  for (const auto& [bit, name] : kNames) {
    if ((bits & bit) == 0) continue;
    names += (names.empty() ? "" : ", ") + std::string(name);
    bits &= ~bit;
  }
  if (bits != 0) names += (names.empty() ? "" : ", ") + std::string("unknown bits ") + hex_text(bits);
  return names.empty() ? "none" : names;
}

std::string LinkErrorRecord::describe() const {
  std::ostringstream os;
  os << chip_name(chip) << " port " << port << ": +" << rx_crc_errors << " rx CRC errors, +" << tx_replays
     << " tx replays, +" << rx_credit_resyncs << " rx credit resyncs, +" << tx_credit_resyncs
     << " tx credit resyncs at " << time_ns << " ns";
  return os.str();
}

std::string SwitchErrorRecord::describe() const {
  std::ostringstream os;
  os << chip_name(chip) << ": " << describe_switch_errors(bits) << " at " << time_ns << " ns";
  return os.str();
}

SwitchChipInfo SwitchFabric::discover(uint32_t chip) {
  const uint32_t id = hal_.read_register(chip, regs::kId);
  if (id != regs::kIdValue) {
    throw FabricError(chip_name(chip) + ": ID register reads " + hex_text(id) + ", expected " + hex_text(regs::kIdValue) +
                      " (\"NVSW\"): not a switch register block");
  }
  const uint32_t version = hal_.read_register(chip, regs::kVersion);
  if (version != regs::kVersionValue) {
    throw FabricError(chip_name(chip) + ": register map version " + std::to_string(version) +
                      ", this firmware knows version " + std::to_string(regs::kVersionValue));
  }
  const uint32_t index = hal_.read_register(chip, regs::kChipIndex);
  if (index != chip) {
    throw FabricError(chip_name(chip) + ": CHIP_INDEX reads " + std::to_string(index) +
                      " (the HAL's chip numbering and the chips disagree)");
  }
  SwitchChipInfo info;
  info.chip = chip;
  info.ports = hal_.read_register(chip, regs::kPortCount);
  info.multicast_slots = hal_.read_register(chip, regs::kMulticastSlots);
  info.reduction_contexts_per_port = hal_.read_register(chip, regs::kReductionContexts);
  info.route_entries = hal_.read_register(chip, regs::kRouteEntries);
  if (info.ports == 0 || info.ports > hw::kMaxPortsPerChip || info.route_entries == 0 ||
      info.route_entries > hw::kMaxGpus || info.reduction_contexts_per_port == 0) {
    throw FabricError(chip_name(chip) + ": implausible identity (PORT_COUNT " + std::to_string(info.ports) +
                      ", ROUTE_ENTRIES " + std::to_string(info.route_entries) + ", REDUCTION_CONTEXTS " +
                      std::to_string(info.reduction_contexts_per_port) + ")");
  }
  return info;
}

const FabricBringUpReport& SwitchFabric::bring_up(const FabricTopology& topology,
                                                  uint32_t reduction_contexts_per_port) {
  const double start_ns = hal_.now_ns();
  report_ = FabricBringUpReport{};
  recovery_ready_ = false;
  routes_.assign(topology.switch_chips, std::vector<hw::PortMask>(topology.gpus));
  const uint32_t found = hal_.switch_count();
  if (found != topology.switch_chips) {
    throw FabricError("the cabling names " + std::to_string(topology.switch_chips) + " switch chips, the HAL reaches " +
                      std::to_string(found));
  }
  FW_LOG(hal_, info, "bring-up: " << found << " switch chips, " << topology.gpus << " GPUs, "
                                   << topology.cables.size() << " cables");
  for (uint32_t c = 0; c < found; ++c) {
    report_.chips.push_back(discover(c));
    const SwitchChipInfo& info = report_.chips.back();
    FW_LOG(hal_, debug, chip_name(c) << " found: " << info.ports << " ports, " << info.multicast_slots
                                     << " multicast slots, " << info.reduction_contexts_per_port
                                     << " reduction contexts per port, " << info.route_entries << " route entries");
  }

  // The reduction contexts each port may hold: all the chip has, or fewer if asked.
  for (SwitchChipInfo& info : report_.chips) {
    if (reduction_contexts_per_port == kAllReductionContexts) {
      info.reduction_contexts_enabled = info.reduction_contexts_per_port;
    } else if (reduction_contexts_per_port <= info.reduction_contexts_per_port) {
      info.reduction_contexts_enabled = reduction_contexts_per_port;
    } else {
      throw FabricError(chip_name(info.chip) + ": " + std::to_string(reduction_contexts_per_port) +
                        " reduction contexts per port asked for, REDUCTION_CONTEXTS reads " +
                        std::to_string(info.reduction_contexts_per_port));
    }
  }

  // The cabling must fit the chips found: a port each chip has, a GPU its route table can name,
  // and one cable per port.
  std::vector<std::vector<bool>> cabled(found);
  for (uint32_t c = 0; c < found; ++c) cabled[c].assign(report_.chips[c].ports, false);
  for (const SwitchCable& cable : topology.cables) {
    const std::string where = "cable from GPU " + std::to_string(cable.gpu) + " to " + chip_name(cable.chip) +
                              " port " + std::to_string(cable.port);
    if (cable.chip >= found) throw FabricError(where + ": there are " + std::to_string(found) + " chips");
    const SwitchChipInfo& info = report_.chips[cable.chip];
    if (cable.port >= info.ports) {
      throw FabricError(where + ": the chip reports " + std::to_string(info.ports) + " ports");
    }
    if (cable.gpu >= topology.gpus) {
      throw FabricError(where + ": the fabric has " + std::to_string(topology.gpus) + " GPUs");
    }
    if (cable.gpu >= info.route_entries) {
      throw FabricError(where + ": the chip's route table has " + std::to_string(info.route_entries) + " entries");
    }
    if (cabled[cable.chip][cable.port]) throw FabricError(where + ": that port is cabled twice");
    cabled[cable.chip][cable.port] = true;
  }

  // Errors left from before (a previous owner, power-on) are logged and cleared; from here on
  // every error interrupts.
  service_interrupts();
  for (uint32_t c = 0; c < found; ++c) {
    hal_.write_register(c, regs::kIntEnable, kAllErrors);
    program_routes(c, topology);
    enable_reduction_contexts(report_.chips[c]);
    const uint32_t status = hal_.read_register(c, regs::kErrorStatus);
    if (status != 0) {
      throw FabricError(chip_name(c) + " refused its route table: ERROR_STATUS " + hex_text(status) + " (" +
                        describe_switch_errors(status) + ")");
    }
    const SwitchChipInfo& info = report_.chips[c];
    FW_LOG(hal_, debug, chip_name(c) << ": interrupts enabled, " << topology.gpus << " route entries programmed, "
                                     << info.reduction_contexts_enabled << " reduction contexts per port enabled");
    report_.reduction_context_pool += uint64_t{info.ports} * info.reduction_contexts_enabled;
    report_.multicast_slots = c == 0 ? info.multicast_slots : std::min(report_.multicast_slots, info.multicast_slots);
  }
  topology_ = topology;
  start_recovery_state();
  report_.duration_ns = hal_.now_ns() - start_ns;
  FW_LOG(hal_, info, "bring-up done in " << report_.duration_ns << " ns: " << report_.route_entries_programmed
                                         << " route entries, " << report_.multicast_slots << " multicast slots");
  return report_;
}

void SwitchFabric::program_routes(uint32_t chip, const FabricTopology& topology) {
  std::vector<hw::PortMask> masks(topology.gpus);
  for (const SwitchCable& cable : topology.cables) {
    if (cable.chip == chip) masks[cable.gpu].set(cable.port);
  }
  // Every entry of the fabric's GPUs is written, empty ones too, so nothing stale survives; the
  // words past the chip's ports read 0 from reset and a chip refuses bits there.
  const uint32_t words = regs::mask_words_for(report_.chips.at(chip).ports);
  for (uint32_t g = 0; g < topology.gpus; ++g) {
    write_mask(hal_, chip, regs::route_word(g, 0), masks[g], words);
    routes_[chip][g] = masks[g];
    report_.route_entries_programmed++;
  }
}

void SwitchFabric::enable_reduction_contexts(const SwitchChipInfo& info) {
  hal_.write_register(info.chip, regs::kContextsEnabled, info.reduction_contexts_enabled);
  const uint32_t enabled = hal_.read_register(info.chip, regs::kContextsEnabled);
  if (enabled != info.reduction_contexts_enabled) {
    throw FabricError(chip_name(info.chip) + " refused CONTEXTS_ENABLED = " +
                      std::to_string(info.reduction_contexts_enabled) + ": it reads back " + std::to_string(enabled) +
                      " (REDUCTION_CONTEXTS " + std::to_string(info.reduction_contexts_per_port) + ")");
  }
}

size_t SwitchFabric::service_interrupts() {
  double detected_ns = hal_.now_ns();
  size_t serviced = service_error_status(detected_ns);
  if (!recovery_ready_) return serviced;
  std::string isolated = recover_links(detected_ns);
  // A GPU without a usable link: its messages wait in the GPU while firmware waits, servicing
  // what comes, for one of its links to come back (kLinkReturnWaitUs); then it gives up.
  const double deadline_ns = hal_.now_ns() + kLinkReturnWaitUs * 1e3;
  while (!isolated.empty()) {
    const double left_ns = deadline_ns - hal_.now_ns();
    if (left_ns <= 0.0 || !hal_.wait_interrupt(left_ns)) {
      throw FabricError(isolated + "; none came back within " + std::to_string(static_cast<int>(kLinkReturnWaitUs)) +
                        " us");
    }
    detected_ns = hal_.now_ns();
    serviced += service_error_status(detected_ns);
    isolated = recover_links(detected_ns);
  }
  return serviced;
}

size_t SwitchFabric::service_error_status(double detected_ns) {
  size_t serviced = 0;
  chip_lost_this_service_ = false;
  first_record_this_service_ = recovery_log_.size();
  for (uint32_t c = 0; c < hal_.switch_count(); ++c) {
    if (chip_dead(c)) continue;  // its reads say nothing and its writes are lost
    const uint32_t status = hal_.read_register(c, regs::kErrorStatus);
    if (status == 0) continue;
    if (service_dead_chip(c, status)) {
      record(RecoveryKind::chip_down, c, 0, 0, 0, detected_ns);
      ++serviced;
      continue;
    }
    error_log_.push_back(SwitchErrorRecord{c, status, hal_.now_ns()});
    FW_LOG(hal_, info, chip_name(c) << ": ERROR_STATUS " << hex_text(status) << " (" << describe_switch_errors(status)
                                    << "), cleared");
    // Write 1 to clear exactly the bits read: an error raised after the read stays pending.
    // Cleared before the counters are read, so that an error counted after this read raises the
    // bit again and is serviced next time rather than lost.
    hal_.write_register(c, regs::kErrorStatus, status);
    if ((status & kLinkErrors) != 0) read_link_errors(c);
    if ((status & regs::error_link_state) != 0) {
      if (chip_ports_down_.size() <= c) chip_ports_down_.resize(c + 1);
      chip_ports_down_[c] =
          read_mask<hw::PortMask>(hal_, c, regs::kLinkDownPorts, regs::mask_words_for(port_count(c, "LINK_DOWN_PORTS")));
      FW_LOG(hal_, info, chip_name(c) << ": LINK_DOWN_PORTS " << hex_text(chip_ports_down_[c]));
    }
    ++serviced;
  }
  return serviced;
}

uint32_t SwitchFabric::port_count(uint32_t chip, const char* registers) {
  // A chip firmware did not discover (servicing before bring-up) has no known port count: read it.
  const uint32_t ports = chip < report_.chips.size() ? report_.chips[chip].ports
                                                     : hal_.read_register(chip, regs::kPortCount);
  if (ports > hw::kMaxPortsPerChip) {  // discover()'s bound: a chip that does not fit the register map
    throw FabricError(chip_name(chip) + ": PORT_COUNT reads " + std::to_string(ports) + " (at most " +
                      std::to_string(hw::kMaxPortsPerChip) + "), cannot read its " + registers);
  }
  return ports;
}

void SwitchFabric::read_link_errors(uint32_t chip) {
  const uint32_t ports = port_count(chip, "link-error counters");
  if (link_errors_seen_.size() <= chip) link_errors_seen_.resize(chip + 1);
  std::vector<LinkErrorCounts>& seen = link_errors_seen_[chip];
  if (seen.size() < ports) seen.resize(ports);
  // Four register reads per port, every port: the chip's bit does not say which link erred.
  for (uint32_t p = 0; p < ports; ++p) {
    LinkErrorCounts now;
    now.rx_crc_errors = hal_.read_register(chip, regs::port_error_register(p, regs::kPortRxCrcErrors));
    now.tx_replays = hal_.read_register(chip, regs::port_error_register(p, regs::kPortTxReplays));
    now.rx_credit_resyncs = hal_.read_register(chip, regs::port_error_register(p, regs::kPortRxCreditResyncs));
    now.tx_credit_resyncs = hal_.read_register(chip, regs::port_error_register(p, regs::kPortTxCreditResyncs));
    // The counters wrap at 2^32: unsigned 32-bit subtraction gives the change across one wrap.
    const LinkErrorRecord record{chip,
                                 p,
                                 now.rx_crc_errors - seen[p].rx_crc_errors,
                                 now.tx_replays - seen[p].tx_replays,
                                 now.rx_credit_resyncs - seen[p].rx_credit_resyncs,
                                 now.tx_credit_resyncs - seen[p].tx_credit_resyncs,
                                 hal_.now_ns()};
    seen[p] = now;
    if (record.rx_crc_errors == 0 && record.tx_replays == 0 && record.rx_credit_resyncs == 0 &&
        record.tx_credit_resyncs == 0) {
      continue;
    }
    link_error_log_.push_back(record);
    LinkErrorTotals& total = link_error_totals_[{chip, p}];
    total.rx_crc_errors += record.rx_crc_errors;
    total.tx_replays += record.tx_replays;
    total.rx_credit_resyncs += record.rx_credit_resyncs;
    total.tx_credit_resyncs += record.tx_credit_resyncs;
    FW_LOG(hal_, info, record.describe());
  }
}

LinkErrorCounts SwitchFabric::link_error_counters(uint32_t chip, uint32_t port) const {
  if (chip >= link_errors_seen_.size() || port >= link_errors_seen_[chip].size()) return LinkErrorCounts{};
  return link_errors_seen_[chip][port];
}

LinkErrorTotals SwitchFabric::link_error_totals(uint32_t chip, uint32_t port) const {
  const auto found = link_error_totals_.find({chip, port});
  return found == link_error_totals_.end() ? LinkErrorTotals{} : found->second;
}

bool SwitchFabric::wait_and_service(double timeout_ns) {
  if (!hal_.wait_interrupt(timeout_ns)) return false;
  service_interrupts();
  return true;
}

uint64_t SwitchFabric::read_counter(uint32_t chip, uint32_t counter_offset) {
  const uint32_t low = hal_.read_register(chip, counter_offset);  // latches HI
  return combine(low, hal_.read_register(chip, counter_offset + 4));
}

MulticastAllocator::MulticastAllocator(Hal& hal, std::vector<SwitchChipInfo> chips)
    : hal_(hal), chips_(std::move(chips)) {
  if (chips_.empty()) throw std::invalid_argument("multicast allocator: no switch chips (run bring-up first)");
  uint32_t slots = std::numeric_limits<uint32_t>::max();
  for (const SwitchChipInfo& chip : chips_) slots = std::min(slots, chip.multicast_slots);
  slot_used_.assign(slots, false);
  groups_.resize(slots);
  // A fabric's GPUs never outnumber a chip's ports (every GPU is cabled to every chip), so
  // members take the words of the widest chip's port masks: the same count for every group.
  uint32_t ports = 0;
  for (const SwitchChipInfo& chip : chips_) ports = std::max(ports, chip.ports);
  member_words_ = regs::mask_words_for(ports);
}

MulticastGroupHandle MulticastAllocator::create_group(uint64_t base, uint64_t size, uint64_t local_base,
                                                      const hw::GpuMask& members) {
  // The checks the chips make when CONTROL.valid is set, made here first so that a mistake is
  // named before anything is written.
  const std::string what = "multicast group [" + hex_text(base) + ", +" + hex_text(size) + ")";
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  if (size == 0) throw std::invalid_argument(what + ": empty");
  if (base % regs::kMulticastGranule != 0 || size % regs::kMulticastGranule != 0) {
    throw std::invalid_argument(what + ": base and size must be multiples of 2 MiB");
  }
  if (size - 1 > kMax - base || size - 1 > kMax - local_base) {
    throw std::invalid_argument(what + ": the range runs past the end of the address space");
  }
  if (members.none()) throw std::invalid_argument(what + ": no member GPUs");
  for (const SwitchChipInfo& chip : chips_) {
    if (!members.fits(chip.route_entries)) {
      throw std::invalid_argument(what + ": members " + hex_text(members) + " name a GPU beyond " + chip_name(chip.chip) +
                                  "'s " + std::to_string(chip.route_entries) + " route entries");
    }
  }
  if (!members.fits(32 * member_words_)) {
    throw std::invalid_argument(what + ": members " + hex_text(members) + " name a GPU beyond the chips' ports (" +
                                std::to_string(member_words_) + " member words are written)");
  }
  for (uint32_t s = 0; s < capacity(); ++s) {
    if (!slot_used_[s]) continue;
    const MulticastGroupHandle& other = groups_[s];
    if (base <= other.base + (other.size - 1) && other.base <= base + (size - 1)) {
      throw std::invalid_argument(what + " overlaps the group in slot " + std::to_string(s) + " [" + hex_text(other.base) +
                                  ", +" + hex_text(other.size) + ")");
    }
  }
  const auto free_slot = std::find(slot_used_.begin(), slot_used_.end(), false);
  if (free_slot == slot_used_.end()) {
    throw MulticastSlotsExhausted(what + ": no multicast slot left: all " + std::to_string(capacity()) +
                      " slots are in use (the smallest chip table has " + std::to_string(capacity()) +
                      "); destroy a group first");
  }
  const MulticastGroupHandle group{static_cast<uint32_t>(free_slot - slot_used_.begin()), base, size, local_base,
                                   members};
  for (size_t i = 0; i < chips_.size(); ++i) {
    program_slot(chips_[i].chip, group);
    if ((hal_.read_register(chips_[i].chip, regs::group_register(group.slot, regs::kGroupControl)) & 1u) == 0) {
      // Refused (it overlaps a group this allocator does not know of, written by someone else):
      // no chip keeps a half-created group. The chip's error interrupt stays for the log.
      for (size_t j = 0; j < i; ++j) {
        hal_.write_register(chips_[j].chip, regs::group_register(group.slot, regs::kGroupControl), 0);
      }
      throw FabricError(what + ": " + chip_name(chips_[i].chip) + " refused it in slot " + std::to_string(group.slot) +
                        " (CONTROL.valid reads 0; another valid group there overlaps it)");
    }
  }
  slot_used_[group.slot] = true;
  groups_[group.slot] = group;
  ++groups_in_use_;
  FW_LOG(hal_, debug, what << " members " << hex_text(members) << " programmed in slot " << group.slot << " of "
                           << chips_.size() << " chips (" << groups_in_use_ << " of " << capacity() << " in use)");
  return group;
}

void MulticastAllocator::program_slot(uint32_t chip, const MulticastGroupHandle& group) {
  auto write64 = [&](uint32_t low_field, uint64_t value) {
    hal_.write_register(chip, regs::group_register(group.slot, low_field), static_cast<uint32_t>(value));
    hal_.write_register(chip, regs::group_register(group.slot, low_field + 4), static_cast<uint32_t>(value >> 32));
  };
  // The fabric manager owns the table: whatever the slot held is dropped first (a valid group's
  // fields are locked). Then the fields, CONTROL.valid last: the chip checks the group then.
  hal_.write_register(chip, regs::group_register(group.slot, regs::kGroupControl), 0);
  write64(regs::kGroupBaseLo, group.base);
  write64(regs::kGroupSizeLo, group.size);
  write64(regs::kGroupLocalLo, group.local_base);
  write_mask(hal_, chip, regs::group_register(group.slot, regs::kGroupMembers), group.members, member_words_);
  hal_.write_register(chip, regs::group_register(group.slot, regs::kGroupControl), 1);
}

void MulticastAllocator::destroy_group(const MulticastGroupHandle& group) {
  if (group.slot >= capacity() || !slot_used_[group.slot] || groups_[group.slot].base != group.base) {
    throw std::invalid_argument("destroy_group: slot " + std::to_string(group.slot) +
                                " does not hold that group (destroyed twice?)");
  }
  for (const SwitchChipInfo& chip : chips_) {
    hal_.write_register(chip.chip, regs::group_register(group.slot, regs::kGroupControl), 0);
  }
  slot_used_[group.slot] = false;
  --groups_in_use_;
  FW_LOG(hal_, debug, "multicast group in slot " << group.slot << " destroyed (" << groups_in_use_ << " of "
                                                 << capacity() << " in use)");
}

}  // namespace nvsvp::fw
