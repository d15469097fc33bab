// The simulated MoE layers of a whole-model step (layer_simulations.hpp).
#include "layer_simulations.hpp"

#include <stdexcept>

#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/runner.hpp"

namespace nvsvp::platform {

using nlohmann::json;

StepParts moe_parts(const json& result) {
  const json& breakdown = result.at("time_breakdown");
  StepParts parts;
  parts.moe_compute_us = breakdown.at("compute_only_us").get<double>() + breakdown.at("overlap_us").get<double>();
  parts.exposed_comm_us = result.at("layer_time_us").get<double>() - parts.moe_compute_us;
  return parts;
}

json parts_json(const StepParts& p) {
  return {{"attention_us", p.attention_us},
          {"dense_us", p.dense_us},
          {"moe_compute_us", p.moe_compute_us},
          {"exposed_comm_us", p.exposed_comm_us}};
}

LayerSimulations::LayerSimulations(const Scenario& scenario, std::vector<LayerCase> cases,
                                   std::function<void(const std::string&)> on_progress)
    : scenario_(scenario), cases_(std::move(cases)), on_progress_(std::move(on_progress)) {}

void LayerSimulations::run(uint32_t layer) {
  for (size_t c = 0; c < cases_.size(); ++c) {
    const LayerCase& layer_case = cases_[c];
    Scenario of_layer = scenario_;
    of_layer.workload = workload_of_layer(scenario_.workload, layer);
    of_layer.workload.pass = layer_case.pass;
    of_layer.workload.tokens_per_gpu = layer_case.tokens_per_gpu;
    const auto spec = make_layer_spec(of_layer);
    std::map<std::string, json> by_plan;  // schemes that run the same plan (dualpipe, deepep): simulated once
    for (const std::string& scheme : scenario_.schemes) {
      const std::string what = "layer " + std::to_string(layer) + " " + layer_case.name + " " + scheme;
      const std::string plan = fw::scheme_traits(scheme).plan;
      auto known = by_plan.find(plan);
      if (known == by_plan.end()) {
        if (on_progress_) on_progress_("step: " + what);
        known = by_plan.emplace(plan, run_scheme_in_child(of_layer, scheme, spec).result).first;
      }
      const json& result = known->second;
      json entry = {{"layer", layer}, {"pass", layer_case.name}, {"scheme", scheme}};
      const bool passed = !result.contains("error") && result.at("checks").at("passed").get<bool>();
      if (!passed) {
        failures_.push_back(what + (result.contains("error") ? ": " + result["error"].get<std::string>()
                                                             : ": its checks failed"));
        entry["passed"] = false;
        runs_.push_back(entry);
        continue;
      }
      const StepParts parts = moe_parts(result);
      std::vector<SimulatedCase>& of_cases = layers_[scheme][layer];
      of_cases.resize(cases_.size());
      of_cases[c] = {parts, result.at("software_delays_us").at("total").get<double>()};
      entry["passed"] = true;
      entry["layer_time_us"] = result.at("layer_time_us");
      entry["parts"] = parts_json(parts);
      entry["software_delays_us"] = result.at("software_delays_us");
      runs_.push_back(entry);
    }
  }
}

void LayerSimulations::run_sampled() {
  const fw::MoeModel& m = scenario_.workload.model;
  for (uint32_t k : sampled_moe_layers(m.layers - m.dense_layers, scenario_.step.sample_layers)) {
    sampled_.push_back(m.dense_layers + k);
    run(sampled_.back());
  }
}

json LayerSimulations::step_json() const {
  const fw::MoeModel& m = scenario_.workload.model;
  const uint32_t moe_layers = m.layers - m.dense_layers;
  return {{"kind", scenario_.step.kind},
          {"layers", m.layers},
          {"dense_layers", m.dense_layers},
          {"moe_layers", moe_layers},
          {"simulated_layers", sampled_},
          {"sampled", sampled_.size() < moe_layers},
          {"runs", runs_},
          {"passed", passed()},
          {"failures", failures_}};
}

const LayerSimulations::SimulatedLayers& LayerSimulations::of_scheme(const std::string& scheme) const {
  const auto it = layers_.find(scheme);
  if (it == layers_.end() || it->second.empty()) {
    throw std::logic_error("layer simulations: no simulated layer of scheme " + scheme);
  }
  return it->second;
}

StepParts LayerSimulations::moe_layer(const std::string& scheme, uint32_t layer, size_t case_index) const {
  const SimulatedLayers& simulated = of_scheme(scheme);
  const auto it = simulated.find(layer);
  return it != simulated.end() ? it->second.at(case_index).parts : mean_moe_layer(scheme, case_index);
}

StepParts LayerSimulations::mean_moe_layer(const std::string& scheme, size_t case_index) const {
  const SimulatedLayers& simulated = of_scheme(scheme);
  StepParts mean;
  for (const auto& [number, cases] : simulated) mean += cases.at(case_index).parts.scaled(1.0 / simulated.size());
  return mean;
}

double LayerSimulations::mean_software_delays_us(const std::string& scheme, size_t case_index) const {
  const SimulatedLayers& simulated = of_scheme(scheme);
  double sum = 0.0;
  for (const auto& [number, cases] : simulated) sum += cases.at(case_index).software_delays_us;
  return sum / simulated.size();
}

}  // namespace nvsvp::platform
