// The `nvls` scheme end to end on dgx-h100 (model S, top-2, few tokens), through run_scenario (one
// child process per run, as the command does): it passes the token and combine checks, its
// payload bytes per direction are what all-gather + reduce-scatter imply (computed here from the
// token counts alone), it moves more bytes than deepep on the same scenario, and the `rtl`
// reduction backend gives the same result as `model` (everything but host measurements).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

constexpr uint32_t kTokensPerGpu = 32;

std::string nvls_scenario(const std::string& schemes, const std::string& backend) {
  return "name: nvls_test\n"
         "platform:\n"
         "  preset: dgx-h100\n"
         "  switch: {reduction_backend: " + backend + "}\n"
         "workload:\n"
         "  model: S\n"
         "  top_k: 2\n"
         "  tokens_per_gpu: " + std::to_string(kTokensPerGpu) + "\n"
         "  dispatch_dtype: fp8\n"
         "  combine_dtype: bf16\n"
         "  routing: {kind: uniform, seed: 5}\n"
         "schemes: [" + schemes + "]\n"
         "simulation:\n"
         "  max_time_us: 10000\n";
}

// Runs the scenario in `dir` and returns its report.json.
json run_and_read(const test::TempDir& dir, const std::string& name, const std::string& text) {
  const Scenario scenario = load_scenario(dir.write(name + ".yaml", text), {}, test::config_dir());
  return test::run_and_read_report(scenario, dir.path() + "/" + name);
}

using test::result_of;

uint64_t total(const json& directions) {
  return directions.at("gpu_to_switch").get<uint64_t>() + directions.at("switch_to_gpu").get<uint64_t>();
}

TEST(NvlsScheme, PassesTheChecksAndMovesMoreBytesThanDeepep) {
  test::TempDir dir;
  const json report = run_and_read(dir, "both", nvls_scenario("deepep, nvls", "model"));
  const json& nvls = result_of(report, "nvls");
  const json& deepep = result_of(report, "deepep");
  EXPECT_TRUE(nvls.at("checks").at("passed").get<bool>()) << nvls.at("checks").dump(2);
  EXPECT_TRUE(deepep.at("checks").at("passed").get<bool>());

  // All-gather + reduce-scatter over all 8 GPUs, T tokens and their partials (the sizes per
  // token as the report states them: fp8 with its scales, bf16):
  //   up:   each token once (its store), each partial of every token from every GPU (the member
  //         reads' responses), the barrier's 16-byte flags;
  //   down: each token to every GPU, each token's one reduced result, the flags.
  const uint64_t gpus = 8;
  const uint64_t tokens = gpus * kTokensPerGpu;
  const uint64_t token_bytes = report.at("workload").at("dispatch_bytes_per_token").get<uint64_t>();
  const uint64_t partial_bytes = report.at("workload").at("combine_bytes_per_token").get<uint64_t>();
  const uint64_t barrier_bytes = gpus * (gpus - 1) * 16;
  EXPECT_EQ(nvls.at("payload_bytes").at("gpu_to_switch").get<uint64_t>(),
            tokens * token_bytes + gpus * tokens * partial_bytes + barrier_bytes);
  EXPECT_EQ(nvls.at("payload_bytes").at("switch_to_gpu").get<uint64_t>(),
            gpus * tokens * token_bytes + tokens * partial_bytes + barrier_bytes);
  EXPECT_EQ(nvls.at("checks").at("token_copies_delivered").get<uint64_t>(), gpus * tokens);
  // One store copy per GPU and token, one member read per GPU and token; one reduction per token.
  EXPECT_EQ(nvls.at("switch").at("replications").get<uint64_t>(), 2 * gpus * tokens);
  EXPECT_EQ(nvls.at("switch").at("reductions").get<uint64_t>(), tokens);
  EXPECT_EQ(nvls.at("switch").at("access_errors").get<uint64_t>(), 0u);

  // With top-2 a token goes to at most 2 GPUs under deepep and to all 8 under nvls.
  EXPECT_GT(total(nvls.at("traffic_bytes")), total(deepep.at("traffic_bytes")));
  EXPECT_GT(total(nvls.at("payload_bytes")), total(deepep.at("payload_bytes")));
}

// Everything in a result but the host's measurements.
using test::without_host_measurements;

TEST(NvlsScheme, RtlReductionBackendGivesTheSameResultAsModel) {
  test::TempDir dir;
  const json model = run_and_read(dir, "model", nvls_scenario("nvls", "model"));
  const json rtl = run_and_read(dir, "rtl", nvls_scenario("nvls", "rtl"));
  const json& model_result = result_of(model, "nvls");
  const json& rtl_result = result_of(rtl, "nvls");
  EXPECT_TRUE(rtl_result.at("checks").at("passed").get<bool>()) << rtl_result.at("checks").dump(2);
  EXPECT_GT(model_result.at("switch").at("reductions").get<uint64_t>(), 0u) << "the reduction units were used";
  EXPECT_EQ(without_host_measurements(model_result), without_host_measurements(rtl_result));
  EXPECT_EQ(model_result.at("sim").at("simulated_us"), rtl_result.at("sim").at("simulated_us"));
}

}  // namespace
}  // namespace nvsvp::platform
