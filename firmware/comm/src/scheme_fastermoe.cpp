// `fastermoe` (FasterMoE, He et al., PPoPP 2022; FastMoE's smart_schedule header, github laekov/fastmoe;
// docs/background/baselines.md#fastermoe): FastMoE's all-to-all with FasterMoE's smart schedule.
//   layout:   one row per (token, expert) (FastMoE's scatter keeps a token once per expert), packed
//             per (source, expert), no capacity and no padding;
//   groups:   the GPUs in groups of software.fastermoe_group_size consecutive ranks (FastMoE's
//             pipeline granularity, FMOE_FASTER_GROUP_SIZE); step s (0 .. groups - 1) sends to
//             every GPU of the group at distance +s and receives from every GPU of the group at
//             distance -s (step 0: the GPU's own group, itself included);
//   exchange: within a step, one NCCL group call per local expert: that expert's rows to and from
//             the step's peers, interleaved round them; a call ends when its rows from the peers
//             have arrived (NCCL's grouped send and receive), and the next call starts after it.
//             Send and receive are two-sided: a sender waits for each receiver's clear-to-send.
//   Two executor streams per GPU:
//     communication (software.nccl_channels SMs: NCCL's send / receive kernels): the count
//       exchange, every step's calls in turn; then, step by step as the experts finish a step's
//       rows, the calls that send those rows' results back and receive this GPU's own;
//     experts (the other SMs): per step, the wait for all of its calls, then one GEMM pair per
//       local expert over that expert's rows from the step's peers (FastMoE runs the expert
//       function once per expert and step), each padded to whole tiles, then a signal.
//   The experts' compute of one group's rows thus overlaps the exchange with the next group, and
//   the combine of one step the compute of the next.
// Shadow experts (replicating popular experts' weights instead of moving their tokens) are not
// modelled; docs/background/baselines.md#fastermoe says why that matters little here.
#include <algorithm>
#include <stdexcept>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

// FasterMoE's worker groups and the counters of its calls. A GPU's call (step, expert) counts its
// received rows on its own counter, so a call ends exactly when its own rows are in.
struct WorkerGroups {
  uint32_t gpus = 0;
  uint32_t size = 1;     // GPUs per group; the last group is shorter when size does not divide gpus
  uint32_t count = 1;    // groups, and steps
  uint32_t experts = 1;  // local experts per GPU
  uint32_t of(uint32_t g) const { return g / size; }
  uint32_t first(uint32_t group) const { return group * size; }
  uint32_t end(uint32_t group) const { return std::min(gpus, first(group) + size); }
  uint32_t to(uint32_t g, uint32_t step) const { return (of(g) + step) % count; }
  uint32_t from(uint32_t g, uint32_t step) const { return (of(g) + count - step) % count; }
  uint32_t dispatch_counter(uint32_t step, uint32_t e) const { return kMoeCounters + step * experts + e; }
  uint32_t combine_counter(uint32_t step, uint32_t e) const { return kMoeCounters + (count + step) * experts + e; }
  uint32_t experts_done_counter() const { return kMoeCounters + 2 * count * experts; }
  // Call c's clear-to-send flags (calls numbered dispatch first, then combine, step by step).
  uint32_t clear_counter(uint32_t call) const { return experts_done_counter() + 1 + call; }
  uint32_t counters() const { return experts_done_counter() + 1 + 2 * count * experts; }
};

WorkerGroups worker_groups(const MoeLayerSpec& spec) {
  WorkerGroups w;
  w.gpus = spec.routing.gpus;
  w.size = std::clamp<uint32_t>(spec.software.fastermoe_group_size, 1, w.gpus);
  w.count = (w.gpus + w.size - 1) / w.size;
  w.experts = spec.routing.experts_per_gpu();
  return w;
}

// The rows of local expert `e` (of `destination`) among rows.rows[source][destination], which are
// ordered by the destination's local expert.
RowRange expert_range(const ExpertRows& rows, uint32_t source, uint32_t destination, uint32_t e) {
  const std::vector<ExpertRow>& list = rows.rows[source][destination];
  auto below = [](const ExpertRow& row, uint32_t expert) { return row.local_expert < expert; };
  const auto begin = std::lower_bound(list.begin(), list.end(), e, below);
  const auto end = std::lower_bound(begin, list.end(), e + 1, below);
  return RowRange{source, destination, static_cast<uint64_t>(begin - list.begin()),
                  static_cast<uint64_t>(end - list.begin())};
}

// The peers of GPU g's call at `step` in the direction of `group`, starting at g's own place in
// its group, so that the senders of one group begin at different receivers.
std::vector<uint32_t> call_peers(const WorkerGroups& w, uint32_t g, uint32_t group) {
  std::vector<uint32_t> peers;
  const uint32_t n = w.end(group) - w.first(group);
  for (uint32_t i = 0; i < n; ++i) peers.push_back(w.first(group) + (g % w.size + i) % n);
  return peers;
}

// Where the clear-to-send flags land: one per call and sender (never read back; the count is the
// signal).
constexpr uint64_t kClearToSend = 0x2400'0000'0000;

// One NCCL group call (step, e) of GPU g: expert e's rows (results with `combine`) to
// `send_group`'s GPUs, chunk by chunk round them, then the wait for its own from `receive_group`'s.
// NCCL's send and receive are two-sided (a send moves its data once the peer has posted the
// matching receive): g first tells each GPU it will receive rows from that its receive is posted
// (a 16-byte flag), and sends a peer its rows once that peer's flag has come. A pair with no rows
// of e exchanges nothing, as FastMoE skips a send or receive of count 0. Modelled without NCCL's
// intermediate buffer, which would let a sender run ahead by that buffer's size. Returns the flags
// g sent.
uint64_t append_call(LayerPlan& plan, const ExpertRows& rows, const WorkerGroups& w, uint32_t g, uint32_t step, uint32_t e,
                 bool combine) {
  hw::WorkSequence& comm = plan.sequences[g];
  const uint32_t chunk = plan.spec->software.chunk_tokens;
  const hw::PhaseId phase = combine ? kCombinePhase : kDispatchPhase;
  const uint32_t counter = combine ? w.combine_counter(step, e) : w.dispatch_counter(step, e);
  const uint32_t call = ((combine ? w.count : 0) + step) * w.experts + e;
  // Dispatch: g's rows for the peers' expert e. Combine: g's expert e's results for the rows the
  // peers sent it, back to them; g's own rows' results come from the group it sent them to.
  const uint32_t send_group = combine ? w.from(g, step) : w.to(g, step);
  const uint32_t receive_group = combine ? w.to(g, step) : w.from(g, step);
  auto range_to = [&](uint32_t p) { return combine ? expert_range(rows, p, g, e) : expert_range(rows, g, p, e); };
  auto range_from = [&](uint32_t p) { return combine ? expert_range(rows, g, p, e) : expert_range(rows, p, g, e); };
  uint64_t expected = 0;
  uint64_t flags = 0;
  for (uint32_t p = w.first(receive_group); p < w.end(receive_group); ++p) {
    const RowRange range = range_from(p);
    expected += range.end - range.begin;
    if (p == g || range.end == range.begin) continue;
    comm.tasks.push_back(hw::Task::send(phase, p, kFlagSource, kClearToSend + 16ull * (call * w.gpus + g), 16,
                                        w.clear_counter(call)));
    plan.expected_link_arrivals[p]++;
    flags++;
  }
  std::vector<RowRange> ranges;
  uint64_t clear = 0;
  for (uint32_t p : call_peers(w, g, send_group)) {
    ranges.push_back(range_to(p));
    clear += p != g && ranges.back().end > ranges.back().begin;
  }
  comm.tasks.push_back(hw::Task::wait(phase, w.clear_counter(call), clear));
  for (uint64_t r = 0, more = 1; more != 0; r += chunk) {
    more = 0;
    for (const RowRange& range : ranges) {
      if (range.begin + r >= range.end) continue;
      const RowRange part{range.source, range.destination, range.begin + r, std::min(range.end, range.begin + r + chunk)};
      append_row_sends(plan, rows, comm, part, combine, phase, counter);
      more += part.end < range.end;
    }
  }
  comm.tasks.push_back(hw::Task::wait(phase, counter, expected));
  return flags;
}

// The experts stream of GPU g: per step, the wait for every call's rows, then per local expert the
// GEMMs over its rows from the step's peers, then a signal to the communication stream.
hw::WorkSequence smart_experts_stream(const LayerPlan& plan, const ExpertRows& rows, const WorkerGroups& w, uint32_t g,
                                      uint16_t sms) {
  const MoeLayerSpec& spec = *plan.spec;
  hw::WorkSequence work = side_stream(plan, g, 1, sms);
  for (uint32_t step = 0; step < w.count; ++step) {
    const uint32_t group = w.from(g, step);
    std::vector<RowRange> ranges;
    for (uint32_t p = w.first(group); p < w.end(group); ++p) ranges.push_back(RowRange{p, g, 0, rows.rows[p][g].size()});
    const RowWork received = row_work(plan, rows, g, ranges);
    for (uint32_t e = 0; e < w.experts; ++e) {
      uint64_t expected = 0;
      for (uint32_t p = w.first(group); p < w.end(group); ++p) {
        const RowRange range = expert_range(rows, p, g, e);
        expected += range.end - range.begin;
      }
      work.tasks.push_back(hw::Task::wait(kDispatchPhase, w.dispatch_counter(step, e), expected));
    }
    // The functional kernel (each received token's local experts summed) runs with the step's
    // last GEMM; FastMoE's expert function runs once per expert over the step's rows of it.
    uint32_t last = w.experts;
    for (uint32_t e = 0; e < w.experts; ++e) last = received.tokens_per_local_expert[e] > 0 ? e : last;
    const uint32_t kernel = add_row_kernel(plan, work, g, received);
    for (uint32_t e = 0; e < w.experts; ++e) {
      const uint64_t tokens = received.tokens_per_local_expert[e];
      if (tokens == 0) continue;
      std::vector<uint64_t> one(w.experts, 0);
      one[e] = tokens;
      append_expert_gemms(spec, work, kExpertsPhase, one, tokens, e == last ? kernel : hw::Task::kNoKernel);
    }
    work.tasks.push_back(hw::Task::local_copy(kExpertsPhase, kStreamSignal, kStreamSignal, 0, w.experts_done_counter()));
  }
  return work;
}

}  // namespace

void build_fastermoe(LayerPlan& plan, const DispatchMap& map) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const uint32_t channels = spec.software.nccl_channels;
  if (channels >= spec.gpu_sms) {
    throw std::invalid_argument("fastermoe: nccl_channels must leave the GEMMs at least one SM");
  }
  const WorkerGroups w = worker_groups(spec);
  check_counters("fastermoe", w.counters());
  const ExpertRows rows = expert_rows(map, routing, false);
  expect_row_regions(plan, rows);
  plan.extra_sequences.resize(w.gpus);
  uint64_t flags = 0;
  for (uint32_t g = 0; g < w.gpus; ++g) {
    hw::WorkSequence& comm = start_sequence(plan, g, w.counters());
    comm.sms = static_cast<uint16_t>(channels);
    comm.issue_sms = static_cast<uint16_t>(channels);
    append_count_exchange(plan, comm, g, kDispatchPhase);
    for (uint32_t step = 0; step < w.count; ++step) {
      for (uint32_t e = 0; e < w.experts; ++e) flags += append_call(plan, rows, w, g, step, e, false);
    }
  }
  const auto expert_sms = static_cast<uint16_t>(std::min<uint32_t>(spec.gpu_sms - channels, 0xFFFF));
  for (uint32_t g = 0; g < w.gpus; ++g) {
    plan.extra_sequences[g].push_back(smart_experts_stream(plan, rows, w, g, expert_sms));
    hw::WorkSequence& comm = plan.sequences[g];
    for (uint32_t step = 0; step < w.count; ++step) {
      comm.tasks.push_back(hw::Task::wait(kCombinePhase, w.experts_done_counter(), step + 1));
      for (uint32_t e = 0; e < w.experts; ++e) flags += append_call(plan, rows, w, g, step, e, true);
    }
    append_home_sum(plan, comm, g);
  }
  plan.figures = {{"group_size", w.size},
                  {"steps", w.count},
                  {"calls", 2.0 * w.count * w.experts},
                  {"clear_to_send_flags", static_cast<double>(flags)}};
}

}  // namespace nvsvp::fw::detail
