// The software all-to-all schedules with fine-grained overlap
// (docs/background/token_centric_fusion.md):
//   `fusion-only`: token-centric fusion over deepep's all-to-all. Four executor streams per GPU
//     (the SM groups of one persistent kernel):
//       dispatch: the count exchange, then deepep's dispatch (one copy per destination GPU);
//       GEMM-1:   tile groups as their tokens arrive: each copy that lands counts on the
//                 tile-status entry of every tile (one per local expert of the token) it belongs to;
//       GEMM-2:   each group after its GEMM-1, then a signal to the combine stream;
//       combine:  after each GEMM-2 group, the partials of the token copies whose last tile it
//                 was go to their homes (batched as deepep's); the home sums its partials at the end.
//   `comet` (COMET / CCFuser class): the same pieces as two kernels one after the other: dispatch
//     overlapping GEMM-1, then GEMM-2 overlapping combine; dispatch and combine never overlap.
// A tile holds software.tile_tokens of an expert's tokens in the order firmware expects them to
// arrive (by local token index, then home: every sender walks its tokens in order at once).
#include <algorithm>
#include <stdexcept>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

// [local expert]: its tokens on GPU g as (order key, slot), in expected arrival order.
using Members = std::vector<std::vector<std::pair<uint64_t, uint64_t>>>;

Members expert_members(const MoeRouting& routing, const std::vector<uint64_t>& slots, uint32_t g) {
  const uint32_t per_gpu = routing.experts_per_gpu();
  Members members(per_gpu);
  for (uint64_t s = 0; s < slots.size(); ++s) {
    const uint64_t t = slots[s];
    const uint16_t* experts = routing.experts_of(t);
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      if (experts[k] / per_gpu != g) continue;
      const uint64_t key = (t % routing.tokens_per_gpu) * routing.gpus + t / routing.tokens_per_gpu;
      members[experts[k] - g * per_gpu].emplace_back(key, s);
    }
  }
  for (auto& list : members) std::sort(list.begin(), list.end());
  return members;
}

// The tile-status table of GPU g's dispatch stream: each slot counts on the tiles it belongs to.
// Returns, per slot, the group of the last of its tiles (its partial is done with that group).
std::vector<size_t> install_tile_status(const LayerPlan& plan, const std::array<hw::WorkSequence*, 4>& streams,
                                        uint64_t slots, const Members& members, const FusedTiles& tiles) {
  std::vector<std::vector<uint32_t>> slot_tiles(slots);
  std::vector<size_t> last_group(slots, 0);
  for (size_t i = 0; i < tiles.groups(); ++i) {
    for (size_t t = tiles.group_first[i]; t < tiles.group_first[i + 1]; ++t) {
      const FusedTile& tile = tiles.tiles[t];
      for (uint64_t m = tile.first; m < tile.first + tile.tokens; ++m) {
        const uint64_t s = members[tile.expert][m].second;
        slot_tiles[s].push_back(kFirstTileCounter + static_cast<uint32_t>(t));
        last_group[s] = std::max(last_group[s], i);
      }
    }
  }
  hw::CounterMap arrivals;
  arrivals.base = plan.buffers.dispatch_rx;
  arrivals.stride = plan.buffers.dispatch_stride;
  arrivals.entries = slots;
  arrivals.first.reserve(slots + 1);
  for (const std::vector<uint32_t>& list : slot_tiles) {
    arrivals.first.push_back(static_cast<uint32_t>(arrivals.counters.size()));
    arrivals.counters.insert(arrivals.counters.end(), list.begin(), list.end());
  }
  arrivals.first.push_back(static_cast<uint32_t>(arrivals.counters.size()));
  hw::WorkSequence& dispatch = *streams[kDispatchGroup];
  dispatch.counter_maps.push_back(std::move(arrivals));
  const auto tile_count = static_cast<uint32_t>(tiles.tiles.size());
  check_counters(plan.scheme.c_str(), static_cast<uint64_t>(kFirstTileCounter) + tile_count);
  dispatch.counter_tables.push_back(hw::CounterTableRange{hw::CounterTable::tile_status, kFirstTileCounter, tile_count});
  for (auto* seq : streams) seq->counters = kFirstTileCounter + tile_count;
  return last_group;
}

// The tile groups: GEMM-1 group i waits for its tiles, runs and signals; GEMM-2 group i waits for
// GEMM-1 group i (with `comet`, for all of GEMM-1 and the kernel boundary), runs, computes the
// partials of the copies whose last tile it held (`group_runs[i]`), and signals the combine stream.
void append_tile_groups(const LayerPlan& plan, const DispatchMap& map, const std::array<hw::WorkSequence*, 4>& streams,
                        uint32_t g, const FusedTiles& tiles, const std::vector<std::vector<SlotRun>>& group_runs,
                        bool comet) {
  const MoeLayerSpec& spec = *plan.spec;
  hw::WorkSequence& gemm1 = *streams[kGemm1Group];
  hw::WorkSequence& gemm2 = *streams[kGemm2Group];
  if (comet) {
    gemm2.tasks.push_back(hw::Task::wait(kExpertsPhase, kGemm1DoneCounter, tiles.groups()));
    append_software_cost(gemm2, kExpertsPhase, spec.software.sync_ns);
  }
  for (size_t i = 0; i < tiles.groups(); ++i) {
    uint64_t tokens = 0;
    std::vector<bool> busy(spec.routing.experts_per_gpu(), false);
    for (size_t t = tiles.group_first[i]; t < tiles.group_first[i + 1]; ++t) {
      gemm1.tasks.push_back(
          hw::Task::wait(kDispatchPhase, kFirstTileCounter + static_cast<uint32_t>(t), tiles.tiles[t].tokens));
      tokens += tiles.tiles[t].tokens;
      busy[tiles.tiles[t].expert] = true;
    }
    uint32_t kernel = hw::Task::kNoKernel;
    if (!group_runs[i].empty()) {
      gemm2.kernels.push_back(expert_kernel(plan.spec, plan.buffers, map.received, g, group_runs[i]));
      kernel = static_cast<uint32_t>(gemm2.kernels.size() - 1);
    }
    const auto busy_experts = static_cast<uint32_t>(std::count(busy.begin(), busy.end(), true));
    ExpertGemms gemms =
        expert_gemms(spec, kExpertsPhase, tiles.group_first[i + 1] - tiles.group_first[i], busy_experts, tokens, kernel);
    gemms.gemm1.persistent = gemms.gemm2.persistent = true;
    gemm1.tasks.push_back(gemms.gemm1);
    gemm1.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, kGemm1DoneCounter));
    if (!comet) gemm2.tasks.push_back(hw::Task::wait(kExpertsPhase, kGemm1DoneCounter, i + 1));
    gemm2.tasks.push_back(gemms.gemm2);
    gemm2.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, kGemm2DoneCounter));
  }
}

// Combine: after each GEMM-2 group, the partials it finished, homes in turn after this GPU; the
// home's sum at the kernel's end.
void append_fused_combine(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& combine, uint32_t g,
                          const std::vector<std::vector<SlotRun>>& group_runs) {
  const MoeRouting& routing = plan.spec->routing;
  const std::vector<uint64_t>& slots = (*map.received)[g];
  std::vector<std::vector<uint64_t>> by_home(routing.gpus);
  PartialSender partials(plan, map, combine, g);
  for (size_t i = 0; i < group_runs.size(); ++i) {
    combine.tasks.push_back(hw::Task::wait(kCombinePhase, kGemm2DoneCounter, i + 1));
    for (auto& list : by_home) list.clear();
    for (const SlotRun& run : group_runs[i]) {
      for (uint64_t s = run.begin; s < run.end; ++s) by_home[routing.home_of_token(slots[s])].push_back(s);
    }
    for (uint32_t n = 1; n <= routing.gpus; ++n) {
      for (uint64_t s : by_home[(g + n) % routing.gpus]) partials.send(s);
      partials.flush();
    }
  }
  append_home_combine(plan, combine, g);
}

void build_fused_software(LayerPlan& plan, const DispatchMap& map, bool comet) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const FusedSmGroups sms = fused_sm_groups(spec, comet);
  const auto streams = make_fused_streams(plan, sms, kFirstTileCounter);

  for (uint32_t g = 0; g < routing.gpus; ++g) {
    hw::WorkSequence& dispatch = *streams[g][kDispatchGroup];
    append_count_exchange(plan, dispatch, g, kDispatchPhase);
    append_software_dispatch(plan, map, dispatch, g, own_tokens(routing, g), kDispatchPhase, kDispatchCounter);
  }

  for (uint32_t g = 0; g < routing.gpus; ++g) {
    const std::vector<uint64_t>& slots = (*map.received)[g];
    const Members members = expert_members(routing, slots, g);
    std::vector<uint64_t> loads;
    for (const auto& list : members) loads.push_back(list.size());
    const FusedTiles tiles = plan_fused_tiles(spec, loads, sms.gemm1);
    const std::vector<size_t> last_group = install_tile_status(plan, streams[g], slots.size(), members, tiles);

    std::vector<std::vector<SlotRun>> group_runs(tiles.groups());
    for (uint64_t s = 0; s < slots.size(); ++s) {
      std::vector<SlotRun>& runs = group_runs[last_group[s]];
      if (runs.empty() || runs.back().end != s) runs.push_back(SlotRun{s, s});
      runs.back().end = s + 1;
    }
    append_tile_groups(plan, map, streams[g], g, tiles, group_runs, comet);
    append_fused_combine(plan, map, *streams[g][kCombineGroup], g, group_runs);
  }
}

}  // namespace

void build_comet(LayerPlan& plan, const DispatchMap& map) { build_fused_software(plan, map, true); }

void build_fusion_only(LayerPlan& plan, const DispatchMap& map) { build_fused_software(plan, map, false); }

}  // namespace nvsvp::fw::detail
