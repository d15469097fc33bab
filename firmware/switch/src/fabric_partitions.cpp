#include "nvsvp/fw/fabric_partitions.hpp"

#include <algorithm>

#include "nvsvp/fw/log.hpp"
#include "nvsvp/fw/register_masks.hpp"
#include "nvsvp/hw/hex_text.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {

namespace regs = hw::switch_regs;

namespace {

std::string partition_name(uint32_t id) {
  return id == regs::kPartitionIsolated ? std::string("no partition") : "partition " + std::to_string(id - 1);
}

}  // namespace

std::vector<uint32_t> partition_ids(const std::vector<std::vector<uint32_t>>& partitions, uint32_t gpus) {
  if (partitions.empty()) return std::vector<uint32_t>(gpus, 0);
  std::vector<uint32_t> ids(gpus, regs::kPartitionIsolated);
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].empty()) throw PartitionError("partition " + std::to_string(i) + " has no GPU");
    for (uint32_t gpu : partitions[i]) {
      if (gpu >= gpus) {
        throw PartitionError("partition " + std::to_string(i) + " names GPU " + std::to_string(gpu) + "; the fabric has " +
                             std::to_string(gpus));
      }
      if (ids[gpu] != regs::kPartitionIsolated) {
        throw PartitionError("GPU " + std::to_string(gpu) + " is in " + partition_name(ids[gpu]) + " and in partition " +
                             std::to_string(i));
      }
      ids[gpu] = static_cast<uint32_t>(i + 1);
    }
  }
  return ids;
}

bool is_partitioned(const std::vector<uint32_t>& partition_of_gpu) {
  return std::any_of(partition_of_gpu.begin(), partition_of_gpu.end(), [](uint32_t id) { return id != 0; });
}

void program_partitions(Hal& hal, const FabricTopology& topology, const std::vector<uint32_t>& partition_of_gpu) {
  if (!is_partitioned(partition_of_gpu)) return;  // the chips' reset values already say so
  for (uint32_t chip = 0; chip < topology.switch_chips; ++chip) {
    const uint32_t ports = hal.read_register(chip, regs::kPortCount);
    std::vector<uint32_t> ids(ports, regs::kPartitionIsolated);
    for (const SwitchCable& cable : topology.cables) {
      if (cable.chip == chip && cable.port < ports) ids[cable.port] = partition_of_gpu.at(cable.gpu);
    }
    for (uint32_t port = 0; port < ports; ++port) {
      hal.write_register(chip, regs::port_partition_register(port), ids[port]);
      const uint32_t kept = hal.read_register(chip, regs::port_partition_register(port));
      if (kept != ids[port]) {
        throw FabricError("switch chip " + std::to_string(chip) + " port " + std::to_string(port) +
                          ": PORT_PARTITION written " + hw::hex_text(ids[port]) + ", reads back " + hw::hex_text(kept));
      }
    }
    for (uint32_t gpu = 0; gpu < topology.gpus; ++gpu) {
      if (partition_of_gpu.at(gpu) != regs::kPartitionIsolated) continue;
      write_mask(hal, chip, regs::route_word(gpu, 0), hw::PortMask{}, regs::mask_words_for(ports));
    }
  }
  FW_LOG(hal, info, "partitions programmed on " << topology.switch_chips << " switch chips");
}

void check_within_one_partition(const hw::GpuMask& members, const std::vector<uint32_t>& partition_of_gpu,
                                const std::string& what) {
  if (!is_partitioned(partition_of_gpu)) return;
  uint32_t first = 0;
  bool seen = false;
  for (uint32_t gpu : members) {
    if (gpu >= partition_of_gpu.size()) {
      throw PartitionError(what + ": member GPU " + std::to_string(gpu) + " is beyond the fabric's " +
                           std::to_string(partition_of_gpu.size()) + " GPUs");
    }
    const uint32_t id = partition_of_gpu[gpu];
    if (id == regs::kPartitionIsolated) {
      throw PartitionError(what + ": member GPU " + std::to_string(gpu) + " is in no partition");
    }
    if (seen && id != partition_of_gpu[first]) {
      throw PartitionError(what + ": members in two partitions (GPU " + std::to_string(first) + " in " +
                           partition_name(partition_of_gpu[first]) + ", GPU " + std::to_string(gpu) + " in " +
                           partition_name(id) + ")");
    }
    if (!seen) first = gpu;
    seen = true;
  }
}

}  // namespace nvsvp::fw
