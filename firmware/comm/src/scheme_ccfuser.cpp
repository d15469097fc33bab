// `ccfuser` (CCFuser, Wang et al., PPoPP 2025, "Harnessing Inter-GPU Shared Memory for Seamless
// MoE Communication-Computation Fusion"; docs/background/baselines.md#ccfuser): one fused kernel
// whose expert GEMM thread blocks pull their tokens straight from the tokens' home GPUs over
// NVLink shared memory and write their results straight back, with no SM group set aside for
// communication.
//   layout:   one row per (token, expert), no capacity (the GEMM blocks read the rows they need);
//   per GPU, three executor streams of the one kernel:
//     loads (the GEMM blocks' loads): the count exchange (the routing's indices, so that each GPU
//       knows which rows to pull), then, tile group by tile group in the order the GEMMs run them,
//       a remote read of every row of the group from its token's home (a local copy for its own);
//     GEMMs (every SM): per tile group, the wait for its rows, GEMM-1 and GEMM-2, a signal;
//     epilogue: after each group, its rows' results written to their homes' combine buffers, a
//       message per row (an epilogue stores each output row as its tile ends); the
//       home sums its tokens' rows at the end.
// Tile groups are plan_fused_tiles' (software.tile_tokens rows of one local expert, groups that
// fill the GPU's SMs), the rows of an expert with their sources interleaved.
#include <algorithm>
#include <numeric>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

uint32_t group_counter(size_t group) { return kMoeCounters + 2 + static_cast<uint32_t>(group); }
constexpr uint32_t kGemmDoneCounter = kMoeCounters;

// A tile's rows: members [first, first + tokens) of its expert's rows.
std::vector<RowRange> tile_rows(const std::vector<RowRange>& expert_runs, const FusedTile& tile) {
  std::vector<RowRange> out;
  uint64_t skip = tile.first;
  uint64_t left = tile.tokens;
  for (const RowRange& run : expert_runs) {
    const uint64_t size = run.end - run.begin;
    if (skip >= size) {
      skip -= size;
      continue;
    }
    const uint64_t take = std::min(left, size - skip);
    out.push_back(RowRange{run.source, run.destination, run.begin + skip, run.begin + skip + take});
    left -= take;
    skip = 0;
    if (left == 0) break;
  }
  return out;
}

// [local expert]: its rows on GPU g, one range per row, the sources interleaved (row p of every
// source, sources in turn from the next GPU on): the order a tile's thread blocks take their rows
// in, so that every GPU's reads spread over all homes at once instead of all reading from GPU 0.
std::vector<std::vector<RowRange>> expert_runs(const ExpertRows& rows, uint32_t g, uint32_t per_gpu) {
  const auto gpus = static_cast<uint32_t>(rows.rows.size());
  // [expert][source]: the contiguous rows of that expert from that source.
  std::vector<std::vector<RowRange>> by_source(per_gpu, std::vector<RowRange>(gpus));
  for (uint32_t s = 0; s < gpus; ++s) {
    const std::vector<ExpertRow>& list = rows.rows[s][g];
    for (uint64_t i = list.size(); i-- > 0;) by_source[list[i].local_expert][s] = RowRange{s, g, i, i};
    for (uint64_t i = 0; i < list.size(); ++i) by_source[list[i].local_expert][s].end = i + 1;
  }
  std::vector<std::vector<RowRange>> runs(per_gpu);
  for (uint32_t j = 0; j < per_gpu; ++j) {
    uint64_t longest = 0;
    for (const RowRange& r : by_source[j]) longest = std::max(longest, r.end - r.begin);
    for (uint64_t p = 0; p < longest; ++p) {
      for (uint32_t n = 1; n <= gpus; ++n) {
        const RowRange& r = by_source[j][(g + n) % gpus];
        if (r.begin + p < r.end) runs[j].push_back(RowRange{r.source, g, r.begin + p, r.begin + p + 1});
      }
    }
  }
  return runs;
}

// Groups of `tiles` (in their order) with enough GEMM-1 thread blocks to fill `sms` SMs at least
// once: group i is tiles [first[i], first[i + 1]). A group's reads, GEMMs and epilogue go together.
std::vector<size_t> tile_groups(const MoeLayerSpec& spec, const FusedTiles& tiles, uint32_t sms) {
  const uint64_t columns = spec.software.tile_columns;
  const uint64_t blocks_per_tile = (first_gemm_columns(spec) + columns - 1) / columns;
  std::vector<size_t> first{0};
  uint64_t blocks = 0;
  for (size_t t = 0; t < tiles.tiles.size(); ++t) {
    blocks += blocks_per_tile;
    if (blocks >= sms || t + 1 == tiles.tiles.size()) {
      first.push_back(t + 1);
      blocks = 0;
    }
  }
  return first;
}

}  // namespace

void build_ccfuser(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const uint32_t per_gpu = routing.experts_per_gpu();
  const ExpertRows rows = expert_rows(map, routing, false);
  expect_row_regions(plan, rows);
  const auto all_sms = static_cast<uint16_t>(std::min<uint32_t>(spec.gpu_sms, 0xFFFF));
  plan.extra_sequences.resize(routing.gpus);

  for (uint32_t g = 0; g < routing.gpus; ++g) {
    const std::vector<std::vector<RowRange>> runs = expert_runs(rows, g, per_gpu);
    std::vector<uint64_t> loads(per_gpu, 0);
    for (uint32_t j = 0; j < per_gpu; ++j) {
      for (const RowRange& r : runs[j]) loads[j] += r.end - r.begin;
    }
    const FusedTiles tiles = plan_fused_tiles(spec, loads);
    const std::vector<size_t> group_first = tile_groups(spec, tiles, all_sms);
    const size_t groups = group_first.size() - 1;
    const uint64_t counters = static_cast<uint64_t>(group_counter(groups));
    check_counters(plan.scheme.c_str(), counters);

    hw::WorkSequence& loader = start_sequence(plan, g, static_cast<uint32_t>(counters));
    loader.stream = 0;
    append_count_exchange(plan, loader, g, kDispatchPhase);
    plan.extra_sequences[g] = {side_stream(plan, g, 1, all_sms), side_stream(plan, g, 2, 0)};
    hw::WorkSequence& gemms = plan.extra_sequences[g][0];
    hw::WorkSequence& epilogue = plan.extra_sequences[g][1];
    epilogue.issue_sms = all_sms;  // the GEMM blocks' epilogues store the results

    for (size_t group = 0; group < groups; ++group) {
      std::vector<RowRange> ranges;
      uint32_t busy = 0;
      std::vector<bool> seen(per_gpu, false);
      for (size_t t = group_first[group]; t < group_first[group + 1]; ++t) {
        const std::vector<RowRange> of_tile = tile_rows(runs[tiles.tiles[t].expert], tiles.tiles[t]);
        ranges.insert(ranges.end(), of_tile.begin(), of_tile.end());
        busy += !seen[tiles.tiles[t].expert];
        seen[tiles.tiles[t].expert] = true;
      }
      for (const RowRange& r : ranges) append_row_reads(plan, rows, loader, r, kDispatchPhase, group_counter(group));
      const RowWork work = row_work(plan, rows, g, ranges);
      gemms.tasks.push_back(hw::Task::wait(kDispatchPhase, group_counter(group), work.rows));
      const uint32_t kernel = add_row_kernel(plan, gemms, g, work);
      ExpertGemms pair = expert_gemms(spec, kExpertsPhase, group_first[group + 1] - group_first[group], busy,
                                      work.rows, kernel);
      pair.gemm1.persistent = pair.gemm2.persistent = true;
      gemms.tasks.push_back(pair.gemm1);
      gemms.tasks.push_back(pair.gemm2);
      gemms.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, kGemmDoneCounter));
      epilogue.tasks.push_back(hw::Task::wait(kCombinePhase, kGemmDoneCounter, group + 1));
      for (const RowRange& r : ranges) append_row_sends(plan, rows, epilogue, r, true, kCombinePhase, kCombineCounter);
    }
    // Backward: the weight gradients once every group's data gradients ran, while the epilogue drains.
    if (const auto gradients = weight_gradient_gemms(spec, kExpertsPhase, loads, true)) {
      gemms.tasks.push_back(gradients->down);
      gemms.tasks.push_back(gradients->gate_up);
    }
  }
  for (uint32_t g = 0; g < routing.gpus; ++g) append_row_home_combine(plan, rows, plan.extra_sequences[g][1], g);
}

}  // namespace nvsvp::fw::detail
