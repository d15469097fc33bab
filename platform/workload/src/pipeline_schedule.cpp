#include "nvsvp/platform/pipeline_schedule.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace nvsvp::platform {

namespace {

constexpr double kNotYet = -1.0;

void check_times(const PipelineSpec& spec, const std::vector<StageCosts>& costs) {
  auto negative = [](double t) { return !(t >= 0.0); };  // also NaN
  bool bad = negative(spec.transfer_us);
  for (const StageCosts& c : costs) bad = bad || negative(c.forward_us) || negative(c.backward_us) || negative(c.weight_us);
  if (bad) throw std::invalid_argument("pipeline: expected times >= 0 us");
}

void check(const PipelineSpec& spec, const std::vector<StageCosts>& costs) {
  if (spec.stages == 0 || spec.micro_batches == 0) {
    throw std::invalid_argument("pipeline: expected at least one stage and one micro batch, got " +
                                std::to_string(spec.stages) + " stages and " + std::to_string(spec.micro_batches) +
                                " micro batches");
  }
  if (costs.size() != spec.stages) {
    throw std::invalid_argument("pipeline: expected one cost entry per stage (" + std::to_string(spec.stages) +
                                "), got " + std::to_string(costs.size()));
  }
  check_times(spec, costs);
}

PipelineOp make_op(PipelineOpKind kind, uint32_t rank, uint8_t direction, uint32_t micro_batch) {
  PipelineOp op;
  op.kind = kind;
  op.rank = rank;
  op.direction = direction;
  op.micro_batch = micro_batch;
  return op;
}

// Stage s's operations in 1F1B order: the warm-up forwards, then one forward and one backward
// (with its weight gradients) in turn, then the remaining backwards.
std::vector<PipelineOp> one_f_one_b_order(uint32_t stage, uint32_t stages, uint32_t micro_batches) {
  std::vector<PipelineOp> order;
  const uint32_t warmup = std::min(stages - 1 - stage, micro_batches);
  uint32_t next_forward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back(make_op(PipelineOpKind::forward, stage, 0, next_forward));
  for (uint32_t b = 0; b < micro_batches; ++b) {
    if (next_forward < micro_batches) order.push_back(make_op(PipelineOpKind::forward, stage, 0, next_forward++));
    order.push_back(make_op(PipelineOpKind::backward, stage, 0, b));
    order.push_back(make_op(PipelineOpKind::weight, stage, 0, b));
  }
  return order;
}

// Rank r's operations in DualPipe's order, its eight steps as the reference implementation runs
// them. A step's "phase" 0 is the direction that enters at the rank's nearer end.
std::vector<PipelineOp> dualpipe_order(uint32_t rank, uint32_t ranks, uint32_t micro_batches) {
  const uint32_t half = ranks / 2;
  const uint32_t half_rank = std::min(rank, ranks - 1 - rank);
  const uint32_t half_chunks = micro_batches / 2;
  const bool middle = half_rank == half - 1;
  const uint8_t second_half = rank >= half ? 1 : 0;
  std::vector<PipelineOp> order;
  uint32_t forwards[2] = {0, 0}, backwards[2] = {0, 0};
  std::deque<PipelineOp> deferred;  // backwards whose weight gradients wait, oldest first
  auto direction_of = [&](int phase) { return static_cast<uint8_t>(phase ^ second_half); };
  auto forward = [&](int phase, bool output_with_next = false) {
    const uint8_t d = direction_of(phase);
    PipelineOp o = make_op(PipelineOpKind::forward, rank, d, forwards[d]++);
    o.output_with_next = output_with_next;
    order.push_back(o);
  };
  auto backward = [&](int phase, bool zero_bubble) {
    const uint8_t d = direction_of(phase);
    PipelineOp o = make_op(PipelineOpKind::backward, rank, d, backwards[d]++);
    o.with_weight = !zero_bubble;
    order.push_back(o);
    if (zero_bubble) deferred.push_back(o);
  };
  auto weight = [&] {
    if (deferred.empty()) throw std::logic_error("pipeline: DualPipe's order has no weight gradients to run");
    PipelineOp o = deferred.front();
    deferred.pop_front();
    o.kind = PipelineOpKind::weight;
    order.push_back(o);
  };
  auto forward_backward = [&](int forward_phase) {
    const uint8_t d = direction_of(forward_phase);
    PipelineOp o = make_op(PipelineOpKind::forward_backward, rank, d, forwards[d]++);
    o.backward_micro_batch = backwards[1 - d]++;
    o.with_weight = true;
    order.push_back(o);
  };

  for (uint32_t i = 0; i < (half - half_rank - 1) * 2; ++i) forward(0);  // 1: nF0
  for (uint32_t i = 0; i <= half_rank; ++i) {                            // 2: nF0F1
    // Outside the middle, a phase-0 output is sent after the phase-1 forward; in the middle, the
    // last phase-1 output after the next step's first forward.
    forward(0, !middle);
    forward(1, middle && i == half_rank);
  }
  for (uint32_t i = 0; i < half - half_rank - 1; ++i) {  // 3: nB1W1F1, zero bubble
    backward(1, true);
    weight();
    forward(1);
  }
  for (uint32_t i = 0; i < half_chunks - ranks + half_rank + 1; ++i) {  // 4: nF0B1F1B0, the main step
    if (i == 0 && middle) {
      // The middle ranks run their first pair apart, the forward's output sent after the backward.
      forward(0, true);
      backward(1, false);
    } else {
      forward_backward(0);
    }
    forward_backward(1);
  }
  for (uint32_t i = 0; i < half - half_rank - 1; ++i) {  // 5: nB1F1B0
    backward(1, false);
    forward_backward(1);
  }
  bool zero_bubble = false;  // 6: nB1B0, the second half zero bubble
  for (uint32_t i = 0; i <= half_rank; ++i) {
    if (i == (half_rank + 1) / 2 && half_rank % 2 == 1) zero_bubble = true;
    backward(1, zero_bubble);
    if (i == (half_rank + 1) / 2 && half_rank % 2 == 0) zero_bubble = true;
    backward(0, zero_bubble);
  }
  for (uint32_t i = 0; i < half - half_rank - 1; ++i) {  // 7: nWB0, zero bubble
    weight();
    backward(0, true);
  }
  for (uint32_t i = 0; i <= half_rank; ++i) weight();  // 8: nW
  for (int d = 0; d < 2; ++d) {
    if (forwards[d] != half_chunks || backwards[d] != half_chunks || !deferred.empty()) {
      throw std::logic_error("pipeline: DualPipe's order of rank " + std::to_string(rank) +
                             " does not run every micro batch once");
    }
  }
  return order;
}

// Times every rank's operations in order: an operation starts when its rank is free and its input
// has arrived from the neighbouring rank (plus spec.transfer_us), and takes `costs[rank]`'s time.
// Both schedules go through here: 1F1B with one direction, DualPipe with two.
PipelineTiming time_orders(const PipelineSpec& spec, std::vector<std::vector<PipelineOp>> orders,
                           const std::vector<DualPipeRankCosts>& costs) {
  const uint32_t P = spec.stages, M = spec.micro_batches;
  auto stage_of = [P](uint8_t direction, uint32_t rank) { return direction == 0 ? rank : P - 1 - rank; };
  // [direction][stage][micro batch]: when each forward and backward ended, and when its output
  // left for the neighbouring rank (kNotYet: not yet timed).
  using Times = std::vector<std::vector<std::vector<double>>>;
  const Times none(2, std::vector<std::vector<double>>(P, std::vector<double>(M, kNotYet)));
  Times forward_end = none, forward_sent = none, backward_end = none;

  auto forward_ready = [&](uint8_t d, uint32_t rank, uint32_t mb) -> double {
    const uint32_t s = stage_of(d, rank);
    if (s == 0) return 0.0;
    const double sent = forward_sent[d][s - 1][mb];
    return sent == kNotYet ? kNotYet : sent + spec.transfer_us;
  };
  auto backward_ready = [&](uint8_t d, uint32_t rank, uint32_t mb) -> double {
    const uint32_t s = stage_of(d, rank);
    const double own_forward = forward_end[d][s][mb];
    if (own_forward == kNotYet) return kNotYet;
    if (s == P - 1) return own_forward;
    const double sent = backward_end[d][s + 1][mb];
    return sent == kNotYet ? kNotYet : std::max(own_forward, sent + spec.transfer_us);
  };
  auto ready_at = [&](const PipelineOp& op) -> double {
    switch (op.kind) {
      case PipelineOpKind::forward: return forward_ready(op.direction, op.rank, op.micro_batch);
      case PipelineOpKind::backward: return backward_ready(op.direction, op.rank, op.micro_batch);
      case PipelineOpKind::weight: return backward_end[op.direction][stage_of(op.direction, op.rank)][op.micro_batch];
      case PipelineOpKind::forward_backward: {
        const double f = forward_ready(op.direction, op.rank, op.micro_batch);
        const double b = backward_ready(static_cast<uint8_t>(1 - op.direction), op.rank, op.backward_micro_batch);
        return f == kNotYet || b == kNotYet ? kNotYet : std::max(f, b);
      }
    }
    return kNotYet;
  };
  auto duration = [&](const PipelineOp& op) -> double {
    const StageCosts& c = costs[op.rank].direction[op.direction];
    switch (op.kind) {
      case PipelineOpKind::forward: return c.forward_us;
      case PipelineOpKind::backward: return c.backward_us + (op.with_weight ? c.weight_us : 0.0);
      case PipelineOpKind::weight: return c.weight_us;
      case PipelineOpKind::forward_backward: return costs[op.rank].forward_backward_us[op.direction];
    }
    return 0.0;
  };

  std::vector<size_t> next(P, 0);
  std::vector<double> free_at(P, 0.0);
  std::vector<const PipelineOp*> held(P, nullptr);  // a forward whose output leaves with the next operation
  size_t remaining = 0;
  for (const auto& order : orders) remaining += order.size();
  while (remaining > 0) {
    bool progressed = false;
    for (uint32_t r = 0; r < P; ++r) {
      while (next[r] < orders[r].size()) {
        PipelineOp& op = orders[r][next[r]];
        const double ready = ready_at(op);
        if (ready == kNotYet) break;
        op.start_us = std::max(free_at[r], ready);
        op.end_us = op.start_us + duration(op);
        free_at[r] = op.end_us;
        if (held[r] != nullptr) {
          forward_sent[held[r]->direction][stage_of(held[r]->direction, r)][held[r]->micro_batch] = op.end_us;
          held[r] = nullptr;
        }
        const uint32_t s = stage_of(op.direction, r);
        if (op.kind == PipelineOpKind::forward || op.kind == PipelineOpKind::forward_backward) {
          forward_end[op.direction][s][op.micro_batch] = op.end_us;
          if (op.output_with_next && next[r] + 1 < orders[r].size()) held[r] = &op;
          else forward_sent[op.direction][s][op.micro_batch] = op.end_us;
        }
        if (op.kind == PipelineOpKind::backward) backward_end[op.direction][s][op.micro_batch] = op.end_us;
        if (op.kind == PipelineOpKind::forward_backward) {
          const auto other = static_cast<uint8_t>(1 - op.direction);
          backward_end[other][stage_of(other, r)][op.backward_micro_batch] = op.end_us;
        }
        ++next[r];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("pipeline: the schedule's order waits on itself");
  }

  PipelineTiming timing;
  timing.busy_us.assign(P, 0.0);
  for (uint32_t r = 0; r < P; ++r) {
    for (const PipelineOp& op : orders[r]) {
      timing.busy_us[r] += op.end_us - op.start_us;
      timing.step_us = std::max(timing.step_us, op.end_us);
      timing.ops.push_back(op);
    }
  }
  double idle = 0.0;
  for (double busy : timing.busy_us) idle += timing.step_us - busy;
  timing.mean_bubble_us = idle / P;
  return timing;
}

}  // namespace

const char* to_string(PipelineOpKind kind) {
  switch (kind) {
    case PipelineOpKind::forward: return "F";
    case PipelineOpKind::backward: return "B";
    case PipelineOpKind::weight: return "W";
    case PipelineOpKind::forward_backward: return "FB";
  }
  return "?";
}

PipelineTiming time_one_f_one_b(const PipelineSpec& spec, const std::vector<StageCosts>& costs) {
  check(spec, costs);
  std::vector<std::vector<PipelineOp>> orders(spec.stages);
  std::vector<DualPipeRankCosts> of_ranks(spec.stages);
  for (uint32_t s = 0; s < spec.stages; ++s) {
    orders[s] = one_f_one_b_order(s, spec.stages, spec.micro_batches);
    of_ranks[s].direction[0] = costs[s];
  }
  return time_orders(spec, std::move(orders), of_ranks);
}

PipelineTiming time_dualpipe(const PipelineSpec& spec, const std::vector<DualPipeRankCosts>& ranks) {
  const uint32_t P = spec.stages, M = spec.micro_batches;
  if (P == 0 || P % 2 != 0 || M % 2 != 0 || M < 2 * P) {
    throw std::invalid_argument("pipeline: DualPipe expected an even number of ranks and an even number of micro "
                                "batches, at least twice the ranks; got " +
                                std::to_string(P) + " ranks and " + std::to_string(M) + " micro batches");
  }
  if (ranks.size() != P) {
    throw std::invalid_argument("pipeline: expected one cost entry per rank (" + std::to_string(P) + "), got " +
                                std::to_string(ranks.size()));
  }
  std::vector<StageCosts> stages;
  for (const DualPipeRankCosts& r : ranks) {
    stages.insert(stages.end(), r.direction.begin(), r.direction.end());
    if (!(r.forward_backward_us[0] >= 0.0 && r.forward_backward_us[1] >= 0.0)) {
      throw std::invalid_argument("pipeline: expected times >= 0 us");
    }
  }
  check_times(spec, stages);
  std::vector<std::vector<PipelineOp>> orders(P);
  for (uint32_t r = 0; r < P; ++r) orders[r] = dualpipe_order(r, P, M);
  return time_orders(spec, std::move(orders), ranks);
}

}  // namespace nvsvp::platform
