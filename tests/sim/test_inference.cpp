// An inference request of a three-layer model end to end (the scenario's `step` of kind
// inference): its time is the composition, worked out here, of the MoE layers' simulated prefill
// and decode-batch times (each layer run again here as a scenario of its own, with its own
// routing seed and token count) and the timed parts around them, every decode step's attention at
// its own context.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

constexpr uint32_t kPrompt = 32;
constexpr uint32_t kSequences = 2;  // per GPU
constexpr uint32_t kDecodeSteps = 5;

// Model S cut to 3 layers, the first dense, on dgx-h100: kSequences prompts of kPrompt tokens
// per GPU (or `tokens` per GPU for one layer alone).
std::string inference_scenario(uint64_t seed, uint32_t tokens, const std::string& step) {
  return "name: inference_test\n"
         "platform: {preset: dgx-h100}\n"
         "workload:\n"
         "  model: {preset: S, layers: 3, dense_layers: 1}\n"
         "  tokens_per_gpu: " + std::to_string(tokens) + "\n"
         "  dispatch_dtype: fp8\n"
         "  routing: {kind: zipf, exponent: 1.1, seed: " + std::to_string(seed) + "}\n"
         "schemes: [deepep, deepep-ll, dysharp]\n" + step;
}

// Model layer `layer`'s MoE at `tokens` per GPU, run as a scenario of its own.
double inference_layer_time_us(const test::TempDir& dir, uint32_t layer, uint32_t tokens, const std::string& scheme) {
  const std::string name = "layer" + std::to_string(layer) + "_" + std::to_string(tokens);
  const json report = test::run_scenario_text(dir, name, inference_scenario(40 + layer, tokens, ""));
  return test::result_of(report, scheme).at("layer_time_us").get<double>();
}

TEST(Inference, RequestIsTheCompositionOfItsLayersAndItsDecodeSteps) {
  test::TempDir dir;
  const std::string step = "step: {kind: inference, prompt_tokens: " + std::to_string(kPrompt) +
                           ", decode_steps: " + std::to_string(kDecodeSteps) + "}\n";
  const json report = test::run_scenario_text(dir, "request", inference_scenario(40, kPrompt * kSequences, step));
  ASSERT_TRUE(report.at("passed").get<bool>());
  const json& request = report.at("step");
  EXPECT_EQ(request.at("simulated_layers"), json::array({1, 2}));
  EXPECT_EQ(request.at("sequences_per_gpu"), kSequences);
  EXPECT_EQ(request.at("runs").size(), 2u * 2u * 3u);  // layers x (prefill, decode) x schemes
  const json& prefill = request.at("parts").at("prefill");
  const json& decode = request.at("parts").at("decode");
  const double head = prefill.at("output_head_us").get<double>();
  EXPECT_EQ(head, decode.at("output_head_us").get<double>());  // both: one token per sequence
  // The decode attention grows with the context; the steps between the first and the last are
  // interpolated here, exact for a part linear in the context (the core; the projections do not
  // change) as long as both ends are on the same side of the roofline.
  const double first = decode.at("attention_first_step_us").get<double>();
  const double last = decode.at("attention_last_step_us").get<double>();
  EXPECT_GT(last, first);
  const double decode_attention = kDecodeSteps * (first + last) / 2.0;
  for (const char* scheme : {"deepep", "deepep-ll", "dysharp"}) {
    SCOPED_TRACE(scheme);
    double prefill_moe = 0.0, decode_moe = 0.0;
    for (uint32_t layer : {1u, 2u}) {
      prefill_moe += inference_layer_time_us(dir, layer, kPrompt * kSequences, scheme);
      decode_moe += inference_layer_time_us(dir, layer, kSequences, scheme);
    }
    const json& s = request.at("schemes").at(scheme);
    const double ttft = 3 * prefill.at("attention_us").get<double>() + prefill.at("dense_ffn_us").get<double>() +
                        prefill_moe + head;
    EXPECT_NEAR(s.at("time_to_first_token_us").get<double>(), ttft, 1e-6 * ttft);
    const double decode_total =
        kDecodeSteps * (decode.at("dense_ffn_us").get<double>() + decode_moe + head) + 3 * decode_attention;
    EXPECT_NEAR(s.at("step_time_us").get<double>(), ttft + decode_total, 1e-6 * (ttft + decode_total));
    EXPECT_NEAR(s.at("time_per_output_token_us").get<double>(), decode_total / kDecodeSteps, 1e-6 * decode_total);
    const double output_tokens = 8.0 * kSequences * kDecodeSteps;
    EXPECT_NEAR(s.at("tokens_per_second").get<double>(), output_tokens / ((ttft + decode_total) * 1e-6), 1e-3);
    const json& b = s.at("breakdown");
    EXPECT_NEAR(b.at("moe_compute_us").get<double>() + b.at("exposed_comm_us").get<double>(),
                prefill_moe + kDecodeSteps * decode_moe, 1e-6 * decode_total);
  }
  // The fixed costs: deepep's count exchange and barriers, deepep-ll's barriers alone (software
  // defaults: 5 us each), none in dysharp's plan.
  const json& schemes = request.at("schemes");
  EXPECT_DOUBLE_EQ(schemes.at("deepep").at("software_delays_us").at("decode").get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(schemes.at("deepep-ll").at("software_delays_us").at("decode").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(schemes.at("dysharp").at("software_delays_us").at("decode").get<double>(), 0.0);
}

}  // namespace
}  // namespace nvsvp::platform
