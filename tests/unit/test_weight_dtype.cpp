// workload.weight_dtype in the firmware: the HBM bytes of a count of weights per format, the bytes
// one expert's weights take (what replication broadcasts), and the precision and weight bytes of
// the routed and shared experts' GEMM tasks a layer's plan carries.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/fw/replication_phase.hpp"

namespace nvsvp::fw {
namespace {

// DeepSeek-V3's routed expert: hidden 7168, moe_hidden 2048, three projections.
constexpr uint64_t kDeepSeekExpertParameters = 3ull * 7168 * 2048;  // 44,040,192

TEST(WeightDtype, BytesOfDeepSeekV3ExpertWeightsPerFormat) {
  EXPECT_EQ(kDeepSeekExpertParameters, 44'040'192u);
  EXPECT_EQ(weight_bytes(WeightDtype::fp8, kDeepSeekExpertParameters), 44'040'192u);
  // 4 bits a value (22,020,096 bytes) and one 1-byte scale per 16 values (2,752,512 bytes).
  EXPECT_EQ(weight_bytes(WeightDtype::fp4, kDeepSeekExpertParameters), 24'772'608u);
  EXPECT_EQ(weight_bytes(WeightDtype::bf16, kDeepSeekExpertParameters), 88'080'384u);
  MoeModel model;
  model.hidden = 7168;
  model.moe_hidden = 2048;
  EXPECT_EQ(expert_weight_bytes(model, WeightDtype::fp8), 44'040'192u);
  EXPECT_EQ(expert_weight_bytes(model, WeightDtype::fp4), 24'772'608u);
  EXPECT_EQ(expert_weight_bytes(model, WeightDtype::bf16), 88'080'384u);
}

TEST(WeightDtype, Fp4BytesRoundDownOnPartialGroups) {
  // Integer arithmetic: 17 values are 8 bytes of values and one scale.
  EXPECT_EQ(weight_bytes(WeightDtype::fp4, 17), 9u);
  EXPECT_EQ(weight_bytes(WeightDtype::fp4, 16), 9u);
  EXPECT_EQ(weight_bytes(WeightDtype::fp4, 0), 0u);
}

TEST(WeightDtype, NamesParseBackAndOthersAreRefused) {
  for (WeightDtype type : {WeightDtype::fp4, WeightDtype::fp8, WeightDtype::bf16}) {
    WeightDtype parsed = type == WeightDtype::fp8 ? WeightDtype::bf16 : WeightDtype::fp8;
    ASSERT_TRUE(parse_weight_dtype(to_string(type), parsed)) << to_string(type);
    EXPECT_EQ(parsed, type);
  }
  WeightDtype untouched = WeightDtype::fp4;
  EXPECT_FALSE(parse_weight_dtype("fp32", untouched));
  EXPECT_FALSE(parse_weight_dtype("nvfp4", untouched));
  EXPECT_EQ(untouched, WeightDtype::fp4);
}

TEST(WeightDtype, GemmPrecisionFollowsTheWeights) {
  EXPECT_EQ(gemm_precision(WeightDtype::fp4), hw::Precision::fp4);
  EXPECT_EQ(gemm_precision(WeightDtype::fp8), hw::Precision::fp8);
  EXPECT_EQ(gemm_precision(WeightDtype::bf16), hw::Precision::bf16);
}

// 2 GPUs, 4 experts (2 per GPU), top-1, 4 tokens per GPU, every expert busy; one shared expert.
std::shared_ptr<MoeLayerSpec> weight_small_layer(WeightDtype dtype) {
  auto spec = std::make_shared<MoeLayerSpec>();
  spec->model.name = "tiny";
  spec->model.hidden = 256;
  spec->model.moe_hidden = 64;
  spec->model.experts = 4;
  spec->model.top_k = 1;
  spec->top_k = 1;
  spec->tokens_per_gpu = 4;
  spec->shared_experts = 1;
  spec->weight_dtype = dtype;
  spec->routing.gpus = 2;
  spec->routing.experts = 4;
  spec->routing.top_k = 1;
  spec->routing.tokens_per_gpu = 4;
  spec->routing.expert_ids = {0, 1, 2, 3, 3, 2, 1, 0};
  return spec;
}

// The GEMM tasks of GPU 0's plan (its sequence and its other streams' sequences), in order.
std::vector<hw::Task> gemm_tasks(const LayerPlan& plan) {
  std::vector<hw::Task> gemms;
  auto collect = [&](const hw::WorkSequence& seq) {
    for (const hw::Task& t : seq.tasks) {
      if (t.kind == hw::TaskKind::gemm) gemms.push_back(t);
    }
  };
  collect(plan.sequences.at(0));
  if (!plan.extra_sequences.empty()) {
    for (const hw::WorkSequence& seq : plan.extra_sequences.at(0)) collect(seq);
  }
  return gemms;
}

TEST(WeightDtype, ExpertGemmTasksCarryThePrecisionAndWeightBytesOfTheWeights) {
  const LayerPlan fp8 = build_layer("deepep", weight_small_layer(WeightDtype::fp8));
  const std::vector<hw::Task> fp8_gemms = gemm_tasks(fp8);
  ASSERT_EQ(fp8_gemms.size(), 2u);  // GEMM-1 and GEMM-2 of GPU 0's two experts
  // Both local experts are busy; GEMM-1 reads gate and up (2 x 256 x 64 each), GEMM-2 down.
  const uint64_t up_parameters = 2ull * 2 * 256 * 64;
  const uint64_t down_parameters = 2ull * 256 * 64;
  for (WeightDtype dtype : {WeightDtype::fp4, WeightDtype::fp8, WeightDtype::bf16}) {
    SCOPED_TRACE(to_string(dtype));
    const std::vector<hw::Task> gemms = gemm_tasks(build_layer("deepep", weight_small_layer(dtype)));
    ASSERT_EQ(gemms.size(), 2u);
    for (const hw::Task& gemm : gemms) EXPECT_EQ(gemm.precision, gemm_precision(dtype));
    // Only the weights' share of the memory floor moves with the format; the tokens' does not.
    EXPECT_EQ(gemms[0].memory_bytes - weight_bytes(dtype, up_parameters),
              fp8_gemms[0].memory_bytes - up_parameters);
    EXPECT_EQ(gemms[1].memory_bytes - weight_bytes(dtype, down_parameters),
              fp8_gemms[1].memory_bytes - down_parameters);
    EXPECT_EQ(gemms[0].thread_blocks, fp8_gemms[0].thread_blocks);
    EXPECT_EQ(gemms[0].flops_per_block, fp8_gemms[0].flops_per_block);
  }
  EXPECT_EQ(fp8_gemms[0].precision, hw::Precision::fp8);
}

// The shared expert (every one of the GPU's 4 tokens) runs as the routed experts' GEMMs, in the
// same format.
TEST(WeightDtype, SharedExpertGemmsCarryThePrecisionAndWeightBytesOfTheWeights) {
  for (WeightDtype dtype : {WeightDtype::fp4, WeightDtype::fp8, WeightDtype::bf16}) {
    SCOPED_TRACE(to_string(dtype));
    const std::shared_ptr<MoeLayerSpec> spec = weight_small_layer(dtype);
    const ReplicationPhase phase = build_replication_phase(*spec, build_layer("deepep", spec));
    ASSERT_EQ(phase.sequences.size(), 2u);
    ASSERT_EQ(phase.sequences[0].size(), 1u);  // no broadcast: the shared expert's stream only
    const std::vector<hw::Task>& tasks = phase.sequences[0][0].tasks;
    std::vector<hw::Task> gemms;
    for (const hw::Task& t : tasks) {
      if (t.kind == hw::TaskKind::gemm) gemms.push_back(t);
    }
    ASSERT_EQ(gemms.size(), 2u);
    const uint64_t token_bytes = 4 * vector_bytes(spec->dispatch_dtype, 256);
    const uint64_t output_bytes = 4 * vector_bytes(spec->combine_dtype, 256);
    EXPECT_EQ(gemms[0].precision, gemm_precision(dtype));
    EXPECT_EQ(gemms[1].precision, gemm_precision(dtype));
    EXPECT_EQ(gemms[0].memory_bytes, weight_bytes(dtype, 2ull * 256 * 64) + token_bytes);
    EXPECT_EQ(gemms[1].memory_bytes, weight_bytes(dtype, 1ull * 256 * 64) + output_bytes);
  }
}

}  // namespace
}  // namespace nvsvp::fw
