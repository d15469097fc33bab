// An inference request of the whole model (model_inference.hpp).
#include "nvsvp/platform/model_inference.hpp"

#include <stdexcept>

#include "layer_simulations.hpp"
#include "nvsvp/fw/model_parts.hpp"
#include "nvsvp/model/task_timing.hpp"

namespace nvsvp::platform {

using nlohmann::json;

InferenceRequest compose_inference_request(const std::vector<StepParts>& prefill_layers, const StepParts& prefill_head,
                                           const std::vector<StepParts>& decode_layers, const StepParts& decode_head,
                                           const std::vector<double>& decode_attention_us) {
  if (prefill_layers.size() != decode_layers.size() || prefill_layers.empty()) {
    throw std::invalid_argument("inference request: " + std::to_string(prefill_layers.size()) + " prefill layers, " +
                                std::to_string(decode_layers.size()) + " decode layers");
  }
  InferenceRequest request;
  request.decode_steps = static_cast<uint32_t>(decode_attention_us.size());
  for (const StepParts& layer : prefill_layers) request.prefill += layer;
  request.prefill += prefill_head;
  StepParts one_step = decode_head;
  for (const StepParts& layer : decode_layers) one_step += layer;
  request.decode = one_step.scaled(request.decode_steps);
  for (double attention : decode_attention_us) request.decode.attention_us += attention * decode_layers.size();
  return request;
}

namespace {

// The LayerSimulations cases of a request.
constexpr size_t kPrefillCase = 0;
constexpr size_t kDecodeCase = 1;

double task_us(const model::GpuParams& gpu, const fw::AttentionTasks& tasks) {
  return model::whole_gpu_task_us(gpu, tasks.projections) + model::whole_gpu_task_us(gpu, tasks.core);
}

// The parts around the MoE layers, per GPU: one layer's attention and dense FFN and the output
// head, in the prefill and in one decode step (its attention per step: it grows with the context).
struct RequestParts {
  uint32_t prompt = 0;
  uint32_t sequences = 0;  // per GPU: the decode batch
  StepParts prefill_attention;
  StepParts prefill_dense_ffn;
  StepParts prefill_head;
  std::vector<double> decode_attention_us;  // [step]
  StepParts decode_dense_ffn;
  StepParts decode_head;
};

RequestParts request_parts(const Scenario& scenario) {
  const fw::MoeModel& m = scenario.workload.model;
  const model::GpuParams& gpu = scenario.platform.gpu;
  const fw::WeightDtype dtype = fw::kLinearLayerDtype;
  RequestParts parts;
  parts.prompt = scenario.step.prompt_of(m);
  const uint64_t tokens = scenario.workload.tokens_per_gpu;
  parts.sequences = static_cast<uint32_t>(tokens / parts.prompt);
  parts.prefill_attention.attention_us =
      task_us(gpu, fw::attention_tasks(m, tokens, fw::causal_prefill_context(parts.prompt), dtype));
  // The prefill's logits: each sequence's last token (its first generated token).
  parts.prefill_head.dense_us = model::whole_gpu_task_us(gpu, fw::output_head_task(m, parts.sequences, dtype));
  parts.decode_head.dense_us = parts.prefill_head.dense_us;
  if (m.dense_layers > 0) {
    parts.prefill_dense_ffn.dense_us = model::whole_gpu_task_us(gpu, fw::dense_ffn_task(m, tokens, dtype));
    parts.decode_dense_ffn.dense_us = model::whole_gpu_task_us(gpu, fw::dense_ffn_task(m, parts.sequences, dtype));
  }
  // Decode step t (from 1) attends the prompt, the t - 1 tokens generated before it and itself.
  for (uint32_t t = 1; t <= scenario.step.decode_steps; ++t) {
    parts.decode_attention_us.push_back(
        task_us(gpu, fw::decode_attention_tasks(m, parts.sequences, static_cast<double>(parts.prompt) + t, dtype)));
  }
  return parts;
}

}  // namespace

json run_inference_request(const Scenario& scenario, const std::function<void(const std::string&)>& on_progress) {
  const StepSpec& step = scenario.step;
  const fw::MoeModel& m = scenario.workload.model;
  const RequestParts around = request_parts(scenario);
  LayerSimulations simulations(scenario,
                               {LayerCase{"prefill", fw::LayerPass::forward, scenario.workload.tokens_per_gpu},
                                LayerCase{"decode", fw::LayerPass::forward, around.sequences}},
                               on_progress);
  simulations.run_sampled();
  const double gpus = scenario.platform.gpus;
  const double output_tokens = gpus * around.sequences * step.decode_steps;
  json schemes = json::object();
  if (simulations.passed()) {
    for (const std::string& scheme : scenario.schemes) {
      std::vector<StepParts> prefill_layers(m.layers, around.prefill_attention);
      std::vector<StepParts> decode_layers(m.layers);
      for (uint32_t l = 0; l < m.layers; ++l) {
        const bool dense = l < m.dense_layers;
        prefill_layers[l] += dense ? around.prefill_dense_ffn : simulations.moe_layer(scheme, l, kPrefillCase);
        decode_layers[l] = dense ? around.decode_dense_ffn : simulations.moe_layer(scheme, l, kDecodeCase);
      }
      const InferenceRequest r = compose_inference_request(prefill_layers, around.prefill_head, decode_layers,
                                                           around.decode_head, around.decode_attention_us);
      StepParts both = r.prefill;
      both += r.decode;
      json breakdown = parts_json(both);
      breakdown["pipeline_bubble_us"] = 0.0;
      schemes[scheme] = {
          {"step_time_us", r.request_us()},
          {"tokens_per_second", output_tokens / (r.request_us() * 1e-6)},
          {"time_to_first_token_us", r.prefill.total_us()},
          {"time_per_output_token_us", r.time_per_output_token_us()},
          {"prefill_tokens_per_second", gpus * scenario.workload.tokens_per_gpu / (r.prefill.total_us() * 1e-6)},
          {"decode_tokens_per_second", gpus * around.sequences / (r.time_per_output_token_us() * 1e-6)},
          {"breakdown", breakdown},
          {"prefill", parts_json(r.prefill)},
          {"decode", parts_json(r.decode)},
          {"moe_layer_us",
           {{"prefill", simulations.mean_moe_layer(scheme, kPrefillCase).total_us()},
            {"decode", simulations.mean_moe_layer(scheme, kDecodeCase).total_us()}}},
          {"software_delays_us",
           {{"prefill", simulations.mean_software_delays_us(scheme, kPrefillCase)},
            {"decode", simulations.mean_software_delays_us(scheme, kDecodeCase)}}}};
    }
  }
  const double first_attention = around.decode_attention_us.front();
  const double last_attention = around.decode_attention_us.back();
  json out = simulations.step_json();
  out.update({{"prompt_tokens", around.prompt},
          {"sequences_per_gpu", around.sequences},
          {"decode_steps", step.decode_steps},
          {"prompt_tokens_per_request", gpus * scenario.workload.tokens_per_gpu},
          {"output_tokens_per_request", output_tokens},
          {"parts",
           {{"prefill",
             {{"attention_us", around.prefill_attention.attention_us},
              {"dense_ffn_us", around.prefill_dense_ffn.dense_us},
              {"output_head_us", around.prefill_head.dense_us}}},
            {"decode",
             {{"attention_first_step_us", first_attention},
              {"attention_last_step_us", last_attention},
              {"dense_ffn_us", around.decode_dense_ffn.dense_us},
              {"output_head_us", around.decode_head.dense_us}}}}},
          {"schemes", schemes}});
  return out;
}

}  // namespace nvsvp::platform
