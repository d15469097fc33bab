// The tile pipeline every token-centric schedule shares (docs/background/token_centric_fusion.md):
// the counters and tables of a GPU's fused streams, GEMM-1 taking tiles as their tile-status entry
// fills, GEMM-2 taking them as their GEMM-1 ends, and COMET's kernel boundary. The in-switch
// schemes (scheme_dynamic.cpp) and the software ones (scheme_fused_software.cpp) differ only in
// what fills the entries and what follows a tile's GEMM-2.
#include <algorithm>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

FusedCounters install_fused_counters(const LayerPlan& plan, const std::array<hw::WorkSequence*, 4>& streams,
                                     size_t tiles, uint64_t extra) {
  const uint32_t tokens_per_gpu = plan.spec->routing.tokens_per_gpu;
  const uint64_t end = kFirstTileCounter + 2 * static_cast<uint64_t>(tiles) + tokens_per_gpu + extra;
  check_counters(plan.scheme.c_str(), end);
  FusedCounters counters;
  counters.tiles = static_cast<uint32_t>(tiles);
  counters.first_gemm1_done = kFirstTileCounter + counters.tiles;
  counters.first_ready = counters.first_gemm1_done + counters.tiles;
  counters.first_extra = counters.first_ready + tokens_per_gpu;
  hw::WorkSequence& dispatch = *streams[kDispatchGroup];
  dispatch.counter_tables.push_back(hw::CounterTableRange{hw::CounterTable::tile_status, kFirstTileCounter, counters.tiles});
  dispatch.counter_tables.push_back(
      hw::CounterTableRange{hw::CounterTable::output_readiness, counters.first_ready, tokens_per_gpu});
  for (auto* seq : streams) seq->counters = static_cast<uint32_t>(end);
  return counters;
}

namespace {

void append_fused_weight_gradients(const MoeLayerSpec& spec, const std::array<hw::WorkSequence*, 4>& streams,
                                   const FusedTiles& tiles, bool comet) {
  const auto gradients = weight_gradient_gemms(spec, kExpertsPhase, tiles.tokens_per_local_expert, true);
  if (!gradients) return;
  if (comet) {
    // COMET's two GEMM groups are the same SMs, one kernel after the other: both weight gradients
    // follow GEMM-2's last tile there (on two streams they would run on twice the GPU's GEMM SMs).
    streams[kGemm2Group]->tasks.push_back(gradients->down);
    streams[kGemm2Group]->tasks.push_back(gradients->gate_up);
    return;
  }
  // Backward: each GEMM group (SMs of its own) computes its projection's weight gradient once its
  // last tile's data gradient ran, while the combine group drains.
  streams[kGemm1Group]->tasks.push_back(gradients->down);
  streams[kGemm2Group]->tasks.push_back(gradients->gate_up);
}

}  // namespace

void append_tile_pipeline(const MoeLayerSpec& spec, const std::array<hw::WorkSequence*, 4>& streams,
                          const FusedTiles& tiles, const FusedCounters& counters, uint64_t arrivals_per_token,
                          bool comet, std::vector<TileWork> work) {
  hw::WorkSequence& gemm1 = *streams[kGemm1Group];
  hw::WorkSequence& gemm2 = *streams[kGemm2Group];
  // With `comet` a GEMM-1 item also counts on the total the kernel boundary waits for.
  gemm1.tasks.reserve(gemm1.tasks.size() + (comet ? 4 : 3) * counters.tiles + 1);
  gemm1.tasks.push_back(hw::Task::take_ready(kExpertsPhase, counters.tiles, comet ? 3 : 2));
  gemm2.tasks.reserve(gemm2.tasks.size() + 3 * counters.tiles + 4);
  if (comet) {
    // The kernel boundary: GEMM-2 and combine start when all of GEMM-1 is done.
    gemm2.tasks.push_back(hw::Task::wait(kExpertsPhase, kGemm1DoneCounter, counters.tiles));
    append_software_cost(gemm2, kExpertsPhase, spec.software.sync_ns);
    gemm2.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, kSecondKernelCounter));
  }
  gemm2.tasks.push_back(hw::Task::take_ready(kExpertsPhase, counters.tiles, 2));
  for (uint32_t t = 0; t < counters.tiles; ++t) {
    const FusedTile& tile = tiles.tiles[t];
    gemm2.kernels.push_back(std::move(work[t].kernel));
    ExpertGemms gemms = expert_gemms(spec, kExpertsPhase, 1, 1, tile.tokens, static_cast<uint32_t>(gemm2.kernels.size() - 1));
    gemms.gemm1.persistent = gemms.gemm2.persistent = true;
    gemm1.tasks.push_back(hw::Task::wait(kDispatchPhase, kFirstTileCounter + t, arrivals_per_token * tile.tokens));
    gemm1.tasks.push_back(gemms.gemm1);
    gemm1.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, counters.first_gemm1_done + t));
    if (comet) gemm1.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, kGemm1DoneCounter));
    gemm2.tasks.push_back(hw::Task::wait(kExpertsPhase, counters.first_gemm1_done + t, 1));
    gemm2.tasks.push_back(gemms.gemm2);
    gemm2.tasks.push_back(work[t].after_gemm2);
  }
  append_fused_weight_gradients(spec, streams, tiles, comet);
}

void append_second_kernel_wait(hw::WorkSequence& combine, bool comet) {
  if (comet) combine.tasks.push_back(hw::Task::wait(kCombinePhase, kSecondKernelCounter, 1));
}

}  // namespace nvsvp::fw::detail
