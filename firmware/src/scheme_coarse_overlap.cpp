// `coarse-overlap` (FasterMoE / Tutel class,
// docs/background/token_centric_fusion.md#the-schemes-compared): the software all-to-all of
// `deepep`, but each GPU's tokens are cut into software.overlap_chunks chunks that flow through a
// pipeline, so that the communication of one chunk overlaps the expert compute of another. Two
// executor streams per GPU:
//   communication (stream 0; it holds software.comm_sms SMs): the count exchange, then every
//     chunk's dispatch in turn (chunk c's copies count on their own counter at the receiver);
//     then, chunk by chunk as the experts finish them, the partials back to their homes; finally
//     the home sums its tokens' partials;
//   experts (stream 1; the other SMs): for each chunk, wait until all its copies arrived, run the
//     local experts' GEMMs over them and signal the communication stream.
// Chunk c of a GPU is its local tokens [c x size, (c + 1) x size), size = ceil(tokens / chunks).
// Software costs: count_exchange_ns (+ bookkeeping per copy) after the count exchange, one sync_ns
// barrier at the end (the chunks hand over through counters, not barriers).
#include <algorithm>
#include <stdexcept>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

// Counters after the common ones: the chunks' dispatch arrivals, then the experts' "chunk done".
uint32_t chunk_counter(uint32_t chunk) { return kMoeCounters + chunk; }
uint32_t experts_done_counter(uint32_t chunks) { return kMoeCounters + chunks; }

struct ChunkSlots {
  std::vector<SlotRun> runs;  // the chunk's slots in dispatch_rx, as runs (one per source at most)
  uint64_t slots = 0;
  std::vector<uint64_t> tokens_per_local_expert;
};

}  // namespace

void build_coarse_overlap(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const MoeBuffers& b = plan.buffers;
  const uint32_t gpus = routing.gpus;
  const uint32_t chunks = std::min<uint32_t>(spec.software.overlap_chunks, routing.tokens_per_gpu);
  const uint64_t chunk_tokens = (routing.tokens_per_gpu + chunks - 1) / chunks;
  if (spec.software.comm_sms >= spec.gpu_sms) {
    throw std::invalid_argument("coarse-overlap: comm_sms must leave the GEMMs at least one SM");
  }
  const auto gemm_sms = static_cast<uint16_t>(std::min<uint32_t>(spec.gpu_sms - spec.software.comm_sms, 0xFFFF));
  const uint32_t per_gpu = routing.experts_per_gpu();
  auto chunk_of = [&](uint64_t token) { return static_cast<uint32_t>((token % routing.tokens_per_gpu) / chunk_tokens); };

  const uint64_t token_bytes = vector_bytes(spec.dispatch_dtype, spec.model.hidden);
  const uint64_t partial_bytes = vector_bytes(spec.combine_dtype, spec.model.hidden);
  const uint32_t batch = spec.software.chunk_tokens;
  std::vector<hw::WorkSequence> experts(gpus);
  std::vector<std::vector<hw::WriteElement>> pending(gpus);
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& comm = plan.sequences[g];
    comm.phase_names = moe_phase_names();
    comm.counters = experts_done_counter(chunks) + 1;
    comm.sms = static_cast<uint16_t>(spec.software.comm_sms);
    // Token counts first, as deepep.
    append_count_exchange(plan, map, comm, g, kDispatchPhase);

    // Dispatch, chunk after chunk; a chunk's last batches leave before the next chunk's first.
    const uint64_t first_token = static_cast<uint64_t>(g) * routing.tokens_per_gpu;
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint64_t begin = first_token + c * chunk_tokens;
      const uint64_t end = std::min(first_token + routing.tokens_per_gpu, begin + chunk_tokens);
      for (uint64_t t = begin; t < end; ++t) {
        const uint64_t source = b.input + (t - first_token) * b.dispatch_stride;
        for (uint64_t copy = map.first[t]; copy < map.first[t + 1]; ++copy) {
          const uint32_t d = map.dest[copy];
          const uint64_t target = b.dispatch_rx + map.slot[copy] * b.dispatch_stride;
          if (d == g) {
            comm.tasks.push_back(hw::Task::local_copy(kDispatchPhase, source, target, token_bytes, chunk_counter(c)));
            continue;
          }
          pending[d].push_back(hw::WriteElement{source, target});
          if (pending[d].size() == batch) {
            append_write_chunk(plan, comm, kDispatchPhase, d, token_bytes, chunk_counter(c), pending[d]);
          }
        }
      }
      for (uint32_t d = 0; d < gpus; ++d) {
        if (!pending[d].empty()) append_write_chunk(plan, comm, kDispatchPhase, d, token_bytes, chunk_counter(c), pending[d]);
      }
    }
  }

  const std::vector<uint64_t> no_tokens(per_gpu, 0);
  for (uint32_t g = 0; g < gpus; ++g) {
    const std::vector<uint64_t>& slots = (*map.received)[g];
    // The received slots of each chunk: slots are grouped by source, tokens in order, so a chunk
    // is one run per source.
    std::vector<ChunkSlots> chunk(chunks, ChunkSlots{{}, 0, no_tokens});
    for (uint64_t s = 0; s < slots.size(); ++s) {
      ChunkSlots& c = chunk[chunk_of(slots[s])];
      if (c.runs.empty() || c.runs.back().end != s) c.runs.push_back(SlotRun{s, s});
      c.runs.back().end = s + 1;
      c.slots++;
      const uint16_t* e = routing.experts_of(slots[s]);
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        if (e[k] / per_gpu == g) c.tokens_per_local_expert[e[k] - g * per_gpu]++;
      }
    }
    hw::WorkSequence& work = experts[g];
    work.stream = 1;
    work.sms = gemm_sms;
    work.phase_names = plan.sequences[g].phase_names;
    work.counters = plan.sequences[g].counters;
    for (uint32_t c = 0; c < chunks; ++c) {
      // The chunk's arrivals end the dispatch (for this chunk).
      work.tasks.push_back(hw::Task::wait(kDispatchPhase, chunk_counter(c), chunk[c].slots));
      work.kernels.push_back(expert_kernel(plan.spec, b, map.received, g, chunk[c].runs));
      append_expert_gemms(spec, work, kExpertsPhase, chunk[c].tokens_per_local_expert, chunk[c].slots,
                          static_cast<uint32_t>(work.kernels.size() - 1));
      // A signal to the communication stream (no data): chunk c's partials are written.
      work.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, experts_done_counter(chunks)));
    }

    // Combine, chunk by chunk as the experts finish: each partial to its token's home, homes in
    // turn starting after this GPU (as deepep).
    hw::WorkSequence& comm = plan.sequences[g];
    std::vector<uint64_t> group_start(gpus, 0);
    for (uint32_t h = 1; h < gpus; ++h) group_start[h] = group_start[h - 1] + map.counts[h - 1][g];
    std::vector<hw::WriteElement> partials_out;
    for (uint32_t c = 0; c < chunks; ++c) {
      comm.tasks.push_back(hw::Task::wait(kCombinePhase, experts_done_counter(chunks), c + 1));
      for (uint32_t i = 1; i <= gpus; ++i) {
        const uint32_t home = (g + i) % gpus;
        for (uint64_t s = group_start[home]; s < group_start[home] + map.counts[home][g]; ++s) {
          const uint64_t t = slots[s];
          if (chunk_of(t) != c) continue;
          uint64_t copy = map.first[t];
          while (map.dest[copy] != g) ++copy;
          const uint64_t source = b.partial + s * b.combine_stride;
          const uint64_t target = combine_slot_address(plan, home, copy);
          if (home == g) {
            comm.tasks.push_back(hw::Task::local_copy(kCombinePhase, source, target, partial_bytes, kCombineCounter));
            continue;
          }
          partials_out.push_back(hw::WriteElement{source, target});
          if (partials_out.size() == batch) {
            append_write_chunk(plan, comm, kCombinePhase, home, partial_bytes, kCombineCounter, partials_out);
          }
        }
        if (!partials_out.empty()) append_write_chunk(plan, comm, kCombinePhase, home, partial_bytes, kCombineCounter, partials_out);
      }
    }
    uint64_t partials = 0;
    for (uint64_t t = static_cast<uint64_t>(g) * routing.tokens_per_gpu;
         t < static_cast<uint64_t>(g + 1) * routing.tokens_per_gpu; ++t) {
      partials += map.first[t + 1] - map.first[t];
    }
    comm.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, partials));
    append_software_cost(comm, kCombinePhase, spec.software.sync_ns);  // one barrier: the pipeline's end
    comm.kernels.push_back(reduce_kernel(plan, g));
    comm.tasks.push_back(reduce_task(spec, kCombinePhase, partials, b, static_cast<uint32_t>(comm.kernels.size() - 1)));
  }
  plan.extra_sequences.resize(gpus);
  for (uint32_t g = 0; g < gpus; ++g) plan.extra_sequences[g].push_back(std::move(experts[g]));
}

}  // namespace nvsvp::fw::detail
