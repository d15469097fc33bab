// Partitions in simulation tests: the switch chips' PORT_PARTITION registers programmed from a
// partition id per GPU, as firmware does, through the HAL.
#pragma once

#include <cstdint>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::test {

// Every port cabled to GPU g gets partition_of_gpu[g] (hw::switch_regs::kPartitionIsolated: none).
inline void program_port_partitions(fw::Hal& hal, const fw::FabricTopology& topology,
                                    const std::vector<uint32_t>& partition_of_gpu) {
  for (const fw::SwitchCable& cable : topology.cables) {
    hal.write_register(cable.chip, hw::switch_regs::port_partition_register(cable.port), partition_of_gpu.at(cable.gpu));
  }
}

// INT_PENDING of every chip, OR-ed.
inline uint32_t interrupts_pending(fw::Hal& hal) {
  uint32_t pending = 0;
  for (uint32_t chip = 0; chip < hal.switch_count(); ++chip) pending |= hal.read_register(chip, hw::switch_regs::kIntPending);
  return pending;
}

}  // namespace nvsvp::test
