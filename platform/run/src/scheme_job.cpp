// Planning a scheme on a resolved layer: the parts of the simulation and their plans.
#include "nvsvp/platform/scheme_job.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

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

MachineSetup machine_setup(const Scenario& scenario) {
  return MachineSetup{scenario.platform, scenario.simulation, scenario.faults, scenario.partitions};
}

SchemeJob plan_scheme(std::shared_ptr<const MachineSetup> machine, const std::string& scheme, ResolvedLayer layer) {
  const auto start = std::chrono::steady_clock::now();
  SchemeJob job{scheme, std::move(machine), std::move(layer), {}, 0.0};
  std::vector<LayerPart> parts(job.layer.parts.size());
  for (size_t p = 0; p < parts.size(); ++p) {
    LayerPart& part = parts[p];
    if (job.machine->partitions.empty()) {
      for (uint32_t g = 0; g < job.machine->platform.gpus; ++g) part.gpus.push_back(g);
    } else {
      part.gpus = job.machine->partitions[p];
    }
    part.layer = job.layer.parts[p];
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
  job.parts = std::make_shared<std::vector<LayerPart>>(std::move(parts));
  job.plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return job;
}

SchemeJob plan_scheme(const Scenario& scenario, const std::string& scheme, ResolvedLayer layer) {
  return plan_scheme(std::make_shared<const MachineSetup>(machine_setup(scenario)), scheme, std::move(layer));
}

}  // namespace nvsvp::platform
