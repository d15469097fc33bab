// The tile pipeline every token-centric schedule shares (docs/background/token_centric_fusion.md):
// the tiles and SM groups of the fused kernel, the counters and tables of a GPU's fused streams, GEMM-1 taking tiles as their tile-status entry
// fills, GEMM-2 taking them as their GEMM-1 ends, and COMET's kernel boundary. The in-switch
// schemes (scheme_dynamic.cpp) and the software ones (scheme_fused_software.cpp) differ only in
// what fills the entries and what follows a tile's GEMM-2.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>

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

// ---- Token-centric fusion ------------------------------------------------------------------------

FusedTiles plan_fused_tiles(const MoeLayerSpec& spec, const std::vector<uint64_t>& tokens_per_local_expert) {
  const uint64_t tile = spec.software.tile_tokens;
  FusedTiles plan;
  plan.tokens_per_local_expert = tokens_per_local_expert;
  std::vector<std::pair<double, size_t>> order;  // (fraction of its expert's tokens needed, tile)
  for (uint32_t j = 0; j < tokens_per_local_expert.size(); ++j) {
    const uint64_t n = tokens_per_local_expert[j];
    for (uint64_t first = 0; first < n; first += tile) {
      const uint64_t tokens = std::min(tile, n - first);
      order.emplace_back(static_cast<double>(first + tokens) / static_cast<double>(n), plan.tiles.size());
      plan.tiles.push_back(FusedTile{j, first, tokens});
    }
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<FusedTile> sorted;
  sorted.reserve(plan.tiles.size());
  for (const auto& o : order) sorted.push_back(plan.tiles[o.second]);
  plan.tiles = std::move(sorted);
  return plan;
}

void check_counters(const char* scheme, uint64_t counters) {
  if (counters <= hw::kMaxArrivalCounters) return;
  throw std::invalid_argument(std::string(scheme) + ": a GPU would need " + std::to_string(counters) +
                              " arrival counters (tiles and tokens), it has " + std::to_string(hw::kMaxArrivalCounters) +
                              "; use fewer workload.tokens_per_gpu or a larger software.tile_tokens");
}

FusedSmGroups fused_sm_groups(const MoeLayerSpec& spec, bool comet) {
  const SoftwareParams& s = spec.software;
  FusedSmGroups groups;
  if (comet) {
    if (s.comm_sms >= spec.gpu_sms) throw std::invalid_argument("comet: comm_sms must leave the GEMMs at least one SM");
    groups.dispatch = groups.combine = static_cast<uint16_t>(s.comm_sms);
    groups.gemm1 = groups.gemm2 = static_cast<uint16_t>(std::min<uint32_t>(spec.gpu_sms - s.comm_sms, 0xFFFF));
    return groups;
  }
  const uint64_t total = static_cast<uint64_t>(s.fusion_dispatch_sms) + s.fusion_gemm1_sms + s.fusion_gemm2_sms +
                         s.fusion_combine_sms;
  if (total > spec.gpu_sms) {
    throw std::invalid_argument("fused kernel: its SM groups take " + std::to_string(total) + " SMs, the GPU has " +
                                std::to_string(spec.gpu_sms));
  }
  groups.dispatch = static_cast<uint16_t>(s.fusion_dispatch_sms);
  groups.gemm1 = static_cast<uint16_t>(s.fusion_gemm1_sms);
  groups.gemm2 = static_cast<uint16_t>(s.fusion_gemm2_sms);
  groups.combine = static_cast<uint16_t>(s.fusion_combine_sms);
  groups.gemms_share_sms = s.fusion_sm_lending;
  return groups;
}

std::vector<std::array<hw::WorkSequence*, 4>> make_fused_streams(LayerPlan& plan, const FusedSmGroups& sms,
                                                                 uint32_t counters) {
  const uint32_t gpus = plan.spec->routing.gpus;
  plan.extra_sequences.assign(gpus, std::vector<hw::WorkSequence>(3));
  std::vector<std::array<hw::WorkSequence*, 4>> streams(gpus);
  const uint16_t group_sms[4] = {sms.dispatch, sms.gemm1, sms.gemm2, sms.combine};
  for (uint32_t g = 0; g < gpus; ++g) {
    streams[g] = {&plan.sequences[g], &plan.extra_sequences[g][0], &plan.extra_sequences[g][1],
                  &plan.extra_sequences[g][2]};
    for (uint32_t i = 0; i < 4; ++i) {
      hw::WorkSequence& seq = *streams[g][i];
      seq.stream = i;
      seq.sms = group_sms[i];
      if (sms.gemms_share_sms && (i == kGemm1Group || i == kGemm2Group)) seq.sm_pool = 1;
      // The dispatch and combine groups' SMs issue their stores (sends, multimem and dynamic
      // stores) at gpu.sm_store_gbps each, software and in-switch schemes alike.
      if (i == kDispatchGroup || i == kCombineGroup) seq.issue_sms = group_sms[i];
      seq.phase_names = moe_phase_names();
      seq.counters = counters;
    }
  }
  return streams;
}

}  // namespace nvsvp::fw::detail
