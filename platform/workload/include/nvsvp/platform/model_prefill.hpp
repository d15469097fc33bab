// The whole model's prefill of one serving iteration, per GPU: the MoE
// layers' time, simulated, composed with the parts around them (attention, the dense layers' FFN,
// the output head) timed on the GPU model's roofline (model::task_seconds). A stream with
// simulated iterations reports it per replication policy (docs/configuration.md#stream).
#pragma once

#include <nlohmann/json.hpp>

#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// The parts of one iteration's prefill besides the MoE layers, per GPU.
struct PrefillParts {
  uint32_t dense_layers = 0;
  uint32_t moe_layers = 0;
  double context = 0.0;          // tokens a token attends, on average (causal prefill)
  double attention_us = 0.0;     // one layer's attention (projections and core)
  double dense_ffn_us = 0.0;     // one dense layer's FFN
  double output_head_us = 0.0;   // the logits of each sequence's last token
};

// Throws ConfigError (naming the model keys) when the model does not give its layers and attention.
PrefillParts prefill_parts(const Scenario& scenario);

// The prefill of the whole model per scheme and policy, from the stream's mean simulated MoE-layer
// times (`layer_time_gains`, as run_replication_stream writes it): the model's time per iteration,
// tokens per second over the GPUs, and iser's gains. Null when the model gives no layers.
nlohmann::json prefill_estimate(const Scenario& scenario, const nlohmann::json& layer_time_gains);

}  // namespace nvsvp::platform
