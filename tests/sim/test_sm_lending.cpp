// SM lending between the GEMM groups of a fused kernel (WorkSequence::sm_pool): a persistent GEMM
// runs on its group's SMs plus those of the pool's groups that compute nothing, and is re-timed
// from the fraction of its work left whenever a group starts or stops computing.
//  - On one GPU with exact timing (100 SMs, a block 1 us on one SM): a group that idles lends its
//    SMs; a GEMM already running speeds up when the other group goes idle and slows down when it
//    starts again; two groups that are always busy run as without lending; take_ready tiles run
//    once each at the times lending gives them.
//  - The fused schemes (dysharp, fusion-only) with and without software.fusion_sm_lending: every
//    tile runs exactly once; without lending every tile takes its group's time, with lending the
//    GEMM groups' busy time is shorter (HBM made fast, so that no tile's time is its memory floor,
//    which more SMs do not shorten).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

using test::Machine;

constexpr double kBlockFlops = 5e6;  // 1 us on one SM at 5 TFLOP/s per SM

PlatformSpec hundred_sm_gpu() {
  PlatformSpec spec = test::small_platform(1, {1});
  spec.gpu.sms = 100;
  spec.gpu.fp8_tflops = 1000.0;
  spec.gpu.gemm_efficiency = 0.5;  // 5 TFLOP/s per SM
  return spec;
}

hw::Task tile(uint64_t blocks) {
  hw::Task t = hw::Task::gemm(0, blocks, kBlockFlops, hw::Precision::fp8, 0, 0);
  t.persistent = true;
  return t;
}

// The GEMM-1 (60 SMs) and GEMM-2 (40 SMs) groups, in one pool when `lending`.
hw::WorkSequence group(uint32_t stream, uint16_t sms, bool lending, std::vector<hw::Task> tasks) {
  hw::WorkSequence s;
  s.stream = stream;
  s.sms = sms;
  s.sm_pool = lending ? 1 : 0;
  s.counters = 32;
  s.tasks = std::move(tasks);
  return s;
}

// [start, end) of every compute span of `stream`, ns, in time order.
std::vector<std::pair<uint64_t, uint64_t>> spans_of(const model::Gpu& gpu, uint32_t stream) {
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const model::ComputeSpan& span : gpu.compute_spans()) {
    if (span.stream == stream) spans.emplace_back(span.start.value() / 1000, span.end.value() / 1000);
  }
  std::sort(spans.begin(), spans.end());
  return spans;
}

using Spans = std::vector<std::pair<uint64_t, uint64_t>>;

// GEMM-1 runs 120 blocks, then signals GEMM-2, which runs 40. With lending GEMM-1 has all 100 SMs
// (1.2 us), and so has GEMM-2 after it (0.4 us); without, 60 SMs (2 us) and 40 SMs (1 us).
void idle_group_lends(bool lending, uint64_t gemm1_end, uint64_t end) {
  Machine m(hundred_sm_gpu(), [&](TlmHal& hal, Platform& platform) {
    hal.submit(0, group(1, 60, lending, {tile(120), hw::Task::local_copy(0, 0x100, 0x100, 0, 3)}));
    hal.submit(0, group(2, 40, lending, {hw::Task::wait(0, 3, 1), tile(40)}));
    hal.wait_all_finished();
    EXPECT_DOUBLE_EQ(hal.now_ns(), static_cast<double>(end));
    EXPECT_EQ(spans_of(platform.gpu(0), 1), (Spans{{0, gemm1_end}}));
    EXPECT_EQ(spans_of(platform.gpu(0), 2), (Spans{{gemm1_end, end}}));
  });
  m.run();
}

TEST(SmLending, AGroupWithNothingReadyLendsItsSms) { idle_group_lends(true, 1200, 1600); }

TEST(SmLending, WithoutLendingEachGroupKeepsItsSms) { idle_group_lends(false, 2000, 3000); }

// Both groups start at once; GEMM-2's 20 blocks end at 0.5 us, when GEMM-1 has done 30 of its 120
// blocks on 60 SMs: the other 90 take 0.9 us on all 100 SMs (end 1.4 us). GEMM-2's next 40 blocks
// then run on all 100 SMs too (0.4 us).
TEST(SmLending, ARunningGemmSpeedsUpWhenTheOtherGroupGoesIdle) {
  Machine m(hundred_sm_gpu(), [&](TlmHal& hal, Platform& platform) {
    hal.submit(0, group(1, 60, true, {tile(120), hw::Task::local_copy(0, 0x100, 0x100, 0, 3)}));
    hal.submit(0, group(2, 40, true, {tile(20), hw::Task::wait(0, 3, 1), tile(40)}));
    hal.wait_all_finished();
    EXPECT_DOUBLE_EQ(hal.now_ns(), 1800.0);
    EXPECT_EQ(spans_of(platform.gpu(0), 1), (Spans{{0, 1400}}));
    EXPECT_EQ(spans_of(platform.gpu(0), 2), (Spans{{0, 500}, {1400, 1800}}));
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(0).stats().compute_time, sc_core::sc_time(1400 + 500 + 400, sc_core::SC_NS));
}

// Two groups that always have a tile running lend nothing: each tile takes its group's time.
TEST(SmLending, GroupsThatAreAlwaysBusyKeepTheirTimes) {
  Machine m(hundred_sm_gpu(), [&](TlmHal& hal, Platform& platform) {
    hal.submit(0, group(1, 60, true, {tile(60), tile(60)}));
    hal.submit(0, group(2, 40, true, {tile(40), tile(40)}));
    hal.wait_all_finished();
    EXPECT_DOUBLE_EQ(hal.now_ns(), 2000.0);
    EXPECT_EQ(spans_of(platform.gpu(0), 1), (Spans{{0, 1000}, {1000, 2000}}));
    EXPECT_EQ(spans_of(platform.gpu(0), 2), (Spans{{0, 1000}, {1000, 2000}}));
  });
  m.run();
}

// take_ready tiles as the fused kernel runs them: stream 0 makes GEMM-1's tiles ready at 0, 0.5
// and 3 us; each GEMM-1 tile (60 blocks) makes its GEMM-2 tile (40 blocks) ready.
//   A1 0-0.6 on 100 SMs; A2 from 0.6 on 100 SMs until B1 starts beside it (0.6), then both on
//   their own groups: A2 and B1 end at 1.6; B2 1.6-2.0 and A3 3.0-3.6 alone on 100 SMs, B3
//   3.6-4.0. Every tile is taken once.
TEST(SmLending, TakeReadyTilesRunOnceEachAtTheTimesLendingGives) {
  Machine m(hundred_sm_gpu(), [&](TlmHal& hal, Platform& platform) {
    hw::WorkSequence ready;
    ready.counters = 32;
    ready.tasks = {hw::Task::local_copy(0, 0x100, 0x100, 0, 10), hw::Task::delay(0, 500.0),
                   hw::Task::local_copy(0, 0x100, 0x100, 0, 11), hw::Task::delay(0, 2500.0),
                   hw::Task::local_copy(0, 0x100, 0x100, 0, 12)};
    std::vector<hw::Task> gemm1{hw::Task::take_ready(0, 3, 2)};
    std::vector<hw::Task> gemm2{hw::Task::take_ready(0, 3, 1)};
    for (uint32_t i = 0; i < 3; ++i) {
      gemm1.insert(gemm1.end(), {hw::Task::wait(0, 10 + i, 1), tile(60), hw::Task::local_copy(0, 0x100, 0x100, 0, 20 + i)});
      gemm2.insert(gemm2.end(), {hw::Task::wait(0, 20 + i, 1), tile(40)});
    }
    hal.submit(0, std::move(ready));
    hal.submit(0, group(1, 60, true, std::move(gemm1)));
    hal.submit(0, group(2, 40, true, std::move(gemm2)));
    hal.wait_all_finished();
    EXPECT_DOUBLE_EQ(hal.now_ns(), 4000.0);
    const model::Gpu& gpu = platform.gpu(0);
    EXPECT_EQ(spans_of(gpu, 1), (Spans{{0, 600}, {600, 1600}, {3000, 3600}}));
    EXPECT_EQ(spans_of(gpu, 2), (Spans{{600, 1600}, {1600, 2000}, {3600, 4000}}));
    std::vector<uint32_t> taken;
    for (const model::Gpu::TakenItem& item : gpu.taken_items()) taken.push_back(item.counter);
    std::sort(taken.begin(), taken.end());
    EXPECT_EQ(taken, (std::vector<uint32_t>{10, 11, 12, 20, 21, 22}));
  });
  m.run();
}

// ---- The fused schemes ---------------------------------------------------------------------------

std::string sm_lending_scenario(const std::string& scheme, bool lending) {
  return "name: lending_test\n"
         "platform:\n"
         "  preset: dgx-h100\n"
         "  gpu: {hbm_gbps: 1000000}\n"  // tiles bound by their math, not by reading their expert's weights
         "workload:\n"
         "  model: S\n"
         "  top_k: 8\n"
         "  tokens_per_gpu: 256\n"
         "  routing: {kind: normal, std: 0.032, seed: 5}\n"
         "schemes: [" + scheme + "]\n"
         "software: {tile_tokens: 32, tile_columns: 32, fusion_sm_lending: " + (lending ? "true" : "false") + "}\n"
         "simulation: {max_time_us: 20000}\n";
}

// Runs `scheme`; per GPU, the GEMM groups' compute spans must be one per GEMM task of the plan
// (every tile once), and their total, against the tiles' times on their own groups, equal
// (without lending) or shorter (with).
void run_lending_case(const std::string& scheme, bool lending) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(dir.write("s.yaml", sm_lending_scenario(scheme, lending)), {}, test::config_dir());
  const auto layer = make_layer_spec(scenario);
  const fw::LayerPlan plan = fw::build_layer(scheme, layer);
  uint64_t lent_on = 0;
  const nlohmann::json result = simulate_scheme(scenario, scheme, layer, [&](Platform& platform) {
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      SCOPED_TRACE("GPU " + std::to_string(g));
      const model::Gpu& gpu = platform.gpu(g);
      uint64_t tiles = 0;
      sc_core::sc_time own_groups;  // every tile on its group's SMs alone
      for (size_t i = 0; i < 2; ++i) {  // the GEMM-1 and GEMM-2 streams
        const hw::WorkSequence& seq = plan.extra_sequences.at(g).at(i);
        EXPECT_EQ(seq.sm_pool, lending ? 1 : 0);
        for (const hw::Task& task : seq.tasks) {
          if (task.kind != hw::TaskKind::gemm) continue;
          ++tiles;
          own_groups += gpu.compute_time(task, seq.sms);
        }
      }
      uint64_t spans = 0;
      sc_core::sc_time busy;
      for (const model::ComputeSpan& span : gpu.compute_spans()) {
        if (span.stream != 1 && span.stream != 2) continue;
        ++spans;
        busy += span.end - span.start;
      }
      EXPECT_EQ(spans, tiles) << "a tile ran other than once";
      if (lending) {
        EXPECT_LT(busy, own_groups);
        lent_on += busy < own_groups;
      } else {
        EXPECT_EQ(busy, own_groups);
      }
    }
  });
  EXPECT_TRUE(result.at("checks").at("passed").get<bool>()) << result.at("checks").dump(2);
  if (lending) {
    EXPECT_EQ(lent_on, layer->routing.gpus);
  }
}

TEST(SmLending, DysharpRunsEveryTileOnceFasterWithLending) { run_lending_case("dysharp", true); }
TEST(SmLending, DysharpTilesTakeTheirGroupsTimeWithoutLending) { run_lending_case("dysharp", false); }
TEST(SmLending, FusionOnlyRunsEveryTileOnceFasterWithLending) { run_lending_case("fusion-only", true); }
TEST(SmLending, FusionOnlyTilesTakeTheirGroupsTimeWithoutLending) { run_lending_case("fusion-only", false); }

}  // namespace
}  // namespace nvsvp::platform
