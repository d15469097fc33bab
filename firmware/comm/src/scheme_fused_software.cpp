// The software all-to-all schedules with fine-grained overlap
// (docs/background/token_centric_fusion.md): `fusion-only` is `dysharp` and `comet` is
// `dysharp-comet` with the software all-to-all instead of dynamic multimem. The same tiles
// (plan_fused_tiles), SM groups (fused_sm_groups) and tile pipeline (append_tile_pipeline: GEMM-1
// and GEMM-2 take tiles as they become ready; `comet` has the kernel boundary), on four executor
// streams per GPU:
//   dispatch: the count exchange, then deepep's dispatch (one copy per destination GPU), each
//             copy followed by its readiness flag (software.fence_ns, flag_poll_ns);
//   GEMM-1:   takes tiles as their tile-status entry has counted the data and the flag of every
//             copy of the tile (the software kernel polls flags: there is no hardware tracker);
//   GEMM-2:   takes tiles as their GEMM-1 ends, then signals the copies of the tile's tokens;
//   combine:  takes work as it becomes ready: a copy's partial, once all its tiles (one per local
//             expert of the token) are done, goes home followed by its flag; a token of this GPU,
//             once the partial and flag of every copy are in, is summed (token-centric).
// Where the in-switch schemes multicast one store, notify and reduce in the switch, these copy
// per destination GPU, write flags and sum at the home (decisions.md, "The software fused schemes").
#include <algorithm>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

// [local expert]: its tokens on GPU g as (order key, slot), in expected arrival order: the order
// the senders send them. Every sender walks its channels side by side, each channel its own
// contiguous share of the tokens (append_software_dispatch), so a token's place in that order is
// (its index within its channel, its channel), then its home. Tiles filled in plain token order
// would wait for the one channel that owns a tile's tokens, at a tenth of the sender's rate.
using Members = std::vector<std::vector<std::pair<uint64_t, uint64_t>>>;

Members expert_members(const MoeLayerSpec& spec, const std::vector<uint64_t>& slots, uint32_t g) {
  const MoeRouting& routing = spec.routing;
  const uint32_t per_gpu = routing.experts_per_gpu();
  const uint64_t channels =
      std::max<uint64_t>(1, std::min<uint64_t>(software_channels(spec.software), routing.tokens_per_gpu));
  const uint64_t per_channel = (routing.tokens_per_gpu + channels - 1) / channels;
  Members members(per_gpu);
  for (uint64_t s = 0; s < slots.size(); ++s) {
    const uint64_t t = slots[s];
    const uint16_t* experts = routing.experts_of(t);
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      if (experts[k] / per_gpu != g) continue;
      const uint64_t local = t % routing.tokens_per_gpu;
      const uint64_t send_position = (local % per_channel) * channels + local / per_channel;
      const uint64_t key = send_position * routing.gpus + t / routing.tokens_per_gpu;
      members[experts[k] - g * per_gpu].emplace_back(key, s);
    }
  }
  for (auto& list : members) std::sort(list.begin(), list.end());
  return members;
}

// Where a tile's GEMM-2 signals its copies: a 0-byte local copy to kTileDone + 16 x tile counts
// on the counter of every copy in the tile.
constexpr uint64_t kTileDone = 0x1000'0000'0000;

// The counters after the common fused ones: per slot (a copy received), its tiles done.
struct SoftwareCounters {
  FusedCounters fused;
  uint32_t first_copy_done = 0;
};

// A counter map whose entry i counts on lists[i] (a map by landing address, CounterMap).
hw::CounterMap list_map(uint64_t base, uint64_t stride, const std::vector<std::vector<uint32_t>>& lists,
                        uint64_t seen_after_ps) {
  hw::CounterMap map;
  map.base = base;
  map.stride = stride;
  map.entries = lists.size();
  map.seen_after_ps = seen_after_ps;
  map.first.reserve(lists.size() + 1);
  for (const std::vector<uint32_t>& list : lists) {
    map.first.push_back(static_cast<uint32_t>(map.counters.size()));
    map.counters.insert(map.counters.end(), list.begin(), list.end());
  }
  map.first.push_back(static_cast<uint32_t>(map.counters.size()));
  return map;
}

// GPU g's counting by landing address: a copy's data and its flag count on each tile it belongs
// to; a tile's GEMM-2 signal on each of its copies; a partial and its flag at the home on their
// token's readiness entry.
SoftwareCounters install_software_tables(const LayerPlan& plan, const std::array<hw::WorkSequence*, 4>& streams,
                                         uint32_t g, const Members& members, const FusedTiles& tiles) {
  const MoeRouting& routing = plan.spec->routing;
  const uint64_t slots = (*plan.received)[g].size();
  SoftwareCounters counters;
  counters.fused = install_fused_counters(plan, streams, tiles.tiles.size(), slots);
  counters.first_copy_done = counters.fused.first_extra;
  std::vector<std::vector<uint32_t>> slot_tiles(slots);
  std::vector<std::vector<uint32_t>> tile_copies(tiles.tiles.size());
  for (uint32_t t = 0; t < tiles.tiles.size(); ++t) {
    const FusedTile& tile = tiles.tiles[t];
    for (uint64_t m = tile.first; m < tile.first + tile.tokens; ++m) {
      const uint64_t s = members[tile.expert][m].second;
      slot_tiles[s].push_back(kFirstTileCounter + t);
      tile_copies[t].push_back(counters.first_copy_done + static_cast<uint32_t>(s));
    }
  }
  const uint64_t seen = flag_seen_after_ps(plan.spec->software);
  hw::WorkSequence& dispatch = *streams[kDispatchGroup];
  const MoeBuffers& b = plan.buffers;
  dispatch.counter_maps.push_back(list_map(b.dispatch_rx, b.dispatch_stride, slot_tiles, 0));
  dispatch.counter_maps.push_back(list_map(kDispatchFlags, hw::kCounterEntryBytes, slot_tiles, seen));
  dispatch.counter_maps.push_back(list_map(kTileDone, hw::kCounterEntryBytes, tile_copies, 0));
  // At the home: the partial of a copy lands in combine_rx by copy, its flag by local token.
  const TokenRange own = own_tokens(routing, g);
  const uint64_t first_copy = (*plan.copy_first)[own.begin];
  std::vector<std::vector<uint32_t>> copy_token(copies_of_home(plan, g));
  for (uint64_t t = own.begin; t < own.end; ++t) {
    for (uint64_t c = (*plan.copy_first)[t]; c < (*plan.copy_first)[t + 1]; ++c) {
      copy_token[c - first_copy].push_back(counters.fused.first_ready + static_cast<uint32_t>(t - own.begin));
    }
  }
  dispatch.counter_maps.push_back(list_map(b.combine_rx, b.combine_stride, copy_token, 0));
  hw::CounterMap flags;
  flags.base = kReadinessTable;
  flags.entries = routing.tokens_per_gpu;
  flags.first_counter = counters.fused.first_ready;
  flags.seen_after_ps = seen;
  dispatch.counter_maps.push_back(std::move(flags));
  return counters;
}

// Per tile: the local experts' partials of its copies (idempotent: a copy in several tiles gets
// the same sum each time), then the signal to its copies.
std::vector<TileWork> software_tile_work(const LayerPlan& plan, const DispatchMap& map, uint32_t g,
                                         const Members& members, const FusedTiles& tiles) {
  std::vector<TileWork> work;
  work.reserve(tiles.tiles.size());
  for (uint32_t t = 0; t < tiles.tiles.size(); ++t) {
    const FusedTile& tile = tiles.tiles[t];
    std::vector<uint64_t> slots;
    for (uint64_t m = tile.first; m < tile.first + tile.tokens; ++m) slots.push_back(members[tile.expert][m].second);
    std::sort(slots.begin(), slots.end());
    std::vector<SlotRun> runs;
    for (uint64_t s : slots) {
      if (runs.empty() || runs.back().end != s) runs.push_back(SlotRun{s, s});
      runs.back().end = s + 1;
    }
    work.push_back(TileWork{expert_kernel(plan.spec, plan.buffers, map.received, g, std::move(runs)),
                            hw::Task::local_copy(kCombinePhase, kStreamSignal, kTileDone + hw::kCounterEntryBytes * t,
                                                 0, kUnwaitedCounter)});
  }
  return work;
}

// The combine group: one take_ready over the copies this GPU computed (wait for its tiles, send the
// partial home, then its flag) and the tokens it is home of (wait for every copy's partial and
// flag, sum them), each item two tasks; then the sums' functional effect.
void append_software_combine(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& combine, uint32_t g,
                             const SoftwareCounters& counters, const std::vector<uint32_t>& tiles_of_slot, bool comet) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const MoeBuffers& b = plan.buffers;
  const std::vector<uint64_t>& slots = (*map.received)[g];
  const uint64_t bytes = vector_bytes(spec.combine_dtype, spec.model.hidden);
  const TokenRange own = own_tokens(routing, g);
  append_second_kernel_wait(combine, comet);
  combine.tasks.reserve(combine.tasks.size() + 3 * (slots.size() + routing.tokens_per_gpu) + 4);
  combine.tasks.push_back(hw::Task::take_ready(kCombinePhase, slots.size() + routing.tokens_per_gpu, 2));
  // Ready partials go out homes in turn after this GPU, as deepep's combine sends them: in slot
  // order (grouped by home) every GPU would send to GPU 0 first, then all to GPU 1, one home's
  // links taking all GPUs' partials at once while the others idle.
  const std::vector<uint64_t> first_of_source = first_slot_of_source(map, g);
  std::vector<uint64_t> slot_order;
  slot_order.reserve(slots.size());
  for (uint32_t n = 1; n <= routing.gpus; ++n) {
    const uint32_t home = (g + n) % routing.gpus;
    const uint64_t end = home + 1 < routing.gpus ? first_of_source[home + 1] : slots.size();
    for (uint64_t s = first_of_source[home]; s < end; ++s) slot_order.push_back(s);
  }
  for (const uint64_t s : slot_order) {
    const uint64_t token = slots[s];
    const uint32_t home = routing.home_of_token(token);
    const uint64_t source = b.partial + s * b.combine_stride;
    const uint64_t target = combine_slot_address(plan, home, copy_to(map, token, g));
    const uint64_t flag = kReadinessTable + hw::kCounterEntryBytes * (token - own_tokens(routing, home).begin);
    combine.tasks.push_back(hw::Task::wait(kCombinePhase, counters.first_copy_done + static_cast<uint32_t>(s), tiles_of_slot[s]));
    if (home == g) {
      combine.tasks.push_back(hw::Task::local_copy(kCombinePhase, source, target, bytes, kCombineCounter));
      combine.tasks.push_back(hw::Task::local_copy(kCombinePhase, kFlagSource, flag, kFlagBytes, kNotifyCounter));
      continue;
    }
    combine.tasks.push_back(hw::Task::send(kCombinePhase, home, source, target, bytes, kCombineCounter));
    combine.tasks.push_back(hw::Task::send(kCombinePhase, home, kFlagSource, flag, kFlagBytes, kNotifyCounter));
    plan.expected_link_arrivals[home] += 2;
  }
  for (uint64_t t = own.begin; t < own.end; ++t) {
    const uint64_t copies = map.first[t + 1] - map.first[t];
    combine.tasks.push_back(
        hw::Task::wait(kCombinePhase, counters.fused.first_ready + static_cast<uint32_t>(t - own.begin), 2 * copies));
    combine.tasks.push_back(partial_sum_task(spec, kCombinePhase, copies, b));
    combine.tasks.push_back(hw::Task::local_copy(kCombinePhase, kStreamSignal, kStreamSignal, 0, kUnwaitedCounter));
  }
  combine.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, copies_of_home(plan, g)));
  combine.kernels.push_back(home_sum_kernel(plan, g));
  combine.tasks.push_back(hw::Task::delay(kCombinePhase, 0.0, static_cast<uint32_t>(combine.kernels.size() - 1)));
}

void build_fused_software(LayerPlan& plan, const DispatchMap& map, bool comet) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const FusedSmGroups sms = fused_sm_groups(spec, comet);
  const auto streams = make_fused_streams(plan, sms, kFirstTileCounter);

  for (uint32_t g = 0; g < routing.gpus; ++g) {
    hw::WorkSequence& dispatch = *streams[g][kDispatchGroup];
    append_count_exchange(plan, dispatch, g, kDispatchPhase);
    append_software_dispatch(plan, map, dispatch, g, own_tokens(routing, g), kDispatchPhase, kDispatchCounter, true);
  }

  for (uint32_t g = 0; g < routing.gpus; ++g) {
    const std::vector<uint64_t>& slots = (*map.received)[g];
    const Members members = expert_members(spec, slots, g);
    std::vector<uint64_t> loads;
    for (const auto& list : members) loads.push_back(list.size());
    const FusedTiles tiles = plan_fused_tiles(spec, loads);
    const SoftwareCounters counters = install_software_tables(plan, streams[g], g, members, tiles);
    std::vector<uint32_t> tiles_of_slot(slots.size(), 0);
    for (const FusedTile& tile : tiles.tiles) {
      for (uint64_t m = tile.first; m < tile.first + tile.tokens; ++m) tiles_of_slot[members[tile.expert][m].second]++;
    }
    // A tile's entry counts each copy's data and its flag.
    append_tile_pipeline(spec, streams[g], tiles, counters.fused, 2, comet, software_tile_work(plan, map, g, members, tiles));
    append_software_combine(plan, map, *streams[g][kCombineGroup], g, counters, tiles_of_slot, comet);
  }
}

}  // namespace

void build_comet(LayerPlan& plan, const DispatchMap& map) { build_fused_software(plan, map, true); }

void build_fusion_only(LayerPlan& plan, const DispatchMap& map) { build_fused_software(plan, map, false); }

}  // namespace nvsvp::fw::detail
