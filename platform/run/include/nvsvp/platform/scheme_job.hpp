// What one scheme's simulation runs, resolved from the scenario: the machine it elaborates
// (platform, partitions, faults, limits) and the firmware's plans of the resolved layer. A run
// plans a scheme in its own process just before the scheme's process starts, and hands the job
// down: the scheme's process (fork) and the run without faults share the plans, and nothing below
// reads the scenario.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// The machine a scheme's simulation elaborates and what happens to it.
struct MachineSetup {
  PlatformSpec platform;
  SimulationSpec simulation;
  std::vector<FaultSpec> faults;  // none: nothing goes wrong
  // The scenario's GPU partitions (empty: one of every GPU).
  std::vector<std::vector<uint32_t>> partitions;
};

// The scenario's machine.
MachineSetup machine_setup(const Scenario& scenario);

// One layer of the simulation: the GPUs it runs on, its spec, and the firmware's plans of it in
// its own GPUs' terms (0 .. gpus.size()-1).
struct LayerPart {
  std::vector<uint32_t> gpus;    // the machine's GPUs, in the partition's order
  uint64_t multimem_offset = 0;  // added to its static multimem addresses (0 unpartitioned)
  std::shared_ptr<const fw::MoeLayerSpec> layer;
  fw::LayerPlan plan;
  fw::ReplicationPhase replication;
};

// A scheme planned on a resolved layer: one part of every GPU when the machine has no partitions,
// else one per partition. Each plan's expected link arrivals include its replication phase's.
struct SchemeJob {
  std::string scheme;
  std::shared_ptr<const MachineSetup> machine;
  ResolvedLayer layer;  // what the parts were planned from (a degree search plans its candidates anew)
  // Copies of a job share its plans. A run in this process consumes them (the firmware submits
  // their work, moving it out); a run in a child process consumes the child's copy of the
  // memory, so that the caller's job stays whole for the next run (the fault-free one).
  std::shared_ptr<std::vector<LayerPart>> parts;
  double plan_seconds = 0.0;  // the wall time planning took (report.json's sim.plan_seconds)
};

// Plans `scheme` on every part of `layer` (layer.parts). Throws std::invalid_argument for an
// unknown scheme.
SchemeJob plan_scheme(std::shared_ptr<const MachineSetup> machine, const std::string& scheme, ResolvedLayer layer);

// The same for a scenario's machine.
SchemeJob plan_scheme(const Scenario& scenario, const std::string& scheme, ResolvedLayer layer);

}  // namespace nvsvp::platform
