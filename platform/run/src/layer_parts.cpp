#include "layer_parts.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/key_origins.hpp"
#include "nvsvp/fw/layer_bring_up.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::platform {

namespace {

// The end of the highest static multimem range any part's plans use.
uint64_t multimem_span(const std::vector<LayerPart>& parts) {
  uint64_t end = 0;
  for (const LayerPart& part : parts) {
    for (const auto* groups : {&part.plan.multicast_groups, &part.replication.multicast_groups}) {
      for (const fw::MulticastGroupRequest& g : *groups) end = std::max(end, g.base + g.size);
    }
  }
  const uint64_t granule = hw::switch_regs::kMulticastGranule;
  return (end + granule - 1) / granule * granule;
}

}  // namespace

std::vector<LayerPart> plan_layer_parts(const Scenario& scenario, const std::string& scheme,
                                        const ResolvedLayer& layer) {
  const std::vector<std::shared_ptr<const fw::MoeLayerSpec>>& specs = layer.parts;
  std::vector<LayerPart> parts(specs.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    LayerPart& part = parts[p];
    if (scenario.partitions.empty()) {
      for (uint32_t g = 0; g < scenario.platform.gpus; ++g) part.gpus.push_back(g);
    } else {
      part.gpus = scenario.partitions[p];
    }
    part.layer = specs[p];
    part.plan = fw::build_layer(scheme, part.layer);
    part.replication = fw::build_replication_phase(*part.layer, part.plan);
    for (size_t g = 0; g < part.replication.expected_link_arrivals.size(); ++g) {
      part.plan.expected_link_arrivals[g] += part.replication.expected_link_arrivals[g];
    }
  }
  // Partitions' groups at the same address would be one multimem range on the chips: each
  // partition's move above the previous one's.
  const uint64_t span = multimem_span(parts);
  for (size_t p = 0; p < parts.size(); ++p) parts[p].multimem_offset = p * span;
  return parts;
}

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
