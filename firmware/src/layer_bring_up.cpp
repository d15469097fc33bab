#include "nvsvp/fw/layer_bring_up.hpp"

#include <utility>
#include <vector>

namespace nvsvp::fw {

void bring_up_for_layer(Hal& hal, SwitchFabric& fabric, const FabricTopology& topology, const LayerPlan& plan,
                        const ReplicationPhase& replication) {
  fabric.bring_up(topology);
  std::vector<MulticastGroupRequest> groups = plan.multicast_groups;
  groups.insert(groups.end(), replication.multicast_groups.begin(), replication.multicast_groups.end());
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
