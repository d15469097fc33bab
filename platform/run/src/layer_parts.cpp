#include "layer_parts.hpp"

#include <stdexcept>
#include <string>

#include "nvsvp/fw/layer_bring_up.hpp"

namespace nvsvp::platform {

LayerPartHals::LayerPartHals(fw::Hal& machine, const std::vector<LayerPart>& parts, bool partitioned)
    : machine_(machine) {
  if (!partitioned) return;
  for (const LayerPart& part : parts) {
    partitions_.push_back(std::make_unique<fw::PartitionHal>(machine, part.gpus, part.multimem_offset));
  }
}

void LayerPartHals::check_plans(const std::vector<LayerPart>& parts) const {
  if (partitions_.empty()) return;
  for (size_t p = 0; p < parts.size(); ++p) {
    const fw::LayerPlan& plan = parts[p].plan;
    if (!plan.dynamic_objects.empty()) {
      throw std::invalid_argument("its plan binds dynamic multicast objects, whose experts the switch chips map to "
                                  "GPUs chip-wide (DYN_EXPERTS_PER_GPU): not available within a partition");
    }
    // Each sequence as it would be submitted: machine_sequence refuses what has no partition form.
    for (const hw::WorkSequence& sequence : plan.sequences) partitions_[p]->machine_sequence(sequence);
    for (const auto& streams : plan.extra_sequences) {
      for (const hw::WorkSequence& sequence : streams) partitions_[p]->machine_sequence(sequence);
    }
    for (const auto& streams : parts[p].replication.sequences) {
      for (const hw::WorkSequence& sequence : streams) partitions_[p]->machine_sequence(sequence);
    }
  }
}

void LayerPartHals::bring_up(fw::SwitchFabric& fabric, const fw::FabricTopology& topology,
                             const std::vector<LayerPart>& parts, const std::vector<std::vector<uint32_t>>& partitions) {
  if (partitions_.empty()) {
    fw::bring_up_for_layer(machine_, fabric, topology, parts.at(0).plan, parts.at(0).replication, partitions);
    return;
  }
  // Only the groups: a partitioned plan has no dynamic objects (check_plans).
  fw::LayerPlan layer_groups;
  fw::ReplicationPhase replication_groups;
  for (size_t p = 0; p < parts.size(); ++p) {
    for (const fw::MulticastGroupRequest& g : parts[p].plan.multicast_groups) {
      layer_groups.multicast_groups.push_back(partitions_[p]->machine_group(g));
    }
    for (const fw::MulticastGroupRequest& g : parts[p].replication.multicast_groups) {
      replication_groups.multicast_groups.push_back(partitions_[p]->machine_group(g));
    }
  }
  fw::bring_up_for_layer(machine_, fabric, topology, layer_groups, replication_groups, partitions);
}

}  // namespace nvsvp::platform
