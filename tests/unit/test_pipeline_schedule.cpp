// The 1F1B pipeline's timing (platform/pipeline_schedule.hpp) against what can be worked out by
// hand: the closed form of equal stages, one micro batch through two stages with the transfers
// between them, a single stage, the order a stage runs in, and refused inputs.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/platform/pipeline_schedule.hpp"

namespace nvsvp::platform {
namespace {

std::string order_of(const PipelineTiming& timing, uint32_t stage) {
  std::string out;
  for (const PipelineOp& op : timing.ops) {
    if (op.stage == stage) out += std::string(out.empty() ? "" : " ") + to_string(op.kind) + std::to_string(op.micro_batch);
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
    if (op.kind == PipelineOpKind::forward && op.micro_batch == 1 && op.stage == 1) f1_stage1 = op.end_us;
    if (op.kind == PipelineOpKind::forward && op.micro_batch == 1 && op.stage == 2) f1_stage2 = op.start_us;
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
