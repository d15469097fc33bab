// deepep-ll (DeepEP's low-latency kernels) end to end on dgx-h100, model S, top-8: every (token,
// remote expert) pair crosses the fabric as its own row both ways (fp8 out, bf16 back), plus one
// 16-byte count per (GPU, remote expert) and nothing else: no count exchange, so its only fixed
// costs are the two kernel boundaries. Per link direction it moves exactly what the routing
// implies, counted here from the routing alone, from decode batches of one token per GPU to
// prefill-sized ones, and every token's output is checked.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "../common/remote_counts.hpp"
#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

std::string deepep_ll_scenario(uint32_t tokens, const std::string& routing) {
  return "name: deepep_ll_test\n"
         "platform: {preset: dgx-h100}\n"
         "workload:\n"
         "  model: S\n"
         "  top_k: 8\n"
         "  tokens_per_gpu: " + std::to_string(tokens) + "\n"
         "  dispatch_dtype: fp8\n"
         "  combine_dtype: bf16\n"
         "  routing: " + routing + "\n"
         "schemes: [deepep, deepep-ll]\n"
         "simulation: {max_time_us: 10000}\n";
}

class DeepEpLowLatency : public ::testing::TestWithParam<std::pair<uint32_t, std::string>> {};

TEST_P(DeepEpLowLatency, MovesOneRowPerRemoteExpertAndOneCountPerRemoteExpertOfAGpu) {
  test::TempDir dir;
  const auto& [tokens, routing_text] = GetParam();
  const Scenario scenario = load_scenario(dir.write("ll.yaml", deepep_ll_scenario(tokens, routing_text)), {},
                                          test::config_dir());
  const json report = test::run_and_read_report(scenario, dir.path() + "/ll");
  const auto layer = make_layer_spec(scenario);
  const fw::MoeRouting& routing = layer->routing;
  const auto [sum_d, tokens_with_remote, remote_experts] = test::remote_counts(routing);
  ASSERT_GT(remote_experts, sum_d);  // some tokens have two experts on one GPU: the rows differ from copies
  const uint64_t dispatch_bytes = report.at("workload").at("dispatch_bytes_per_token").get<uint64_t>();
  const uint64_t combine_bytes = report.at("workload").at("combine_bytes_per_token").get<uint64_t>();
  const uint64_t gpus = routing.gpus;
  const uint64_t count_flags = gpus * (gpus - 1) * routing.experts_per_gpu() * 16;

  const json& ll = test::result_of(report, "deepep-ll");
  EXPECT_TRUE(ll.at("checks").at("passed").get<bool>()) << ll.at("checks").dump(2);
  for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
    EXPECT_EQ(ll.at("payload_bytes").at(direction).get<uint64_t>(),
              remote_experts * (dispatch_bytes + combine_bytes) + count_flags)
        << direction;
  }
  EXPECT_EQ(ll.at("plan").at("count_flags_per_gpu").get<double>(), (gpus - 1) * routing.experts_per_gpu());
  // deepep: one copy per remote GPU each way, and the count exchange's 16 bytes per pair.
  const json& deepep = test::result_of(report, "deepep");
  EXPECT_TRUE(deepep.at("checks").at("passed").get<bool>()) << deepep.at("checks").dump(2);
  for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
    EXPECT_EQ(deepep.at("payload_bytes").at(direction).get<uint64_t>(),
              sum_d * (dispatch_bytes + combine_bytes) + gpus * (gpus - 1) * 16)
        << direction;
  }
  // Fixed costs (software defaults, 5 us each): deepep's count exchange and two barriers;
  // deepep-ll's two kernel boundaries.
  EXPECT_DOUBLE_EQ(deepep.at("software_delays_us").at("dispatch").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(ll.at("software_delays_us").at("dispatch").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(ll.at("software_delays_us").at("combine").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(ll.at("software_delays_us").at("total").get<double>(), 10.0);
}

INSTANTIATE_TEST_SUITE_P(DecodeToPrefill, DeepEpLowLatency,
                         ::testing::Values(std::make_pair(1u, std::string("{kind: uniform, seed: 3}")),
                                           std::make_pair(16u, std::string("{kind: zipf, exponent: 1.2, seed: 4}")),
                                           std::make_pair(256u, std::string("{kind: uniform, seed: 5}"))),
                         [](const auto& param_info) { return "tokens_per_gpu_" + std::to_string(param_info.param.first); });

}  // namespace
}  // namespace nvsvp::platform
