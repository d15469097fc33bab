// The source SM's queue of pending dynamic multimem operations (dynamic_source_queue.hpp): when
// operations enter and issue, stalls when every entry is taken, statistics. Timings worked out by
// hand in the comments. No simulation.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "nvsvp/model/dynamic_source_queue.hpp"

namespace nvsvp::model {
namespace {

void expect_times(const QueuedOperation& op, double enter_ns, double issue_ns) {
  EXPECT_DOUBLE_EQ(op.enter_ns, enter_ns) << "arrival " << op.arrival_ns;
  EXPECT_DOUBLE_EQ(op.issue_ns, issue_ns) << "arrival " << op.arrival_ns;
}

// Two entries, 100 ns to read a target list; operations at 0, 10, 20, 30, 150 ns.
//   op0: enters 0, issues 100.          op1: enters 10, issues 110 (queue now full).
//   op2: full; waits for op0 (100): enters 100, issues 200, stalled 80.
//   op3: full (op1, op2); waits for op1: enters 110, issues 210, stalled 80.
//   op4: at 150 the queue holds op2 (200) and op3 (210): enters 200, issues 300, stalled 50.
TEST(DynamicSourceQueue, WorkedExampleWithTwoEntries) {
  DynamicSourceQueue queue({2, 100.0});
  expect_times(queue.admit(0), 0, 100);
  expect_times(queue.admit(10), 10, 110);
  EXPECT_EQ(queue.occupancy(), 2u);
  const QueuedOperation op2 = queue.admit(20);
  expect_times(op2, 100, 200);
  EXPECT_DOUBLE_EQ(op2.stall_ns(), 80);
  expect_times(queue.admit(30), 110, 210);
  expect_times(queue.admit(150), 200, 300);
  const DynamicSourceQueueStatistics& s = queue.statistics();
  EXPECT_EQ(s.operations, 5u);
  EXPECT_EQ(s.stalls, 3u);
  EXPECT_DOUBLE_EQ(s.stall_ns, 80 + 80 + 50);
  EXPECT_DOUBLE_EQ(s.max_stall_ns, 80);
  EXPECT_EQ(s.peak_occupancy, 2u);
}

// Default: 32 entries, 20 ns. 33 operations at once: 32 enter at 0 and issue at 20; the 33rd
// waits for them (all free at 20), enters at 20 and issues at 40.
TEST(DynamicSourceQueue, ThirtyThirdSimultaneousOperationWaitsOneListRead) {
  DynamicSourceQueue queue;
  EXPECT_EQ(queue.params().entries, 32u);
  for (int i = 0; i < 32; ++i) expect_times(queue.admit(0), 0, 20);
  EXPECT_EQ(queue.occupancy(), 32u);
  expect_times(queue.admit(0), 20, 40);
  EXPECT_EQ(queue.occupancy(), 1u);  // the 32 ahead of it issued at 20
  EXPECT_EQ(queue.statistics().stalls, 1u);
  EXPECT_EQ(queue.statistics().peak_occupancy, 32u);
  EXPECT_DOUBLE_EQ(queue.statistics().stall_ns, 20);
}

// Issue is in order: an operation held by its link (not_before) holds the ones behind it.
// 4 entries, 10 ns: op0 may not leave before 500; op1 (arrives 10, list read by 20) waits for it;
// op2 arrives at 600, when both have left.
TEST(DynamicSourceQueue, IssueStaysInProgramOrder) {
  DynamicSourceQueue queue({4, 10.0});
  expect_times(queue.admit(0, 500), 0, 500);
  expect_times(queue.admit(10), 10, 500);
  EXPECT_EQ(queue.occupancy(), 2u);
  expect_times(queue.admit(600), 600, 610);
  EXPECT_EQ(queue.occupancy(), 1u);
  EXPECT_EQ(queue.statistics().stalls, 0u);
}

// An entry freed at t serves an operation entering at t: with no read time, one entry never stalls.
TEST(DynamicSourceQueue, EntryFreedAtTheSameInstantIsReusable) {
  DynamicSourceQueue queue({1, 0.0});
  for (int i = 0; i < 3; ++i) expect_times(queue.admit(5), 5, 5);
  EXPECT_EQ(queue.statistics().stalls, 0u);
  EXPECT_EQ(queue.statistics().peak_occupancy, 1u);
}

TEST(DynamicSourceQueue, RejectsOutOfOrderArrivalsAndBadParameters) {
  DynamicSourceQueue queue;
  queue.admit(100);
  try {
    queue.admit(50);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("50.0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("100.0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(queue.statistics().operations, 1u);
  EXPECT_THROW(DynamicSourceQueue({0, 20.0}), std::invalid_argument);
  EXPECT_THROW(DynamicSourceQueue({32, -1.0}), std::invalid_argument);
}

}  // namespace
}  // namespace nvsvp::model
