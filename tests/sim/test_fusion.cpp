// The fused schedules on dgx-h100 (model S, top-8, 256 tokens per GPU, 32-token tiles so that
// every GPU runs dozens of tiles), one scheme per process through simulate_scheme, the platform
// inspected after the run:
//  - no GEMM-1 tile group starts before every token of its tiles has landed (the time each
//    tile-status counter counted its last arrival, against the GEMM-1 stream's compute spans);
//    every tile counted exactly the tokens firmware put in it;
//  - no combine load issues before its token's output-readiness entry counted top_k
//    notifications, and every token's entry counts exactly top_k;
//  - tables far smaller than the work spill instead of losing entries: the same checks pass, and
//    the spills show in the report;
//  - the combine group takes tokens as they become ready, not in token order.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

std::string fusion_scenario(const std::string& scheme, const std::string& gpu_overrides) {
  return "name: fusion_test\n"
         "platform:\n"
         "  preset: dgx-h100\n" +
         (gpu_overrides.empty() ? std::string() : "  gpu: {" + gpu_overrides + "}\n") +
         "workload:\n"
         "  model: S\n"
         "  top_k: 8\n"
         "  tokens_per_gpu: 256\n"
         "  routing: {kind: normal, std: 0.032, seed: 5}\n"
         "schemes: [" + scheme + "]\n"
         "software: {tile_tokens: 32, tile_columns: 32}\n"
         "simulation: {max_time_us: 20000}\n";
}

struct Observed {
  json result;
  uint64_t gemm_groups = 0;
  uint64_t tiles = 0;
  uint64_t loads_taken = 0;
  uint64_t loads_out_of_order = 0;
};

// Runs `scheme` and checks the fusion invariants on every GPU.
Observed run_fusion_case(const std::string& scheme, const std::string& gpu_overrides = "") {
  test::TempDir dir;
  const Scenario scenario = load_scenario(dir.write("s.yaml", fusion_scenario(scheme, gpu_overrides)), {}, test::config_dir());
  const auto layer = make_layer_spec(scenario);
  // The plan the run uses (build_layer is deterministic): its GEMM-1 streams name the tiles.
  const fw::LayerPlan plan = fw::build_layer(scheme, layer);
  const fw::MoeRouting& routing = layer->routing;
  const bool dynamic = scheme.rfind("dysharp", 0) == 0 || scheme == "explicit-addressing";
  Observed seen;
  seen.result = simulate_scheme(scenario, scheme, layer, [&](Platform& platform) {
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      SCOPED_TRACE("GPU " + std::to_string(g));
      const model::Gpu& gpu = platform.gpu(g);
      std::vector<uint64_t> gemm1_starts;
      for (const model::ComputeSpan& span : gpu.compute_spans()) {
        if (span.stream == 1 && span.end > span.start) gemm1_starts.push_back(span.start.value());
      }
      // GEMM-1 stream: waits on tile counters, then a GEMM; in program order (tile groups), or as
      // take_ready items (one tile each) taken as their tokens land.
      const hw::WorkSequence& gemm1 = plan.extra_sequences.at(g).at(0);
      std::map<uint32_t, uint64_t> tile_tokens;  // tile counter -> tokens firmware put in the tile
      for (const hw::Task& task : gemm1.tasks) {
        if (task.kind == hw::TaskKind::wait_counter) tile_tokens[task.counter] = task.arrivals;
      }
      for (const auto& [counter, tokens] : tile_tokens) {
        EXPECT_EQ(gpu.counter_arrivals(counter), tokens) << "tile counter " << counter << " counted other than its tokens";
      }
      auto landed_ps = [&](uint32_t counter) {
        const uint64_t arrivals = gpu.counter_arrivals(counter);
        return arrivals == 0 ? 0 : gpu.counter_reached_ps(counter, arrivals);
      };
      seen.tiles += tile_tokens.size();
      if (gemm1.tasks.front().kind == hw::TaskKind::take_ready) {
        uint64_t taken_tiles = 0;
        for (const model::Gpu::TakenItem& item : gpu.taken_items()) {
          if (tile_tokens.count(item.counter) == 0) continue;
          ++taken_tiles;
          EXPECT_GE(item.at_ps, landed_ps(item.counter)) << "a tile's GEMM-1 started before its tokens landed";
          EXPECT_TRUE(std::binary_search(gemm1_starts.begin(), gemm1_starts.end(), item.at_ps))
              << "no GEMM-1 started when the tile was taken";
        }
        EXPECT_EQ(taken_tiles, tile_tokens.size());
        seen.gemm_groups += taken_tiles;
      } else {
        uint64_t group_landed_ps = 0;
        size_t group = 0;
        for (const hw::Task& task : gemm1.tasks) {
          if (task.kind == hw::TaskKind::wait_counter) {
            group_landed_ps = std::max(group_landed_ps, landed_ps(task.counter));
          } else if (task.kind == hw::TaskKind::gemm) {
            ASSERT_LT(group, gemm1_starts.size());
            EXPECT_GE(gemm1_starts[group], group_landed_ps) << "GEMM-1 group " << group << " started before its tokens landed";
            ++group;
            group_landed_ps = 0;
          }
        }
        EXPECT_EQ(group, gemm1_starts.size());
        seen.gemm_groups += group;
      }
      if (!dynamic) continue;
      // Combine: one load per token (the combine stream's items), each after its top_k
      // notifications.
      std::set<uint32_t> readiness;
      for (const hw::Task& task : plan.extra_sequences.at(g).at(2).tasks) {
        if (task.kind == hw::TaskKind::wait_counter && task.arrivals == routing.top_k) readiness.insert(task.counter);
      }
      EXPECT_EQ(readiness.size(), routing.tokens_per_gpu);
      uint64_t loads = 0;
      uint32_t previous = 0;
      for (const model::Gpu::TakenItem& item : gpu.taken_items()) {
        if (readiness.count(item.counter) == 0) continue;
        ++loads;
        ASSERT_EQ(gpu.counter_arrivals(item.counter), routing.top_k) << "readiness counter " << item.counter;
        EXPECT_GE(item.at_ps, gpu.counter_reached_ps(item.counter, routing.top_k))
            << "a combine load issued before its token's notifications";
        seen.loads_out_of_order += item.counter < previous;
        previous = item.counter;
      }
      EXPECT_EQ(loads, routing.tokens_per_gpu);
      seen.loads_taken += loads;
    }
  });
  EXPECT_TRUE(seen.result.at("checks").at("passed").get<bool>()) << seen.result.at("checks").dump(2);
  EXPECT_GT(seen.gemm_groups, 8u * routing.gpus) << "too few tile groups for the test to show anything";
  return seen;
}

TEST(Fusion, DysharpRunsTilesAfterTheirTokensAndCombinesAfterTopKNotifications) {
  const Observed seen = run_fusion_case("dysharp");
  EXPECT_EQ(seen.loads_taken, 8u * 256u);
  EXPECT_GT(seen.loads_out_of_order, 0u) << "the combine group takes tokens as they become ready";
  const json& fusion = seen.result.at("fusion");
  EXPECT_EQ(fusion.at("output_readiness").at("spilled").get<uint64_t>(), 0u) << "1024 entries hold 256 tokens";
  EXPECT_GT(fusion.at("tile_status").at("taken").get<uint64_t>(), 0u);
}

TEST(Fusion, DysharpCometRunsTilesAfterTheirTokens) { run_fusion_case("dysharp-comet"); }

TEST(Fusion, ExplicitAddressingRunsTilesAfterTheirTokens) { run_fusion_case("explicit-addressing"); }

TEST(Fusion, FusionOnlyRunsTilesAfterTheirTokens) { run_fusion_case("fusion-only"); }

TEST(Fusion, CometRunsTilesAfterTheirTokens) { run_fusion_case("comet"); }

// Tables of 4 and 16 entries for 64 tiles and 256 tokens per GPU: entries spill to memory, none
// is lost, every check passes, and the layer is no faster than with the study's tables.
TEST(Fusion, SmallTablesSpillWithoutLosingEntries) {
  const Observed seen = run_fusion_case("dysharp", "tile_status_entries: 4, readiness_entries: 16, table_spill_ns: 2000");
  const json& fusion = seen.result.at("fusion");
  for (const char* table : {"tile_status", "output_readiness"}) {
    SCOPED_TRACE(table);
    EXPECT_GT(fusion.at(table).at("spilled").get<uint64_t>(), 0u);
    EXPECT_GT(fusion.at(table).at("spilled_updates").get<uint64_t>(), 0u);
    EXPECT_GT(fusion.at(table).at("peak_live").get<uint64_t>(), fusion.at(table).at("entries").get<uint64_t>());
  }
  EXPECT_EQ(fusion.at("output_readiness").at("taken").get<uint64_t>(), 8u * 256u);
}

}  // namespace
}  // namespace nvsvp::platform
