#include "nvsvp/fw/model_parts.hpp"

#include <stdexcept>
#include <string>

namespace nvsvp::fw {

namespace {

struct HeadShape {
  double query_heads = 0;
  double key_value_heads = 0;
  double qk_dim = 0;  // per head: what a query and a key share
  double v_dim = 0;   // per head: a value
};

HeadShape head_shape(const MoeModel& m) {
  const AttentionShape& a = m.attention;
  if (a.kind == "mla") return {double(m.heads), double(m.heads), double(a.qk_nope_head_dim) + a.qk_rope_head_dim,
                               double(a.v_head_dim)};
  if (a.kind == "mha") {
    const double head_dim = a.head_dim != 0 ? a.head_dim : double(m.hidden) / m.heads;
    return {double(m.heads), double(a.kv_heads != 0 ? a.kv_heads : m.heads), head_dim, head_dim};
  }
  throw std::invalid_argument("model " + m.name + ": no attention given (model.attention.kind mha or mla)");
}

}  // namespace

uint64_t attention_parameters(const MoeModel& m) {
  const AttentionShape& a = m.attention;
  const uint64_t h = m.hidden;
  if (a.kind == "mla") {
    // Queries through a low-rank bottleneck; keys and values compressed to kv_lora_rank plus a
    // rotary key shared by the heads, then expanded per head; the output from the heads' values.
    const uint64_t heads = m.heads;
    return h * a.q_lora_rank + uint64_t{a.q_lora_rank} * heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) +
           h * (a.kv_lora_rank + a.qk_rope_head_dim) +
           uint64_t{a.kv_lora_rank} * heads * (a.qk_nope_head_dim + a.v_head_dim) + heads * a.v_head_dim * h;
  }
  const HeadShape s = head_shape(m);
  const auto q = static_cast<uint64_t>(s.query_heads * s.qk_dim);
  const auto kv = static_cast<uint64_t>(s.key_value_heads * s.qk_dim);
  return h * q + 2 * h * kv + q * h;
}

double attention_core_macs_per_token(const MoeModel& m, double context) {
  const HeadShape s = head_shape(m);
  return s.query_heads * (s.qk_dim + s.v_dim) * context;
}

double causal_prefill_context(uint32_t sequence_length) { return (static_cast<double>(sequence_length) + 1.0) / 2.0; }

AttentionTasks attention_tasks(const MoeModel& m, uint64_t tokens, double context, WeightDtype linear_dtype) {
  const HeadShape s = head_shape(m);
  const double t = static_cast<double>(tokens);
  // The projections read their weights once and each token's input, and write its output and its
  // queries, keys and values; the core reads those (keys and values once per query block, as a
  // fused attention kernel keeps them on chip) and writes the heads' outputs.
  const double qkv_width = s.query_heads * s.qk_dim + s.key_value_heads * (s.qk_dim + s.v_dim);
  const double heads_out = s.query_heads * s.v_dim;
  const auto projection_bytes = weight_bytes(linear_dtype, attention_parameters(m)) +
                                static_cast<uint64_t>(t * (2.0 * m.hidden + qkv_width + heads_out) * kActivationBytes);
  const auto core_bytes = static_cast<uint64_t>(t * (qkv_width + heads_out) * kActivationBytes);
  return {hw::Task::compute(0, 2.0 * static_cast<double>(attention_parameters(m)) * t, gemm_precision(linear_dtype),
                            projection_bytes),
          hw::Task::compute(0, 2.0 * attention_core_macs_per_token(m, context) * t, hw::Precision::bf16, core_bytes)};
}

uint64_t kv_cache_bytes_per_token(const MoeModel& m) {
  const AttentionShape& a = m.attention;
  if (a.kind == "mla") return (uint64_t{a.kv_lora_rank} + a.qk_rope_head_dim) * kActivationBytes;
  const HeadShape s = head_shape(m);
  return static_cast<uint64_t>(s.key_value_heads * (s.qk_dim + s.v_dim)) * kActivationBytes;
}

AttentionTasks decode_attention_tasks(const MoeModel& m, uint64_t tokens, double context, WeightDtype linear_dtype) {
  const HeadShape s = head_shape(m);
  const AttentionShape& a = m.attention;
  const double t = static_cast<double>(tokens);
  // Per head, what a query multiplies with a cached token and what a value contributes.
  const double score_dim = a.kind == "mla" ? double(a.kv_lora_rank) + a.qk_rope_head_dim : s.qk_dim;
  const double value_dim = a.kind == "mla" ? double(a.kv_lora_rank) : s.v_dim;
  const double macs = s.query_heads * (score_dim + value_dim) * context;
  const double cache_read = static_cast<double>(kv_cache_bytes_per_token(m)) * context;
  const double queries_and_outputs = s.query_heads * (score_dim + value_dim) * kActivationBytes;
  const auto core_bytes = static_cast<uint64_t>(t * (cache_read + queries_and_outputs));
  return {attention_tasks(m, tokens, context, linear_dtype).projections,
          hw::Task::compute(0, 2.0 * macs * t, hw::Precision::bf16, core_bytes)};
}

hw::Task dense_ffn_task(const MoeModel& m, uint64_t tokens, WeightDtype linear_dtype) {
  if (m.dense_hidden == 0) throw std::invalid_argument("model " + m.name + ": no dense FFN given (model.dense_hidden)");
  const uint64_t parameters = 3ull * m.hidden * m.dense_hidden;  // gate, up and down
  const double t = static_cast<double>(tokens);
  const auto bytes = weight_bytes(linear_dtype, parameters) +
                     static_cast<uint64_t>(t * (2.0 * m.hidden + 3.0 * m.dense_hidden) * kActivationBytes);
  return hw::Task::compute(0, 2.0 * static_cast<double>(parameters) * t, gemm_precision(linear_dtype), bytes);
}

hw::Task output_head_task(const MoeModel& m, uint64_t tokens, WeightDtype linear_dtype) {
  if (m.vocab == 0) throw std::invalid_argument("model " + m.name + ": no output head given (model.vocab)");
  const uint64_t parameters = uint64_t{m.hidden} * m.vocab;
  const double t = static_cast<double>(tokens);
  const auto bytes = weight_bytes(linear_dtype, parameters) +
                     static_cast<uint64_t>(t * (static_cast<double>(m.hidden) + m.vocab) * kActivationBytes);
  return hw::Task::compute(0, 2.0 * static_cast<double>(parameters) * t, gemm_precision(linear_dtype), bytes);
}

hw::Task backward_task(const hw::Task& forward, double flops_factor, uint64_t parameters) {
  hw::Task backward = forward;
  backward.flops = forward.flops * flops_factor;
  backward.memory_bytes = static_cast<uint64_t>(static_cast<double>(forward.memory_bytes) * flops_factor) +
                          kGradientAccumulationBytes * parameters;
  return backward;
}

}  // namespace nvsvp::fw
