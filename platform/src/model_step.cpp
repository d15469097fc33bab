// A training step of the whole model (model_step.hpp).
#include "nvsvp/platform/model_step.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "layer_simulations.hpp"
#include "nvsvp/fw/model_parts.hpp"
#include "nvsvp/model/task_timing.hpp"

namespace nvsvp::platform {

using nlohmann::json;

StepParts& StepParts::operator+=(const StepParts& other) {
  attention_us += other.attention_us;
  dense_us += other.dense_us;
  moe_compute_us += other.moe_compute_us;
  exposed_comm_us += other.exposed_comm_us;
  return *this;
}

StepParts StepParts::scaled(double factor) const {
  return {attention_us * factor, dense_us * factor, moe_compute_us * factor, exposed_comm_us * factor};
}

TrainingStep compose_training_step(const std::vector<LayerPasses>& layers, const LayerPasses& head,
                                   const PipelineSpec& spec) {
  const auto count = static_cast<uint32_t>(layers.size());
  if (spec.stages == 0 || spec.stages > count) {
    throw std::invalid_argument("training step: " + std::to_string(spec.stages) + " stages for " +
                                std::to_string(count) + " layers");
  }
  TrainingStep step;
  std::vector<StageCosts> costs(spec.stages);
  std::vector<LayerPasses> stage_parts(spec.stages);
  for (uint32_t s = 0; s <= spec.stages; ++s) {
    step.first_layer.push_back(static_cast<uint32_t>(uint64_t{s} * count / spec.stages));
  }
  for (uint32_t s = 0; s < spec.stages; ++s) {
    for (uint32_t l = step.first_layer[s]; l < step.first_layer[s + 1]; ++l) {
      stage_parts[s].forward += layers[l].forward;
      stage_parts[s].backward += layers[l].backward;
    }
  }
  stage_parts.back().forward += head.forward;
  stage_parts.back().backward += head.backward;
  for (uint32_t s = 0; s < spec.stages; ++s) {
    costs[s].forward_us = stage_parts[s].forward.total_us();
    costs[s].backward_us = stage_parts[s].backward.total_us();
    StepParts both = stage_parts[s].forward;
    both += stage_parts[s].backward;
    step.busy += both.scaled(static_cast<double>(spec.micro_batches) / spec.stages);
  }
  step.timing = time_one_f_one_b(spec, costs);
  return step;
}

TrainingStep compose_dualpipe_step(const std::vector<LayerPasses>& layers, const LayerPasses& head,
                                   uint32_t micro_batches, double compute_slowdown) {
  if (layers.empty() || micro_batches == 0) {
    throw std::invalid_argument("dualpipe step: " + std::to_string(layers.size()) + " layers, " +
                                std::to_string(micro_batches) + " micro batches");
  }
  std::vector<StepParts> forward, backward;  // in the order each pass runs them
  for (const LayerPasses& layer : layers) forward.push_back(layer.forward);
  forward.push_back(head.forward);
  backward.push_back(head.backward);
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) backward.push_back(it->backward);

  TrainingStep step;
  for (size_t k = 0; k < forward.size(); ++k) {
    step.busy += forward[k];   // the first micro batch's forward, alone
    step.busy += backward[k];  // the last one's backward, alone
  }
  for (size_t k = 0; k < forward.size(); ++k) {
    StepParts computes = forward[k];
    computes += backward[k];
    const double communication = computes.exposed_comm_us;
    computes.exposed_comm_us = 0.0;
    computes = computes.scaled(compute_slowdown);
    computes.exposed_comm_us = std::max(0.0, communication - computes.total_us());
    step.busy += computes.scaled(micro_batches - 1.0);
  }
  step.timing.step_us = step.busy.total_us();
  step.timing.busy_us = {step.timing.step_us};
  step.first_layer = {0, static_cast<uint32_t>(layers.size())};
  return step;
}

std::vector<uint32_t> sampled_moe_layers(uint32_t moe_layers, uint32_t sample) {
  std::vector<uint32_t> layers;
  if (sample == 0 || sample >= moe_layers) {
    for (uint32_t l = 0; l < moe_layers; ++l) layers.push_back(l);
    return layers;
  }
  for (uint32_t i = 0; i < sample; ++i) {
    // Evenly spaced from the first to the last (one sample: the middle layer).
    const double at = sample == 1 ? (moe_layers - 1) / 2.0 : static_cast<double>(i) * (moe_layers - 1) / (sample - 1);
    layers.push_back(static_cast<uint32_t>(std::lround(at)));
  }
  return layers;
}

WorkloadSpec workload_of_layer(const WorkloadSpec& workload, uint32_t layer) {
  WorkloadSpec w = workload;
  if (w.routing.kind == "drifting" || w.routing.kind == "trace") {
    w.routing.layer = layer;
  } else {
    w.routing.seed = workload.routing.seed + layer;
  }
  return w;
}

namespace {

// The cases of LayerSimulations a training step runs.
constexpr size_t kForwardCase = 0;
constexpr size_t kBackwardCase = 1;

// The parts of one micro batch around the MoE layers, per GPU, both passes.
struct AroundParts {
  LayerPasses attention;  // one layer's
  LayerPasses dense_ffn;  // one dense layer's
  LayerPasses head;
};

LayerPasses timed(const model::GpuParams& gpu, const hw::Task& forward, double factor, uint64_t parameters,
                  double StepParts::*part) {
  LayerPasses passes;
  passes.forward.*part = model::whole_gpu_task_us(gpu, forward);
  passes.backward.*part = model::whole_gpu_task_us(gpu, fw::backward_task(forward, factor, parameters));
  return passes;
}

AroundParts around_parts(const Scenario& scenario) {
  const fw::MoeModel& m = scenario.workload.model;
  const model::GpuParams& gpu = scenario.platform.gpu;
  const uint64_t tokens = scenario.workload.tokens_per_gpu;
  const fw::WeightDtype dtype = fw::kLinearLayerDtype;
  AroundParts parts;
  const fw::AttentionTasks attention =
      fw::attention_tasks(m, tokens, fw::causal_prefill_context(m.sequence_length), dtype);
  const LayerPasses projections = timed(gpu, attention.projections, fw::kLinearBackwardFactor,
                                        fw::attention_parameters(m), &StepParts::attention_us);
  const LayerPasses core = timed(gpu, attention.core, fw::kAttentionCoreBackwardFactor, 0, &StepParts::attention_us);
  parts.attention.forward = projections.forward;
  parts.attention.forward += core.forward;
  parts.attention.backward = projections.backward;
  parts.attention.backward += core.backward;
  if (m.dense_layers > 0) {
    parts.dense_ffn = timed(gpu, fw::dense_ffn_task(m, tokens, dtype), fw::kLinearBackwardFactor,
                            3ull * m.hidden * m.dense_hidden, &StepParts::dense_us);
  }
  // Training computes every token's logits.
  parts.head = timed(gpu, fw::output_head_task(m, tokens, dtype), fw::kLinearBackwardFactor,
                     uint64_t{m.hidden} * m.vocab, &StepParts::dense_us);
  return parts;
}

json passes_json(const LayerPasses& p) { return {{"forward", parts_json(p.forward)}, {"backward", parts_json(p.backward)}}; }

// Every layer of the model for one scheme: a dense layer its attention and FFN, an MoE layer its
// attention and its simulated passes (an MoE layer not simulated the mean of those that were).
std::vector<LayerPasses> model_layers(const fw::MoeModel& m, const AroundParts& around,
                                      const LayerSimulations& simulations, const std::string& scheme) {
  std::vector<LayerPasses> layers(m.layers, around.attention);
  for (uint32_t l = 0; l < m.layers; ++l) {
    const LayerPasses ffn = l < m.dense_layers ? around.dense_ffn
                                               : LayerPasses{simulations.moe_layer(scheme, l, kForwardCase),
                                                             simulations.moe_layer(scheme, l, kBackwardCase)};
    layers[l].forward += ffn.forward;
    layers[l].backward += ffn.backward;
  }
  return layers;
}

}  // namespace

json run_model_step(const Scenario& scenario, const std::function<void(const std::string&)>& on_progress) {
  const StepSpec& step = scenario.step;
  const fw::MoeModel& m = scenario.workload.model;
  const uint32_t moe_layers = m.layers - m.dense_layers;
  const AroundParts around = around_parts(scenario);
  const uint32_t tokens = scenario.workload.tokens_per_gpu;
  LayerSimulations simulations(scenario,
                               {LayerCase{"forward", fw::LayerPass::forward, tokens},
                                LayerCase{"backward", fw::LayerPass::backward, tokens}},
                               on_progress);
  const std::vector<uint32_t> simulated_layers = simulations.run_sampled();

  PipelineSpec pipeline;
  pipeline.stages = step.pipeline.stages;
  pipeline.micro_batches = step.micro_batches;
  // A micro batch's activations (or their gradients) of every token of a GPU, bf16, to the next stage.
  const double transfer_bytes =
      static_cast<double>(scenario.workload.tokens_per_gpu) * m.hidden * static_cast<double>(fw::kActivationBytes);
  pipeline.transfer_us = step.pipeline.stages > 1
                             ? step.pipeline.link_latency_us + transfer_bytes / (step.pipeline.link_gbps * 1e3)
                             : 0.0;
  const double tokens_per_step =
      static_cast<double>(step.micro_batches) * scenario.workload.tokens_per_gpu * scenario.platform.gpus;
  // DualPipe's communication kernels hold software.comm_sms SMs while the paired compute runs
  // (DeepSeek-V3 gives its all-to-all 20 of the H800's 132).
  const model::GpuParams& gpu = scenario.platform.gpu;
  const double dualpipe_slowdown = static_cast<double>(gpu.sms) / (gpu.sms - scenario.software.comm_sms);
  json schemes = json::object();
  if (simulations.passed()) {
    for (const std::string& scheme : scenario.schemes) {
      const std::vector<LayerPasses> layers = model_layers(m, around, simulations, scheme);
      const TrainingStep t = scheme == kDualPipeScheme
                                 ? compose_dualpipe_step(layers, around.head, step.micro_batches, dualpipe_slowdown)
                                 : compose_training_step(layers, around.head, pipeline);
      json breakdown = parts_json(t.busy);
      breakdown["pipeline_bubble_us"] = t.timing.mean_bubble_us;
      schemes[scheme] = {{"schedule", scheme == kDualPipeScheme ? "dualpipe" : step.pipeline.schedule},
                         {"step_time_us", t.timing.step_us},
                         {"tokens_per_second", tokens_per_step / (t.timing.step_us * 1e-6)},
                         {"breakdown", breakdown},
                         {"stage_busy_us", t.timing.busy_us},
                         {"stage_first_layers", t.first_layer}};
    }
  }
  return {{"kind", step.kind},
          {"layers", m.layers},
          {"dense_layers", m.dense_layers},
          {"moe_layers", moe_layers},
          {"simulated_layers", simulated_layers},
          {"sampled", simulated_layers.size() < moe_layers},
          {"micro_batches", step.micro_batches},
          {"tokens_per_micro_batch_per_gpu", scenario.workload.tokens_per_gpu},
          {"tokens_per_step", tokens_per_step},
          {"pipeline",
           {{"stages", step.pipeline.stages},
            {"schedule", step.pipeline.schedule},
            {"dualpipe_compute_slowdown", dualpipe_slowdown},
            {"gpus", static_cast<uint64_t>(step.pipeline.stages) * scenario.platform.gpus},
            {"transfer_us", pipeline.transfer_us}}},
          {"parts",
           {{"attention", passes_json(around.attention)},
            {"dense_ffn", passes_json(around.dense_ffn)},
            {"output_head", passes_json(around.head)}}},
          {"runs", simulations.runs()},
          {"schemes", schemes},
          {"passed", simulations.passed()},
          {"failures", simulations.failures()}};
}

}  // namespace nvsvp::platform
