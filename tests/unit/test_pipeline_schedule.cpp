// The pipeline schedules' timing (platform/pipeline_schedule.hpp) against what can be worked out
// by hand. 1F1B: the closed form of equal stages, one micro batch through two stages with the
// transfers between them, a single stage, the order a stage runs in, and refused inputs.
// DualPipe: the bubble of DeepSeek-V3's report, every micro batch once per rank, no operation
// before its input, mirrored ranks, and refused inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <string>
#include <vector>

#include "nvsvp/platform/pipeline_schedule.hpp"

namespace nvsvp::platform {
namespace {

std::string order_of(const PipelineTiming& timing, uint32_t stage) {
  std::string out;
  for (const PipelineOp& op : timing.ops) {
    if (op.rank == stage) out += std::string(out.empty() ? "" : " ") + to_string(op.kind) + std::to_string(op.micro_batch);
  }
  return out;
}

// Equal stages, no transfer time: every stage idles (P - 1) x (F + B), the 1F1B bubble of
// DeepSeek-V3's report (a weight gradient waits for nothing downstream, so it is never on the
// path between stages), and the step is M x (F + B + W) plus that bubble.
TEST(PipelineSchedule, EqualStagesMeetTheClosedForm) {
  for (uint32_t stages : {1u, 2u, 4u, 8u}) {
    for (uint32_t micro_batches : {1u, 4u, 8u, 20u}) {
      const StageCosts c{1.5, 2.0, 1.0};
      const PipelineTiming t = time_one_f_one_b({stages, micro_batches, 0.0}, std::vector<StageCosts>(stages, c));
      const double per_micro_batch = c.forward_us + c.backward_us + c.weight_us;
      const std::string where = std::to_string(stages) + " stages, " + std::to_string(micro_batches) + " micro batches";
      const double bubble = (stages - 1) * (c.forward_us + c.backward_us);
      EXPECT_DOUBLE_EQ(t.step_us, micro_batches * per_micro_batch + bubble) << where;
      EXPECT_DOUBLE_EQ(t.mean_bubble_us, bubble) << where;
      EXPECT_EQ(t.ops.size(), 3u * stages * micro_batches) << where;
    }
  }
}

// One micro batch through two stages: F on stage 0, the transfer, F and B and W on stage 1, the
// transfer back, B and W on stage 0.
TEST(PipelineSchedule, TransfersBetweenStagesAreOnTheCriticalPath) {
  const PipelineTiming t = time_one_f_one_b({2, 1, 10.0}, {{1.0, 2.0, 0.5}, {3.0, 4.0, 0.25}});
  EXPECT_DOUBLE_EQ(t.step_us, 1.0 + 10.0 + 3.0 + 4.0 + 10.0 + 2.0 + 0.5);
  EXPECT_DOUBLE_EQ(t.busy_us[0], 3.5);
  EXPECT_DOUBLE_EQ(t.busy_us[1], 7.25);
  EXPECT_DOUBLE_EQ(t.mean_bubble_us, ((t.step_us - 3.5) + (t.step_us - 7.25)) / 2.0);
}

TEST(PipelineSchedule, EachStageRunsInOneFOneBOrder) {
  const PipelineTiming t = time_one_f_one_b({4, 6, 0.0}, std::vector<StageCosts>(4, StageCosts{1.0, 1.0, 0.0}));
  EXPECT_EQ(order_of(t, 0), "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 B3 W3 B4 W4 B5 W5");
  EXPECT_EQ(order_of(t, 3), "F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5");
  // Nothing starts before its input: stage 2's forward of micro batch 1 after stage 1's.
  double f1_stage1 = -1.0, f1_stage2 = -1.0;
  for (const PipelineOp& op : t.ops) {
    if (op.kind == PipelineOpKind::forward && op.micro_batch == 1 && op.rank == 1) f1_stage1 = op.end_us;
    if (op.kind == PipelineOpKind::forward && op.micro_batch == 1 && op.rank == 2) f1_stage2 = op.start_us;
  }
  EXPECT_GE(f1_stage2, f1_stage1);
}

// A slower stage sets the pace: the steady state runs at its F + B + W per micro batch.
TEST(PipelineSchedule, TheSlowestStageSetsThePace) {
  std::vector<StageCosts> costs(4, StageCosts{1.0, 1.0, 0.0});
  costs[2] = {2.0, 2.0, 0.0};
  const PipelineTiming few = time_one_f_one_b({4, 8, 0.0}, costs);
  const PipelineTiming more = time_one_f_one_b({4, 16, 0.0}, costs);
  EXPECT_DOUBLE_EQ(more.step_us - few.step_us, 8 * 4.0);
}

// ---------------------------------------------------------------------------------------------
// DualPipe

std::vector<DualPipeRankCosts> equal_ranks(uint32_t ranks, double f, double b, double w, double fb) {
  DualPipeRankCosts c;
  c.direction = {StageCosts{f, b, w}, StageCosts{f, b, w}};
  c.forward_backward_us = {fb, fb};
  return std::vector<DualPipeRankCosts>(ranks, c);
}

double most_idle(const PipelineTiming& t) {
  double idle = 0.0;
  for (double busy : t.busy_us) idle = std::max(idle, t.step_us - busy);
  return idle;
}

// DeepSeek-V3's report gives DualPipe's bubble as (P/2 - 1)(F&B + B - 3W), B the whole backward,
// for stages whose input and weight gradients each take as long as the forward.
TEST(DualPipeSchedule, TheMostIdleRankMeetsDeepSeekV3sBubble) {
  for (uint32_t ranks : {2u, 4u, 6u, 8u, 12u}) {
    for (uint32_t micro_batches : {2 * ranks, 2 * ranks + 2, 4 * ranks}) {
      for (double f : {1.0, 1.7}) {
        for (double pair : {2.0, 2.5, 3.0}) {  // F&B between the longer of F and B and their sum
          const double w = f, whole_backward = 2 * f, fb = pair * f;
          const PipelineTiming t =
              time_dualpipe({ranks, micro_batches, 0.0}, equal_ranks(ranks, f, whole_backward - w, w, fb));
          const std::string where = std::to_string(ranks) + " ranks, " + std::to_string(micro_batches) +
                                    " micro batches, F " + std::to_string(f) + ", F&B " + std::to_string(fb);
          EXPECT_NEAR(most_idle(t), (ranks / 2.0 - 1) * (fb + whole_backward - 3 * w), 1e-9) << where;
          double idle = 0.0;
          for (double busy : t.busy_us) idle += t.step_us - busy;
          EXPECT_NEAR(t.mean_bubble_us, idle / ranks, 1e-9) << where;
        }
      }
    }
  }
}

// Every rank runs each micro batch of each direction once forward and once backward (alone or in
// a pair), its weight gradients once, and no operation starts before its rank is free and its
// input has come from the neighbouring rank over the link.
TEST(DualPipeSchedule, EveryMicroBatchOncePerRankAndNothingBeforeItsInput) {
  const uint32_t P = 8, M = 20;
  const double transfer = 0.7;
  std::vector<DualPipeRankCosts> costs = equal_ranks(P, 1.0, 1.1, 0.8, 2.3);
  costs[3].direction[1] = {1.6, 1.5, 1.0};  // an uneven rank and direction
  costs[3].forward_backward_us = {2.9, 3.1};
  const PipelineTiming t = time_dualpipe({P, M, transfer}, costs);
  auto stage_of = [&](int d, uint32_t rank) { return d == 0 ? rank : P - 1 - rank; };
  // (direction, stage, micro batch) -> when its forward or backward ended.
  std::map<std::tuple<int, uint32_t, uint32_t>, double> forward_end, backward_end;
  std::map<std::tuple<uint32_t, int, uint32_t, char>, int> count;  // (rank, direction, micro batch, F/B/W)
  std::vector<double> free_at(P, 0.0);
  for (const PipelineOp& op : t.ops) {
    EXPECT_GE(op.start_us, free_at[op.rank] - 1e-9);
    free_at[op.rank] = op.end_us;
    const int d = op.direction, other = 1 - d;
    if (op.kind == PipelineOpKind::forward || op.kind == PipelineOpKind::forward_backward) {
      ++count[{op.rank, d, op.micro_batch, 'F'}];
      forward_end[{d, stage_of(d, op.rank), op.micro_batch}] = op.end_us;
    }
    if (op.kind == PipelineOpKind::backward) {
      ++count[{op.rank, d, op.micro_batch, 'B'}];
      if (op.with_weight) ++count[{op.rank, d, op.micro_batch, 'W'}];
      backward_end[{d, stage_of(d, op.rank), op.micro_batch}] = op.end_us;
    }
    if (op.kind == PipelineOpKind::forward_backward) {
      ++count[{op.rank, other, op.backward_micro_batch, 'B'}];
      ++count[{op.rank, other, op.backward_micro_batch, 'W'}];
      backward_end[{other, stage_of(other, op.rank), op.backward_micro_batch}] = op.end_us;
    }
    if (op.kind == PipelineOpKind::weight) ++count[{op.rank, d, op.micro_batch, 'W'}];
  }
  EXPECT_EQ(count.size(), size_t{P} * 2 * (M / 2) * 3);
  for (const auto& [key, n] : count) EXPECT_EQ(n, 1);
  for (const PipelineOp& op : t.ops) {
    auto check_forward = [&](int d, uint32_t mb) {
      const uint32_t s = stage_of(d, op.rank);
      if (s > 0) {
        EXPECT_GE(op.start_us, forward_end.at({d, s - 1, mb}) + transfer - 1e-9);
      }
    };
    auto check_backward = [&](int d, uint32_t mb) {
      const uint32_t s = stage_of(d, op.rank);
      EXPECT_GE(op.start_us, forward_end.at({d, s, mb}) - 1e-9);
      if (s + 1 < P) {
        EXPECT_GE(op.start_us, backward_end.at({d, s + 1, mb}) + transfer - 1e-9);
      }
    };
    if (op.kind == PipelineOpKind::forward) check_forward(op.direction, op.micro_batch);
    if (op.kind == PipelineOpKind::backward) check_backward(op.direction, op.micro_batch);
    if (op.kind == PipelineOpKind::forward_backward) {
      check_forward(op.direction, op.micro_batch);
      check_backward(1 - op.direction, op.backward_micro_batch);
    }
  }
}

// Rank r and rank P - 1 - r run the same steps with the directions swapped.
TEST(DualPipeSchedule, MirroredRanksRunTheSameStepsInTheOtherDirection) {
  const uint32_t P = 6;
  const PipelineTiming t = time_dualpipe({P, 14, 0.0}, equal_ranks(P, 1.0, 1.0, 1.0, 2.5));
  auto steps_of = [&](uint32_t rank, bool swap) {
    std::string out;
    for (const PipelineOp& op : t.ops) {
      if (op.rank != rank) continue;
      out += std::string(to_string(op.kind)) + std::to_string(swap ? 1 - op.direction : op.direction) +
             (op.kind == PipelineOpKind::backward && !op.with_weight ? "i" : "") + " ";
    }
    return out;
  };
  for (uint32_t r = 0; r < P / 2; ++r) EXPECT_EQ(steps_of(r, false), steps_of(P - 1 - r, true)) << "rank " << r;
  // Rank 0's first three steps: (P/2 - 1) x 2 warm-up forwards of direction 0, one forward of
  // each direction, then (P/2 - 1) x (a backward without its weight gradients, they, a forward).
  const std::string first = "F0 F0 F0 F0 F0 F1 B1i W1 F1 B1i W1 F1 ";
  EXPECT_EQ(steps_of(0, false).substr(0, first.size()), first) << steps_of(0, false);
  // The middle rank (no warm-up): a forward of each direction per rank before it, then its first
  // pair apart, a forward alone and a backward, then the overlapped pairs.
  const std::string middle = "F0 F1 F0 F1 F0 F1 F0 B1 FB1 FB0 FB1 ";
  EXPECT_EQ(steps_of(2, false).substr(0, middle.size()), middle) << steps_of(2, false);
}

TEST(DualPipeSchedule, BadInputsAreRefused) {
  EXPECT_THROW(time_dualpipe({3, 6, 0.0}, equal_ranks(3, 1, 1, 1, 2)), std::invalid_argument);  // odd ranks
  EXPECT_THROW(time_dualpipe({4, 9, 0.0}, equal_ranks(4, 1, 1, 1, 2)), std::invalid_argument);  // odd micro batches
  EXPECT_THROW(time_dualpipe({4, 6, 0.0}, equal_ranks(4, 1, 1, 1, 2)), std::invalid_argument);  // fewer than 2P
  EXPECT_THROW(time_dualpipe({4, 8, 0.0}, equal_ranks(2, 1, 1, 1, 2)), std::invalid_argument);  // costs of 2 ranks
  EXPECT_THROW(time_dualpipe({4, 8, 0.0}, equal_ranks(4, 1, -1, 1, 2)), std::invalid_argument);
  EXPECT_THROW(time_dualpipe({4, 8, 0.0}, equal_ranks(4, 1, 1, 1, -2)), std::invalid_argument);
  EXPECT_THROW(time_dualpipe({4, 8, -1.0}, equal_ranks(4, 1, 1, 1, 2)), std::invalid_argument);
}

TEST(PipelineSchedule, BadInputsAreRefused) {
  const std::vector<StageCosts> two(2, StageCosts{1.0, 1.0, 1.0});
  EXPECT_THROW(time_one_f_one_b({0, 4, 0.0}, {}), std::invalid_argument);
  EXPECT_THROW(time_one_f_one_b({2, 0, 0.0}, two), std::invalid_argument);
  EXPECT_THROW(time_one_f_one_b({3, 4, 0.0}, two), std::invalid_argument);
  EXPECT_THROW(time_one_f_one_b({2, 4, -1.0}, two), std::invalid_argument);
  EXPECT_THROW(time_one_f_one_b({2, 4, 0.0}, {{1.0, -2.0, 1.0}, {1.0, 1.0, 1.0}}), std::invalid_argument);
}

}  // namespace
}  // namespace nvsvp::platform
