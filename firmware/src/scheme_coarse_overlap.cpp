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

// How a GPU's tokens are cut: chunk c holds its local tokens [c x size, (c + 1) x size).
struct Chunking {
  uint32_t chunks = 0;
  uint64_t size = 0;
  uint32_t tokens_per_gpu = 0;
  uint32_t of(uint64_t token) const { return static_cast<uint32_t>((token % tokens_per_gpu) / size); }
  // Counters after the common ones: the chunks' dispatch arrivals, then the experts' "chunk done".
  uint32_t arrival_counter(uint32_t chunk) const { return kMoeCounters + chunk; }
  uint32_t experts_done_counter() const { return kMoeCounters + chunks; }
};

struct ChunkSlots {
  std::vector<SlotRun> runs;  // the chunk's slots in dispatch_rx, as runs (one per source at most)
  uint64_t slots = 0;
  std::vector<uint64_t> tokens_per_local_expert;
};

// The communication stream's first part: the count exchange, then every chunk's dispatch in turn
// (a chunk's last batches leave before the next chunk's first).
void append_chunked_dispatch(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& comm, uint32_t g,
                             const Chunking& chunking) {
  append_count_exchange(plan, comm, g, kDispatchPhase);  // token counts first, as deepep
  const TokenRange own = own_tokens(plan.spec->routing, g);
  for (uint32_t c = 0; c < chunking.chunks; ++c) {
    const uint64_t begin = own.begin + c * chunking.size;
    const TokenRange chunk{begin, std::min(own.end, begin + chunking.size)};
    append_software_dispatch(plan, map, comm, g, chunk, kDispatchPhase, chunking.arrival_counter(c));
  }
}

// The received slots of each chunk on GPU g: slots are grouped by source, tokens in order, so a
// chunk is one run per source.
std::vector<ChunkSlots> chunk_slots(const MoeRouting& routing, const std::vector<uint64_t>& slots, uint32_t g,
                                    const Chunking& chunking) {
  const uint32_t per_gpu = routing.experts_per_gpu();
  std::vector<ChunkSlots> chunk(chunking.chunks, ChunkSlots{{}, 0, std::vector<uint64_t>(per_gpu, 0)});
  for (uint64_t s = 0; s < slots.size(); ++s) {
    ChunkSlots& c = chunk[chunking.of(slots[s])];
    if (c.runs.empty() || c.runs.back().end != s) c.runs.push_back(SlotRun{s, s});
    c.runs.back().end = s + 1;
    c.slots++;
    const uint16_t* e = routing.experts_of(slots[s]);
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      if (e[k] / per_gpu == g) c.tokens_per_local_expert[e[k] - g * per_gpu]++;
    }
  }
  return chunk;
}

// The experts stream of GPU g: per chunk, the wait for its copies, the GEMMs, a signal (no data)
// to the communication stream that the chunk's partials are written.
hw::WorkSequence experts_stream(const LayerPlan& plan, const DispatchMap& map, uint32_t g, const Chunking& chunking) {
  const MoeLayerSpec& spec = *plan.spec;
  const std::vector<ChunkSlots> chunk = chunk_slots(spec.routing, (*map.received)[g], g, chunking);
  hw::WorkSequence work;
  work.stream = 1;
  work.sms = static_cast<uint16_t>(std::min<uint32_t>(spec.gpu_sms - spec.software.comm_sms, 0xFFFF));  // the rest
  work.phase_names = plan.sequences[g].phase_names;
  work.counters = plan.sequences[g].counters;
  for (uint32_t c = 0; c < chunking.chunks; ++c) {
    // The chunk's arrivals end the dispatch (for this chunk).
    work.tasks.push_back(hw::Task::wait(kDispatchPhase, chunking.arrival_counter(c), chunk[c].slots));
    work.kernels.push_back(expert_kernel(plan.spec, plan.buffers, map.received, g, chunk[c].runs));
    append_expert_gemms(spec, work, kExpertsPhase, chunk[c].tokens_per_local_expert, chunk[c].slots,
                        static_cast<uint32_t>(work.kernels.size() - 1));
    work.tasks.push_back(
        hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, chunking.experts_done_counter()));
  }
  return work;
}

// The communication stream's end: chunk by chunk as the experts finish, each partial to its
// token's home, homes in turn starting after this GPU (as deepep); then the home's sum (its
// sync_ns the pipeline's one barrier).
void append_chunked_combine(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& comm, uint32_t g,
                            const Chunking& chunking) {
  const uint32_t gpus = plan.spec->routing.gpus;
  const std::vector<uint64_t>& slots = (*map.received)[g];
  const std::vector<uint64_t> group_start = first_slot_of_source(map, g);
  PartialSender partials(plan, map, comm, g);
  for (uint32_t c = 0; c < chunking.chunks; ++c) {
    comm.tasks.push_back(hw::Task::wait(kCombinePhase, chunking.experts_done_counter(), c + 1));
    for (uint32_t i = 1; i <= gpus; ++i) {
      const uint32_t home = (g + i) % gpus;
      for (uint64_t s = group_start[home]; s < group_start[home] + map.counts[home][g]; ++s) {
        if (chunking.of(slots[s]) == c) partials.send(s);
      }
      partials.flush();
    }
  }
  append_home_combine(plan, comm, g);
}

}  // namespace

void build_coarse_overlap(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  Chunking chunking;
  chunking.chunks = std::min<uint32_t>(spec.software.overlap_chunks, routing.tokens_per_gpu);
  chunking.size = (routing.tokens_per_gpu + chunking.chunks - 1) / chunking.chunks;
  chunking.tokens_per_gpu = routing.tokens_per_gpu;
  if (spec.software.comm_sms >= spec.gpu_sms) {
    throw std::invalid_argument("coarse-overlap: comm_sms must leave the GEMMs at least one SM");
  }
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    hw::WorkSequence& comm = start_sequence(plan, g, chunking.experts_done_counter() + 1);
    comm.sms = static_cast<uint16_t>(spec.software.comm_sms);
    comm.issue_sms = software_sender_sms(spec.software);  // DeepEP-class: half its SMs send
    append_chunked_dispatch(plan, map, comm, g, chunking);
  }
  plan.extra_sequences.resize(routing.gpus);
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    plan.extra_sequences[g].push_back(experts_stream(plan, map, g, chunking));
    append_chunked_combine(plan, map, plan.sequences[g], g, chunking);
  }
}

}  // namespace nvsvp::fw::detail
