// Partitions as the fabric manager programs them (docs/firmware.md#partitions): the GPUs split
// into partitions, each chip's PORT_PARTITION registers written from the cabling, the isolated
// GPUs' route entries cleared, and multicast groups and dynamic objects kept within one partition.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/switch_bringup.hpp"

namespace nvsvp::fw {

// A partition the fabric manager cannot set up, or an object that would span two.
class PartitionError : public FabricError {
 public:
  using FabricError::FabricError;
};

// The partition id of every GPU: partition i's GPUs get i + 1 (0 is the chips' reset value, one
// partition of every GPU), a GPU in none hw::switch_regs::kPartitionIsolated. No partitions:
// every GPU 0. Throws PartitionError for a GPU beyond `gpus` or listed twice, or an empty partition.
std::vector<uint32_t> partition_ids(const std::vector<std::vector<uint32_t>>& partitions, uint32_t gpus);

// Whether `partition_of_gpu` (partition_ids()) splits the GPUs at all.
bool is_partitioned(const std::vector<uint32_t>& partition_of_gpu);

// Programs every chip after bring-up: each cabled port gets its GPU's id, an uncabled port
// isolated, each value read back; the route entries of isolated GPUs are cleared, so that nothing
// reaches them whatever a port's id says. Writes nothing when the GPUs are not partitioned.
// Throws FabricError when a chip does not keep a value.
void program_partitions(Hal& hal, const FabricTopology& topology, const std::vector<uint32_t>& partition_of_gpu);

// Throws PartitionError, naming `what` and the GPUs, when `members` (bit g: GPU g) are not all in
// one partition (an isolated GPU is in none). Nothing to check when the GPUs are not partitioned.
void check_within_one_partition(const hw::GpuMask& members, const std::vector<uint32_t>& partition_of_gpu,
                                const std::string& what);

}  // namespace nvsvp::fw
