// `tutel` (Tutel, Hwang et al., MLSys 2023; github microsoft/tutel;
// docs/background/baselines.md#tutel): GShard-style dispatch into an [experts, capacity, hidden]
// layout over NCCL's all-to-all, pipelined at a degree.
//   layout:   one row per (token, expert), no de-duplication of a token's experts on one GPU;
//             every (source GPU, expert) padded to the capacity, Tutel's dynamic capacity
//             (capacity_factor 0): the largest (source GPU, expert) count, so nothing is dropped.
//             Padding rows travel as real bytes and are computed by the experts.
//   pipeline: the capacity cut into software.tutel_degree chunks (a2a_ffn_overlap_degree). Two
//             executor streams per GPU:
//     communication (software.nccl_channels SMs, NCCL's channels issuing its stores): the count
//       exchange (Tutel's all-reduce of the capacity), every chunk's all-to-all in turn (messages
//       round the peers, as NCCL's p2p channels serve every peer at once); then, chunk by chunk as
//       the experts finish them, the all-to-all back; the home sums its tokens' rows;
//     experts (the other SMs; all of them at degree 1, when nothing overlaps): per chunk, the wait
//       for all its rows, the batched expert GEMMs over [local experts, GPUs x chunk rows], a signal.
// The adaptive degree (tutel_degree 0) is the platform's search (runner.cpp: every candidate
// planned and simulated, the fastest kept); this builder plans one degree.
#include <algorithm>
#include <stdexcept>

#include "moe_plan.hpp"
#include "nvsvp/fw/moe_data.hpp"

namespace nvsvp::fw::detail {

namespace {

// The capacity positions [first, end) of chunk `chunk`, each expert's rows of one (source,
// destination) pair: positions count within an expert's capacity.
struct CapacityChunks {
  uint32_t capacity = 0;
  uint32_t size = 0;  // positions per chunk, the last one shorter
  uint32_t count = 0;
  uint32_t first(uint32_t chunk) const { return chunk * size; }
  uint32_t end(uint32_t chunk) const { return std::min(capacity, (chunk + 1) * size); }
  uint32_t arrival_counter(uint32_t chunk) const { return kMoeCounters + chunk; }
  uint32_t experts_done_counter() const { return kMoeCounters + count; }
};

CapacityChunks capacity_chunks(uint32_t capacity, uint32_t degree) {
  CapacityChunks c;
  c.capacity = capacity;
  c.size = (capacity + degree - 1) / degree;
  c.count = (capacity + c.size - 1) / c.size;  // no empty chunk when the degree exceeds the capacity
  return c;
}

// One chunk's all-to-all from GPU g (dispatch) or back to every source (combine): message by
// message round the peers, starting after this GPU, its own rows as local copies.
void append_chunk_alltoall(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, uint32_t g,
                           const CapacityChunks& chunks, uint32_t chunk, bool combine) {
  const uint32_t gpus = plan.spec->routing.gpus;
  const uint32_t per_gpu = plan.spec->routing.experts_per_gpu();
  const uint32_t batch = plan.spec->software.chunk_tokens;
  const hw::PhaseId phase = combine ? kCombinePhase : kDispatchPhase;
  const uint32_t counter = combine ? kCombineCounter : chunks.arrival_counter(chunk);
  for (uint32_t j = 0; j < per_gpu; ++j) {
    const uint64_t begin = static_cast<uint64_t>(j) * chunks.capacity + chunks.first(chunk);
    const uint64_t end = static_cast<uint64_t>(j) * chunks.capacity + chunks.end(chunk);
    for (uint64_t r = begin; r < end; r += batch) {
      for (uint32_t n = 1; n <= gpus; ++n) {
        const uint32_t peer = (g + n) % gpus;
        const RowRange range = combine ? RowRange{peer, g, r, std::min(end, r + batch)}
                                       : RowRange{g, peer, r, std::min(end, r + batch)};
        append_row_sends(plan, rows, seq, range, combine, phase, counter);
      }
    }
  }
}

// The experts stream of GPU g: per chunk, the wait for its rows, the GEMMs over them, a signal.
hw::WorkSequence chunked_experts_stream(const LayerPlan& plan, const ExpertRows& rows, uint32_t g, const CapacityChunks& chunks,
                                uint16_t sms) {
  const MoeLayerSpec& spec = *plan.spec;
  const uint32_t gpus = spec.routing.gpus;
  hw::WorkSequence work = side_stream(plan, g, 1, sms);
  for (uint32_t c = 0; c < chunks.count; ++c) {
    std::vector<RowRange> ranges;
    for (uint32_t s = 0; s < gpus; ++s) {
      for (uint32_t j = 0; j < spec.routing.experts_per_gpu(); ++j) {
        const uint64_t base = static_cast<uint64_t>(j) * chunks.capacity;
        ranges.push_back(RowRange{s, g, base + chunks.first(c), base + chunks.end(c)});
      }
    }
    const RowWork chunk = row_work(plan, rows, g, ranges);
    work.tasks.push_back(hw::Task::wait(kDispatchPhase, chunks.arrival_counter(c), chunk.rows));
    const uint32_t kernel = add_row_kernel(plan, work, g, chunk);
    append_expert_gemms(spec, work, kExpertsPhase, chunk.tokens_per_local_expert, chunk.rows, kernel);
    work.tasks.push_back(
        hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, chunks.experts_done_counter()));
  }
  return work;
}

}  // namespace

void build_tutel(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const uint32_t channels = spec.software.nccl_channels;
  if (channels >= spec.gpu_sms) throw std::invalid_argument("tutel: nccl_channels must leave the GEMMs at least one SM");
  const ExpertRows rows = expert_rows(map, routing, true);
  expect_row_regions(plan, rows);
  const CapacityChunks chunks = capacity_chunks(rows.capacity, std::max<uint32_t>(1, spec.software.tutel_degree));
  // Degree 1 overlaps nothing: the GEMMs then have every SM (NCCL's kernel has ended).
  const auto expert_sms = static_cast<uint16_t>(std::min<uint32_t>(chunks.count == 1 ? spec.gpu_sms : spec.gpu_sms - channels, 0xFFFF));
  plan.extra_sequences.resize(routing.gpus);
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    hw::WorkSequence& comm = start_sequence(plan, g, chunks.experts_done_counter() + 1);
    comm.sms = static_cast<uint16_t>(channels);
    comm.issue_sms = static_cast<uint16_t>(channels);
    append_count_exchange(plan, comm, g, kDispatchPhase);
    for (uint32_t c = 0; c < chunks.count; ++c) append_chunk_alltoall(plan, rows, comm, g, chunks, c, false);
  }
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    plan.extra_sequences[g].push_back(chunked_experts_stream(plan, rows, g, chunks, expert_sms));
    hw::WorkSequence& comm = plan.sequences[g];
    for (uint32_t c = 0; c < chunks.count; ++c) {
      comm.tasks.push_back(hw::Task::wait(kCombinePhase, chunks.experts_done_counter(), c + 1));
      append_chunk_alltoall(plan, rows, comm, g, chunks, c, true);
    }
    append_row_home_combine(plan, rows, comm, g);
  }
  // Padding on the wire: the padding rows between different GPUs, both ways.
  uint64_t wire_padding_rows = 0;
  for (uint32_t s = 0; s < routing.gpus; ++s) {
    for (uint32_t d = 0; d < routing.gpus; ++d) {
      if (s == d) continue;
      for (const ExpertRow& row : rows.rows[s][d]) wire_padding_rows += row.padding;
    }
  }
  const uint64_t row_bytes = vector_bytes(spec.dispatch_dtype, spec.model.hidden) +
                             vector_bytes(spec.combine_dtype, spec.model.hidden);
  plan.padding_wire_bytes = wire_padding_rows * row_bytes;
  plan.figures = {{"degree", chunks.count},
                  {"capacity", rows.capacity},
                  {"padding_rows", static_cast<double>(rows.padding_rows)},
                  {"padding_wire_bytes", static_cast<double>(wire_padding_rows * row_bytes)}};
}

}  // namespace nvsvp::fw::detail
