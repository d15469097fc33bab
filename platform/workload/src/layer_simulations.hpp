// Private to platform/: the simulated MoE layers of a whole-model step (model_step.cpp: a
// training step, model_inference.cpp: an inference request). Every (layer, case, scheme) is one
// child process; a case is a pass at a number of tokens per GPU (training: forward and backward;
// inference: the prefill and a decode step).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/step_parts.hpp"

namespace nvsvp::platform {

struct LayerCase {
  std::string name;  // report.json's step.runs[].pass
  fw::LayerPass pass = fw::LayerPass::forward;
  uint32_t tokens_per_gpu = 0;
};

// One simulated MoE layer: its compute (the slowest GPU's compute, overlapped communication
// included) and the rest of its time, communication that no compute hid.
StepParts moe_parts(const nlohmann::json& result);
nlohmann::json parts_json(const StepParts& parts);

class LayerSimulations {
 public:
  LayerSimulations(const Scenario& scenario, std::vector<LayerCase> cases,
                   std::function<void(const std::string&)> on_progress);

  // Runs the scenario model's sampled MoE layers (step.sample_layers, sampled_moe_layers).
  void run_sampled();

  // report.json's `step` keys of every step kind: kind, the model's layers (dense, MoE), the
  // simulated ones and whether they are a sample, runs, passed and failures.
  nlohmann::json step_json() const;

  bool passed() const { return failures_.empty(); }
  const std::vector<std::string>& failures() const { return failures_; }
  const nlohmann::json& runs() const { return runs_; }
  // A case's parts of the scheme's MoE layer `layer` (a model layer number): its own simulation's,
  // or, for a layer not simulated, the mean of those that were.
  StepParts moe_layer(const std::string& scheme, uint32_t layer, size_t case_index) const;
  StepParts mean_moe_layer(const std::string& scheme, size_t case_index) const;
  // A case's software delays (the fixed costs), the mean over the scheme's simulated layers.
  double mean_software_delays_us(const std::string& scheme, size_t case_index) const;

 private:
  struct SimulatedCase {
    StepParts parts;
    double software_delays_us = 0.0;
  };
  using SimulatedLayers = std::map<uint32_t, std::vector<SimulatedCase>>;  // [model layer][case]

  // Every case of the model's layer `layer` (routing: workload_of_layer) for each scheme;
  // dualpipe's layers are deepep's, simulated once.
  void run(uint32_t layer);
  const SimulatedLayers& of_scheme(const std::string& scheme) const;

  const Scenario& scenario_;
  std::vector<LayerCase> cases_;
  std::function<void(const std::string&)> on_progress_;
  std::vector<uint32_t> sampled_;  // run_sampled's layers
  std::map<std::string, SimulatedLayers> layers_;
  std::vector<std::string> failures_;
  nlohmann::json runs_ = nlohmann::json::array();
};

}  // namespace nvsvp::platform
