// The firmware's switch bring-up against a mocked HAL. Behind the mock, one SwitchCsr per chip
// answers the register accesses (so the firmware sees real register semantics), and the tests
// set expectations on the accesses themselves: discovery from the identity registers, route
// programming as register writes, identity checks before any write, clear errors for a wrong chip
// or cabling, the reduction-context pool enabled (CONTEXTS_ENABLED written and read back),
// multicast slot accounting with a clear error when slots run out, and an error interrupt read,
// logged and cleared (and nothing touched when the wait times out).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "../common/mock_hal.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
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

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint32_t kAllErrors = regs::kErrorBitsDefined;  // the link-error bits included

// One register access as the chips saw it.
struct Access {
  bool write;
  uint32_t chip;
  uint32_t offset;
  uint32_t value;
};

// Two chips behind a mocked HAL: chip 0 with 2 ports per GPU, chip 1 with one, for 3 GPUs.
class SwitchBringUpTest : public ::testing::Test {
 protected:
  SwitchBringUpTest() {
    for (uint32_t c = 0; c < 2; ++c) {
      model::SwitchCsrConfig config;
      config.chip_index = c;
      config.ports = c == 0 ? 6 : 3;
      config.multicast_slots = 4;
      config.reduction_contexts_per_port = 8;
      chips_.emplace_back(config);
    }
    ON_CALL(hal_, switch_count()).WillByDefault(Invoke([this] { return static_cast<uint32_t>(chips_.size()); }));
    ON_CALL(hal_, now_ns()).WillByDefault(Invoke([this] { return now_ns_; }));
    ON_CALL(hal_, read_register(_, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset) {
      uint32_t value = 0;
      chips_.at(chip).read(offset, value);
      accesses_.push_back(Access{false, chip, offset, value});
      return value;
    }));
    ON_CALL(hal_, write_register(_, _, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset, uint32_t value) {
      chips_.at(chip).write(offset, value);
      accesses_.push_back(Access{true, chip, offset, value});
    }));
    ON_CALL(hal_, wait_interrupt(_)).WillByDefault(Invoke([this](double) {
      for (const model::SwitchCsr& chip : chips_) {
        if (chip.interrupt_line()) return true;
      }
      return false;
    }));
    // Any access is allowed; a test's own expectations (newer, so matched first) pin down the
    // accesses it is about.
    EXPECT_CALL(hal_, read_register(_, _)).Times(AnyNumber());
    EXPECT_CALL(hal_, write_register(_, _, _)).Times(AnyNumber());
    EXPECT_CALL(hal_, wait_interrupt(_)).Times(AnyNumber());
  }

  // GPU g: chip 0 ports 2g and 2g+1, chip 1 port g.
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

  std::string bring_up_error(const FabricTopology& t, uint32_t contexts_per_port = kAllReductionContexts) {
    SwitchFabric fabric(hal_);
    try {
      fabric.bring_up(t, contexts_per_port);
    } catch (const FabricError& e) {
      return e.what();
    }
    return "(no error)";
  }
  std::string bring_up_error_with_contexts(uint32_t contexts_per_port) {
    return bring_up_error(topology(), contexts_per_port);
  }

  std::vector<model::SwitchCsr> chips_;
  std::vector<Access> accesses_;
  double now_ns_ = 0.0;
  NiceMock<test::MockHal> hal_;
};

TEST_F(SwitchBringUpTest, RoutesAreProgrammedAsRegisterWrites) {
  // Every route entry of the fabric's GPUs, two words (chips of up to 64 ports), on both chips;
  // interrupts enabled.
  for (uint32_t g = 0; g < 3; ++g) {
    EXPECT_CALL(hal_, write_register(0, regs::route_word(g, 0), 0b11u << (2 * g)));
    EXPECT_CALL(hal_, write_register(0, regs::route_word(g, 1), 0u));
    EXPECT_CALL(hal_, write_register(1, regs::route_word(g, 0), 1u << g));
    EXPECT_CALL(hal_, write_register(1, regs::route_word(g, 1), 0u));
  }
  EXPECT_CALL(hal_, write_register(_, regs::route_word(0, 2), _)).Times(0);
  EXPECT_CALL(hal_, write_register(0, regs::kIntEnable, kAllErrors));
  EXPECT_CALL(hal_, write_register(1, regs::kIntEnable, kAllErrors));
  SwitchFabric fabric(hal_);
  const FabricBringUpReport& report = fabric.bring_up(topology());

  EXPECT_EQ(chips_[0].route_ports(1), (std::vector<uint16_t>{2, 3}));
  EXPECT_EQ(chips_[1].route_ports(2), (std::vector<uint16_t>{2}));
  ASSERT_EQ(report.chips.size(), 2u);
  EXPECT_EQ(report.chips[0].ports, 6u);
  EXPECT_EQ(report.chips[1].ports, 3u);
  EXPECT_EQ(report.route_entries_programmed, 6u);
  EXPECT_EQ(report.reduction_context_pool, (6u + 3u) * 8u);
  EXPECT_EQ(report.multicast_slots, 4u);
  EXPECT_TRUE(fabric.error_log().empty());
  // Both chips are identified before anything is written anywhere.
  size_t first_write = 0;
  while (first_write < accesses_.size() && !accesses_[first_write].write) ++first_write;
  std::vector<bool> identified(2, false);
  for (size_t i = 0; i < first_write; ++i) {
    if (accesses_[i].offset == regs::kId) identified[accesses_[i].chip] = true;
  }
  EXPECT_EQ(identified, (std::vector<bool>{true, true}));
}

TEST_F(SwitchBringUpTest, WrongIdStopsBeforeAnyWrite) {
  EXPECT_CALL(hal_, read_register(1, regs::kId)).WillRepeatedly(Return(0x12345678u));
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  const std::string error = bring_up_error(topology());
  EXPECT_THAT(error, HasSubstr("switch chip 1: ID register reads 0x12345678, expected 0x4e565357"));
}

TEST_F(SwitchBringUpTest, UnknownRegisterMapVersionIsNamed) {
  // Version 1 (64-bit masks, route entries 8 bytes apart) is not this firmware's map either.
  EXPECT_CALL(hal_, read_register(0, regs::kVersion)).WillRepeatedly(Return(1u));
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  EXPECT_THAT(bring_up_error(topology()), HasSubstr("switch chip 0: register map version 1, this firmware knows version 2"));
}

TEST_F(SwitchBringUpTest, CablingThatDoesNotFitTheChipsIsNamed) {
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  FabricTopology t = topology();
  t.cables.push_back(SwitchCable{1, 1, 3});  // chip 1 has ports 0-2
  EXPECT_THAT(bring_up_error(t), HasSubstr("cable from GPU 1 to switch chip 1 port 3: the chip reports 3 ports"));
  t = topology();
  t.cables[0].port = 1;  // port 1 of chip 0 is cabled twice now
  EXPECT_THAT(bring_up_error(t), HasSubstr("switch chip 0 port 1: that port is cabled twice"));
  t = topology();
  t.switch_chips = 3;
  EXPECT_THAT(bring_up_error(t), HasSubstr("the cabling names 3 switch chips, the HAL reaches 2"));
  t = topology();
  t.cables.push_back(SwitchCable{5, 0, 0});
  EXPECT_THAT(bring_up_error(t), HasSubstr("the fabric has 3 GPUs"));
}

// A 72-port chip (GB200 NVL72) for 72 GPUs: three route words per entry, members in three words.
TEST_F(SwitchBringUpTest, SeventyTwoPortChipGetsThreeWordsPerMask) {
  model::SwitchCsrConfig config;
  config.ports = 72;
  config.multicast_slots = 2;
  chips_.assign(1, model::SwitchCsr(config));
  FabricTopology t;
  t.gpus = 72;
  t.switch_chips = 1;
  for (uint32_t g = 0; g < 72; ++g) t.cables.push_back(SwitchCable{g, 0, static_cast<uint16_t>(71 - g)});
  SwitchFabric fabric(hal_);
  fabric.bring_up(t);
  size_t route_words[4] = {};
  for (const Access& a : accesses_) {
    if (a.write && a.offset >= regs::kRouteTable && a.offset < regs::kRouteTableEnd) {
      route_words[(a.offset - regs::kRouteTable) % regs::kRouteStride / 4]++;
    }
  }
  EXPECT_EQ(route_words[0], 72u);
  EXPECT_EQ(route_words[2], 72u);
  EXPECT_EQ(route_words[3], 0u) << "no fourth word for 72 ports";
  EXPECT_EQ(chips_[0].route_ports(0), (std::vector<uint16_t>{71}));
  EXPECT_EQ(chips_[0].route_ports(70), (std::vector<uint16_t>{1}));

  MulticastAllocator allocator(hal_, fabric.report().chips);
  accesses_.clear();
  allocator.create_group(0, 2 * kMiB, 0, hw::GpuMask::first(72));
  size_t member_writes = 0;
  for (const Access& a : accesses_) member_writes += a.write && a.offset >= regs::group_register(0, regs::kGroupMembers) &&
                                                     a.offset < regs::group_register(0, regs::kGroupMembers + 16);
  EXPECT_EQ(member_writes, 3u);
  const model::MulticastGroup* group = chips_[0].group_for(0);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->members, hw::GpuMask::first(72));
  EXPECT_THROW(allocator.create_group(4 * kMiB, 2 * kMiB, 0, hw::GpuMask{}.set(100)), std::invalid_argument)
      << "GPU 100 is beyond the three member words the fabric writes";
}

TEST_F(SwitchBringUpTest, IdentityThatDoesNotFitIsNamedBeforeAnyWrite) {
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  EXPECT_CALL(hal_, read_register(1, regs::kChipIndex)).WillOnce(Return(0u)).RetiresOnSaturation();
  EXPECT_THAT(bring_up_error(topology()),
              HasSubstr("switch chip 1: CHIP_INDEX reads 0 (the HAL's chip numbering and the chips disagree)"));
  EXPECT_CALL(hal_, read_register(0, regs::kPortCount)).WillOnce(Return(129u)).RetiresOnSaturation();
  EXPECT_THAT(bring_up_error(topology()), HasSubstr("switch chip 0: implausible identity (PORT_COUNT 129"));
  EXPECT_CALL(hal_, read_register(1, regs::kRouteEntries)).WillOnce(Return(129u)).RetiresOnSaturation();
  EXPECT_THAT(bring_up_error(topology()), HasSubstr("switch chip 1: implausible identity (PORT_COUNT 3, ROUTE_ENTRIES 129"));
  EXPECT_CALL(hal_, read_register(1, regs::kReductionContexts)).WillOnce(Return(0u)).RetiresOnSaturation();
  EXPECT_THAT(bring_up_error(topology()),
              HasSubstr("switch chip 1: implausible identity (PORT_COUNT 3, ROUTE_ENTRIES 128, REDUCTION_CONTEXTS 0)"));
}

// Discovery reads each chip's figures from its identity registers, whatever they are.
TEST_F(SwitchBringUpTest, DiscoveryReportsWhatTheIdentityRegistersSay) {
  EXPECT_CALL(hal_, read_register(1, regs::kMulticastSlots)).WillRepeatedly(Return(2u));
  EXPECT_CALL(hal_, read_register(1, regs::kRouteEntries)).WillRepeatedly(Return(16u));
  SwitchFabric fabric(hal_);
  const FabricBringUpReport& report = fabric.bring_up(topology());
  ASSERT_EQ(report.chips.size(), 2u);
  for (uint32_t c = 0; c < 2; ++c) {
    EXPECT_EQ(report.chips[c].chip, c);
    EXPECT_EQ(report.chips[c].reduction_contexts_per_port, 8u);
  }
  EXPECT_EQ(report.chips[0].multicast_slots, 4u);
  EXPECT_EQ(report.chips[1].multicast_slots, 2u);
  EXPECT_EQ(report.chips[0].route_entries, 128u);
  EXPECT_EQ(report.chips[1].route_entries, 16u);
  EXPECT_EQ(report.multicast_slots, 2u) << "the smallest table";
}

// By default every reduction context is enabled: CONTEXTS_ENABLED = REDUCTION_CONTEXTS, written
// and read back on each chip.
TEST_F(SwitchBringUpTest, BringUpEnablesEveryReductionContextByDefault) {
  for (uint32_t chip = 0; chip < 2; ++chip) {
    ::testing::InSequence order;
    EXPECT_CALL(hal_, write_register(chip, regs::kContextsEnabled, 8u));
    EXPECT_CALL(hal_, read_register(chip, regs::kContextsEnabled));
  }
  SwitchFabric fabric(hal_);
  const FabricBringUpReport& report = fabric.bring_up(topology());
  EXPECT_EQ(report.chips[0].reduction_contexts_enabled, 8u);
  EXPECT_EQ(report.chips[1].reduction_contexts_enabled, 8u);
  EXPECT_EQ(report.reduction_context_pool, (6u + 3u) * 8u);
}

TEST_F(SwitchBringUpTest, BringUpEnablesTheReductionContextsItIsAskedFor) {
  EXPECT_CALL(hal_, write_register(0, regs::kContextsEnabled, 3u));
  EXPECT_CALL(hal_, write_register(1, regs::kContextsEnabled, 3u));
  SwitchFabric fabric(hal_);
  const FabricBringUpReport& report = fabric.bring_up(topology(), 3);
  for (uint32_t c = 0; c < 2; ++c) {
    EXPECT_EQ(chips_[c].reduction_contexts_enabled(), 3u) << "chip " << c;
    EXPECT_EQ(chips_[c].reduction_context_capacity(), chips_[c].config().ports * 3u) << "chip " << c;
    EXPECT_EQ(report.chips[c].reduction_contexts_enabled, 3u);
    EXPECT_EQ(report.chips[c].reduction_contexts_per_port, 8u);
  }
  EXPECT_EQ(report.reduction_context_pool, (6u + 3u) * 3u);
  EXPECT_TRUE(fabric.error_log().empty());
}

TEST_F(SwitchBringUpTest, MoreReductionContextsThanAChipHasStopsBeforeAnyWrite) {
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  EXPECT_THAT(bring_up_error_with_contexts(9),
              HasSubstr("switch chip 0: 9 reduction contexts per port asked for, REDUCTION_CONTEXTS reads 8"));
}

// Chip 1 holds a context (traffic it was never meant to have), so it refuses a new
// CONTEXTS_ENABLED: the read-back shows the old value and bring-up stops naming chip and value.
TEST_F(SwitchBringUpTest, ChipThatRefusesContextsEnabledIsAFabricError) {
  ASSERT_TRUE(chips_[1].acquire_reduction_context());
  EXPECT_THAT(bring_up_error_with_contexts(4),
              HasSubstr("switch chip 1 refused CONTEXTS_ENABLED = 4: it reads back 8"));
  EXPECT_EQ(chips_[0].reduction_contexts_enabled(), 4u);
  EXPECT_EQ(chips_[1].reduction_contexts_enabled(), 8u);
}

TEST_F(SwitchBringUpTest, StaleErrorsAreLoggedAndClearedAtBringUp) {
  chips_[1].raise_error(regs::error_no_route);
  now_ns_ = 5.0;
  EXPECT_CALL(hal_, write_register(1, regs::kErrorStatus, uint32_t{regs::error_no_route}));
  SwitchFabric fabric(hal_);
  fabric.bring_up(topology());
  ASSERT_EQ(fabric.error_log().size(), 1u);
  EXPECT_EQ(fabric.error_log()[0].describe(), "switch chip 1: no_route at 5 ns");
  EXPECT_EQ(chips_[1].error_status(), 0u);
}

TEST_F(SwitchBringUpTest, ErrorInterruptIsReadLoggedAndCleared) {
  SwitchFabric fabric(hal_);
  fabric.bring_up(topology());
  EXPECT_FALSE(fabric.wait_and_service(100.0)) << "nothing pending";
  EXPECT_TRUE(fabric.error_log().empty());

  chips_[1].raise_error(regs::error_not_a_member | regs::error_reduction);
  now_ns_ = 250.0;
  ASSERT_TRUE(chips_[1].interrupt_line());
  // Read ERROR_STATUS, then write exactly those bits back (write 1 to clear).
  {
    ::testing::InSequence order;
    EXPECT_CALL(hal_, wait_interrupt(1000.0));
    EXPECT_CALL(hal_, read_register(1, regs::kErrorStatus));
    EXPECT_CALL(hal_, write_register(1, regs::kErrorStatus, uint32_t{regs::error_not_a_member | regs::error_reduction}));
  }
  EXPECT_TRUE(fabric.wait_and_service(1000.0));
  ASSERT_EQ(fabric.error_log().size(), 1u);
  const SwitchErrorRecord& record = fabric.error_log()[0];
  EXPECT_EQ(record.chip, 1u);
  EXPECT_EQ(record.bits, uint32_t{regs::error_not_a_member | regs::error_reduction});
  EXPECT_EQ(record.time_ns, 250.0);
  EXPECT_EQ(record.describe(), "switch chip 1: not_a_member, reduction at 250 ns");
  EXPECT_EQ(chips_[1].error_status(), 0u);
  EXPECT_FALSE(chips_[1].interrupt_line());
}

// A timeout: wait_and_service returns false and touches no register, even with an error that
// is pending but masked (chip 1's INT_ENABLE cleared behind firmware's back), which stays.
TEST_F(SwitchBringUpTest, WaitWithoutAnInterruptServicesNothing) {
  SwitchFabric fabric(hal_);
  fabric.bring_up(topology());
  ASSERT_EQ(chips_[1].write(regs::kIntEnable, 0), model::RegisterAccess::ok);
  chips_[1].raise_error(regs::error_no_route);
  ASSERT_FALSE(chips_[1].interrupt_line());
  EXPECT_CALL(hal_, wait_interrupt(50.0));
  EXPECT_CALL(hal_, read_register(_, _)).Times(0);
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  EXPECT_FALSE(fabric.wait_and_service(50.0));
  EXPECT_TRUE(fabric.error_log().empty());
  EXPECT_EQ(chips_[1].error_status(), uint32_t{regs::error_no_route}) << "nothing cleared";
}

TEST_F(SwitchBringUpTest, CounterIsReadLoThenHi) {
  SwitchFabric fabric(hal_);
  fabric.bring_up(topology());
  chips_[0].count(model::SwitchCounter::forwarded_responses, 0x3'0000'0007ull);
  {
    ::testing::InSequence order;
    EXPECT_CALL(hal_, read_register(0, regs::kCounterForwardedResponses));
    EXPECT_CALL(hal_, read_register(0, regs::kCounterForwardedResponses + 4));
  }
  EXPECT_EQ(fabric.read_counter(0, regs::kCounterForwardedResponses), 0x3'0000'0007ull);
}

TEST(SwitchErrors, BitsAreNamed) {
  EXPECT_EQ(describe_switch_errors(0), "none");
  EXPECT_EQ(describe_switch_errors(regs::error_group_not_configured | regs::error_bad_register_access),
            "group_not_configured, bad_register_access");
  EXPECT_EQ(describe_switch_errors(regs::error_context_pool_exhausted | 0x8000'0000u),
            "context_pool_exhausted, unknown bits 0x80000000");
  EXPECT_EQ(describe_switch_errors(regs::error_link_crc | regs::error_credit_resync), "link_crc, credit_resync");
  EXPECT_EQ(describe_switch_errors(regs::error_partition), "partition");
}

class MulticastAllocatorTest : public SwitchBringUpTest {
 protected:
  MulticastAllocatorTest() : fabric_(hal_) { fabric_.bring_up(topology()); }
  SwitchFabric fabric_;
};

// Per chip: the slot is invalidated, the fields written, CONTROL.valid set last.
TEST_F(MulticastAllocatorTest, GroupIsProgrammedIntoEveryChipValidLast) {
  MulticastAllocator allocator(hal_, fabric_.report().chips);
  EXPECT_EQ(allocator.capacity(), 4u);
  for (uint32_t chip = 0; chip < 2; ++chip) {
    ::testing::InSequence order;
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupControl), 0u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupBaseLo), 0x0400'0000u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupBaseHi), 0x1u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupSizeLo), 4 * kMiB));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupSizeHi), 0u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupLocalLo), 0x8000u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupLocalHi), 0u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::group_members_word(0)), 0b101u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::group_members_word(1)), 0u));
    EXPECT_CALL(hal_, write_register(chip, regs::group_register(0, regs::kGroupControl), 1u));
  }
  const MulticastGroupHandle group = allocator.create_group(0x1'0400'0000ull, 4 * kMiB, 0x8000, 0b101);
  EXPECT_EQ(group.slot, 0u);
  EXPECT_EQ(allocator.groups_in_use(), 1u);
  for (const model::SwitchCsr& chip : chips_) {
    const model::MulticastGroup* g = chip.group_for(0x1'0400'0000ull + 100);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->local_address(0x1'0400'0000ull + 100), 0x8000u + 100);
    EXPECT_EQ(chip.error_status(), 0u);
  }
}

TEST_F(MulticastAllocatorTest, RunningOutOfSlotsIsAClearErrorAndDestroyFreesOne) {
  MulticastAllocator allocator(hal_, fabric_.report().chips);
  std::vector<MulticastGroupHandle> groups;
  for (uint64_t i = 0; i < 4; ++i) groups.push_back(allocator.create_group(i * 2 * kMiB, 2 * kMiB, 0, 0b11));
  EXPECT_EQ(allocator.groups_in_use(), 4u);
  accesses_.clear();
  try {
    allocator.create_group(100 * 2 * kMiB, 2 * kMiB, 0, 0b11);
    ADD_FAILURE() << "a fifth group fitted into four slots";
  } catch (const FabricError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no multicast slot left: all 4 slots are in use"));
  }
  EXPECT_TRUE(accesses_.empty()) << "nothing was written for the refused group";
  allocator.destroy_group(groups[2]);
  EXPECT_FALSE(chips_[0].group(2).valid);
  EXPECT_FALSE(chips_[1].group(2).valid);
  const MulticastGroupHandle again = allocator.create_group(100 * 2 * kMiB, 2 * kMiB, 0, 0b11);
  EXPECT_EQ(again.slot, 2u);
  EXPECT_THROW(allocator.destroy_group(groups[2]), std::invalid_argument) << "destroyed twice";
}

TEST_F(MulticastAllocatorTest, MalformedGroupsAreRefusedBeforeAnyWrite) {
  MulticastAllocator allocator(hal_, fabric_.report().chips);
  allocator.create_group(8 * kMiB, 4 * kMiB, 0, 0b1);
  accesses_.clear();
  EXPECT_THROW(allocator.create_group(kMiB, 2 * kMiB, 0, 1), std::invalid_argument);       // unaligned base
  EXPECT_THROW(allocator.create_group(0, 3 * kMiB, 0, 1), std::invalid_argument);          // unaligned size
  EXPECT_THROW(allocator.create_group(0, 0, 0, 1), std::invalid_argument);                 // empty
  EXPECT_THROW(allocator.create_group(0, 2 * kMiB, 0, 0), std::invalid_argument);          // no members
  EXPECT_THROW(allocator.create_group(10 * kMiB, 4 * kMiB, 0, 1), std::invalid_argument);  // overlap
  try {
    allocator.create_group(6 * kMiB, 4 * kMiB, 0, 1);
    ADD_FAILURE() << "an overlapping group was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("overlaps the group in slot 0"));
  }
  EXPECT_TRUE(accesses_.empty());
  EXPECT_EQ(allocator.groups_in_use(), 1u);
}

// A table of 64 route entries or more still bounds the members (the check once stopped at 64).
TEST_F(MulticastAllocatorTest, MemberBeyondALargeRouteTableIsRefused) {
  std::vector<SwitchChipInfo> chips = fabric_.report().chips;
  for (SwitchChipInfo& chip : chips) chip.route_entries = 64;
  MulticastAllocator allocator(hal_, chips);
  accesses_.clear();
  try {
    allocator.create_group(0, 2 * kMiB, 0, hw::GpuMask{}.set(0).set(64));
    ADD_FAILURE() << "GPU 64 was accepted by chips of 64 route entries";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("members 0x10000000000000001 name a GPU beyond switch chip 0's 64 route entries"));
  }
  EXPECT_TRUE(accesses_.empty());
}

// A group written into chip 1 behind the allocator's back overlaps the new one: chip 1 refuses it,
// chip 0 gives its copy up again, the slot stays free, and chip 1's error interrupt is left for
// the service routine to log.
TEST_F(MulticastAllocatorTest, ChipThatRefusesAGroupLeavesNoHalfCreatedGroup) {
  ASSERT_EQ(chips_[1].write(regs::group_register(3, regs::kGroupSizeLo), 2 * kMiB), model::RegisterAccess::ok);
  ASSERT_EQ(chips_[1].write(regs::group_register(3, regs::kGroupMembers), 1), model::RegisterAccess::ok);
  ASSERT_EQ(chips_[1].write(regs::group_register(3, regs::kGroupControl), 1), model::RegisterAccess::ok);
  MulticastAllocator allocator(hal_, fabric_.report().chips);
  try {
    allocator.create_group(0, 2 * kMiB, 0, 0b11);
    ADD_FAILURE() << "chip 1 accepted an overlapping group";
  } catch (const FabricError& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch chip 1 refused it in slot 0"));
  }
  EXPECT_FALSE(chips_[0].group(0).valid);
  EXPECT_EQ(chips_[0].group_for(0), nullptr);
  EXPECT_EQ(allocator.groups_in_use(), 0u);
  EXPECT_EQ(fabric_.service_interrupts(), 1u);
  ASSERT_EQ(fabric_.error_log().size(), 1u);
  EXPECT_EQ(fabric_.error_log()[0].chip, 1u);
  EXPECT_EQ(fabric_.error_log()[0].bits, uint32_t{regs::error_bad_register_access});
}

}  // namespace
}  // namespace nvsvp::fw
