// Firmware's recovery from link_down and chip_down (docs/firmware.md#link-down-recovery): after
// service_interrupts has read every chip's ERROR_STATUS (and LINK_DOWN_PORTS, and found the dead
// chips), decide which cables firmware still uses, retire the chips that can no longer reach a
// GPU they are cabled to, tell the GPUs which links to use, rewrite the live chips' route entries
// and have the GPUs re-issue what a lost chip held.
#include <sstream>

#include "chip_name.hpp"
#include "nvsvp/fw/log.hpp"
#include "nvsvp/fw/register_masks.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/hex_text.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {

namespace regs = hw::switch_regs;

namespace {

using hw::hex_text;

using detail::chip_name;

// A GPU's link mask (at most 64 links per GPU); port masks are hw::PortMask.
bool bit_set(uint64_t mask, uint32_t bit) { return bit < 64 && ((mask >> bit) & 1u) != 0; }

}  // namespace

const char* recovery_kind_name(RecoveryKind kind) {
  switch (kind) {
    case RecoveryKind::link_down: return "link_down";
    case RecoveryKind::link_up: return "link_up";
    case RecoveryKind::chip_down: return "chip_down";
    case RecoveryKind::chip_retired: return "chip_retired";
  }
  return "unknown";
}

std::string RecoveryRecord::describe() const {
  std::ostringstream os;
  os << recovery_kind_name(kind) << ": " << chip_name(chip);
  if (kind == RecoveryKind::link_down || kind == RecoveryKind::link_up) {
    os << " port " << port << ", GPU " << gpu << " link " << gpu_link;
  } else if (kind == RecoveryKind::chip_retired) {
    os << " (no usable cable to GPU " << gpu << ")";
  }
  os << ", detected at " << detected_ns << " ns, recovered at " << recovered_ns << " ns";
  if (operations_reissued != 0) os << ", " << operations_reissued << " operations re-issued";
  return os.str();
}

RecoveryCounts SwitchFabric::recovery_counts() const {
  RecoveryCounts counts;
  for (const RecoveryRecord& r : recovery_log_) {
    counts.links_down += r.kind == RecoveryKind::link_down;
    counts.links_up += r.kind == RecoveryKind::link_up;
    counts.chips_down += r.kind == RecoveryKind::chip_down;
    counts.chips_retired += r.kind == RecoveryKind::chip_retired;
    counts.operations_reissued += r.operations_reissued;
  }
  return counts;
}

bool SwitchFabric::chip_dead(uint32_t chip) const {
  return chip < chip_use_.size() && chip_use_[chip] == ChipUse::dead;
}

bool SwitchFabric::chip_out_of_use(uint32_t chip) const {
  return chip < chip_use_.size() && chip_use_[chip] != ChipUse::in_use;
}

void SwitchFabric::start_recovery_state() {
  chip_use_.assign(topology_.switch_chips, ChipUse::in_use);
  chip_ports_down_.resize(topology_.switch_chips);  // what bring-up's own service read stays
  gpu_links_down_.assign(topology_.gpus, 0);
  cable_in_use_.assign(topology_.cables.size(), true);  // bring-up routed every cable
  recovery_ready_ = true;  // the records of earlier layers stay
}

void SwitchFabric::record(RecoveryKind kind, uint32_t chip, uint32_t port, uint32_t gpu, uint32_t gpu_link,
                          double detected_ns) {
  recovery_log_.push_back(RecoveryRecord{kind, chip, port, gpu, gpu_link, detected_ns, detected_ns, 0});
}

bool SwitchFabric::service_dead_chip(uint32_t chip, uint32_t status) {
  if (!recovery_ready_ || status != regs::kDeadChipRead) return false;
  // A live chip could in principle have every bit set; its identity still reads right.
  const uint32_t id = hal_.read_register(chip, regs::kId);
  if (id == regs::kIdValue) return false;
  chip_use_[chip] = ChipUse::dead;
  chip_lost_this_service_ = true;
  FW_LOG(hal_, info, chip_name(chip) << " is dead: ERROR_STATUS " << hex_text(status) << ", ID " << hex_text(id)
                                     << "; never written again, its cables go out of use");
  return true;
}

std::vector<bool> SwitchFabric::usable_cables() const {
  std::vector<bool> usable(topology_.cables.size(), false);
  for (size_t i = 0; i < topology_.cables.size(); ++i) {
    const SwitchCable& cable = topology_.cables[i];
    usable[i] = chip_use_[cable.chip] == ChipUse::in_use && !bit_set(gpu_links_down_[cable.gpu], cable.gpu_link) &&
                !chip_ports_down_[cable.chip].test(cable.port);
  }
  return usable;
}

std::vector<bool> SwitchFabric::isolated_gpus(const std::vector<bool>& usable) const {
  std::vector<bool> isolated(topology_.gpus, true);
  for (size_t i = 0; i < topology_.cables.size(); ++i) {
    if (usable[i]) isolated[topology_.cables[i].gpu] = false;
  }
  return isolated;
}

void SwitchFabric::retire_unreachable_chips(std::vector<bool>& usable, double detected_ns) {
  // A GPU with no usable cable at all retires no chip: every chip would go, for good, though its
  // links may come back (service_interrupts waits for them).
  const std::vector<bool> isolated = isolated_gpus(usable);
  for (uint32_t c = 0; c < topology_.switch_chips; ++c) {
    if (chip_use_[c] != ChipUse::in_use) continue;
    // Per GPU cabled to the chip: whether one of its cables is still usable.
    std::vector<bool> cabled(topology_.gpus, false);
    std::vector<bool> reachable(topology_.gpus, false);
    for (size_t i = 0; i < topology_.cables.size(); ++i) {
      const SwitchCable& cable = topology_.cables[i];
      if (cable.chip != c) continue;
      cabled[cable.gpu] = true;
      if (usable[i]) reachable[cable.gpu] = true;
    }
    for (uint32_t g = 0; g < topology_.gpus; ++g) {
      if (!cabled[g] || reachable[g] || isolated[g]) continue;
      // GPUs spread their traffic over every chip without choosing one per destination, so a
      // chip that cannot deliver to g would lose what they send it for g: it goes out of use,
      // and is flushed once no GPU sends it anything more (flush_retired_chips).
      chip_use_[c] = ChipUse::retired;
      chips_to_flush_.push_back(c);
      chip_lost_this_service_ = true;
      record(RecoveryKind::chip_retired, c, 0, g, 0, detected_ns);
      FW_LOG(hal_, info, chip_name(c) << " retired: no usable cable to GPU " << g << " left; its cables go out of use");
      for (size_t i = 0; i < topology_.cables.size(); ++i) {
        if (topology_.cables[i].chip == c) usable[i] = false;
      }
      break;
    }
  }
}

void SwitchFabric::apply_cable_changes(const std::vector<bool>& usable, double detected_ns) {
  for (size_t i = 0; i < topology_.cables.size(); ++i) {
    if (usable[i] == cable_in_use_[i]) continue;
    const SwitchCable& cable = topology_.cables[i];
    hal_.set_gpu_link_enabled(cable.gpu, cable.gpu_link, usable[i]);
    cable_in_use_[i] = usable[i];
    const bool link_down = bit_set(gpu_links_down_[cable.gpu], cable.gpu_link) ||
                           chip_ports_down_[cable.chip].test(cable.port);
    // A dead chip's links are down with it: its chip_down record says so.
    if (usable[i] || (link_down && chip_use_[cable.chip] != ChipUse::dead)) {
      record(usable[i] ? RecoveryKind::link_up : RecoveryKind::link_down, cable.chip, cable.port, cable.gpu,
             cable.gpu_link, detected_ns);
    }
    FW_LOG(hal_, info, "GPU " << cable.gpu << " link " << cable.gpu_link << " (" << chip_name(cable.chip) << " port "
                              << cable.port << ") " << (usable[i] ? "back in use" : "out of use"));
  }
}

void SwitchFabric::rewrite_routes(const std::vector<bool>& usable) {
  // A GPU with no usable cable keeps its routes while firmware waits for one of its links: what is
  // sent to it waits at the chips' ports to it (down) instead of finding no route.
  const std::vector<bool> isolated = isolated_gpus(usable);
  for (uint32_t c = 0; c < topology_.switch_chips; ++c) {
    if (chip_use_[c] != ChipUse::in_use) continue;  // never write a dead chip; a retired one routes nothing
    std::vector<hw::PortMask> masks(topology_.gpus);
    for (size_t i = 0; i < topology_.cables.size(); ++i) {
      const SwitchCable& cable = topology_.cables[i];
      if (cable.chip == c && usable[i]) masks[cable.gpu].set(cable.port);
    }
    const uint32_t words = regs::mask_words_for(report_.chips.at(c).ports);
    for (uint32_t g = 0; g < topology_.gpus; ++g) {
      if (masks[g] == routes_[c][g] || isolated[g]) continue;
      write_mask(hal_, c, regs::route_word(g, 0), masks[g], words);
      FW_LOG(hal_, info, chip_name(c) << ": route to GPU " << g << " rewritten, ports " << hex_text(routes_[c][g])
                                      << " -> " << hex_text(masks[g]));
      routes_[c][g] = masks[g];
    }
  }
}

std::string SwitchFabric::gpu_without_usable_link(const std::vector<bool>& usable) const {
  // When one GPU loses every link, the chips it is cabled to retire and take the other GPUs'
  // links with them: the error names the GPU that lost its own links, not one that lost them
  // only through retired chips.
  std::string error;
  bool error_names_the_cause = false;
  for (uint32_t g = 0; g < topology_.gpus && !error_names_the_cause; ++g) {
    bool cabled = false;
    bool reachable = false;
    bool only_retired_chips = true;
    std::string lost;
    for (size_t i = 0; i < topology_.cables.size(); ++i) {
      const SwitchCable& cable = topology_.cables[i];
      if (cable.gpu != g) continue;
      cabled = true;
      reachable = reachable || usable[i];
      const char* why = bit_set(gpu_links_down_[g], cable.gpu_link)                ? "down at the GPU"
                        : chip_ports_down_[cable.chip].test(cable.port)          ? "port down at the chip"
                        : chip_use_[cable.chip] == ChipUse::dead                    ? "chip dead"
                                                                                    : "chip retired";
      only_retired_chips = only_retired_chips && chip_use_[cable.chip] == ChipUse::retired &&
                           !bit_set(gpu_links_down_[g], cable.gpu_link) &&
                           !chip_ports_down_[cable.chip].test(cable.port);
      lost += (lost.empty() ? "" : "; ") + std::string("link ") + std::to_string(cable.gpu_link) + " to " +
              chip_name(cable.chip) + " port " + std::to_string(cable.port) + ": " + why;
    }
    if (!cabled || reachable || (!error.empty() && only_retired_chips)) continue;
    error = "link-down recovery impossible: GPU " + std::to_string(g) + " has no usable link left (" + lost + ")";
    error_names_the_cause = !only_retired_chips;
  }
  return error;
}

void SwitchFabric::check_multicast_groups() const {
  for (uint32_t c = 0; c < topology_.switch_chips; ++c) {
    if (chip_use_[c] != ChipUse::in_use) continue;
    for (uint32_t slot : multicast_slots_in_use_) {
      const uint32_t control = hal_.read_register(c, regs::group_register(slot, regs::kGroupControl));
      if ((control & 1u) == 0) {
        throw FabricError("link-down recovery: " + chip_name(c) + " no longer holds the multicast group in slot " +
                          std::to_string(slot) + " (CONTROL reads " + hex_text(control) + ")");
      }
    }
  }
}

std::string SwitchFabric::recover_links(double detected_ns) {
  for (uint32_t g = 0; g < topology_.gpus; ++g) gpu_links_down_[g] = hal_.gpu_links_down(g);
  std::vector<bool> usable = usable_cables();
  retire_unreachable_chips(usable, detected_ns);
  apply_cable_changes(usable, detected_ns);
  // After the GPUs stopped using its links (a live chip still answers what reaches it until then):
  // everything it holds now is lost, and nothing more will reach it.
  for (uint32_t c : chips_to_flush_) {
    hal_.write_register(c, regs::kChipControl, regs::kChipControlFlush);
    FW_LOG(hal_, info, chip_name(c) << ": CHIP_CONTROL = FLUSH written");
  }
  chips_to_flush_.clear();
  rewrite_routes(usable);
  const std::string isolated = gpu_without_usable_link(usable);
  if (recovery_log_.size() == first_record_this_service_) return isolated;  // nothing changed
  const double recovered_ns = hal_.now_ns();
  for (size_t i = first_record_this_service_; i < recovery_log_.size(); ++i) recovery_log_[i].recovered_ns = recovered_ns;
  FW_LOG(hal_, info, "link-down recovery: links and routes done at " << recovered_ns << " ns ("
                                                                     << recovery_log_.size() - first_record_this_service_
                                                                     << " events)");
  check_multicast_groups();
  if (!chip_lost_this_service_) return isolated;
  uint64_t reissued = 0;
  for (uint32_t g = 0; g < topology_.gpus; ++g) {
    const uint64_t count = hal_.reissue_lost_operations(g);
    FW_LOG(hal_, info, "GPU " << g << " re-issued " << count << " lost operations");
    reissued += count;
  }
  for (size_t i = first_record_this_service_; i < recovery_log_.size(); ++i) {
    const RecoveryKind kind = recovery_log_[i].kind;
    if (kind == RecoveryKind::chip_down || kind == RecoveryKind::chip_retired) {
      recovery_log_[i].operations_reissued = reissued;
      break;
    }
  }
  return isolated;
}

}  // namespace nvsvp::fw
