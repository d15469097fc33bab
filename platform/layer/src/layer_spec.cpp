#include "nvsvp/platform/layer_spec.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "nvsvp/fw/expert_replication.hpp"
#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/key_origins.hpp"
#include "nvsvp/platform/routing_generator.hpp"

namespace nvsvp::platform {

namespace {

// Everything of the scenario's layer but its routing and replication.
std::shared_ptr<fw::MoeLayerSpec> layer_spec_frame(const Scenario& scenario) {
  auto spec = std::make_shared<fw::MoeLayerSpec>();
  spec->software = scenario.software;
  spec->model = scenario.workload.model;
  spec->top_k = scenario.workload.top_k;
  spec->tokens_per_gpu = scenario.workload.tokens_per_gpu;
  spec->pass = scenario.workload.pass;
  spec->dispatch_dtype =
      spec->pass == fw::LayerPass::backward ? scenario.workload.gradient_dtype : scenario.workload.dispatch_dtype;
  spec->weight_dtype = scenario.workload.weight_dtype;
  spec->combine_dtype = scenario.workload.combine_dtype;
  spec->pure_communication = scenario.pure_communication;
  spec->gpu_sms = scenario.platform.gpu.sms;
  spec->shared_experts = scenario.workload.shared_experts;
  return spec;
}

std::shared_ptr<const fw::MoeLayerSpec> build_layer_spec(const Scenario& scenario) {
  std::shared_ptr<fw::MoeLayerSpec> spec = layer_spec_frame(scenario);
  const fw::MoeRouting routing = generate_routing(scenario.workload, scenario.platform.gpus);

  // Hot-expert replication decides the copies, then the tokens go over them.
  const fw::ReplicationParams& r = scenario.replication;
  const fw::BroadcastCosts costs = replication_broadcast_costs(scenario);
  // The budget: the shared experts' GEMMs on the SMs the broadcast leaves them.
  const double shared_ns = shared_expert_budget_ns(scenario, r.policy == "iser" && fw::uses_multicast(r));
  // Only the static policy places from expected loads (they take sampling to estimate).
  WorkloadSpec history = scenario.workload;  // what the static placement was made from
  if (r.static_seed != 0) history.routing.seed = r.static_seed;
  const std::vector<double> expected_loads =
      r.policy == "static" ? expected_expert_loads(history, routing) : std::vector<double>{};
  auto decision = std::make_shared<fw::ReplicationDecision>();
  try {
    spec->routing = fw::decide_replication(routing, r, spec->model, spec->weight_dtype, expected_loads, costs,
                                           shared_ns, *decision);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(scenario.file + ": replication: " + e.what());
  }
  spec->replication = std::move(decision);
  return spec;
}


// The place to blame for partition `p`.
Place partition_place(const Scenario& scenario, size_t p) {
  const std::string path = "partitions[" + std::to_string(p) + "]";
  return scenario.origins ? scenario.origins->at(path) : Place{path, scenario.file, kDefault};
}

// Partition `p`'s layer spec, with `software` (the machine layer's, a tutel search's degree among it).
std::shared_ptr<const fw::MoeLayerSpec> partition_spec(const Scenario& scenario, size_t p,
                                                       const fw::SoftwareParams& software) {
  const Scenario alone = partition_alone(scenario, p);
  const uint32_t gpus = alone.platform.gpus;
  if (alone.workload.model.experts % gpus != 0) {
    const Place at = partition_place(scenario, p);
    config_fail(at.origin, at.path, "a partition whose GPUs divide the experts evenly (each runs the whole layer)",
                std::to_string(alone.workload.model.experts) + " experts over " + std::to_string(gpus) + " GPUs");
  }
  std::shared_ptr<const fw::MoeLayerSpec> spec;
  try {
    spec = make_layer_spec(alone);
  } catch (const ConfigError& e) {
    const Place at = partition_place(scenario, p);
    config_fail(at.origin, at.path, "a partition whose layer can be made on its " + std::to_string(gpus) + " GPUs",
                e.what());
  }
  auto copy = std::make_shared<fw::MoeLayerSpec>(*spec);
  copy->software = software;
  return copy;
}

}  // namespace

std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario) {
  return within_memory(scenario.file, "a layer (gpus x tokens_per_gpu tokens, top_k experts each)",
                       [&] { return build_layer_spec(scenario); });
}

std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario, fw::MoeRouting routing,
                                                        std::shared_ptr<const fw::ReplicationDecision> replication) {
  std::shared_ptr<fw::MoeLayerSpec> spec = layer_spec_frame(scenario);
  spec->routing = std::move(routing);
  spec->replication = std::move(replication);
  return spec;
}

Scenario partition_alone(const Scenario& scenario, size_t p) {
  Scenario alone = scenario;
  alone.platform.gpus = static_cast<uint32_t>(scenario.partitions.at(p).size());
  alone.workload.routing.seed += p;
  alone.partitions.clear();
  alone.faults.clear();
  return alone;
}

ResolvedLayer resolve_layer(const Scenario& scenario) { return resolve_layer(scenario, make_layer_spec(scenario)); }

ResolvedLayer resolve_layer(const Scenario& scenario, std::shared_ptr<const fw::MoeLayerSpec> layer) {
  ResolvedLayer resolved;
  if (scenario.partitions.empty()) {
    resolved.parts = {layer};
  } else {
    for (size_t p = 0; p < scenario.partitions.size(); ++p) {
      resolved.parts.push_back(partition_spec(scenario, p, layer->software));
    }
  }
  resolved.layer = std::move(layer);
  return resolved;
}

ResolvedLayer with_software(const ResolvedLayer& resolved, const fw::SoftwareParams& software) {
  auto copy = [&](const std::shared_ptr<const fw::MoeLayerSpec>& spec) {
    auto changed = std::make_shared<fw::MoeLayerSpec>(*spec);
    changed->software = software;
    return std::shared_ptr<const fw::MoeLayerSpec>(std::move(changed));
  };
  ResolvedLayer changed;
  changed.layer = copy(resolved.layer);
  for (const auto& part : resolved.parts) changed.parts.push_back(part == resolved.layer ? changed.layer : copy(part));
  return changed;
}

fw::BroadcastCosts replication_broadcast_costs(const Scenario& scenario) {
  const PlatformSpec& p = scenario.platform;
  const fw::ReplicationParams& r = scenario.replication;
  fw::BroadcastCosts costs;
  costs.link_gbps = p.link.line_rate_gbps * p.link.efficiency;
  costs.gpu_link_gbps = costs.link_gbps * p.links_per_gpu();
  costs.hop_ns = p.link.latency_ns;
  costs.sm_store_gbps = p.gpu.sm_store_gbps;
  costs.broadcast_sms = r.broadcast_sms;
  costs.chunk_bytes = r.chunk_bytes;
  return costs;
}

double shared_expert_budget_ns(const Scenario& scenario, bool sm_broadcast) {
  if (scenario.pure_communication) return 0.0;
  const PlatformSpec& p = scenario.platform;
  const WorkloadSpec& w = scenario.workload;
  const double sms = p.gpu.sms - (sm_broadcast ? std::min(scenario.replication.broadcast_sms, p.gpu.sms - 1) : 0u);
  const double shared_flops = w.shared_experts * w.model.expert_flops_per_token() * w.tokens_per_gpu;
  const double peak_tflops = p.gpu.peak_tflops(fw::gemm_precision(w.weight_dtype));
  const double flops_per_ns = peak_tflops * 1e3 * p.gpu.gemm_efficiency * sms / p.gpu.sms;
  return shared_flops / flops_per_ns;
}

}  // namespace nvsvp::platform
