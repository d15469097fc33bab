// An inference request of the whole model (the scenario's `step` of kind inference,
// docs/configuration.md#step): the prefill of a batch of sequences (workload.tokens_per_gpu
// prompt tokens per GPU), then step.decode_steps decode steps, each one new token of every
// sequence. Every MoE layer's prefill and decode batch is simulated (one child process per layer,
// case and scheme; a sample with step.sample_layers); the parts around them are timed on the GPU
// model's roofline (docs/models/model_parts.md), a decode step's attention at its context.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvsvp/platform/model_step.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

struct InferenceRequest {
  StepParts prefill;  // every layer and the output head, once
  StepParts decode;   // every decode step together
  uint32_t decode_steps = 0;
  double request_us() const { return prefill.total_us() + decode.total_us(); }
  double time_per_output_token_us() const { return decode_steps == 0 ? 0.0 : decode.total_us() / decode_steps; }
};

// The request from its layers: `prefill_layers` each layer's prefill (attention and FFN),
// `decode_layers` each layer's decode step without its attention (the same every step),
// `decode_attention_us` one layer's attention at each decode step (its size is the step count),
// and the output head's once per prefill and per decode step.
InferenceRequest compose_inference_request(const std::vector<StepParts>& prefill_layers, const StepParts& prefill_head,
                                           const std::vector<StepParts>& decode_layers, const StepParts& decode_head,
                                           const std::vector<double>& decode_attention_us);

// Runs the scenario's inference request for every scheme: report.json's `step`. `on_progress`
// (may be empty) is told what runs. `passed` is false when a simulated layer failed.
nlohmann::json run_inference_request(const Scenario& scenario,
                                     const std::function<void(const std::string&)>& on_progress);

}  // namespace nvsvp::platform
