// The fabric manager's partitions against a mocked HAL with a SwitchCsr per chip behind it (as
// test_switch_bringup.cpp): partition ids from the lists and their refusals, every chip's ports
// programmed and read back, the isolated GPUs' routes cleared, nothing written without
// partitions, and multicast groups and dynamic objects that would span two partitions refused
// before anything is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../common/mock_hal.hpp"
#include "nvsvp/fw/fabric_partitions.hpp"
#include "nvsvp/fw/layer_bring_up.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/model/switch_csr.hpp"

namespace nvsvp::fw {
namespace {

namespace regs = hw::switch_regs;

using ::testing::_;
using ::testing::AnyNumber;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

constexpr uint32_t kIsolated = regs::kPartitionIsolated;

// Two chips for 3 GPUs: GPU g on chip 0 ports 2g and 2g+1 and on chip 1 port g; chip 1 has a
// fourth port with no cable.
class FabricPartitionsTest : public ::testing::Test {
 protected:
  FabricPartitionsTest() {
    for (uint32_t c = 0; c < 2; ++c) {
      model::SwitchCsrConfig config;
      config.chip_index = c;
      config.ports = c == 0 ? 6 : 4;
      config.multicast_slots = 4;
      config.reduction_contexts_per_port = 8;
      chips_.emplace_back(config);
    }
    ON_CALL(hal_, switch_count()).WillByDefault(Return(2u));
    ON_CALL(hal_, gpu_count()).WillByDefault(Return(3u));
    ON_CALL(hal_, read_register(_, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset) {
      uint32_t value = 0;
      chips_.at(chip).read(offset, value);
      return value;
    }));
    ON_CALL(hal_, write_register(_, _, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset, uint32_t value) {
      chips_.at(chip).write(offset, value);
      ++writes_;
    }));
    EXPECT_CALL(hal_, read_register(_, _)).Times(AnyNumber());
    EXPECT_CALL(hal_, write_register(_, _, _)).Times(AnyNumber());
  }

  static FabricTopology topology() {
    FabricTopology t;
    t.gpus = 3;
    t.switch_chips = 2;
    for (uint32_t g = 0; g < 3; ++g) {
      t.cables.push_back(SwitchCable{g, 0, static_cast<uint16_t>(2 * g)});
      t.cables.push_back(SwitchCable{g, 0, static_cast<uint16_t>(2 * g + 1)});
      t.cables.push_back(SwitchCable{g, 1, static_cast<uint16_t>(g)});
    }
    return t;
  }

  uint32_t port_partition(uint32_t chip, uint32_t port) {
    uint32_t value = 0;
    chips_.at(chip).read(regs::port_partition_register(port), value);
    return value;
  }

  std::vector<model::SwitchCsr> chips_;
  uint32_t writes_ = 0;
  NiceMock<test::MockHal> hal_;
};

std::string partition_error(const std::vector<std::vector<uint32_t>>& partitions, uint32_t gpus) {
  try {
    partition_ids(partitions, gpus);
  } catch (const PartitionError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PartitionIds, EachPartitionItsIdAndGpusLeftOutIsolated) {
  EXPECT_EQ(partition_ids({{3, 0}, {2}}, 5), (std::vector<uint32_t>{1, kIsolated, 2, 1, kIsolated}));
  EXPECT_EQ(partition_ids({}, 3), (std::vector<uint32_t>{0, 0, 0})) << "no partitions: one of every GPU";
  EXPECT_FALSE(is_partitioned(partition_ids({}, 3)));
  EXPECT_TRUE(is_partitioned(partition_ids({{0, 1, 2}}, 3))) << "one partition, but ids programmed";
  EXPECT_THAT(partition_error({{0, 1}, {3}}, 3), HasSubstr("partition 1 names GPU 3; the fabric has 3"));
  EXPECT_THAT(partition_error({{0, 1}, {2, 1}}, 3), HasSubstr("GPU 1 is in partition 0 and in partition 1"));
  EXPECT_THAT(partition_error({{0}, {}}, 3), HasSubstr("partition 1 has no GPU"));
}

TEST_F(FabricPartitionsTest, EveryPortIsProgrammedAndTheIsolatedGpusRoutesCleared) {
  SwitchFabric fabric(hal_);
  fabric.bring_up(topology());
  ASSERT_NE(chips_[0].route_mask(2), 0u);
  // {GPU 0, GPU 1}; GPU 2 in none.
  program_partitions(hal_, topology(), partition_ids({{0, 1}}, 3));
  for (uint32_t port = 0; port < 4; ++port) EXPECT_EQ(port_partition(0, port), 1u) << "chip 0 port " << port;
  EXPECT_EQ(port_partition(0, 4), kIsolated);
  EXPECT_EQ(port_partition(0, 5), kIsolated);
  EXPECT_EQ(port_partition(1, 0), 1u);
  EXPECT_EQ(port_partition(1, 1), 1u);
  EXPECT_EQ(port_partition(1, 2), kIsolated);
  EXPECT_EQ(port_partition(1, 3), kIsolated) << "a port without a cable";
  for (uint32_t chip = 0; chip < 2; ++chip) {
    EXPECT_EQ(chips_[chip].route_mask(2), 0u) << "chip " << chip << ": nothing reaches the isolated GPU";
    EXPECT_NE(chips_[chip].route_mask(1), 0u) << "chip " << chip;
    EXPECT_TRUE(chips_[chip].may_reach(0, 1)) << "chip " << chip;
    EXPECT_FALSE(chips_[chip].may_reach(0, 2)) << "chip " << chip;
  }
}

// 72 GPUs on two 72-port chips, GPU g on port g of each: the isolated GPUs 64..71 have their
// routes in the third word, which is cleared too.
TEST_F(FabricPartitionsTest, IsolatedGpusAbove63LoseEveryRouteWord) {
  for (uint32_t c = 0; c < 2; ++c) {
    model::SwitchCsrConfig config;
    config.chip_index = c;
    config.ports = 72;
    chips_[c] = model::SwitchCsr(config);
  }
  FabricTopology t;
  t.gpus = 72;
  t.switch_chips = 2;
  for (uint32_t c = 0; c < 2; ++c) {
    for (uint32_t g = 0; g < 72; ++g) t.cables.push_back(SwitchCable{g, c, static_cast<uint16_t>(g)});
  }
  SwitchFabric fabric(hal_);
  fabric.bring_up(t);
  ASSERT_EQ(chips_[0].route_ports(70), (std::vector<uint16_t>{70}));
  std::vector<uint32_t> first_64(64);
  for (uint32_t g = 0; g < 64; ++g) first_64[g] = g;
  program_partitions(hal_, t, partition_ids({first_64}, 72));
  for (uint32_t chip = 0; chip < 2; ++chip) {
    for (uint32_t gpu = 64; gpu < 72; ++gpu) {
      EXPECT_TRUE(chips_[chip].route_mask(gpu).none()) << "chip " << chip << ": GPU " << gpu << " is isolated";
    }
    EXPECT_EQ(chips_[chip].route_ports(63), (std::vector<uint16_t>{63})) << "chip " << chip;
    EXPECT_FALSE(chips_[chip].may_reach(0, 70)) << "chip " << chip;
  }
}

TEST_F(FabricPartitionsTest, WithoutPartitionsNothingIsWritten) {
  program_partitions(hal_, topology(), partition_ids({}, 3));
  EXPECT_EQ(writes_, 0u);
}

TEST_F(FabricPartitionsTest, ChipThatDoesNotKeepAnIdIsAFabricError) {
  SwitchFabric fabric(hal_);
  fabric.bring_up(topology());
  EXPECT_CALL(hal_, read_register(1, regs::port_partition_register(2))).WillRepeatedly(Return(0u));
  try {
    program_partitions(hal_, topology(), partition_ids({{0}, {1, 2}}, 3));
    ADD_FAILURE() << "expected a FabricError";
  } catch (const FabricError& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch chip 1 port 2: PORT_PARTITION written 0x2, reads back 0x0"));
  }
}

TEST(PartitionMembership, AGroupMustLieWithinOnePartition) {
  const std::vector<uint32_t> ids = partition_ids({{0, 1}, {2, 3}}, 5);
  EXPECT_NO_THROW(check_within_one_partition(0b0011, ids, "group"));
  EXPECT_NO_THROW(check_within_one_partition(0b1100, ids, "group"));
  try {
    check_within_one_partition(0b0110, ids, "multicast group at 0x4000000");
    ADD_FAILURE() << "expected a PartitionError";
  } catch (const PartitionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("multicast group at 0x4000000: members in two partitions (GPU 1 in partition 0, "
                                    "GPU 2 in partition 1)"));
  }
  EXPECT_THROW(check_within_one_partition(0b10000, ids, "group"), PartitionError) << "GPU 4 is in no partition";
  EXPECT_NO_THROW(check_within_one_partition(0b11111, partition_ids({}, 5), "group")) << "not partitioned";
}

// Past 64 GPUs (an NVL72 fabric): a member above GPU 63 is checked like any other.
TEST(PartitionMembership, MembersAboveGpu63AreChecked) {
  std::vector<uint32_t> first(64), second(8);
  for (uint32_t g = 0; g < 64; ++g) first[g] = g;
  for (uint32_t g = 0; g < 8; ++g) second[g] = 64 + g;
  const std::vector<uint32_t> ids = partition_ids({first, second}, 72);
  EXPECT_NO_THROW(check_within_one_partition(hw::GpuMask{}.set(64).set(70).set(71), ids, "group"));
  try {
    check_within_one_partition(hw::GpuMask{}.set(3).set(70), ids, "group");
    ADD_FAILURE() << "GPU 70's partition went unchecked";
  } catch (const PartitionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("GPU 3 in partition 0, GPU 70 in partition 1"));
  }
  try {
    check_within_one_partition(hw::GpuMask{}.set(64).set(72), ids, "group");
    ADD_FAILURE() << "a member beyond the fabric was accepted";
  } catch (const PartitionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("group: member GPU 72 is beyond the fabric's 72 GPUs"));
  }
}

TEST_F(FabricPartitionsTest, LayerWhoseGroupSpansTwoPartitionsIsRefusedBeforeAnyWrite) {
  LayerPlan plan;
  plan.multicast_groups.push_back(MulticastGroupRequest{64ull << 20, 2ull << 20, 1ull << 20, 0b011});
  SwitchFabric fabric(hal_);
  EXPECT_THROW(bring_up_for_layer(hal_, fabric, topology(), plan, ReplicationPhase{}, {{0}, {1, 2}}), PartitionError);
  EXPECT_EQ(writes_, 0u);
  // Within one partition it is made, and the ports are programmed.
  bring_up_for_layer(hal_, fabric, topology(), plan, ReplicationPhase{}, {{0, 1}, {2}});
  EXPECT_TRUE(chips_[0].group(0).valid);
  EXPECT_EQ(port_partition(0, 4), 2u);
}

TEST_F(FabricPartitionsTest, LayerWithDynamicObjectsOverPartitionedGpusIsRefusedBeforeAnyWrite) {
  LayerPlan plan;
  plan.dynamic_objects.push_back(DynamicObjectRequest{});
  SwitchFabric fabric(hal_);
  try {
    bring_up_for_layer(hal_, fabric, topology(), plan, ReplicationPhase{}, {{0, 1}, {2}});
    ADD_FAILURE() << "expected a PartitionError";
  } catch (const PartitionError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dynamic object (bound in every GPU): members in two partitions"));
  }
  EXPECT_EQ(writes_, 0u);
}

}  // namespace
}  // namespace nvsvp::fw
