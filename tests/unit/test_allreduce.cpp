// The all-reduce planners of the calibration: the NVLS plan pipelines loads one chunk ahead of the
// stores with a counter per chunk; the ring plan sends to the next GPU, chunk g - s at
// reduce-scatter step s; sizes that do not divide are refused.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "nvsvp/fw/allreduce.hpp"

namespace nvsvp::fw {
namespace {

using hw::TaskKind;

TEST(AllReducePlan, NvlsLoadsOneChunkAheadOfTheStores) {
  AllReduceSpec spec;
  spec.message_bytes = 4096;
  spec.bytes = 4 * 4096 * 3;  // 4 GPUs, 3 messages per share
  spec.chunk_bytes = 8192;    // chunks of 2 and 1 messages
  spec.first_counter = 10;
  const std::vector<hw::WorkSequence> plan = plan_nvls_allreduce(4, spec);
  ASSERT_EQ(plan.size(), 4u);
  const hw::WorkSequence& gpu2 = plan[2];
  const std::vector<TaskKind> expected_kinds = {
      TaskKind::multimem_ld_reduce, TaskKind::multimem_ld_reduce,  // chunk 0
      TaskKind::multimem_ld_reduce,                                // chunk 1, ahead
      TaskKind::wait_counter,       TaskKind::multimem_store,     TaskKind::multimem_store,  // chunk 0
      TaskKind::wait_counter,       TaskKind::multimem_store,                                // chunk 1
      TaskKind::wait_counter};                                     // every share's copies
  ASSERT_EQ(gpu2.tasks.size(), expected_kinds.size());
  for (size_t i = 0; i < expected_kinds.size(); ++i) EXPECT_EQ(gpu2.tasks[i].kind, expected_kinds[i]) << "task " << i;
  const uint64_t share = 2 * 3 * 4096;  // GPU 2's share starts here
  EXPECT_EQ(gpu2.tasks[0].source_address, spec.multimem_base + share);
  EXPECT_EQ(gpu2.tasks[0].target_address, spec.scratch_address + share);
  EXPECT_EQ(gpu2.tasks[2].source_address, spec.multimem_base + share + 2 * 4096);
  EXPECT_EQ(gpu2.tasks[2].counter, 12u) << "chunk 1 counts on first_counter + 2";
  EXPECT_EQ(gpu2.tasks[3].counter, 11u);
  EXPECT_EQ(gpu2.tasks[3].arrivals, 2u);
  EXPECT_EQ(gpu2.tasks[6].counter, 12u);
  EXPECT_EQ(gpu2.tasks[6].arrivals, 1u);
  EXPECT_EQ(gpu2.tasks[4].source_address, spec.scratch_address + share);
  EXPECT_EQ(gpu2.tasks[4].target_address, spec.multimem_base + share);
  EXPECT_EQ(gpu2.tasks[8].counter, 10u);
  EXPECT_EQ(gpu2.tasks[8].arrivals, 12u) << "3 messages x 4 shares";
  EXPECT_EQ(gpu2.counters, 13u);
}

TEST(AllReducePlan, RingSendsChunkGMinusStepToTheNextGpu) {
  AllReduceSpec spec;
  spec.message_bytes = 4096;
  spec.bytes = 4 * 4096 * 2;  // 4 GPUs, 2 messages per chunk
  const std::vector<hw::WorkSequence> plan = plan_ring_allreduce(4, spec);
  const uint64_t chunk = 2 * 4096;
  const hw::WorkSequence& gpu1 = plan[1];
  // Reduce-scatter: 3 steps of (2 sends, wait, add); all-gather: 3 steps of (2 sends, wait).
  ASSERT_EQ(gpu1.tasks.size(), 3u * 4 + 3u * 3);
  // Step 0: chunk 1 to GPU 2's scratch slot 0; step 1: chunk 0 into slot 1.
  EXPECT_EQ(gpu1.tasks[0].kind, TaskKind::send);
  EXPECT_EQ(gpu1.tasks[0].peer, 2u);
  EXPECT_EQ(gpu1.tasks[0].source_address, spec.buffer_address + 1 * chunk);
  EXPECT_EQ(gpu1.tasks[0].target_address, spec.scratch_address);
  EXPECT_EQ(gpu1.tasks[2].kind, TaskKind::wait_counter);
  EXPECT_EQ(gpu1.tasks[2].arrivals, 2u);
  EXPECT_EQ(gpu1.tasks[3].kind, TaskKind::compute);
  EXPECT_EQ(gpu1.tasks[4].source_address, spec.buffer_address + 0 * chunk);
  EXPECT_EQ(gpu1.tasks[4].target_address, spec.scratch_address + chunk);
  // All-gather step 0: GPU 1 holds the sum of chunk 2 and writes it into GPU 2's buffer.
  EXPECT_EQ(gpu1.tasks[12].kind, TaskKind::send);
  EXPECT_EQ(gpu1.tasks[12].source_address, spec.buffer_address + 2 * chunk);
  EXPECT_EQ(gpu1.tasks[12].target_address, spec.buffer_address + 2 * chunk);
  EXPECT_EQ(plan[3].tasks[0].peer, 0u) << "the ring closes";
}

TEST(AllReducePlan, SizesThatDoNotDivideAreRefused) {
  AllReduceSpec spec;
  spec.message_bytes = 4096;
  spec.bytes = 8 * 4096 + 16;
  EXPECT_THROW(plan_nvls_allreduce(8, spec), std::invalid_argument);
  EXPECT_THROW(plan_ring_allreduce(8, spec), std::invalid_argument);
  spec.bytes = 0;
  EXPECT_THROW(plan_nvls_allreduce(8, spec), std::invalid_argument);
}

TEST(AllReducePlan, BusBandwidthIsNcclsDefinition) {
  // 8 GPUs, 1 GB in 1000 us: algorithm bandwidth 1000 GB/s, bus bandwidth 14/8 of it.
  EXPECT_DOUBLE_EQ(allreduce_bus_bandwidth_gbps(8, 1'000'000'000, 1000.0), 1750.0);
}

}  // namespace
}  // namespace nvsvp::fw
