// A training step of a two-layer model end to end (the scenario's `step`): its time is the
// composition, worked out here, of the layers' simulated forward and backward times (each layer
// run again here as a scenario of its own, with its own routing seed) and the timed parts around
// them, over the micro batches of one stage; with sampling, the layers not simulated take the
// sampled ones' mean; under DualPipe over two stages, every scheme's step is the schedule of its
// simulated layers' passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/platform/model_step.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

// Model S cut to `layers` MoE layers (no dense one), 64 tokens per GPU on dgx-h100.
std::string model_step_scenario(uint32_t layers, uint64_t seed, const std::string& pass, const std::string& step) {
  return "name: step_test\n"
         "platform: {preset: dgx-h100}\n"
         "workload:\n"
         "  model: {preset: S, layers: " + std::to_string(layers) + ", dense_layers: 0}\n"
         "  tokens_per_gpu: 64\n"
         "  pass: " + pass + "\n"
         "  routing: {kind: zipf, exponent: 1.1, seed: " + std::to_string(seed) + "}\n"
         "schemes: [deepep, dysharp" + std::string(step.empty() ? "" : ", dualpipe") + "]\n" + step;
}

// The simulated time of model layer `layer`'s `pass`, run as a scenario of its own.
double step_layer_time_us(const test::TempDir& dir, uint32_t layer, const std::string& pass, const std::string& scheme) {
  const std::string name = "layer" + std::to_string(layer) + "_" + pass;
  const json report = test::run_scenario_text(dir, name, model_step_scenario(2, 40 + layer, pass, ""));
  return test::result_of(report, scheme).at("layer_time_us").get<double>();
}

double part_us(const json& step, const char* part, const char* pass, const char* field) {
  return step.at("parts").at(part).at(pass).at(field).get<double>();
}

// One micro batch's attention of one layer, and its output head, both passes.
double attention_both_passes_us(const json& step) {
  return part_us(step, "attention", "forward", "attention_us") + part_us(step, "attention", "backward", "attention_us");
}
double head_both_passes_us(const json& step) {
  return part_us(step, "output_head", "forward", "dense_us") + part_us(step, "output_head", "backward", "dense_us");
}

TEST(ModelStep, TwoLayerStepIsTheCompositionOfItsLayersAndTheSchedule) {
  test::TempDir dir;
  const json report = test::run_scenario_text(
      dir, "step", model_step_scenario(2, 40, "forward", "step: {kind: training, micro_batches: 3}\n"));
  ASSERT_TRUE(report.at("passed").get<bool>());
  const json& step = report.at("step");
  EXPECT_EQ(step.at("simulated_layers"), json::array({0, 1}));
  EXPECT_FALSE(step.at("sampled").get<bool>());
  EXPECT_EQ(step.at("runs").size(), 2u * 2u * 3u);  // layers x passes x schemes
  const double attention = attention_both_passes_us(step);
  const double head = head_both_passes_us(step);
  EXPECT_GT(attention, 0.0);
  EXPECT_GT(head, 0.0);
  for (const char* scheme : {"deepep", "dysharp"}) {
    SCOPED_TRACE(scheme);
    double moe = 0.0;
    for (uint32_t layer : {0u, 1u}) {
      for (const char* pass : {"forward", "backward"}) moe += step_layer_time_us(dir, layer, pass, scheme);
    }
    const json& s = step.at("schemes").at(scheme);
    // One stage: three micro batches, each through both layers and the head, both passes.
    const double expected = 3 * (2 * attention + moe + head);
    EXPECT_NEAR(s.at("step_time_us").get<double>(), expected, 1e-6 * expected);
    const json& b = s.at("breakdown");
    EXPECT_NEAR(b.at("moe_compute_us").get<double>() + b.at("exposed_comm_us").get<double>(), 3 * moe, 1e-6 * moe);
    EXPECT_NEAR(b.at("attention_us").get<double>(), 3 * 2 * attention, 1e-9 * attention);
    EXPECT_EQ(b.at("pipeline_bubble_us").get<double>(), 0.0);
    EXPECT_NEAR(s.at("tokens_per_second").get<double>(), 3 * 64 * 8 / (expected * 1e-6), 1e-3);
  }
  // dualpipe: deepep's layers (the same simulations), each forward beside a backward: here the
  // pairs (layer 0 F, head B), (layer 1 F, layer 1 B), (head F, layer 0 B), computes slowed by
  // 132 / (132 - 20), the first forward and the last backward alone.
  std::map<std::pair<uint32_t, std::string>, json> parts;  // (layer, pass): deepep's run
  for (const json& run : step.at("runs")) {
    if (run.at("scheme") == "deepep") parts[{run.at("layer").get<uint32_t>(), run.at("pass")}] = run.at("parts");
  }
  auto layer = [&](uint32_t l, const std::string& pass, const char* part) {
    const double attention_us = part_us(step, "attention", pass.c_str(), "attention_us");
    const json& p = parts.at({l, pass});
    return std::string(part) == "comm" ? p.at("exposed_comm_us").get<double>()
                                       : attention_us + p.at("moe_compute_us").get<double>();
  };
  const double head_f = part_us(step, "output_head", "forward", "dense_us");
  const double head_b = part_us(step, "output_head", "backward", "dense_us");
  const double slow = 132.0 / 112.0;
  const double alone = layer(0, "forward", "compute") + layer(0, "forward", "comm") + layer(1, "forward", "compute") +
                       layer(1, "forward", "comm") + head_f + head_b + layer(1, "backward", "compute") +
                       layer(1, "backward", "comm") + layer(0, "backward", "compute") + layer(0, "backward", "comm");
  const double pairs =
      std::max(slow * (layer(0, "forward", "compute") + head_b), layer(0, "forward", "comm")) +
      std::max(slow * (layer(1, "forward", "compute") + layer(1, "backward", "compute")),
               layer(1, "forward", "comm") + layer(1, "backward", "comm")) +
      std::max(slow * (head_f + layer(0, "backward", "compute")), layer(0, "backward", "comm"));
  const double dualpipe = alone + 2 * pairs;
  EXPECT_NEAR(step.at("schemes").at("dualpipe").at("step_time_us").get<double>(), dualpipe, 1e-6 * dualpipe);
}

StepParts parts_of(const json& j) {
  StepParts p;
  p.attention_us = j.at("attention_us").get<double>();
  p.dense_us = j.at("dense_us").get<double>();
  p.moe_compute_us = j.at("moe_compute_us").get<double>();
  p.exposed_comm_us = j.at("exposed_comm_us").get<double>();
  return p;
}

LayerPasses passes_of(const json& j) { return {parts_of(j.at("forward")), parts_of(j.at("backward")), parts_of(j.at("weight"))}; }

TEST(ModelStep, DualPipeOverTwoStagesIsTheScheduleOfEachSchemesSimulatedLayers) {
  test::TempDir dir;
  const json report = test::run_scenario_text(
      dir, "step",
      model_step_scenario(4, 40, "forward",
                    "step: {kind: training, micro_batches: 4, pipeline: {stages: 2, schedule: dualpipe}}\n"));
  ASSERT_TRUE(report.at("passed").get<bool>());
  const json& step = report.at("step");
  const double transfer = step.at("pipeline").at("transfer_us").get<double>();
  EXPECT_GT(transfer, 0.0);
  const LayerPasses attention = passes_of(step.at("parts").at("attention"));
  const LayerPasses head = passes_of(step.at("parts").at("output_head"));
  // A linear part's weight gradients: the rest of its backward after its forward's time.
  EXPECT_GT(attention.weight.attention_us, 0.0);
  EXPECT_LT(attention.weight.attention_us, attention.backward.attention_us - attention.forward.attention_us + 1e-9);
  EXPECT_NEAR(head.weight.dense_us, head.backward.dense_us - head.forward.dense_us, 1e-9);
  for (const char* scheme : {"deepep", "dysharp", "dualpipe"}) {
    SCOPED_TRACE(scheme);
    std::vector<LayerPasses> layers(4, attention);
    for (const json& run : step.at("runs")) {
      if (run.at("scheme") != scheme) continue;
      const StepParts moe = parts_of(run.at("parts"));
      LayerPasses& layer = layers.at(run.at("layer").get<uint32_t>());
      if (run.at("pass") == "forward") {
        layer.forward += moe;
        layer.weight.moe_compute_us = moe.moe_compute_us;  // an MoE layer's weight gradients: its forward's compute
      } else {
        layer.backward += moe;
      }
    }
    // deepep's all-to-all kernels hold 20 of the 132 SMs beside the paired compute; dysharp's fused
    // kernel issues its own communication and holds none.
    const double slowdown = std::string(scheme) == "dysharp" ? 1.0 : 132.0 / 112.0;
    const TrainingStep expected = compose_dualpipe_pipeline_step(layers, head, {2, 4, transfer}, slowdown);
    EXPECT_DOUBLE_EQ(step.at("schemes").at(scheme).at("dualpipe_compute_slowdown").get<double>(), slowdown);
    const json& s = step.at("schemes").at(scheme);
    EXPECT_EQ(s.at("schedule"), "dualpipe");
    EXPECT_NEAR(s.at("step_time_us").get<double>(), expected.timing.step_us, 1e-6 * expected.timing.step_us);
    EXPECT_NEAR(s.at("breakdown").at("pipeline_bubble_us").get<double>(), expected.timing.mean_bubble_us, 1e-6);
    EXPECT_GT(expected.timing.mean_bubble_us, 0.0);
    EXPECT_EQ(s.at("stage_first_layers"), json::array({0, 2, 4}));
  }
  // dualpipe is deepep's layers under the same schedule.
  EXPECT_EQ(step.at("schemes").at("dualpipe").at("step_time_us"), step.at("schemes").at("deepep").at("step_time_us"));
}

TEST(ModelStep, LayersNotSampledTakeTheSampledOnesMean) {
  test::TempDir dir;
  const json report = test::run_scenario_text(
      dir, "step", model_step_scenario(4, 40, "forward", "step: {kind: training, micro_batches: 2, sample_layers: 2}\n"));
  ASSERT_TRUE(report.at("passed").get<bool>());
  const json& step = report.at("step");
  EXPECT_EQ(step.at("simulated_layers"), json::array({0, 3}));
  EXPECT_TRUE(step.at("sampled").get<bool>());
  const double attention = attention_both_passes_us(step);
  const double head = head_both_passes_us(step);
  // Layer l draws with seed 40 + l: layers 0 and 3 simulated, 1 and 2 their mean.
  double sampled = 0.0;
  for (uint32_t layer : {0u, 3u}) {
    for (const char* pass : {"forward", "backward"}) sampled += step_layer_time_us(dir, layer, pass, "deepep");
  }
  const double expected = 2 * (4 * attention + 2 * sampled + head);
  const double got = step.at("schemes").at("deepep").at("step_time_us").get<double>();
  EXPECT_NEAR(got, expected, 1e-6 * expected);
}

}  // namespace
}  // namespace nvsvp::platform
