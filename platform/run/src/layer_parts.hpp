// The HALs a scheme job's parts (scheme_job.hpp) run through: the machine's for one part of every
// GPU, or a fw::PartitionHal per partition of the scenario's `partitions:`
// (docs/configuration.md#partitions). Private to platform/run: the runner and the fabric resource
// check bring the same parts up.
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
#include "nvsvp/platform/scheme_job.hpp"

namespace nvsvp::platform {

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
