// A training step of the whole model (model_step.hpp).
#include "nvsvp/platform/model_step.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>

#include "layer_simulations.hpp"
#include "nvsvp/fw/model_parts.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/model/task_timing.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

// The layers split evenly over the stages (stage s: layers [s L / P, (s + 1) L / P)), the head
// on the last: each stage's forward layers in the order the forward runs them, and its backward
// layers in the order the backward runs them.
struct StageLayers {
  std::vector<uint32_t> first_layer;              // per stage, and one past the last stage's last
  std::vector<std::vector<LayerPasses>> forward;  // [stage]: its layers, then the head on the last
  std::vector<std::vector<LayerPasses>> backward;  // [stage]: the head on the last, then its layers from the last
  std::vector<LayerPasses> sum;                    // [stage]
};

StageLayers split_stages(const std::vector<LayerPasses>& layers, const LayerPasses& head, uint32_t stages) {
  const auto count = static_cast<uint32_t>(layers.size());
  if (stages == 0 || stages > count) {
    throw std::invalid_argument("training step: " + std::to_string(stages) + " stages for " + std::to_string(count) +
                                " layers");
  }
  StageLayers split;
  for (uint32_t s = 0; s <= stages; ++s) split.first_layer.push_back(static_cast<uint32_t>(uint64_t{s} * count / stages));
  split.forward.resize(stages);
  split.backward.resize(stages);
  split.sum.resize(stages);
  for (uint32_t s = 0; s < stages; ++s) {
    for (uint32_t l = split.first_layer[s]; l < split.first_layer[s + 1]; ++l) split.forward[s].push_back(layers[l]);
    if (s + 1 == stages) split.forward[s].push_back(head);
    split.backward[s].assign(split.forward[s].rbegin(), split.forward[s].rend());
    for (const LayerPasses& layer : split.forward[s]) {
      split.sum[s].forward += layer.forward;
      split.sum[s].backward += layer.backward;
      split.sum[s].weight += layer.weight;
    }
  }
  return split;
}

// One pass's layers beside the other's, the k-th beside the k-th: a pair takes the longer of its
// two computes together (slowed by `compute_slowdown`: the SMs the communication kernels hold)
// and its two communications together; the layers beyond the shorter list run alone.
StepParts overlapped(const std::vector<StepParts>& forward, const std::vector<StepParts>& backward,
                     double compute_slowdown) {
  StepParts total;
  for (size_t k = 0; k < std::max(forward.size(), backward.size()); ++k) {
    if (k >= forward.size() || k >= backward.size()) {
      total += k < forward.size() ? forward[k] : backward[k];
      continue;
    }
    StepParts computes = forward[k];
    computes += backward[k];
    const double communication = computes.exposed_comm_us;
    computes.exposed_comm_us = 0.0;
    computes = computes.scaled(compute_slowdown);
    computes.exposed_comm_us = std::max(0.0, communication - computes.total_us());
    total += computes;
  }
  return total;
}

std::vector<StepParts> forward_parts(const std::vector<LayerPasses>& layers) {
  std::vector<StepParts> parts;
  for (const LayerPasses& layer : layers) parts.push_back(layer.forward);
  return parts;
}

std::vector<StepParts> backward_parts(const std::vector<LayerPasses>& layers) {
  std::vector<StepParts> parts;
  for (const LayerPasses& layer : layers) parts.push_back(layer.backward);
  return parts;
}

}  // namespace

TrainingStep compose_training_step(const std::vector<LayerPasses>& layers, const LayerPasses& head,
                                   const PipelineSpec& spec) {
  const StageLayers split = split_stages(layers, head, spec.stages);
  TrainingStep step;
  step.first_layer = split.first_layer;
  std::vector<StageCosts> costs(spec.stages);
  for (uint32_t s = 0; s < spec.stages; ++s) {
    costs[s].forward_us = split.sum[s].forward.total_us();
    costs[s].backward_us = split.sum[s].backward.total_us();
    StepParts both = split.sum[s].forward;
    both += split.sum[s].backward;
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
  const StageLayers split = split_stages(layers, head, 1);
  TrainingStep step;
  step.busy = split.sum[0].forward;    // the first micro batch's forward, alone
  step.busy += split.sum[0].backward;  // the last one's backward, alone
  step.busy += overlapped(forward_parts(split.forward[0]), backward_parts(split.backward[0]), compute_slowdown)
                   .scaled(micro_batches - 1.0);
  step.timing.step_us = step.busy.total_us();
  step.timing.busy_us = {step.timing.step_us};
  step.first_layer = split.first_layer;
  return step;
}

TrainingStep compose_dualpipe_pipeline_step(const std::vector<LayerPasses>& layers, const LayerPasses& head,
                                            const PipelineSpec& spec, double compute_slowdown) {
  const StageLayers split = split_stages(layers, head, spec.stages);
  const uint32_t P = spec.stages;
  auto stage_of = [P](int direction, uint32_t rank) { return direction == 0 ? rank : P - 1 - rank; };
  std::vector<DualPipeRankCosts> costs(P);
  std::vector<std::array<StepParts, 2>> pairs(P);  // [rank][d]: d's forward beside the other's backward
  for (uint32_t r = 0; r < P; ++r) {
    for (int d = 0; d < 2; ++d) {
      const LayerPasses& sum = split.sum[stage_of(d, r)];
      StepParts input_gradients = sum.backward;
      input_gradients += sum.weight.scaled(-1.0);
      costs[r].direction[d] = {sum.forward.total_us(), input_gradients.total_us(), sum.weight.total_us()};
      pairs[r][d] = overlapped(forward_parts(split.forward[stage_of(d, r)]),
                               backward_parts(split.backward[stage_of(1 - d, r)]), compute_slowdown);
      costs[r].forward_backward_us[d] = pairs[r][d].total_us();
    }
  }
  TrainingStep step;
  step.first_layer = split.first_layer;
  step.timing = time_dualpipe(spec, costs);
  // Each operation's parts, as the schedule ran it, per rank on average.
  for (const PipelineOp& op : step.timing.ops) {
    const LayerPasses& sum = split.sum[stage_of(op.direction, op.rank)];
    StepParts parts;
    switch (op.kind) {
      case PipelineOpKind::forward: parts = sum.forward; break;
      case PipelineOpKind::backward:
        parts = sum.backward;
        if (!op.with_weight) parts += sum.weight.scaled(-1.0);
        break;
      case PipelineOpKind::weight: parts = sum.weight; break;
      case PipelineOpKind::forward_backward: parts = pairs[op.rank][op.direction]; break;
    }
    step.busy += parts.scaled(1.0 / P);
  }
  return step;
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

// A part's passes. A part with parameters computes its input gradients in its forward's time
// and its weight gradients (and their accumulation) in the rest of its backward; one without
// (the attention core) has no weight gradients.
LayerPasses timed(const model::GpuParams& gpu, const hw::Task& forward, double factor, uint64_t parameters,
                  double StepParts::*part) {
  LayerPasses passes;
  passes.forward.*part = model::whole_gpu_task_us(gpu, forward);
  passes.backward.*part = model::whole_gpu_task_us(gpu, fw::backward_task(forward, factor, parameters));
  if (parameters > 0) passes.weight.*part = std::max(0.0, passes.backward.*part - passes.forward.*part);
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
  parts.attention = projections;
  parts.attention.forward += core.forward;
  parts.attention.backward += core.backward;
  parts.attention.weight += core.weight;
  if (m.dense_layers > 0) {
    parts.dense_ffn = timed(gpu, fw::dense_ffn_task(m, tokens, dtype), fw::kLinearBackwardFactor,
                            3ull * m.hidden * m.dense_hidden, &StepParts::dense_us);
  }
  // Training computes every token's logits.
  parts.head = timed(gpu, fw::output_head_task(m, tokens, dtype), fw::kLinearBackwardFactor,
                     uint64_t{m.hidden} * m.vocab, &StepParts::dense_us);
  return parts;
}

json passes_json(const LayerPasses& p) {
  return {{"forward", parts_json(p.forward)}, {"backward", parts_json(p.backward)}, {"weight", parts_json(p.weight)}};
}

// An MoE layer's simulated passes. Its weight gradients are taken as long as its forward's
// compute: their GEMMs do the forward GEMMs' FLOPs over the same tokens (the simulated backward
// runs them among its data gradients, so its own split is not measured).
LayerPasses moe_passes(const LayerSimulations& simulations, const std::string& scheme, uint32_t layer) {
  LayerPasses passes{simulations.moe_layer(scheme, layer, kForwardCase),
                     simulations.moe_layer(scheme, layer, kBackwardCase), StepParts{}};
  passes.weight.moe_compute_us = std::min(passes.forward.moe_compute_us, passes.backward.moe_compute_us);
  return passes;
}

// Every layer of the model for one scheme: a dense layer its attention and FFN, an MoE layer its
// attention and its simulated passes (an MoE layer not simulated the mean of those that were).
std::vector<LayerPasses> model_layers(const fw::MoeModel& m, const AroundParts& around,
                                      const LayerSimulations& simulations, const std::string& scheme) {
  std::vector<LayerPasses> layers(m.layers, around.attention);
  for (uint32_t l = 0; l < m.layers; ++l) {
    const LayerPasses ffn = l < m.dense_layers ? around.dense_ffn : moe_passes(simulations, scheme, l);
    layers[l].forward += ffn.forward;
    layers[l].backward += ffn.backward;
    layers[l].weight += ffn.weight;
  }
  return layers;
}

}  // namespace

json run_model_step(const Scenario& scenario, const std::function<void(const std::string&)>& on_progress) {
  const StepSpec& step = scenario.step;
  const fw::MoeModel& m = scenario.workload.model;
  const AroundParts around = around_parts(scenario);
  const uint32_t tokens = scenario.workload.tokens_per_gpu;
  LayerSimulations simulations(scenario,
                               {LayerCase{"forward", fw::LayerPass::forward, tokens},
                                LayerCase{"backward", fw::LayerPass::backward, tokens}},
                               on_progress);
  simulations.run_sampled();

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
  // Under DualPipe the communication kernels hold software.comm_sms SMs while the paired compute
  // runs (DeepSeek-V3 gives its all-to-all 20 of the H800's 132); a scheme whose fused kernel
  // issues its own communication holds none beside it.
  const model::GpuParams& gpu = scenario.platform.gpu;
  const double dualpipe_slowdown = static_cast<double>(gpu.sms) / (gpu.sms - scenario.software.comm_sms);
  json schemes = json::object();
  if (simulations.passed()) {
    for (const std::string& scheme : scenario.schemes) {
      const std::vector<LayerPasses> layers = model_layers(m, around, simulations, scheme);
      // A scheme may run under DualPipe whatever the step's schedule (dualpipe: deepep's layers).
      const fw::SchemeTraits& traits = fw::scheme_traits(scheme);
      const bool dualpipe = traits.schedule == fw::StepSchedule::dualpipe || step.pipeline.schedule == "dualpipe";
      const double slowdown = fw::scheme_traits(traits.plan).fused_kernel ? 1.0 : dualpipe_slowdown;
      const TrainingStep t =
          !dualpipe              ? compose_training_step(layers, around.head, pipeline)
          : pipeline.stages == 1 ? compose_dualpipe_step(layers, around.head, step.micro_batches, slowdown)
                                 : compose_dualpipe_pipeline_step(layers, around.head, pipeline, slowdown);
      json breakdown = parts_json(t.busy);
      breakdown["pipeline_bubble_us"] = t.timing.mean_bubble_us;
      schemes[scheme] = {{"schedule", dualpipe ? "dualpipe" : step.pipeline.schedule},
                         {"step_time_us", t.timing.step_us},
                         {"tokens_per_second", tokens_per_step / (t.timing.step_us * 1e-6)},
                         {"breakdown", breakdown},
                         {"stage_busy_us", t.timing.busy_us},
                         {"stage_first_layers", t.first_layer}};
      if (dualpipe) schemes[scheme]["dualpipe_compute_slowdown"] = slowdown;
    }
  }
  json out = simulations.step_json();
  out.update({{"micro_batches", step.micro_batches},
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
          {"schemes", schemes}});
  return out;
}

}  // namespace nvsvp::platform
