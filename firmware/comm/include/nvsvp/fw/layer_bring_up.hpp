// What the fabric manager does before a layer runs: the switch chips brought up from the cabling,
// the static multicast groups of the layer's plan and of its replication phase bound (as a fabric
// manager binds them once, at start-up), and the plan's dynamic objects installed in every Hub.
// A run does it through the platform's registers; `nvsvp validate` does it on the register models
// alone (platform/run/src/fabric_resources.cpp), so that a plan the fabric cannot hold is bad input
// before anything is simulated.
#pragma once

#include <cstdint>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/fw/switch_bringup.hpp"

namespace nvsvp::fw {

// With `partitions` (lists of GPUs; none: one partition of every GPU) the chips' partitions are
// programmed after bring-up (fabric_partitions.hpp) and every group and dynamic object must lie
// within one partition.
// Throws MulticastSlotsExhausted (a FabricError) when the groups need more slots than the fabric
// has, PartitionError (a FabricError) for a partition that cannot be set up or a group or dynamic
// object that would span two, FabricError when a chip or the topology does not fit,
// std::invalid_argument for a group or binding the hardware refuses.
void bring_up_for_layer(Hal& hal, SwitchFabric& fabric, const FabricTopology& topology, const LayerPlan& plan,
                        const ReplicationPhase& replication,
                        const std::vector<std::vector<uint32_t>>& partitions = {});

}  // namespace nvsvp::fw
