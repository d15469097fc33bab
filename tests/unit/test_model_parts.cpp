// The parts of a layer besides its MoE (fw/model_parts.hpp) against FLOPs and bytes worked out by
// hand from the models' public shapes, their time on the GPU model's roofline
// (model::task_seconds), and a stream's whole-model prefill composed from them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "../common/source_paths.hpp"
#include "nvsvp/fw/model_parts.hpp"
#include "nvsvp/model/task_timing.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/model_prefill.hpp"

namespace nvsvp {
namespace {

const std::string kConfigDir = std::string(NVSVP_SOURCE_DIR) + "/configs";

// DeepSeek-V3's layer (model preset L): hidden 7168, 128 heads, MLA with q_lora_rank 1536,
// kv_lora_rank 512, qk_nope 128, qk_rope 64, v_head 128.
fw::MoeModel deepseek_v3() {
  fw::MoeModel m;
  m.name = "L";
  m.hidden = 7168;
  m.moe_hidden = 2048;
  m.heads = 128;
  m.sequence_length = 8192;
  m.layers = 61;
  m.dense_layers = 3;
  m.dense_hidden = 18432;
  m.vocab = 129280;
  m.attention = {"mla", 0, 0, 1536, 512, 128, 64, 128};
  return m;
}

TEST(ModelParts, MlaProjectionsAreDeepSeekV3sAttentionParameters) {
  // q down 7168x1536, q up 1536x(128x192), kv down 7168x(512+64), kv up 512x(128x256), out (128x128)x7168.
  const uint64_t expected = 7168ull * 1536 + 1536ull * 128 * 192 + 7168ull * 576 + 512ull * 128 * 256 +
                            128ull * 128 * 7168;
  EXPECT_EQ(expected, 187'105'280u);  // DeepSeek-V3's ~187 M attention parameters per layer
  EXPECT_EQ(fw::attention_parameters(deepseek_v3()), expected);
  // The core: per attended token, 128 heads x (192 for the score + 128 for the value).
  EXPECT_DOUBLE_EQ(fw::attention_core_macs_per_token(deepseek_v3(), 1000.0), 128.0 * 320.0 * 1000.0);
}

TEST(ModelParts, MhaWithAndWithoutGroupedKeysAndValues) {
  fw::MoeModel s;  // model S: hidden 2048, 32 heads of 64, as many key/value heads
  s.name = "S";
  s.hidden = 2048;
  s.heads = 32;
  s.attention.kind = "mha";
  EXPECT_EQ(fw::attention_parameters(s), 4ull * 2048 * 2048);
  EXPECT_DOUBLE_EQ(fw::attention_core_macs_per_token(s, 10.0), 32.0 * 128.0 * 10.0);
  fw::MoeModel g = s;  // 64 query heads of 128, 4 key/value heads (Qwen3-235B's grouping)
  g.hidden = 4096;
  g.heads = 64;
  g.attention = {"mha", 128, 4, 0, 0, 0, 0, 0};
  EXPECT_EQ(fw::attention_parameters(g), 4096ull * 8192 + 2ull * 4096 * 512 + 8192ull * 4096);
}

TEST(ModelParts, TasksCarryTheFlopsBytesAndPrecisions) {
  const fw::MoeModel m = deepseek_v3();
  const uint64_t tokens = 4096;
  const double context = fw::causal_prefill_context(8192);
  EXPECT_DOUBLE_EQ(context, 4096.5);
  const fw::AttentionTasks a = fw::attention_tasks(m, tokens, context, fw::WeightDtype::fp8);
  EXPECT_DOUBLE_EQ(a.projections.flops, 2.0 * 187'105'280.0 * tokens);
  EXPECT_EQ(a.projections.precision, hw::Precision::fp8);
  EXPECT_DOUBLE_EQ(a.core.flops, 2.0 * 128.0 * 320.0 * context * tokens);
  EXPECT_EQ(a.core.precision, hw::Precision::bf16);
  // The projections read their weights once (fp8: a byte each) and, per token in bf16, its input
  // and output (2 x 7168), its queries (128 x 192), keys (128 x 192) and values (128 x 128), and
  // the heads' outputs (128 x 128); the core reads the queries, keys, values and writes the outputs.
  const uint64_t per_token = 2 * 7168 + 128 * 192 + 128 * 320 + 128 * 128;
  EXPECT_EQ(a.projections.memory_bytes, 187'105'280u + tokens * per_token * 2);
  EXPECT_EQ(a.core.memory_bytes, tokens * (128 * 192 + 128 * 320 + 128 * 128) * 2);

  const hw::Task ffn = fw::dense_ffn_task(m, tokens, fw::WeightDtype::bf16);
  EXPECT_DOUBLE_EQ(ffn.flops, 2.0 * 3.0 * 7168.0 * 18432.0 * tokens);
  EXPECT_EQ(ffn.precision, hw::Precision::bf16);
  EXPECT_GE(ffn.memory_bytes, 2ull * 3 * 7168 * 18432);  // bf16 weights
  const hw::Task head = fw::output_head_task(m, 2, fw::WeightDtype::fp8);
  EXPECT_DOUBLE_EQ(head.flops, 2.0 * 7168.0 * 129280.0 * 2);
}

TEST(ModelParts, DecodeAttentionReadsEachSequencesCacheInMlasAbsorbedForm) {
  const fw::MoeModel m = deepseek_v3();
  // A cached token: the 512-wide latent and the 64-wide rotary key, bf16.
  EXPECT_EQ(fw::kv_cache_bytes_per_token(m), (512u + 64u) * 2u);
  const uint64_t sequences = 4;
  const double context = 1500.0;
  const fw::AttentionTasks d = fw::decode_attention_tasks(m, sequences, context, fw::WeightDtype::fp8);
  // The projections are the prefill's for as many tokens (the absorbed form reuses the weights).
  const fw::AttentionTasks a = fw::attention_tasks(m, sequences, context, fw::WeightDtype::fp8);
  EXPECT_DOUBLE_EQ(d.projections.flops, a.projections.flops);
  EXPECT_EQ(d.projections.memory_bytes, a.projections.memory_bytes);
  // Per head a score over 576 and a value of 512 per cached token; each sequence reads its cache
  // and its 128 heads' latent queries and outputs (bf16).
  EXPECT_DOUBLE_EQ(d.core.flops, 2.0 * 128.0 * (576.0 + 512.0) * context * sequences);
  EXPECT_EQ(d.core.memory_bytes, sequences * (1152ull * 1500 + 128ull * 1088 * 2));
  EXPECT_EQ(d.core.precision, hw::Precision::bf16);

  fw::MoeModel s;  // model S: 32 heads of 64, as many key/value heads
  s.name = "S";
  s.hidden = 2048;
  s.heads = 32;
  s.attention.kind = "mha";
  EXPECT_EQ(fw::kv_cache_bytes_per_token(s), 32u * (64u + 64u) * 2u);
  const fw::AttentionTasks sd = fw::decode_attention_tasks(s, 2, 100.0, fw::WeightDtype::fp8);
  EXPECT_DOUBLE_EQ(sd.core.flops, 2.0 * fw::attention_core_macs_per_token(s, 100.0) * 2);
  // MHA's decode core is bound by reading the cache (a FLOP per byte); MLA's by its math, its 128
  // heads sharing each cached latent (242 FLOPs per byte), as FlashMLA's compute-bound figures show.
  model::GpuParams gpu;
  const hw::Task mha = fw::decode_attention_tasks(s, 64, 32768.0, fw::WeightDtype::fp8).core;
  EXPECT_NEAR(model::task_seconds(gpu, mha, gpu.sms), static_cast<double>(mha.memory_bytes) / 4800e9, 1e-12);
  const hw::Task mla = fw::decode_attention_tasks(m, 64, 32768.0, fw::WeightDtype::fp8).core;
  EXPECT_NEAR(model::task_seconds(gpu, mla, gpu.sms), mla.flops / (989e12 * 0.66), 1e-12);
}

TEST(ModelParts, AModelWithoutItsPartsIsRefused) {
  fw::MoeModel bare;
  bare.name = "bare";
  bare.hidden = 1024;
  bare.heads = 8;
  EXPECT_THROW(fw::attention_tasks(bare, 16, 8.0, fw::WeightDtype::fp8), std::invalid_argument);
  EXPECT_THROW(fw::dense_ffn_task(bare, 16, fw::WeightDtype::fp8), std::invalid_argument);
  EXPECT_THROW(fw::output_head_task(bare, 16, fw::WeightDtype::fp8), std::invalid_argument);
}

TEST(ModelParts, RooflineTimesComputeBoundAndMemoryBoundTasks) {
  model::GpuParams gpu;  // H100-class defaults: 1979 fp8, 989 bf16 TFLOPS, 0.66 efficiency, 4800 GB/s
  const fw::MoeModel m = deepseek_v3();
  // Prefill: 4096 tokens' projections are compute-bound.
  const hw::Task big = fw::attention_tasks(m, 4096, 4096.5, fw::WeightDtype::fp8).projections;
  EXPECT_NEAR(model::task_seconds(gpu, big, gpu.sms), big.flops / (1979e12 * 0.66), 1e-12);
  // One token's projections are bound by reading the weights.
  const hw::Task one = fw::attention_tasks(m, 1, 1.0, fw::WeightDtype::fp8).projections;
  EXPECT_NEAR(model::task_seconds(gpu, one, gpu.sms), static_cast<double>(one.memory_bytes) / 4800e9, 1e-12);
}

TEST(ModelPrefill, ComposesTheModelFromItsLayersAndTheSimulatedMoeTimes) {
  const platform::Scenario scenario =
      platform::load_scenario(kConfigDir + "/scenarios/iser_stream_nvl72.yaml", {}, kConfigDir);
  const platform::PrefillParts parts = platform::prefill_parts(scenario);
  EXPECT_EQ(parts.dense_layers, 3u);
  EXPECT_EQ(parts.moe_layers, 58u);
  // Attention of 16384 tokens per GPU, worked out here from the preset's GPU.
  const model::GpuParams& gpu = scenario.platform.gpu;
  const double proj_s = 2.0 * 187'105'280.0 * 16384 / (gpu.fp8_tflops * 1e12 * gpu.gemm_efficiency);
  const double core_s = 2.0 * 128.0 * 320.0 * 4096.5 * 16384 / (gpu.bf16_tflops * 1e12 * gpu.gemm_efficiency);
  EXPECT_NEAR(parts.attention_us, (proj_s + core_s) * 1e6, 1e-6);

  const nlohmann::json gains = {{"deepep",
                                 {{"none_layer_time_us", 300.0},
                                  {"static_layer_time_us", 200.0},
                                  {"iser_layer_time_us", 150.0}}}};
  const nlohmann::json prefill = platform::prefill_estimate(scenario, gains);
  const double around = 3 * (parts.attention_us + parts.dense_ffn_us) + 58 * parts.attention_us + parts.output_head_us;
  const nlohmann::json& deepep = prefill["schemes"]["deepep"];
  EXPECT_NEAR(deepep["policies"]["none"]["model_time_us"].get<double>(), around + 58 * 300.0, 1e-6);
  EXPECT_NEAR(deepep["policies"]["iser"]["model_time_us"].get<double>(), around + 58 * 150.0, 1e-6);
  EXPECT_NEAR(deepep["iser_gain_over_static"].get<double>(), (around + 58 * 200.0) / (around + 58 * 150.0) - 1.0,
              1e-12);
  const double tokens = 16384.0 * 64;
  EXPECT_NEAR(deepep["policies"]["none"]["tokens_per_second"].get<double>(),
              tokens / ((around + 58 * 300.0) * 1e-6), 1e-3);

  platform::Scenario bare = scenario;
  bare.workload.model.layers = 0;
  EXPECT_TRUE(platform::prefill_estimate(bare, gains).is_null());
  bare.workload.model.layers = 61;
  bare.workload.model.attention.kind.clear();
  EXPECT_THROW(platform::prefill_parts(bare), platform::ConfigError);
}

}  // namespace
}  // namespace nvsvp
