// Per-expert rows, the layout of the GShard-style all-to-all of `tutel` and the FastMoE all-to-all
// of `fastermoe` (declared in moe_plan.hpp): one row per (token, expert), optionally padded to a
// capacity, and their sends, GEMM work and the home's wait for them.
#include <algorithm>

#include "moe_plan.hpp"
#include "nvsvp/fw/moe_data.hpp"

namespace nvsvp::fw::detail {

uint64_t ExpertRows::rows_into(uint32_t destination) const {
  uint64_t n = 0;
  for (const auto& from : rows) n += from[destination].size();
  return n;
}

ExpertRows expert_rows(const DispatchMap& map, const MoeRouting& routing, bool padded) {
  const uint32_t gpus = routing.gpus;
  const uint32_t per_gpu = routing.experts_per_gpu();
  // [source][expert]: the source's tokens routed to the expert, in token order, each with the
  // copy it carries when the expert is the token's lowest on that GPU.
  std::vector<std::vector<std::vector<ExpertRow>>> by_expert(gpus, std::vector<std::vector<ExpertRow>>(routing.experts));
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    const uint16_t* experts = routing.experts_of(t);
    const uint32_t home = routing.home_of_token(t);
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      const uint32_t gpu = experts[k] / per_gpu;
      bool lowest = true;
      for (uint32_t o = 0; o < routing.top_k; ++o) {
        lowest = lowest && !(experts[o] / per_gpu == gpu && experts[o] < experts[k]);
      }
      const uint64_t copy = lowest ? copy_to(map, t, gpu) : kNoCopy;
      by_expert[home][experts[k]].push_back(ExpertRow{t, copy, lowest ? map.slot[copy] : 0, experts[k] % per_gpu, false});
    }
  }
  ExpertRows out;
  if (padded) {
    for (const auto& from : by_expert) {
      for (const auto& list : from) out.capacity = std::max<uint32_t>(out.capacity, static_cast<uint32_t>(list.size()));
    }
    out.capacity = std::max<uint32_t>(out.capacity, 1);  // Tutel keeps at least one row per expert
  }
  out.rows.assign(gpus, std::vector<std::vector<ExpertRow>>(gpus));
  for (uint32_t s = 0; s < gpus; ++s) {
    for (uint32_t e = 0; e < routing.experts; ++e) {
      std::vector<ExpertRow>& to = out.rows[s][e / per_gpu];
      const std::vector<ExpertRow>& list = by_expert[s][e];
      to.insert(to.end(), list.begin(), list.end());
      for (uint64_t p = list.size(); p < out.capacity; ++p) {
        to.push_back(ExpertRow{0, kNoCopy, 0, e % per_gpu, true});
        out.padding_rows++;
      }
    }
  }
  out.dispatch_offset.assign(gpus, std::vector<uint64_t>(gpus, 0));
  out.combine_offset.assign(gpus, std::vector<uint64_t>(gpus, 0));
  for (uint32_t s = 0; s < gpus; ++s) {
    for (uint32_t d = 0; d < gpus; ++d) {
      out.dispatch_offset[s][d] = s == 0 ? 0 : out.dispatch_offset[s - 1][d] + out.rows[s - 1][d].size();
      out.combine_offset[s][d] = d == 0 ? 0 : out.combine_offset[s][d - 1] + out.rows[s][d - 1].size();
    }
  }
  return out;
}

void expect_row_regions(LayerPlan& plan, const ExpertRows& rows) {
  const uint32_t gpus = plan.spec->routing.gpus;
  LayerPlan::RowRegion dispatch{kDispatchRowRegion, plan.buffers.dispatch_stride, {}};
  LayerPlan::RowRegion combine{kCombineRowRegion, plan.buffers.combine_stride, {}};
  dispatch.writes.resize(gpus);
  combine.writes.resize(gpus);
  for (uint32_t g = 0; g < gpus; ++g) {
    dispatch.writes[g].assign(rows.rows_into(g), 0);
    uint64_t back = 0;
    for (uint32_t d = 0; d < gpus; ++d) back += rows.rows[g][d].size();
    combine.writes[g].assign(back, 0);
  }
  for (uint32_t s = 0; s < gpus; ++s) {
    for (uint32_t d = 0; d < gpus; ++d) {
      const std::vector<ExpertRow>& list = rows.rows[s][d];
      for (uint64_t i = 0; i < list.size(); ++i) {
        const uint8_t extra = list[i].copy == kNoCopy ? 1 : 0;  // the first rows land in the slots
        dispatch.writes[d][rows.dispatch_offset[s][d] + i] = extra;
        combine.writes[s][rows.combine_offset[s][d] + i] = extra;
      }
    }
  }
  plan.row_regions.push_back(std::move(dispatch));
  plan.row_regions.push_back(std::move(combine));
}

void append_row_sends(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, const RowRange& range,
                      bool combine, hw::PhaseId phase, uint32_t counter) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeBuffers& b = plan.buffers;
  const std::vector<ExpertRow>& list = rows.rows[range.source][range.destination];
  const uint32_t from = combine ? range.destination : range.source;
  const uint32_t to = combine ? range.source : range.destination;
  const uint64_t bytes = combine ? vector_bytes(spec.combine_dtype, spec.model.hidden)
                                 : vector_bytes(spec.dispatch_dtype, spec.model.hidden);
  const uint64_t stride = combine ? b.combine_stride : b.dispatch_stride;
  const uint64_t region = combine ? kCombineRowRegion + rows.combine_offset[range.source][range.destination] * stride
                                  : kDispatchRowRegion + rows.dispatch_offset[range.source][range.destination] * stride;
  const uint64_t first_token = own_tokens(spec.routing, range.source).begin;
  std::vector<hw::WriteElement> pending;
  for (uint64_t i = range.begin; i < range.end; ++i) {
    const ExpertRow& row = list[i];
    // Padding rows, and rows beyond a token's first on its GPU, into the row region; the first
    // rows into the slots the checks and the kernels read.
    hw::WriteElement write{kPaddingSource, region + i * stride};
    if (combine && row.copy != kNoCopy) {
      write = hw::WriteElement{b.partial + row.slot * stride, combine_slot_address(plan, range.source, row.copy)};
    } else if (!combine && !row.padding) {
      write.source_address = b.input + (row.token - first_token) * stride;
      if (row.copy != kNoCopy) write.target_address = b.dispatch_rx + row.slot * stride;
    }
    if (from == to) {
      seq.tasks.push_back(hw::Task::local_copy(phase, write.source_address, write.target_address, bytes, counter));
      continue;
    }
    pending.push_back(write);
    if (pending.size() == spec.software.chunk_tokens) append_write_chunk(plan, seq, phase, to, bytes, counter, pending);
  }
  if (!pending.empty()) append_write_chunk(plan, seq, phase, to, bytes, counter, pending);
}

void append_row_reads(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, const RowRange& range,
                      hw::PhaseId phase, uint32_t counter) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeBuffers& b = plan.buffers;
  const std::vector<ExpertRow>& list = rows.rows[range.source][range.destination];
  const uint64_t bytes = vector_bytes(spec.dispatch_dtype, spec.model.hidden);
  const uint64_t region = kDispatchRowRegion + rows.dispatch_offset[range.source][range.destination] * b.dispatch_stride;
  const uint64_t first_token = own_tokens(spec.routing, range.source).begin;
  for (uint64_t i = range.begin; i < range.end; ++i) {
    const ExpertRow& row = list[i];
    const uint64_t source = b.input + (row.token - first_token) * b.dispatch_stride;
    const uint64_t target = row.copy != kNoCopy ? b.dispatch_rx + row.slot * b.dispatch_stride : region + i * b.dispatch_stride;
    if (range.source == range.destination) {
      seq.tasks.push_back(hw::Task::local_copy(phase, source, target, bytes, counter));
      continue;
    }
    seq.tasks.push_back(hw::Task::read(phase, range.source, source, target, bytes, counter));
    plan.expected_link_arrivals[range.source]++;       // the request
    plan.expected_link_arrivals[range.destination]++;  // the response
  }
}

RowWork row_work(const LayerPlan& plan, const ExpertRows& rows, uint32_t gpu, const std::vector<RowRange>& ranges) {
  RowWork work;
  work.tokens_per_local_expert.assign(plan.spec->routing.experts_per_gpu(), 0);
  std::vector<uint64_t> slots;
  for (const RowRange& range : ranges) {
    const std::vector<ExpertRow>& list = rows.rows[range.source][gpu];
    for (uint64_t i = range.begin; i < range.end; ++i) {
      work.tokens_per_local_expert[list[i].local_expert]++;
      work.rows++;
      if (list[i].copy != kNoCopy) slots.push_back(list[i].slot);
    }
  }
  std::sort(slots.begin(), slots.end());
  for (uint64_t s : slots) {
    if (work.first_slots.empty() || work.first_slots.back().end != s) work.first_slots.push_back(SlotRun{s, s});
    work.first_slots.back().end = s + 1;
  }
  return work;
}

uint32_t add_row_kernel(const LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, const RowWork& work) {
  if (work.first_slots.empty()) return hw::Task::kNoKernel;
  seq.kernels.push_back(expert_kernel(plan.spec, plan.buffers, plan.received, gpu, work.first_slots));
  return static_cast<uint32_t>(seq.kernels.size() - 1);
}

hw::WorkSequence side_stream(const LayerPlan& plan, uint32_t gpu, uint32_t stream, uint16_t sms) {
  hw::WorkSequence work;
  work.stream = stream;
  work.sms = sms;
  work.phase_names = plan.sequences[gpu].phase_names;
  work.counters = plan.sequences[gpu].counters;
  return work;
}

void append_row_home_combine(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, uint32_t home) {
  uint64_t back = 0;
  for (const auto& list : rows.rows[home]) back += list.size();
  seq.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, back));
  append_home_combine(plan, seq, home);
}

}  // namespace nvsvp::fw::detail
