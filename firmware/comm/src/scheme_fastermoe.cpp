// `fastermoe` (FasterMoE, He et al., PPoPP 2022; github thu-pacman/FasterMoE;
// docs/background/baselines.md#fastermoe): FastMoE's all-to-all with FasterMoE's smart schedule.
//   layout:   one row per (token, expert) (FastMoE's scatter keeps a token once per expert), packed
//             per (source, expert), no capacity and no padding;
//   schedule: the all-to-all split into pairwise exchanges: step j (0 .. GPUs - 1) sends to the peer
//             at distance +j and receives from the peer at distance -j (step 0: the GPU's own rows).
//             Two executor streams per GPU:
//     communication (software.nccl_channels SMs: NCCL's send / receive kernels): the count exchange,
//       then every step's exchange in turn, a step ending when its rows from the peer at -j have
//       arrived (NCCL's grouped send and receive); then, step by step as the experts finish the
//       rows of step j, those rows' results back to the peer at -j;
//     experts (the other SMs): per step, the wait for the rows of step j, the expert GEMMs over
//       them (the experts run once per peer's rows, each padded to whole tiles), a signal.
//   The experts' compute of one peer's rows thus overlaps the exchange with the next peer, and the
//   combine of one step the compute of the next.
// Shadow experts (replicating popular experts' weights instead of moving their tokens) are not
// modelled; docs/background/baselines.md#fastermoe says why that matters little here.
#include <algorithm>
#include <stdexcept>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

uint32_t step_counter(uint32_t step) { return kMoeCounters + step; }
uint32_t experts_done_counter(uint32_t gpus) { return kMoeCounters + gpus; }

hw::WorkSequence pairwise_experts_stream(const LayerPlan& plan, const ExpertRows& rows, uint32_t g, uint16_t sms) {
  const MoeLayerSpec& spec = *plan.spec;
  const uint32_t gpus = spec.routing.gpus;
  hw::WorkSequence work = side_stream(plan, g, 1, sms);
  for (uint32_t step = 0; step < gpus; ++step) {
    const uint32_t source = (g + gpus - step) % gpus;
    const RowWork received = row_work(plan, rows, g, {RowRange{source, g, 0, rows.rows[source][g].size()}});
    work.tasks.push_back(hw::Task::wait(kDispatchPhase, step_counter(step), received.rows));
    const uint32_t kernel = add_row_kernel(plan, work, g, received);
    if (received.rows > 0) {
      append_expert_gemms(spec, work, kExpertsPhase, received.tokens_per_local_expert, received.rows, kernel);
    }
    work.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, experts_done_counter(gpus)));
  }
  return work;
}

}  // namespace

void build_fastermoe(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const uint32_t gpus = routing.gpus;
  const uint32_t channels = spec.software.nccl_channels;
  if (channels >= spec.gpu_sms) {
    throw std::invalid_argument("fastermoe: nccl_channels must leave the GEMMs at least one SM");
  }
  const ExpertRows rows = expert_rows(map, routing, false);
  expect_row_regions(plan, rows);
  plan.extra_sequences.resize(gpus);
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& comm = start_sequence(plan, g, experts_done_counter(gpus) + 1);
    comm.sms = static_cast<uint16_t>(channels);
    comm.issue_sms = static_cast<uint16_t>(channels);
    append_count_exchange(plan, comm, g, kDispatchPhase);
    // The rows of step j land at peer g + j on that peer's step-j counter (it receives them from
    // the GPU at its distance -j).
    for (uint32_t step = 0; step < gpus; ++step) {
      const uint32_t to = (g + step) % gpus;
      const uint32_t from = (g + gpus - step) % gpus;
      append_row_sends(plan, rows, comm, RowRange{g, to, 0, rows.rows[g][to].size()}, false, kDispatchPhase,
                       step_counter(step));
      comm.tasks.push_back(hw::Task::wait(kDispatchPhase, step_counter(step), rows.rows[from][g].size()));
    }
  }
  for (uint32_t g = 0; g < gpus; ++g) {
    plan.extra_sequences[g].push_back(
        pairwise_experts_stream(plan, rows, g, static_cast<uint16_t>(std::min<uint32_t>(spec.gpu_sms - channels, 0xFFFF))));
    hw::WorkSequence& comm = plan.sequences[g];
    uint64_t results_back = 0;  // rows of this GPU's tokens back after the steps so far
    for (uint32_t step = 0; step < gpus; ++step) {
      const uint32_t source = (g + gpus - step) % gpus;  // whose rows step `step` computed
      comm.tasks.push_back(hw::Task::wait(kCombinePhase, experts_done_counter(gpus), step + 1));
      append_row_sends(plan, rows, comm, RowRange{source, g, 0, rows.rows[source][g].size()}, true, kCombinePhase,
                       kCombineCounter);
      // The step's receive, its results from the peer at +j (counted with the earlier steps').
      results_back += rows.rows[g][(g + step) % gpus].size();
      comm.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, results_back));
    }
    append_row_home_combine(plan, rows, comm, g);
  }
}

}  // namespace nvsvp::fw::detail
