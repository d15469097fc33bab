// `deepep-ll`: DeepEP's low-latency kernels, the form of its software all-to-all made for
// inference decoding (github deepseek-ai/DeepEP; docs/background/baselines.md#deepep-ll). A decode
// batch is small, so what a layer pays is fixed costs and latency, not bandwidth; the kernels
// remove what deepep spends before the first byte moves.
//   layout:   every (GPU, local expert) has a receive buffer per source GPU, sized for the most
//             tokens a GPU may send, allocated once: no count exchange, no offsets to compute. A
//             token goes to each of its experts as its own row (a token's experts on one GPU do
//             not share a copy), in the workload's dispatch format.
//   dispatch: every SM of the GPU stores rows straight into the experts' buffers, round the peers
//             in chunks of software.chunk_tokens rows; after its rows to a peer, one 16-byte count
//             per expert of that peer (the receiver's per-(expert, source) flag says how many
//             rows came). A GPU's experts start once every peer's counts and all their rows are
//             in, after a kernel boundary (software.sync_ns).
//   experts:  the masked grouped GEMMs over each expert's buffer (its tokens padded to tiles).
//   combine:  each expert's output row goes back to its token's home (k rows a token, none
//             summed on the way), after a kernel boundary the home sums them.
// Not modelled: the receive hook that lets two micro batches overlap with no SM (one batch is
// simulated), and the buffer's memory footprint beyond its report (plan figure
// receive_buffer_bytes).
#include <algorithm>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

// [source x experts per GPU + local expert]: the count a source wrote for an expert of this GPU.
constexpr uint64_t kExpertCountFlags = 0x2300'0000'0000;
constexpr uint64_t kCountFlagBytes = 16;

// GPU g's rows with every other GPU, round them from the next one, software.chunk_tokens rows of
// each at a time: the dispatch sends g's rows to each peer, the combine returns each home's rows
// from g.
void append_rows_round_robin(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, uint32_t g,
                             bool combine) {
  const uint32_t gpus = plan.spec->routing.gpus;
  const uint32_t chunk = plan.spec->software.chunk_tokens;
  const auto all_of = [&](uint32_t other) {
    return combine ? RowRange{other, g, 0, rows.rows[other][g].size()} : RowRange{g, other, 0, rows.rows[g][other].size()};
  };
  uint64_t rounds = 0;
  for (uint32_t other = 0; other < gpus; ++other) rounds = std::max(rounds, all_of(other).end);
  for (uint64_t r = 0; r < rounds; r += chunk) {
    for (uint32_t n = 1; n <= gpus; ++n) {
      RowRange range = all_of((g + n) % gpus);
      range.begin = r;
      range.end = std::min(r + chunk, range.end);
      if (range.begin >= range.end) continue;
      append_row_sends(plan, rows, seq, range, combine, combine ? kCombinePhase : kDispatchPhase,
                       combine ? kCombineCounter : kDispatchCounter);
    }
  }
}

}  // namespace

void build_deepep_ll(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const uint32_t gpus = routing.gpus;
  const uint32_t per_gpu = routing.experts_per_gpu();
  const ExpertRows rows = expert_rows(map, routing, false);
  expect_row_regions(plan, rows);
  const auto all_sms = static_cast<uint16_t>(std::min<uint32_t>(spec.gpu_sms, 0xFFFF));

  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = start_sequence(plan, g, kMoeCounters);
    seq.issue_sms = all_sms;
    append_rows_round_robin(plan, rows, seq, g, false);
    for (uint32_t n = 1; n < gpus; ++n) {
      const uint32_t peer = (g + n) % gpus;
      for (uint32_t j = 0; j < per_gpu; ++j) {
        const uint64_t flag = kExpertCountFlags + kCountFlagBytes * (uint64_t{g} * per_gpu + j);
        seq.tasks.push_back(hw::Task::send(kDispatchPhase, peer, plan.buffers.counts_tx + kCountFlagBytes * peer, flag,
                                           kCountFlagBytes, kCountsCounter));
        plan.expected_link_arrivals[peer]++;
      }
    }
  }

  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = plan.sequences[g];
    seq.tasks.push_back(hw::Task::wait(kDispatchPhase, kCountsCounter, uint64_t{gpus - 1} * per_gpu));
    seq.tasks.push_back(hw::Task::wait(kDispatchPhase, kDispatchCounter, rows.rows_into(g)));
    append_software_cost(seq, kDispatchPhase, spec.software.sync_ns);

    std::vector<RowRange> everything;
    for (uint32_t s = 0; s < gpus; ++s) everything.push_back(RowRange{s, g, 0, rows.rows[s][g].size()});
    const RowWork work = row_work(plan, rows, g, everything);
    const uint32_t kernel = add_row_kernel(plan, seq, g, work);
    append_expert_gemms(spec, seq, kExpertsPhase, work.tokens_per_local_expert, work.rows, kernel);
    append_rows_round_robin(plan, rows, seq, g, true);
  }
  // The home sums its tokens' k rows (not one partial per GPU, as deepep's).
  for (uint32_t home = 0; home < gpus; ++home) {
    hw::WorkSequence& seq = plan.sequences[home];
    uint64_t back = 0;
    for (const auto& list : rows.rows[home]) back += list.size();
    seq.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, back));
    append_software_cost(seq, kCombinePhase, spec.software.sync_ns);
    seq.kernels.push_back(home_sum_kernel(plan, home));
    seq.tasks.push_back(
        partial_sum_task(spec, kCombinePhase, back, plan.buffers, static_cast<uint32_t>(seq.kernels.size() - 1)));
  }
  // What DeepEP allocates for it: per GPU, a buffer per (local expert, source) for the most
  // tokens a GPU sends, in both formats.
  const uint64_t buffer_rows = uint64_t{per_gpu} * gpus * routing.tokens_per_gpu;
  plan.figures = {{"receive_buffer_bytes",
                   static_cast<double>(buffer_rows * (plan.buffers.dispatch_stride + plan.buffers.combine_stride))},
                  {"count_flags_per_gpu", static_cast<double>(uint64_t{gpus - 1} * per_gpu)}};
}

}  // namespace nvsvp::fw::detail
