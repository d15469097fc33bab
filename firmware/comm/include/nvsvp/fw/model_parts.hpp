// The work of a transformer layer besides its MoE, per GPU: attention (data-parallel: each GPU its
// own tokens), a dense layer's FFN and the output head, as GPU compute tasks (FLOPs and HBM
// bytes) that the GPU model's roofline times (model::task_seconds). Plain arithmetic; SystemC-free.
// The formulas are in docs/models/model_parts.md.
#pragma once

#include <cstdint>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

// The linear layers around the experts (attention's projections, the dense FFN, the output head)
// are fp8 GEMMs, DeepSeek-V3's practice, whatever format the experts' weights have.
inline constexpr WeightDtype kLinearLayerDtype = WeightDtype::fp8;

// Multiply-adds per token of the attention core (scores and the weighted sum of values) for a
// query that attends `context` tokens.
double attention_core_macs_per_token(const MoeModel& model, double context);
// Parameters of a layer's attention projections.
uint64_t attention_parameters(const MoeModel& model);

// The mean context a token attends in the causal prefill of sequences of `sequence_length`
// tokens: (sequence_length + 1) / 2.
double causal_prefill_context(uint32_t sequence_length);

// `tokens` tokens of one GPU through a layer's attention, each attending `context` tokens: its
// projections (GEMMs of weights in `linear_dtype`) and its core (scores, softmax and the weighted
// values, in bf16 as FlashAttention-class kernels run). Throws std::invalid_argument when the model
// gives no attention.
struct AttentionTasks {
  hw::Task projections;
  hw::Task core;
};
AttentionTasks attention_tasks(const MoeModel& model, uint64_t tokens, double context, WeightDtype linear_dtype);

// One token's keys and values in one layer's KV cache, bf16: MLA's compressed latent and rotary
// key (kv_lora_rank + qk_rope_head_dim), else kv_heads x (key + value) dimensions.
uint64_t kv_cache_bytes_per_token(const MoeModel& model);

// A decode step's attention on one GPU: `tokens` sequences' next token each, attending `context`
// tokens of its own KV cache. The projections as attention_tasks' (their weights read once for
// the batch); the core reads each sequence's cache and appends the new token's. MLA runs in its
// absorbed form (FlashMLA's): the heads' queries and outputs stay in the latent space, so a cached
// token is never expanded per head and its scores and values take kv_lora_rank + rope and
// kv_lora_rank multiply-adds per head.
AttentionTasks decode_attention_tasks(const MoeModel& model, uint64_t tokens, double context, WeightDtype linear_dtype);

// `tokens` tokens of one GPU through a dense layer's FFN (gate, up and down projections of
// dense_hidden, weights in `linear_dtype`). Throws std::invalid_argument when dense_hidden is 0.
hw::Task dense_ffn_task(const MoeModel& model, uint64_t tokens, WeightDtype linear_dtype);

// `tokens` rows of logits through the output head (hidden x vocab, weights in `linear_dtype`).
// Throws std::invalid_argument when vocab is 0.
hw::Task output_head_task(const MoeModel& model, uint64_t tokens, WeightDtype linear_dtype);

// The backward pass of a part whose forward is `forward` over `parameters` weights (0: none):
// `flops_factor` times its FLOPs (2 for a linear layer: data and weight gradients; 2.5 for the
// attention core: five matrix products to the forward's two, as FlashAttention-2's backward with
// the scores recomputed), `flops_factor` times its activation bytes, and its weight gradients
// accumulated in fp32 (8 bytes a parameter read and written).
hw::Task backward_task(const hw::Task& forward, double flops_factor, uint64_t parameters);
inline constexpr double kLinearBackwardFactor = 2.0;
inline constexpr double kAttentionCoreBackwardFactor = 2.5;

}  // namespace nvsvp::fw
