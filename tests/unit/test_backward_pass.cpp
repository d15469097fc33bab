// The backward pass of an MoE layer as every scheme plans it: the experts' GEMMs do twice the
// forward's FLOPs (data and weight gradients), the data gradients alone as much as the forward,
// and nothing but the experts' work changes with the pass.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "../common/test_workloads.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/platform/routing_generator.hpp"

namespace nvsvp {
namespace {

// 8 GPUs, 32 experts of model dimensions that are whole tiles (so padding is the tokens' alone),
// top-4 over a skewed routing: experts carry different token counts, some a partial last tile.
std::shared_ptr<fw::MoeLayerSpec> layer(fw::LayerPass pass, uint32_t shared_experts = 0) {
  platform::WorkloadSpec w = test::generated_workload(32, 4, 200, "zipf", 7);
  w.routing.exponent = 0.8;
  auto spec = std::make_shared<fw::MoeLayerSpec>();
  spec->model.name = "test";
  spec->model.hidden = 512;
  spec->model.moe_hidden = 256;
  spec->model.experts = 32;
  spec->model.top_k = 4;
  spec->top_k = 4;
  spec->tokens_per_gpu = 200;
  spec->software.tutel_degree = 2;
  spec->shared_experts = shared_experts;
  spec->pass = pass;
  spec->dispatch_dtype = pass == fw::LayerPass::backward ? fw::DataType::bf16 : fw::DataType::fp8;
  spec->routing = platform::generate_routing(w, 8);
  return spec;
}

struct GemmWork {
  double flops = 0.0;
  uint64_t tasks = 0;
};

GemmWork gemm_work(const fw::LayerPlan& plan) {
  GemmWork work;
  auto add = [&](const hw::WorkSequence& seq) {
    for (const hw::Task& t : seq.tasks) {
      if (t.kind != hw::TaskKind::gemm) continue;
      work.flops += static_cast<double>(t.thread_blocks) * t.flops_per_block;
      ++work.tasks;
    }
  };
  for (const hw::WorkSequence& seq : plan.sequences) add(seq);
  for (const auto& gpu : plan.extra_sequences) {
    for (const hw::WorkSequence& seq : gpu) add(seq);
  }
  return work;
}

TEST(BackwardPass, EverySchemesExpertGemmsDoTwiceTheForwardFlops) {
  const auto forward = layer(fw::LayerPass::forward);
  const auto backward = layer(fw::LayerPass::backward);
  ASSERT_EQ(forward->routing.expert_ids, backward->routing.expert_ids);
  // Independently: every expert's tokens padded to 128-row tiles, 6 x hidden x moe_hidden FLOPs a row forward.
  std::vector<uint64_t> per_expert(32, 0);
  for (uint16_t e : forward->routing.expert_ids) per_expert[e]++;
  double padded_rows = 0;
  for (uint64_t n : per_expert) padded_rows += std::ceil(n / 128.0) * 128.0;
  const double forward_flops = 6.0 * 512 * 256 * padded_rows;
  for (const std::string& scheme : fw::layer_scheme_names()) {
    SCOPED_TRACE(scheme);
    const GemmWork f = gemm_work(fw::build_layer(scheme, forward));
    const GemmWork b = gemm_work(fw::build_layer(scheme, backward));
    EXPECT_GT(f.flops, 0.0);
    EXPECT_NEAR(b.flops, 2.0 * f.flops, 1e-9 * f.flops);
    EXPECT_GT(b.tasks, f.tasks) << "the weight gradients are GEMMs of their own";
    // Tutel pads every expert to the capacity of its chunks, FasterMoE each source's rows apart:
    // more rows than the tokens'.
    if (scheme != "tutel" && scheme != "fastermoe") {
      EXPECT_NEAR(f.flops, forward_flops, 1e-9 * forward_flops);
    }
  }
}

double shared_expert_flops(const std::shared_ptr<fw::MoeLayerSpec>& spec) {
  const fw::ReplicationPhase phase = fw::build_replication_phase(*spec, fw::build_layer("deepep", spec));
  double flops = 0.0;
  for (const auto& gpu : phase.sequences) {
    for (const hw::WorkSequence& seq : gpu) {
      for (const hw::Task& t : seq.tasks) {
        if (t.kind == hw::TaskKind::gemm) flops += static_cast<double>(t.thread_blocks) * t.flops_per_block;
      }
    }
  }
  return flops;
}

TEST(BackwardPass, SharedExpertsBackwardDoTwiceTheirForwardFlops) {
  const double forward = shared_expert_flops(layer(fw::LayerPass::forward, 1));
  // One shared expert: each of 8 GPUs' 200 tokens padded to 256 rows.
  EXPECT_DOUBLE_EQ(forward, 8 * 6.0 * 512 * 256 * 256);
  EXPECT_DOUBLE_EQ(shared_expert_flops(layer(fw::LayerPass::backward, 1)), 2.0 * forward);
}

TEST(BackwardPass, OnlyTheExpertsWorkChangesWithThePass) {
  auto forward = layer(fw::LayerPass::forward);
  auto backward = layer(fw::LayerPass::backward);
  forward->pure_communication = backward->pure_communication = true;
  forward->dispatch_dtype = fw::DataType::bf16;  // the gradients' wire format
  for (const std::string& scheme : {std::string("deepep"), std::string("dysharp"), std::string("ccfuser")}) {
    SCOPED_TRACE(scheme);
    const fw::LayerPlan f = fw::build_layer(scheme, forward);
    const fw::LayerPlan b = fw::build_layer(scheme, backward);
    EXPECT_EQ(f.token_copies, b.token_copies);
    EXPECT_EQ(f.remote_token_copies, b.remote_token_copies);
    EXPECT_EQ(f.expected_link_arrivals, b.expected_link_arrivals);
    uint64_t bytes_f = 0, bytes_b = 0;
    for (const hw::WorkSequence& s : f.sequences) {
      for (const hw::Task& t : s.tasks) bytes_f += t.kind == hw::TaskKind::send ? t.bytes : 0;
    }
    for (const hw::WorkSequence& s : b.sequences) {
      for (const hw::Task& t : s.tasks) bytes_b += t.kind == hw::TaskKind::send ? t.bytes : 0;
    }
    EXPECT_EQ(bytes_f, bytes_b);
  }
}

}  // namespace
}  // namespace nvsvp
