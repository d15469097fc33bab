#include "nvsvp/platform/model_prefill.hpp"

#include <string>

#include "nvsvp/fw/model_parts.hpp"
#include "nvsvp/fw/replication_stream.hpp"
#include "nvsvp/model/task_timing.hpp"

namespace nvsvp::platform {

using nlohmann::json;

PrefillParts prefill_parts(const Scenario& scenario) {
  const fw::MoeModel& m = scenario.workload.model;
  const model::GpuParams& gpu = scenario.platform.gpu;
  if (m.layers == 0 || m.attention.kind.empty() || m.vocab == 0) {
    throw ConfigError(scenario.file + ": workload.model: expected a model that gives layers, attention and vocab "
                      "(a prefill of the whole model), got model " + m.name + " without them");
  }
  const uint64_t tokens = scenario.workload.tokens_per_gpu;
  PrefillParts parts;
  parts.dense_layers = m.dense_layers;
  parts.moe_layers = m.layers - m.dense_layers;
  parts.context = fw::causal_prefill_context(m.sequence_length);
  const fw::AttentionTasks attention = fw::attention_tasks(m, tokens, parts.context, fw::kLinearLayerDtype);
  parts.attention_us =
      model::whole_gpu_task_us(gpu, attention.projections) + model::whole_gpu_task_us(gpu, attention.core);
  if (m.dense_layers > 0) {
    parts.dense_ffn_us = model::whole_gpu_task_us(gpu, fw::dense_ffn_task(m, tokens, fw::kLinearLayerDtype));
  }
  const uint64_t sequences = (tokens + m.sequence_length - 1) / m.sequence_length;
  parts.output_head_us = model::whole_gpu_task_us(gpu, fw::output_head_task(m, sequences, fw::kLinearLayerDtype));
  return parts;
}

json prefill_estimate(const Scenario& scenario, const json& layer_time_gains) {
  if (layer_time_gains.empty() || scenario.workload.model.layers == 0) return json();
  const PrefillParts parts = prefill_parts(scenario);
  const double tokens = static_cast<double>(scenario.workload.tokens_per_gpu) * scenario.platform.gpus;
  const double around_us = parts.dense_layers * (parts.attention_us + parts.dense_ffn_us) +
                           parts.moe_layers * parts.attention_us + parts.output_head_us;
  json schemes = json::object();
  for (const auto& [scheme, gains] : layer_time_gains.items()) {
    json policies = json::object();
    double time_us[3] = {};
    for (size_t p = 0; p < fw::kStreamPolicies.size(); ++p) {
      const std::string name = fw::to_string(fw::kStreamPolicies[p]);
      time_us[p] = around_us + parts.moe_layers * gains.at(name + "_layer_time_us").get<double>();
      policies[name] = {{"model_time_us", time_us[p]}, {"tokens_per_second", tokens / (time_us[p] * 1e-6)}};
    }
    schemes[scheme] = {{"policies", policies},
                       {"moe_share_without_balancing", parts.moe_layers *
                                                           gains.at("none_layer_time_us").get<double>() / time_us[0]},
                       {"iser_gain_over_none", time_us[0] / time_us[2] - 1.0},
                       {"iser_gain_over_static", time_us[1] / time_us[2] - 1.0}};
  }
  return {{"dense_layers", parts.dense_layers},
          {"moe_layers", parts.moe_layers},
          {"context", parts.context},
          {"attention_us", parts.attention_us},
          {"dense_ffn_us", parts.dense_ffn_us},
          {"output_head_us", parts.output_head_us},
          {"linear_dtype", fw::to_string(fw::kLinearLayerDtype)},
          {"schemes", schemes}};
}

}  // namespace nvsvp::platform
