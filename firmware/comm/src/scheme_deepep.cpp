// `deepep`: the software all-to-all of DeepEP-class libraries, phases in sequence.
//   dispatch: exchange token counts with every peer, then one copy of each token per
//             destination GPU (experts on the same GPU share it), written into the destination's
//             receive buffer packed by source; wait until all expected tokens have arrived;
//   experts:  the local experts' GEMMs over the received tokens (one partial sum per token);
//   combine:  every partial goes back to its token's home GPU, which waits for all of them and
//             sums them.
// Software costs (software.count_exchange_ns, sync_ns, bookkeeping_ns_per_copy) are delays: after
// the count exchange, and after the dispatch and combine waits (their barriers).
// Remote copies travel in chunks of software.chunk_tokens per channel and destination, as DeepEP's
// senders batch tokens before publishing them to the receiver's ring buffer. DeepEP's kernels run
// on software.comm_sms SMs, half of them sending (software_sender_sms): every copy, the GPU's own
// included, is held for its bytes at those SMs' store-issue rate (gpu.sm_store_gbps). The other
// half receive (a second executor stream): both phases' chunks land in bounded rings
// (ReceiveRings, software.recv_queue_tokens per channel and source), which the receiving SMs copy
// out into the packed buffers at the same rate, sending each ring's head back; a sender whose
// next chunk would not fit waits for it.
#include <algorithm>
#include <optional>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

void build_deepep(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const uint32_t gpus = routing.gpus;
  const MoeBuffers& b = plan.buffers;
  const bool rings = spec.software.recv_queue_tokens > 0;
  std::optional<ReceiveRings> dispatch_rings;
  std::optional<ReceiveRings> combine_rings;
  if (rings) {
    dispatch_rings.emplace(plan, kDispatchRings, b.dispatch_stride, kDispatchCounter, kMoeCounters);
    plan.extra_sequences.assign(gpus, std::vector<hw::WorkSequence>(1));
    plan.receive_ring_slots = dispatch_rings->slots();
  }

  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = start_sequence(plan, g, kMoeCounters);
    seq.issue_sms = software_sender_sms(spec.software);
    if (rings) {
      hw::WorkSequence& receiver = plan.extra_sequences[g].front();
      receiver.stream = 1;
      receiver.sms = receiver.issue_sms = software_sender_sms(spec.software);
      receiver.phase_names = moe_phase_names();
    }
    // Sizes known in advance: local copies are tasks, remote ones chunk elements (both phases).
    const uint64_t local = 2 * map.counts[g][g];
    uint64_t remote = 0;
    for (uint32_t d = 0; d < gpus; ++d) remote += d == g ? 0 : map.counts[g][d] + map.counts[d][g];
    seq.tasks.reserve(local + remote / spec.software.chunk_tokens + 4 * gpus + 8);
    seq.elements.reserve(remote);
    // Token counts first: each receiver learns how much to expect from each sender.
    append_count_exchange(plan, seq, g, kDispatchPhase);
  }

  // Dispatch copies, in token order on each home GPU.
  for (uint32_t home = 0; home < gpus; ++home) {
    append_software_dispatch(plan, map, plan.sequences[home], home, own_tokens(routing, home), kDispatchPhase,
                             kDispatchCounter, false, rings ? &*dispatch_rings : nullptr);
  }
  if (rings) {
    const uint64_t token_bytes = vector_bytes(spec.dispatch_dtype, spec.model.hidden);
    for (uint32_t g = 0; g < gpus; ++g) {
      dispatch_rings->append_copy_out(plan.extra_sequences[g].front(), g, kDispatchPhase, token_bytes);
    }
    combine_rings.emplace(plan, kCombineRings, b.combine_stride, kCombineCounter, dispatch_rings->end_counter());
  }

  const std::vector<uint64_t> expert_loads = tokens_per_expert(routing);
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = plan.sequences[g];
    const uint64_t slots = (*map.received)[g].size();
    seq.tasks.push_back(hw::Task::wait(kDispatchPhase, kDispatchCounter, slots));
    append_software_cost(seq, kDispatchPhase, spec.software.sync_ns);

    seq.kernels.push_back(expert_kernel(plan.spec, plan.buffers, map.received, g));
    append_expert_gemms(spec, seq, kExpertsPhase, local_slice(routing, expert_loads, g), slots,
                        static_cast<uint32_t>(seq.kernels.size() - 1));

    // Partials leave interleaved over their home GPUs, starting after this GPU, as a
    // per-rank-channel all-to-all does; sent grouped by home, every GPU would hit the same
    // home at once and the combine would run at one link set's rate.
    const std::vector<uint64_t> group_start = first_slot_of_source(map, g);
    const uint32_t chunk = spec.software.chunk_tokens;
    uint64_t rounds = 0;
    for (uint32_t h = 0; h < gpus; ++h) rounds = std::max(rounds, map.counts[h][g]);
    PartialSender partials(plan, map, seq, g, rings ? &*combine_rings : nullptr);
    for (uint64_t r = 0; r < rounds; r += chunk) {
      for (uint32_t i = 1; i <= gpus; ++i) {
        const uint32_t home = (g + i) % gpus;
        const uint64_t end = std::min<uint64_t>(r + chunk, map.counts[home][g]);
        for (uint64_t k = r; k < end; ++k) partials.send(group_start[home] + k);
        partials.flush();
      }
    }
    append_home_combine(plan, seq, g);
  }
  if (!rings) return;
  const uint64_t partial_bytes = vector_bytes(spec.combine_dtype, spec.model.hidden);
  for (uint32_t g = 0; g < gpus; ++g) {
    combine_rings->append_copy_out(plan.extra_sequences[g].front(), g, kCombinePhase, partial_bytes);
  }
  const uint32_t counters = combine_rings->end_counter();
  for (uint32_t g = 0; g < gpus; ++g) plan.sequences[g].counters = plan.extra_sequences[g].front().counters = counters;
}

}  // namespace nvsvp::fw::detail
