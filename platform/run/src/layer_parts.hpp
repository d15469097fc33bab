// The layers one simulation runs: one over every GPU, or one per partition of the scenario's
// `partitions:` (docs/configuration.md#partitions), each planned by the firmware on its own
// partition's GPUs and run through a fw::PartitionHal. Private to platform/: the runner and the
// fabric resource check plan the same parts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/partition_hal.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// One layer of the simulation: the GPUs it runs on, its spec, and the firmware's plans of it in
// its own GPUs' terms (0 .. gpus.size()-1).
struct LayerPart {
  std::vector<uint32_t> gpus;        // the machine's GPUs, in the partition's order
  uint64_t multimem_offset = 0;      // added to its static multimem addresses (0 unpartitioned)
  std::shared_ptr<const fw::MoeLayerSpec> layer;
  fw::LayerPlan plan;
  fw::ReplicationPhase replication;
};

// Plans `scheme` on every part of the resolved layer: one part of every GPU when the scenario has
// no partitions, else one per partition, each on its own spec (layer.parts). Each plan's expected
// link arrivals include its replication phase's. Throws std::invalid_argument for an unknown
// scheme.
std::vector<LayerPart> plan_layer_parts(const Scenario& scenario, const std::string& scheme,
                                        const ResolvedLayer& layer);

// The HALs the parts run through: the machine's for the one part of every GPU, else a
// fw::PartitionHal per partition (its GPUs, its multimem offset).
class LayerPartHals {
 public:
  LayerPartHals(fw::Hal& machine, const std::vector<LayerPart>& parts, bool partitioned);
  fw::Hal& operator[](size_t p) { return partitions_.empty() ? machine_ : *partitions_.at(p); }

  // Throws std::invalid_argument when a part's plans hold what cannot run within a partition
  // (dynamic multimem: objects, tasks, token notifications), naming it.
  void check_plans(const std::vector<LayerPart>& parts) const;
  // fw::bring_up_for_layer with every part's multicast groups in the machine's terms and the
  // scenario's partitions (the plan itself, dynamic objects and all, when unpartitioned).
  void bring_up(fw::SwitchFabric& fabric, const fw::FabricTopology& topology, const std::vector<LayerPart>& parts,
                const std::vector<std::vector<uint32_t>>& partitions);

 private:
  fw::Hal& machine_;
  std::vector<std::unique_ptr<fw::PartitionHal>> partitions_;
};

}  // namespace nvsvp::platform
