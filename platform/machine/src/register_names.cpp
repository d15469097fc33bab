#include "nvsvp/platform/register_names.hpp"

#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/model/switch_csr.hpp"

namespace nvsvp::platform {

namespace regs = hw::switch_regs;

std::string switch_register_name(uint32_t offset) {
  switch (offset) {
    case regs::kId: return "ID";
    case regs::kVersion: return "VERSION";
    case regs::kChipIndex: return "CHIP_INDEX";
    case regs::kPortCount: return "PORT_COUNT";
    case regs::kMulticastSlots: return "MULTICAST_SLOTS";
    case regs::kReductionContexts: return "REDUCTION_CONTEXTS";
    case regs::kRouteEntries: return "ROUTE_ENTRIES";
    case regs::kDynamicExpertsPerGpu: return "DYN_EXPERTS_PER_GPU";
    case regs::kErrorStatus: return "ERROR_STATUS";
    case regs::kIntEnable: return "INT_ENABLE";
    case regs::kIntPending: return "INT_PENDING";
    case regs::kContextsInUse: return "CONTEXTS_IN_USE";
    case regs::kContextsPeak: return "CONTEXTS_PEAK";
    case regs::kContextsEnabled: return "CONTEXTS_ENABLED";
    case regs::kChipControl: return "CHIP_CONTROL";
    default: break;
  }
  const auto word = [](uint32_t w) { return "_W" + std::to_string(w); };
  if (offset >= regs::kLinkDownPorts && offset < regs::link_down_ports_word(regs::kMaskWords) && offset % 4 == 0) {
    return "LINK_DOWN_PORTS" + word((offset - regs::kLinkDownPorts) / 4);
  }
  static const char* const kCounters[] = {"FORWARDED_REQUESTS", "FORWARDED_RESPONSES", "REPLICATIONS", "REDUCTIONS",
                                          "EVICTIONS",          "ACCESS_ERRORS",       "PARTITION_ERRORS"};
  constexpr uint32_t kCounterCount = sizeof kCounters / sizeof kCounters[0];
  if (offset >= regs::kCounterForwardedRequests && offset < regs::kCounterForwardedRequests + 8 * kCounterCount &&
      offset % 4 == 0) {
    const uint32_t i = offset - regs::kCounterForwardedRequests;
    return std::string(kCounters[i / 8]) + (i % 8 == 0 ? "_LO" : "_HI");
  }
  if (offset >= regs::kRouteTable && offset < regs::kRouteTableEnd && offset % 4 == 0) {
    const uint32_t i = offset - regs::kRouteTable;
    return "ROUTE[" + std::to_string(i / regs::kRouteStride) + "].W" + std::to_string(i % regs::kRouteStride / 4);
  }
  const uint32_t port_partition_end = regs::port_partition_register(model::SwitchCsr::kMaxPorts);
  if (offset >= regs::kPortPartitionTable && offset < port_partition_end && offset % 4 == 0) {
    return "PORT_PARTITION[" + std::to_string((offset - regs::kPortPartitionTable) / regs::kPortPartitionStride) + "]";
  }
  if (offset >= regs::kPortErrorTable && offset < regs::port_error_register(model::SwitchCsr::kMaxPorts, 0) &&
      offset % 4 == 0) {
    static const char* const kPortErrors[] = {"RX_CRC_ERRORS", "TX_REPLAYS", "RX_CREDIT_RESYNCS", "TX_CREDIT_RESYNCS"};
    const uint32_t i = offset - regs::kPortErrorTable;
    return "PORT_ERRORS[" + std::to_string(i / regs::kPortErrorStride) + "]." + kPortErrors[i % regs::kPortErrorStride / 4];
  }
  const uint32_t group_end = regs::kGroupTable + regs::kGroupStride * model::SwitchCsr::kMaxMulticastSlots;
  if (offset >= regs::kGroupTable && offset < group_end) {
    const uint32_t i = offset - regs::kGroupTable;
    const std::string slot = "GROUP[" + std::to_string(i / regs::kGroupStride) + "].";
    const uint32_t field = i % regs::kGroupStride;
    if (field >= regs::kGroupMembers && field < regs::group_members_word(regs::kMaskWords)) {
      return slot + "MEMBERS" + word((field - regs::kGroupMembers) / 4);
    }
    switch (field) {
      case regs::kGroupControl: return slot + "CONTROL";
      case regs::kGroupBaseLo: return slot + "BASE_LO";
      case regs::kGroupBaseHi: return slot + "BASE_HI";
      case regs::kGroupSizeLo: return slot + "SIZE_LO";
      case regs::kGroupSizeHi: return slot + "SIZE_HI";
      case regs::kGroupLocalLo: return slot + "LOCAL_LO";
      case regs::kGroupLocalHi: return slot + "LOCAL_HI";
      default: break;
    }
  }
  return "";
}

}  // namespace nvsvp::platform
