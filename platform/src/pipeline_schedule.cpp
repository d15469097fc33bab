#include "nvsvp/platform/pipeline_schedule.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace nvsvp::platform {

namespace {

constexpr double kNotYet = -1.0;

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
  auto negative = [](double t) { return !(t >= 0.0); };  // also NaN
  bool bad = negative(spec.transfer_us);
  for (const StageCosts& c : costs) bad = bad || negative(c.forward_us) || negative(c.backward_us) || negative(c.weight_us);
  if (bad) throw std::invalid_argument("pipeline: expected times >= 0 us");
}

// Stage s's operations in 1F1B order: the warm-up forwards, then one forward and one backward
// (with its weight gradients) in turn, then the remaining backwards.
std::vector<PipelineOp> one_f_one_b_order(uint32_t stage, uint32_t stages, uint32_t micro_batches) {
  std::vector<PipelineOp> order;
  const uint32_t warmup = std::min(stages - 1 - stage, micro_batches);
  uint32_t next_forward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back({PipelineOpKind::forward, stage, next_forward});
  for (uint32_t b = 0; b < micro_batches; ++b) {
    if (next_forward < micro_batches) order.push_back({PipelineOpKind::forward, stage, next_forward++});
    order.push_back({PipelineOpKind::backward, stage, b});
    order.push_back({PipelineOpKind::weight, stage, b});
  }
  return order;
}

double duration(const PipelineOp& op, const StageCosts& c) {
  switch (op.kind) {
    case PipelineOpKind::forward: return c.forward_us;
    case PipelineOpKind::backward: return c.backward_us;
    case PipelineOpKind::weight: return c.weight_us;
  }
  return 0.0;
}

}  // namespace

const char* to_string(PipelineOpKind kind) {
  switch (kind) {
    case PipelineOpKind::forward: return "F";
    case PipelineOpKind::backward: return "B";
    case PipelineOpKind::weight: return "W";
  }
  return "?";
}

PipelineTiming time_one_f_one_b(const PipelineSpec& spec, const std::vector<StageCosts>& costs) {
  check(spec, costs);
  const uint32_t P = spec.stages, M = spec.micro_batches;
  std::vector<std::vector<PipelineOp>> orders(P);
  for (uint32_t s = 0; s < P; ++s) orders[s] = one_f_one_b_order(s, P, M);
  // When each stage's forward and backward of each micro batch ended (kNotYet: not yet timed).
  std::vector<std::vector<double>> forward_end(P, std::vector<double>(M, kNotYet));
  std::vector<std::vector<double>> backward_end(P, std::vector<double>(M, kNotYet));
  std::vector<size_t> next(P, 0);
  std::vector<double> free_at(P, 0.0);

  // An operation's input: the previous stage's forward, or the next stage's backward, plus the
  // transfer between them; kNotYet while that has not been timed.
  auto ready_at = [&](const PipelineOp& op) -> double {
    if (op.kind == PipelineOpKind::forward) {
      if (op.stage == 0) return 0.0;
      const double end = forward_end[op.stage - 1][op.micro_batch];
      return end == kNotYet ? kNotYet : end + spec.transfer_us;
    }
    if (op.kind == PipelineOpKind::backward) {
      const double own_forward = forward_end[op.stage][op.micro_batch];
      if (own_forward == kNotYet) return kNotYet;
      if (op.stage == P - 1) return own_forward;
      const double end = backward_end[op.stage + 1][op.micro_batch];
      return end == kNotYet ? kNotYet : std::max(own_forward, end + spec.transfer_us);
    }
    return backward_end[op.stage][op.micro_batch];  // weight gradients follow their backward
  };

  size_t remaining = static_cast<size_t>(P) * 3 * M;
  while (remaining > 0) {
    bool progressed = false;
    for (uint32_t s = 0; s < P; ++s) {
      while (next[s] < orders[s].size()) {
        PipelineOp& op = orders[s][next[s]];
        const double ready = ready_at(op);
        if (ready == kNotYet) break;
        op.start_us = std::max(free_at[s], ready);
        op.end_us = op.start_us + duration(op, costs[s]);
        free_at[s] = op.end_us;
        if (op.kind == PipelineOpKind::forward) forward_end[s][op.micro_batch] = op.end_us;
        if (op.kind == PipelineOpKind::backward) backward_end[s][op.micro_batch] = op.end_us;
        ++next[s];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("pipeline: the 1F1B order waits on itself");
  }

  PipelineTiming timing;
  timing.busy_us.assign(P, 0.0);
  for (uint32_t s = 0; s < P; ++s) {
    for (const PipelineOp& op : orders[s]) {
      timing.busy_us[s] += op.end_us - op.start_us;
      timing.step_us = std::max(timing.step_us, op.end_us);
      timing.ops.push_back(op);
    }
  }
  double idle = 0.0;
  for (double busy : timing.busy_us) idle += timing.step_us - busy;
  timing.mean_bubble_us = idle / P;
  return timing;
}

}  // namespace nvsvp::platform
