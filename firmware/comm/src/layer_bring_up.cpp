#include "nvsvp/fw/layer_bring_up.hpp"

#include "nvsvp/fw/fabric_partitions.hpp"
#include "nvsvp/hw/hex_text.hpp"
#include <utility>
#include <vector>

namespace nvsvp::fw {

void bring_up_for_layer(Hal& hal, SwitchFabric& fabric, const FabricTopology& topology, const LayerPlan& plan,
                        const ReplicationPhase& replication, const std::vector<std::vector<uint32_t>>& partitions) {
  // Checked before anything is written, so that a refused layer leaves no half-made fabric.
  const std::vector<uint32_t> partition_of_gpu = partition_ids(partitions, topology.gpus);
  std::vector<MulticastGroupRequest> groups = plan.multicast_groups;
  groups.insert(groups.end(), replication.multicast_groups.begin(), replication.multicast_groups.end());
  for (const MulticastGroupRequest& g : groups) {
    check_within_one_partition(g.members, partition_of_gpu, "multicast group at " + hw::hex_text(g.base));
  }
  if (!plan.dynamic_objects.empty()) {
    // install_dynamic_objects binds every object in every GPU.
    check_within_one_partition(hw::GpuMask::first(topology.gpus), partition_of_gpu, "dynamic object (bound in every GPU)");
  }
  fabric.bring_up(topology);
  program_partitions(hal, topology, partition_of_gpu);
  if (!groups.empty()) {
    MulticastAllocator allocator(hal, fabric.report().chips);
    std::vector<uint32_t> slots;
    for (const MulticastGroupRequest& g : groups) {
      slots.push_back(allocator.create_group(g.base, g.size, g.local_base, g.members).slot);
    }
    // Link-down recovery reads these back on the chips it keeps in use.
    fabric.set_multicast_slots_in_use(std::move(slots));
  }
  install_dynamic_objects(hal, plan);
}

}  // namespace nvsvp::fw
