// A training step's composition (platform/model_step.hpp) against hand-worked sums: one stage
// runs every micro batch's passes back to back, equal stages meet 1F1B's closed form with the
// parts adding up to the step, the layers split evenly over the stages, the sampled layers are
// evenly spaced, each layer draws its own routing, and a part's backward does its work again.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "../common/test_workloads.hpp"
#include "nvsvp/fw/model_parts.hpp"
#include "nvsvp/platform/model_inference.hpp"
#include "nvsvp/platform/model_step.hpp"

namespace nvsvp::platform {
namespace {

LayerPasses passes(double attention, double moe_compute, double exposed, double scale_backward) {
  LayerPasses p;
  p.forward.attention_us = attention;
  p.forward.moe_compute_us = moe_compute;
  p.forward.exposed_comm_us = exposed;
  p.backward = p.forward.scaled(scale_backward);
  return p;
}

TEST(ModelStep, OneStageRunsEveryMicroBatchBackToBack) {
  const std::vector<LayerPasses> layers = {passes(10, 20, 5, 2.0), passes(10, 30, 1, 2.5)};
  LayerPasses head;
  head.forward.dense_us = 7;
  head.backward.dense_us = 14;
  const TrainingStep step = compose_training_step(layers, head, {1, 3, 0.0});
  // Per micro batch: forward 35 + 41 + 7, backward 70 + 102.5 + 14.
  const double per_micro_batch = 35 + 41 + 7 + 70 + 102.5 + 14;
  EXPECT_DOUBLE_EQ(step.timing.step_us, 3 * per_micro_batch);
  EXPECT_DOUBLE_EQ(step.timing.mean_bubble_us, 0.0);
  EXPECT_DOUBLE_EQ(step.busy.attention_us, 3 * (10 + 10 + 20 + 25));
  EXPECT_DOUBLE_EQ(step.busy.moe_compute_us, 3 * (20 + 30 + 40 + 75));
  EXPECT_DOUBLE_EQ(step.busy.exposed_comm_us, 3 * (5 + 1 + 10 + 2.5));
  EXPECT_DOUBLE_EQ(step.busy.dense_us, 3 * 21);
  EXPECT_DOUBLE_EQ(step.busy.total_us(), step.timing.step_us);
}

TEST(ModelStep, EqualStagesMeetTheOneFOneBClosedFormAndThePartsAddUp) {
  // Four equal layers over two stages, no head: each stage F = 2 x 30, B = 2 x 60.
  const std::vector<LayerPasses> layers(4, passes(10, 15, 5, 2.0));
  const TrainingStep step = compose_training_step(layers, LayerPasses{}, {2, 8, 0.0});
  const double f = 60, b = 120;
  EXPECT_DOUBLE_EQ(step.timing.step_us, 8 * (f + b) + (2 - 1) * (f + b));
  EXPECT_DOUBLE_EQ(step.timing.mean_bubble_us, f + b);
  EXPECT_DOUBLE_EQ(step.busy.total_us() + step.timing.mean_bubble_us, step.timing.step_us);
  EXPECT_EQ(step.first_layer, (std::vector<uint32_t>{0, 2, 4}));
}

TEST(ModelStep, LayersSplitEvenlyAndTheHeadJoinsTheLastStage) {
  const std::vector<LayerPasses> layers(5, passes(1, 0, 0, 1.0));
  LayerPasses head;
  head.forward.dense_us = 100;
  const TrainingStep step = compose_training_step(layers, head, {2, 1, 0.0});
  EXPECT_EQ(step.first_layer, (std::vector<uint32_t>{0, 2, 5}));
  // Stage 0: 2 layers (2 forward + 2 backward); stage 1: 3 layers and the head.
  ASSERT_EQ(step.timing.busy_us.size(), 2u);
  EXPECT_DOUBLE_EQ(step.timing.busy_us[0], 4.0);
  EXPECT_DOUBLE_EQ(step.timing.busy_us[1], 106.0);
  EXPECT_THROW(compose_training_step(layers, head, {6, 1, 0.0}), std::invalid_argument);
}

TEST(ModelStep, DualPipeHidesEachPassesCommunicationBehindTheOthersCompute) {
  // Layer 0: forward compute 30 (attention 10, MoE 20) and communication 50, backward twice that;
  // layer 1: compute 15 and communication 1, backward twice. Head: 7 forward, 14 backward.
  const std::vector<LayerPasses> layers = {passes(10, 20, 50, 2.0), passes(10, 5, 1, 2.0)};
  LayerPasses head;
  head.forward.dense_us = 7;
  head.backward.dense_us = 14;
  const double slowdown = 1.25;
  const TrainingStep step = compose_dualpipe_step(layers, head, 4, slowdown);
  // Alone: the first forward (80 + 16 + 7) and the last backward (14 + 32 + 160).
  const double alone = 80 + 16 + 7 + 14 + 32 + 160;
  // Pairs, forward's k-th beside backward's k-th: (layer 0 F, head B), (layer 1 F, layer 1 B),
  // (head F, layer 0 B); each the longer of the computes (slowed) and the communications.
  const double pair0 = std::max(1.25 * (30 + 14), 50.0);
  const double pair1 = std::max(1.25 * (15 + 30), 1.0 + 2.0);
  const double pair2 = std::max(1.25 * (7 + 60), 100.0);
  EXPECT_DOUBLE_EQ(step.timing.step_us, alone + 3 * (pair0 + pair1 + pair2));
  EXPECT_DOUBLE_EQ(step.busy.total_us(), step.timing.step_us);
  // Exposed: all of it alone; in the pairs only the third's communication beyond its compute.
  EXPECT_DOUBLE_EQ(step.busy.exposed_comm_us, (50 + 1 + 2 + 100) + 3 * (100 - 83.75));
  // Attention: 60 alone, and each pair's (10 + 0, 10 + 20, 0 + 20) slowed.
  EXPECT_DOUBLE_EQ(step.busy.attention_us, 60 + 3 * 1.25 * 60);
  // One micro batch: its forward and backward alone.
  EXPECT_DOUBLE_EQ(compose_dualpipe_step(layers, head, 1, slowdown).timing.step_us, alone);
  EXPECT_THROW(compose_dualpipe_step({}, head, 1, slowdown), std::invalid_argument);
}

// DualPipe over two ranks: rank 0 holds stage 0 (layers 0, 1) of the micro batches that enter
// there and stage 1 (layers 2, 3 and the head) of those that enter at rank 1; rank 1 the other way.
TEST(ModelStep, DualPipeOverStagesTimesEachRanksTwoStagesAndItsPairs) {
  LayerPasses layer = passes(10, 15, 5, 2.0);  // F: compute 25, comm 5; B: compute 50, comm 10
  layer.weight.attention_us = 10;
  layer.weight.moe_compute_us = 15;
  const std::vector<LayerPasses> layers(4, layer);
  LayerPasses head;
  head.forward.dense_us = 7;
  head.backward.dense_us = 14;
  head.weight.dense_us = 7;
  const double s = 1.25;
  const PipelineSpec spec{2, 4, 3.0};
  const TrainingStep step = compose_dualpipe_pipeline_step(layers, head, spec, s);
  EXPECT_EQ(step.first_layer, (std::vector<uint32_t>{0, 2, 4}));
  // Stage 0: F 60, whole B 120, W 50; stage 1: F 67, whole B 134, W 57.
  const StageCosts stage0{60, 120 - 50, 50}, stage1{67, 134 - 57, 57};
  // A forward of stage 0 beside a backward of stage 1: (L0 F, head B), (L1 F, L3 B), then L2 B
  // alone; of stage 1 beside stage 0's: (L2 F, L1 B), (L3 F, L0 B), then the head's F alone.
  const double f0_beside_b1 = std::max(s * (25 + 14), 5.0) + std::max(s * (25 + 50), 15.0) + 60;
  const double f1_beside_b0 = 2 * std::max(s * (25 + 50), 15.0) + 7;
  std::vector<DualPipeRankCosts> costs(2);
  costs[0].direction = {stage0, stage1};
  costs[0].forward_backward_us = {f0_beside_b1, f1_beside_b0};
  costs[1].direction = {stage1, stage0};
  costs[1].forward_backward_us = {f1_beside_b0, f0_beside_b1};
  const PipelineTiming expected = time_dualpipe(spec, costs);
  EXPECT_DOUBLE_EQ(step.timing.step_us, expected.step_us);
  EXPECT_EQ(step.timing.busy_us, expected.busy_us);
  // The parts add up to each rank's busy time on average, and with the bubble to the step.
  EXPECT_NEAR(step.busy.total_us(), (expected.busy_us[0] + expected.busy_us[1]) / 2, 1e-9);
  EXPECT_NEAR(step.busy.total_us() + step.timing.mean_bubble_us, step.timing.step_us, 1e-9);
  EXPECT_THROW(compose_dualpipe_pipeline_step(layers, head, {2, 3, 0.0}, s), std::invalid_argument);
  EXPECT_THROW(compose_dualpipe_pipeline_step(layers, head, {3, 6, 0.0}, s), std::invalid_argument);
}

TEST(ModelStep, SampledLayersAreEvenlySpacedFirstToLast) {
  EXPECT_EQ(sampled_moe_layers(58, 4), (std::vector<uint32_t>{0, 19, 38, 57}));
  EXPECT_EQ(sampled_moe_layers(58, 2), (std::vector<uint32_t>{0, 57}));
  EXPECT_EQ(sampled_moe_layers(5, 1), (std::vector<uint32_t>{2}));
  EXPECT_EQ(sampled_moe_layers(3, 0), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(sampled_moe_layers(3, 3), (std::vector<uint32_t>{0, 1, 2}));
}

TEST(ModelStep, EveryLayerDrawsItsOwnRouting) {
  const WorkloadSpec zipf = test::generated_workload(64, 8, 128, "zipf", 11);
  EXPECT_EQ(workload_of_layer(zipf, 0).routing.seed, 11u);
  EXPECT_EQ(workload_of_layer(zipf, 5).routing.seed, 16u);
  WorkloadSpec drifting = test::generated_workload(64, 8, 128, "drifting", 11);
  EXPECT_EQ(workload_of_layer(drifting, 5).routing.layer, 5u);
  EXPECT_EQ(workload_of_layer(drifting, 5).routing.seed, 11u);
}

TEST(ModelStep, APartsBackwardDoesItsWorkAgainAndAccumulatesItsGradients) {
  const hw::Task forward = hw::Task::compute(0, 1000.0, hw::Precision::fp8, 64);
  const hw::Task linear = fw::backward_task(forward, fw::kLinearBackwardFactor, 10);
  EXPECT_DOUBLE_EQ(linear.flops, 2000.0);
  EXPECT_EQ(linear.memory_bytes, 2u * 64 + 8u * 10);
  EXPECT_EQ(linear.precision, hw::Precision::fp8);
  const hw::Task core = fw::backward_task(forward, fw::kAttentionCoreBackwardFactor, 0);
  EXPECT_DOUBLE_EQ(core.flops, 2500.0);
  EXPECT_EQ(core.memory_bytes, 160u);
}

// An inference request: the prefill once (every layer and the head), then per decode step every
// layer's decode FFN and attention at that step's context and the head.
TEST(InferenceRequest, PrefillOnceThenEveryDecodeStepAtItsContext) {
  auto parts = [](double attention, double dense, double moe, double exposed) {
    StepParts p;
    p.attention_us = attention;
    p.dense_us = dense;
    p.moe_compute_us = moe;
    p.exposed_comm_us = exposed;
    return p;
  };
  const std::vector<StepParts> prefill{parts(10, 40, 0, 0), parts(10, 0, 30, 5), parts(10, 0, 20, 15)};
  const std::vector<StepParts> decode{parts(0, 4, 0, 0), parts(0, 0, 3, 2), parts(0, 0, 1, 6)};
  const StepParts head = parts(0, 7, 0, 0);
  const std::vector<double> attention{1.0, 1.5, 2.0, 2.5};  // one layer's, steps 1 .. 4
  const InferenceRequest r = compose_inference_request(prefill, head, decode, head, attention);
  EXPECT_DOUBLE_EQ(r.prefill.total_us(), 30 + 40 + 35 + 35 + 7);
  EXPECT_EQ(r.decode_steps, 4u);
  // Per step: 4 + 5 + 7 of FFN, 7 of head; attention over the three layers: 3 x 7 in all.
  EXPECT_DOUBLE_EQ(r.decode.attention_us, 3 * 7.0);
  EXPECT_DOUBLE_EQ(r.decode.dense_us, 4 * (4 + 7.0));
  EXPECT_DOUBLE_EQ(r.decode.moe_compute_us, 4 * 4.0);
  EXPECT_DOUBLE_EQ(r.decode.exposed_comm_us, 4 * 8.0);
  EXPECT_DOUBLE_EQ(r.request_us(), 147 + 21 + 44 + 16 + 32);
  EXPECT_DOUBLE_EQ(r.time_per_output_token_us(), (21 + 44 + 16 + 32) / 4.0);
  EXPECT_THROW(compose_inference_request(prefill, head, {}, head, attention), std::invalid_argument);
}

}  // namespace
}  // namespace nvsvp::platform
