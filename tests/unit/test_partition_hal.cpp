// One partition's view of the machine (PartitionHal) over a mocked HAL: GPU indices mapped in
// calls and in the work submitted, static multimem addresses and groups moved into the
// partition's range, dynamic multimem refused before anything reaches the machine, and bad
// partitions refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "../common/mock_hal.hpp"
#include "nvsvp/fw/partition_hal.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {
namespace {

using ::testing::_;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::ReturnRef;
using ::testing::SaveArg;

constexpr uint64_t kOffset = 8 * hw::switch_regs::kMulticastGranule;

// A memory that only tells itself apart from another.
class NamedMemory final : public hw::MemoryAccess {
 public:
  void read(uint64_t, void*, size_t) const override {}
  void write(uint64_t, const void*, size_t) override {}
  uint32_t write_count(uint64_t) const override { return 0; }
};

class PartitionHalTest : public ::testing::Test {
 protected:
  PartitionHalTest() { ON_CALL(machine_, gpu_count()).WillByDefault(Return(8u)); }
  NiceMock<test::MockHal> machine_;
};

TEST_F(PartitionHalTest, SubmitMapsTheGpuThePeersAndTheMultimemAddresses) {
  PartitionHal partition(machine_, {6, 4, 5}, kOffset);
  EXPECT_EQ(partition.gpu_count(), 3u);
  hw::WorkSequence sequence;
  sequence.tasks.push_back(hw::Task::send(0, 2, 0x100, 0x200, 64, 1));
  sequence.tasks.push_back(hw::Task::read(0, 0, 0x300, 0x400, 64, 2));
  sequence.tasks.push_back(hw::Task::multimem_store(0, 0x500, 0x1000'0000, 64, 3));
  sequence.tasks.push_back(
      hw::Task::multimem_red(0, 0x600, 0x1000'0040, 64, hw::MultimemOp::add, hw::MultimemType::f32, 3));
  sequence.tasks.push_back(
      hw::Task::multimem_ld_reduce(0, 0x1000'0080, 0x700, 64, hw::MultimemOp::add, hw::MultimemType::f32, 4));
  sequence.tasks.push_back(hw::Task::local_copy(0, 0x800, 0x900, 64, 5));
  hw::WorkSequence submitted;
  EXPECT_CALL(machine_, submit(4u, _)).WillOnce(SaveArg<1>(&submitted));
  partition.submit(1, sequence);
  ASSERT_EQ(submitted.tasks.size(), 6u);
  EXPECT_EQ(submitted.tasks[0].peer, 5u);  // partition GPU 2
  EXPECT_EQ(submitted.tasks[0].target_address, 0x200u);
  EXPECT_EQ(submitted.tasks[1].peer, 6u);  // partition GPU 0
  EXPECT_EQ(submitted.tasks[1].source_address, 0x300u);
  EXPECT_EQ(submitted.tasks[2].target_address, 0x1000'0000u + kOffset);
  EXPECT_EQ(submitted.tasks[2].source_address, 0x500u);
  EXPECT_EQ(submitted.tasks[3].target_address, 0x1000'0040u + kOffset);
  EXPECT_EQ(submitted.tasks[4].source_address, 0x1000'0080u + kOffset);
  EXPECT_EQ(submitted.tasks[4].target_address, 0x700u);
  EXPECT_EQ(submitted.tasks[5].source_address, 0x800u);
  EXPECT_EQ(submitted.tasks[5].target_address, 0x900u);
}

TEST_F(PartitionHalTest, PerGpuCallsReachTheMachinesGpu) {
  PartitionHal partition(machine_, {3, 7}, 0);
  NamedMemory seven;
  EXPECT_CALL(machine_, memory(7u)).WillOnce(ReturnRef(seven));
  EXPECT_EQ(&partition.memory(1), &seven);
  EXPECT_CALL(machine_, received_messages(3u)).WillOnce(Return(11u));
  EXPECT_EQ(partition.received_messages(0), 11u);
  EXPECT_CALL(machine_, received_notifications(7u)).WillOnce(Return(5u));
  EXPECT_EQ(partition.received_notifications(1), 5u);
  EXPECT_THROW(partition.memory(2), std::out_of_range);
  EXPECT_EQ(partition.machine_gpu(0), 3u);
}

TEST_F(PartitionHalTest, GroupsGetTheMachinesMembersAndThePartitionsAddresses) {
  PartitionHal partition(machine_, {4, 5, 6, 7}, kOffset);
  MulticastGroupRequest group;
  group.base = 1ull << 40;
  group.size = hw::switch_regs::kMulticastGranule;
  group.local_base = 0x2000'0000;
  group.members = 0b1011;  // partition GPUs 0, 1, 3
  const MulticastGroupRequest mapped = partition.machine_group(group);
  EXPECT_EQ(mapped.members, (1ull << 4) | (1ull << 5) | (1ull << 7));
  EXPECT_EQ(mapped.base, (1ull << 40) + kOffset);
  EXPECT_EQ(mapped.size, group.size);
  EXPECT_EQ(mapped.local_base, group.local_base);
}

TEST_F(PartitionHalTest, GroupMembersMapOntoMachineGpusAbove63) {
  ON_CALL(machine_, gpu_count()).WillByDefault(Return(72u));
  PartitionHal partition(machine_, {2, 70, 64, 71}, 0);
  MulticastGroupRequest group;
  group.members = 0b1110;  // partition GPUs 1, 2, 3
  EXPECT_EQ(partition.machine_group(group).members, hw::GpuMask{}.set(64).set(70).set(71));
  group.members = 0b10000;  // partition GPU 4: the partition has 4
  EXPECT_THROW(partition.machine_group(group), std::out_of_range);
}

TEST_F(PartitionHalTest, DynamicMultimemIsRefusedBeforeAnythingReachesTheMachine) {
  PartitionHal partition(machine_, {0, 1}, 0);
  EXPECT_CALL(machine_, submit(_, _)).Times(0);
  EXPECT_CALL(machine_, bind_dynamic_object(_, _, _)).Times(0);
  for (const hw::Task& dynamic :
       {hw::Task::dynamic_store(0, 0x100, 0x200, 64, 0, 1, hw::DynamicAddressing::algebraic, 1),
        hw::Task::dynamic_ld_reduce(0, 0x200, 0x100, 64, 0, 1, hw::DynamicAddressing::algebraic,
                                    hw::MultimemOp::add, hw::MultimemType::f32, 1),
        hw::Task::notify_tokens(0, 0x200, 0, 1, hw::DynamicAddressing::algebraic, 0x300, 16, 1)}) {
    hw::WorkSequence sequence;
    sequence.tasks.push_back(hw::Task::send(0, 1, 0x100, 0x200, 64, 1));
    sequence.tasks.push_back(dynamic);
    EXPECT_THROW(partition.submit(0, sequence), std::invalid_argument);
  }
  EXPECT_THROW(partition.bind_dynamic_object(0, hw::DynamicMulticastBinding{}, 0), std::invalid_argument);
}

TEST_F(PartitionHalTest, PartitionsOfUpTo128GpusAreAccepted) {
  ON_CALL(machine_, gpu_count()).WillByDefault(Return(136u));
  std::vector<uint32_t> gpus(128);
  for (uint32_t g = 0; g < 128; ++g) gpus[g] = 135 - g;
  EXPECT_NO_THROW(PartitionHal(machine_, std::vector<uint32_t>(gpus.begin(), gpus.begin() + 72), 0));
  EXPECT_NO_THROW(PartitionHal(machine_, gpus, 0));
  gpus.push_back(0);
  EXPECT_THROW(PartitionHal(machine_, gpus, 0), std::invalid_argument) << "129 GPUs: a group names at most 128";
}

TEST_F(PartitionHalTest, BadPartitionsAreRefused) {
  EXPECT_THROW(PartitionHal(machine_, {}, 0), std::invalid_argument);
  EXPECT_THROW(PartitionHal(machine_, {0, 8}, 0), std::invalid_argument);
  EXPECT_THROW(PartitionHal(machine_, {2, 3, 2}, 0), std::invalid_argument);
  EXPECT_THROW(PartitionHal(machine_, {0, 1}, hw::switch_regs::kMulticastGranule / 2), std::invalid_argument);
  EXPECT_NO_THROW(PartitionHal(machine_, {7, 0}, hw::switch_regs::kMulticastGranule));
}

}  // namespace
}  // namespace nvsvp::fw
