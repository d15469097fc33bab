// The backward pass of an MoE layer end to end on dgx-h100 (model S, top-8, few tokens): the
// output gradients go from their homes to the experts as the forward's tokens do (bf16 on the
// wire), the input gradients come back and are summed as the forward's partials are, and per link
// direction each scheme moves exactly what the routing implies, counted here from the routing
// alone; every scheme passes its checks backward, and takes longer than forward (twice the GEMMs);
// COMET's schedule runs its GEMMs one kernel after the other, weight gradients included.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/remote_counts.hpp"
#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

std::string backward_scenario(const std::string& schemes, const std::string& pass) {
  return "name: backward_test\n"
         "platform: {preset: dgx-h100}\n"
         "workload:\n"
         "  model: S\n"
         "  top_k: 8\n"
         "  tokens_per_gpu: 64\n"
         "  pass: " + pass + "\n"
         "  routing: {kind: uniform, seed: 21}\n"
         "schemes: [" + schemes + "]\n"
         "software: {tutel_degree: 2}\n"
         "simulation: {max_time_us: 10000}\n";
}

TEST(BackwardPass, TrafficPerDirectionIsWhatTheRoutingImplies) {
  test::TempDir dir;
  const std::string text = backward_scenario("deepep, dysharp-basic, dysharp", "backward");
  const Scenario scenario = load_scenario(dir.write("backward.yaml", text), {}, test::config_dir());
  const json report = test::run_and_read_report(scenario, dir.path() + "/backward");
  const auto layer = make_layer_spec(scenario);
  const fw::MoeRouting& routing = layer->routing;
  EXPECT_EQ(report.at("scenario").at("pass"), "backward");

  // Both ways bf16 gradients: 2 bytes per hidden value, no scales.
  const uint64_t gradient_bytes = 2ull * layer->model.hidden;
  EXPECT_EQ(report.at("workload").at("dispatch_bytes_per_token").get<uint64_t>(), gradient_bytes);
  EXPECT_EQ(report.at("workload").at("combine_bytes_per_token").get<uint64_t>(), gradient_bytes);
  // Per token, D = the remote GPUs among its experts'.
  const auto [sum_d, tokens_with_remote, remote_experts] = test::remote_counts(routing);
  ASSERT_GT(sum_d, 2 * tokens_with_remote);
  const uint64_t flags = 8 * 7 * 16;  // deepep's count exchange, dysharp-basic's barrier

  // deepep: each output gradient to each remote GPU, each input gradient back.
  const json& deepep = test::result_of(report, "deepep");
  EXPECT_TRUE(deepep.at("checks").at("passed").get<bool>()) << deepep.at("checks").dump(2);
  for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
    EXPECT_EQ(deepep.at("payload_bytes").at(direction).get<uint64_t>(), sum_d * 2 * gradient_bytes + flags)
        << direction;
  }
  // In the switch: one multicast of the output gradient up, D copies down; D input gradients up,
  // summed in the switch, one down (plus the barrier's flags, or the fused kernel's notifications).
  const json& basic = test::result_of(report, "dysharp-basic");
  EXPECT_TRUE(basic.at("checks").at("passed").get<bool>()) << basic.at("checks").dump(2);
  EXPECT_EQ(basic.at("payload_bytes").at("gpu_to_switch").get<uint64_t>(),
            (tokens_with_remote + sum_d) * gradient_bytes + flags);
  EXPECT_EQ(basic.at("payload_bytes").at("switch_to_gpu").get<uint64_t>(),
            (sum_d + tokens_with_remote) * gradient_bytes + flags);
  EXPECT_EQ(basic.at("switch").at("reductions").get<uint64_t>(), tokens_with_remote);
  constexpr uint64_t kNotificationBytes = 4;
  const json& fused = test::result_of(report, "dysharp");
  EXPECT_TRUE(fused.at("checks").at("passed").get<bool>()) << fused.at("checks").dump(2);
  for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
    EXPECT_EQ(fused.at("payload_bytes").at(direction).get<uint64_t>(),
              (tokens_with_remote + sum_d) * gradient_bytes + remote_experts * kNotificationBytes)
        << direction;
  }
  EXPECT_EQ(fused.at("switch").at("reductions").get<uint64_t>(), tokens_with_remote);
}

const std::string kAllSchemes = test::every_scheme_list();

TEST(BackwardPass, EverySchemePassesItsChecksAndTakesLongerThanForward) {
  test::TempDir dir;
  const json backward = test::run_scenario_text(dir, "backward", backward_scenario(kAllSchemes, "backward"));
  const json forward = test::run_scenario_text(dir, "forward", backward_scenario(kAllSchemes, "forward"));
  ASSERT_EQ(backward.at("results").size(), fw::layer_scheme_names().size());
  for (const json& result : backward.at("results")) {
    const std::string scheme = result.at("scheme");
    SCOPED_TRACE(scheme);
    EXPECT_TRUE(result.at("checks").at("passed").get<bool>()) << result.at("checks").dump(2);
    EXPECT_GT(result.at("layer_time_us").get<double>(),
              test::result_of(forward, scheme).at("layer_time_us").get<double>());
  }
}

// COMET's GEMM-1 and GEMM-2 groups are the same SMs, the second kernel after the first: on no GPU
// do two streams compute in the experts phase at once, in either pass. (The weight gradients
// once ran on both groups' streams together, as if the GPU had twice its GEMM SMs.)
TEST(BackwardPass, CometsGemmGroupsNeverComputeAtOnce) {
  test::TempDir dir;
  for (const char* pass : {"forward", "backward"}) {
    SCOPED_TRACE(pass);
    const json report = test::run_scenario_text(dir, pass, backward_scenario("comet, dysharp-comet", pass));
    for (const char* scheme : {"comet", "dysharp-comet"}) {
      SCOPED_TRACE(scheme);
      std::ifstream file(dir.path() + "/" + pass + "/trace_" + scheme + ".json");
      const json trace = json::parse(file);
      std::map<int, std::vector<std::pair<double, double>>> by_stream;  // (GPU x 100 + stream): intervals
      std::map<int, int> intervals;
      for (const json& e : trace.at("traceEvents")) {
        if (e.value("ph", "") != "X" || e.value("name", "") != "compute (experts)") continue;
        if (!(e.at("dur").get<double>() > 0.0)) continue;
        const int gpu = e.at("pid").get<int>();
        const double start = e.at("ts").get<double>(), end = start + e.at("dur").get<double>();
        for (const auto& [key, list] : by_stream) {
          if (key / 100 != gpu || key % 100 == e.at("tid").get<int>()) continue;
          for (const auto& [a, b] : list) {
            EXPECT_FALSE(start < b - 1e-6 && a < end - 1e-6)
                << "GPU " << gpu << " streams " << key % 100 << " and " << e.at("tid") << " at " << start;
          }
        }
        by_stream[gpu * 100 + e.at("tid").get<int>()].push_back({start, end});
        ++intervals[gpu];
      }
      EXPECT_EQ(intervals.size(), 8u);  // every GPU computed
    }
  }
}

}  // namespace
}  // namespace nvsvp::platform
