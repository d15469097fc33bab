// The switch register block on its own (SystemC-free): identity values, sticky write-1-to-clear
// error status, refused accesses (unaligned, unknown offset, read-only, rejected values),
// 64-bit counters read as a coherent LO/HI pair, route entries decoded for the datapath, the
// multicast group checks made when CONTROL.valid is set, group lookup by address, interrupt
// enable/pending and the line's listener, the reduction-context pool and its enable, and the
// port partition table with what the datapath derives from it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/model/switch_csr.hpp"

namespace nvsvp::model {
namespace {

namespace regs = hw::switch_regs;

constexpr uint64_t kMiB = 1ull << 20;

SwitchCsrConfig config(uint32_t ports = 16, uint32_t slots = 4) {
  SwitchCsrConfig c;
  c.chip_index = 3;
  c.ports = ports;
  c.multicast_slots = slots;
  c.reduction_contexts_per_port = 2;
  return c;
}

uint32_t read_register(SwitchCsr& csr, uint32_t offset) {
  uint32_t value = 0xDEADBEEF;
  EXPECT_EQ(csr.read(offset, value), RegisterAccess::ok) << "offset 0x" << std::hex << offset;
  return value;
}

// Writes a 64-bit field of group `slot` (LO then HI).
void write64(SwitchCsr& csr, uint32_t slot, uint32_t low_field, uint64_t value) {
  ASSERT_EQ(csr.write(regs::group_register(slot, low_field), static_cast<uint32_t>(value)), RegisterAccess::ok);
  ASSERT_EQ(csr.write(regs::group_register(slot, low_field + 4), static_cast<uint32_t>(value >> 32)),
            RegisterAccess::ok);
}

// Fills group `slot`'s fields (every member word) and sets CONTROL.valid; returns what the write said.
RegisterAccess make_group(SwitchCsr& csr, uint32_t slot, uint64_t base, uint64_t size,
                          const hw::GpuMask& members = 0b1011, uint64_t local = 0x4000'0000) {
  write64(csr, slot, regs::kGroupBaseLo, base);
  write64(csr, slot, regs::kGroupSizeLo, size);
  write64(csr, slot, regs::kGroupLocalLo, local);
  for (uint32_t w = 0; w < regs::kMaskWords; ++w) {
    EXPECT_EQ(csr.write(regs::group_register(slot, regs::group_members_word(w)), members.word32(w)), RegisterAccess::ok);
  }
  return csr.write(regs::group_register(slot, regs::kGroupControl), 1);
}

TEST(SwitchCsr, IdentityRegistersReportTheChip) {
  SwitchCsr csr(config());
  EXPECT_EQ(read_register(csr, regs::kId), regs::kIdValue);
  EXPECT_EQ(read_register(csr, regs::kVersion), regs::kVersionValue);
  EXPECT_EQ(read_register(csr, regs::kChipIndex), 3u);
  EXPECT_EQ(read_register(csr, regs::kPortCount), 16u);
  EXPECT_EQ(read_register(csr, regs::kMulticastSlots), 4u);
  EXPECT_EQ(read_register(csr, regs::kReductionContexts), 2u);
  EXPECT_EQ(read_register(csr, regs::kRouteEntries), SwitchCsr::kRouteTableEntries);
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), 0u);
  EXPECT_EQ(csr.error_status(), 0u) << "reading is no error";
}

TEST(SwitchCsr, ReadOnlyRegistersRefuseWrites) {
  SwitchCsr csr(config());
  for (uint32_t offset : {regs::kId, regs::kVersion, regs::kChipIndex, regs::kPortCount, regs::kMulticastSlots,
                          regs::kReductionContexts, regs::kRouteEntries, regs::kIntPending,
                          regs::kCounterForwardedRequests, regs::kCounterAccessErrors + 4, regs::kContextsInUse,
                          regs::kContextsPeak, regs::link_down_ports_word(0), regs::link_down_ports_word(3)}) {
    SCOPED_TRACE(offset);
    EXPECT_EQ(csr.write(offset, 7), RegisterAccess::read_only);
    EXPECT_EQ(csr.error_status(), uint32_t{regs::error_bad_register_access});
    ASSERT_EQ(csr.write(regs::kErrorStatus, regs::error_bad_register_access), RegisterAccess::ok);
  }
  EXPECT_EQ(read_register(csr, regs::kId), regs::kIdValue) << "the refused write changed nothing";
  EXPECT_EQ(read_register(csr, regs::kPortCount), 16u);
}

TEST(SwitchCsr, UnalignedAndUnknownOffsetsReadZeroAndSetTheError) {
  SwitchCsr csr(config(16, 4));
  // An unaligned offset, a hole between registers, a word inside a slot that holds nothing, a
  // slot beyond the table, a route entry beyond the table, far away.
  const std::vector<std::pair<uint32_t, RegisterAccess>> bad = {
      {regs::kId + 2, RegisterAccess::unaligned},
      {0x034, RegisterAccess::unknown_offset},
      {regs::group_register(1, 0x04), RegisterAccess::unknown_offset},
      {regs::group_register(1, 0x30), RegisterAccess::unknown_offset},
      {regs::group_register(1, 0x3C), RegisterAccess::unknown_offset},
      {regs::link_down_ports_word(regs::kMaskWords), RegisterAccess::unknown_offset},
      {regs::group_register(4, regs::kGroupControl), RegisterAccess::unknown_offset},
      {regs::route_word(SwitchCsr::kRouteTableEntries, 0), RegisterAccess::unknown_offset},
      {regs::port_partition_register(16), RegisterAccess::unknown_offset},
      {0xFFFF'FFFC, RegisterAccess::unknown_offset},
  };
  for (const auto& [offset, why] : bad) {
    SCOPED_TRACE(offset);
    uint32_t value = 0xDEADBEEF;
    EXPECT_EQ(csr.read(offset, value), why);
    EXPECT_EQ(value, 0u);
    EXPECT_EQ(csr.error_status(), uint32_t{regs::error_bad_register_access});
    ASSERT_EQ(csr.write(regs::kErrorStatus, ~0u), RegisterAccess::ok);
    EXPECT_EQ(csr.write(offset, 1), why);
    EXPECT_EQ(csr.error_status(), uint32_t{regs::error_bad_register_access});
    ASSERT_EQ(csr.write(regs::kErrorStatus, ~0u), RegisterAccess::ok);
  }
  // The unaligned write into a route entry did not land either.
  EXPECT_EQ(csr.write(regs::route_word(2, 0) + 1, 0xFF), RegisterAccess::unaligned);
  EXPECT_EQ(csr.route_mask(2), 0u);
}

TEST(SwitchCsr, ErrorStatusIsStickyAndWriteOneClears) {
  SwitchCsr csr(config());
  csr.raise_error(regs::error_no_route);
  csr.raise_error(regs::error_not_a_member);
  csr.raise_error(regs::error_no_route);  // again: still one bit
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), uint32_t{regs::error_no_route | regs::error_not_a_member});
  // Writing 0 clears nothing; writing 1 clears that bit only.
  ASSERT_EQ(csr.write(regs::kErrorStatus, 0), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), uint32_t{regs::error_no_route | regs::error_not_a_member});
  ASSERT_EQ(csr.write(regs::kErrorStatus, regs::error_no_route), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), uint32_t{regs::error_not_a_member});
  ASSERT_EQ(csr.write(regs::kErrorStatus, regs::error_not_a_member), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), 0u);
}

TEST(SwitchCsr, InterruptPendingIsStatusAndEnableAndDrivesTheLine) {
  SwitchCsr csr(config());
  std::vector<bool> levels;
  csr.on_interrupt_change([&](bool line) { levels.push_back(line); });
  csr.raise_error(regs::error_no_route);
  EXPECT_EQ(read_register(csr, regs::kIntPending), 0u) << "not enabled";
  EXPECT_FALSE(csr.interrupt_line());
  // Enabling a bit that is already set raises the line at once; undefined bits stay 0.
  ASSERT_EQ(csr.write(regs::kIntEnable, 0xFFFF'FFFF), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::kIntEnable), SwitchCsr::kErrorBits);
  EXPECT_EQ(read_register(csr, regs::kIntPending), uint32_t{regs::error_no_route});
  EXPECT_TRUE(csr.interrupt_line());
  csr.raise_error(regs::error_reduction);  // the line is already high: no second edge
  ASSERT_EQ(csr.write(regs::kErrorStatus, regs::error_no_route), RegisterAccess::ok);
  EXPECT_TRUE(csr.interrupt_line()) << "error_reduction is still pending";
  ASSERT_EQ(csr.write(regs::kErrorStatus, regs::error_reduction), RegisterAccess::ok);
  EXPECT_FALSE(csr.interrupt_line());
  // Masking a pending bit drops the line without clearing the status.
  csr.raise_error(regs::error_not_a_member);
  ASSERT_EQ(csr.write(regs::kIntEnable, regs::error_no_route), RegisterAccess::ok);
  EXPECT_FALSE(csr.interrupt_line());
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), uint32_t{regs::error_not_a_member});
  EXPECT_EQ(levels, (std::vector<bool>{true, false, true, false}));
}

TEST(SwitchCsr, CountersReadAsACoherentLoHiPair) {
  SwitchCsr csr(config());
  csr.count(SwitchCounter::forwarded_requests, 0x1'FFFF'FFFEull);
  csr.count(SwitchCounter::forwarded_responses, 5);
  csr.count(SwitchCounter::access_errors);
  EXPECT_EQ(read_register(csr, regs::kCounterForwardedRequests), 0xFFFF'FFFEu);
  // The counter carries into the upper half between the two reads: HI still gives the upper
  // half that belongs to the LO just read.
  csr.count(SwitchCounter::forwarded_requests, 2);
  EXPECT_EQ(read_register(csr, regs::kCounterForwardedRequests + 4), 1u);
  EXPECT_EQ(read_register(csr, regs::kCounterForwardedRequests), 0u);
  EXPECT_EQ(read_register(csr, regs::kCounterForwardedRequests + 4), 2u);
  EXPECT_EQ(csr.counter(SwitchCounter::forwarded_requests), 0x2'0000'0000ull);
  EXPECT_EQ(read_register(csr, regs::kCounterForwardedResponses), 5u);
  EXPECT_EQ(read_register(csr, regs::kCounterForwardedResponses + 4), 0u);
  EXPECT_EQ(read_register(csr, regs::kCounterAccessErrors), 1u);
  EXPECT_EQ(read_register(csr, regs::kCounterReplications), 0u);
  EXPECT_EQ(csr.error_status(), 0u);
}

TEST(SwitchCsr, RouteEntriesAreDecodedForTheDatapath) {
  SwitchCsr csr(config(40));
  ASSERT_EQ(csr.write(regs::route_word(5, 0), 0b1100), RegisterAccess::ok);
  EXPECT_EQ(csr.route_ports(5), (std::vector<uint16_t>{2, 3}));
  ASSERT_EQ(csr.write(regs::route_word(5, 1), 0x80), RegisterAccess::ok);  // port 39
  EXPECT_EQ(csr.route_ports(5), (std::vector<uint16_t>{2, 3, 39}));
  EXPECT_EQ(read_register(csr, regs::route_word(5, 0)), 0b1100u);
  EXPECT_EQ(read_register(csr, regs::route_word(5, 1)), 0x80u);
  EXPECT_EQ(read_register(csr, regs::route_word(5, 2)), 0u);
  EXPECT_TRUE(csr.route_ports(6).empty());
  EXPECT_TRUE(csr.route_ports(1000).empty()) << "beyond the table: no route, no crash";
  // A port the chip does not have (40) is refused and the entry keeps its value.
  EXPECT_EQ(csr.write(regs::route_word(5, 1), 0x100), RegisterAccess::rejected_value);
  ASSERT_EQ(csr.write(regs::kErrorStatus, ~0u), RegisterAccess::ok);
  EXPECT_EQ(csr.write(regs::route_word(5, 3), 1), RegisterAccess::rejected_value);  // port 96
  EXPECT_EQ(csr.error_status(), uint32_t{regs::error_bad_register_access});
  EXPECT_EQ(csr.route_ports(5), (std::vector<uint16_t>{2, 3, 39}));
  // The C++ shortcut writes the same state.
  csr.set_route_ports(7, {9, 1});
  EXPECT_EQ(read_register(csr, regs::route_word(7, 0)), 0x202u);
  EXPECT_EQ(csr.route_ports(7), (std::vector<uint16_t>{1, 9}));
  EXPECT_THROW(csr.set_route_ports(7, {40}), std::out_of_range);
  EXPECT_THROW(csr.set_route_ports(SwitchCsr::kRouteTableEntries, {1}), std::out_of_range);
}

// Past 64 ports and GPUs (an NVL72 chip has 72 ports): the third and fourth mask words.
TEST(SwitchCsr, ChipsOfUpTo128PortsAndGpus) {
  EXPECT_EQ(SwitchCsr::kRouteTableEntries, 128u);
  EXPECT_EQ(SwitchCsr::kMaxPorts, 128u);
  SwitchCsr csr(config(72));
  EXPECT_EQ(read_register(csr, regs::kPortCount), 72u);
  EXPECT_EQ(read_register(csr, regs::kRouteEntries), 128u);
  ASSERT_EQ(csr.write(regs::route_word(127, 2), 1u << 7), RegisterAccess::ok);  // GPU 127 via port 71
  EXPECT_EQ(csr.route_ports(127), (std::vector<uint16_t>{71}));
  EXPECT_EQ(read_register(csr, regs::route_word(127, 2)), 0x80u);
  EXPECT_EQ(csr.write(regs::route_word(127, 2), 1u << 8), RegisterAccess::rejected_value) << "port 72";
  EXPECT_EQ(csr.route_ports(127), (std::vector<uint16_t>{71}));
  ASSERT_EQ(csr.write(regs::kErrorStatus, ~0u), RegisterAccess::ok);

  EXPECT_EQ(make_group(csr, 1, 0, 2 * kMiB, hw::GpuMask{}.set(3).set(70)), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::group_register(1, regs::group_members_word(2))), 1u << 6);
  const MulticastGroup* g = csr.group_for(kMiB);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->has_member(70));
  EXPECT_FALSE(g->has_member(6)) << "GPU 70 is not GPU 6";
  EXPECT_EQ(g->members.count(), 2u);

  csr.set_port_link_down(70, true);
  EXPECT_EQ(read_register(csr, regs::link_down_ports_word(2)), 1u << 6);
  EXPECT_EQ(read_register(csr, regs::link_down_ports_word(0)), 0u);
  EXPECT_EQ(csr.error_status(), uint32_t{regs::error_link_state});
  EXPECT_THROW(csr.set_port_link_down(72, true), std::out_of_range);

  SwitchCsr widest(config(128));
  ASSERT_EQ(widest.write(regs::route_word(0, 3), 1u << 31), RegisterAccess::ok);  // port 127
  EXPECT_EQ(widest.route_ports(0), (std::vector<uint16_t>{127}));
}

TEST(SwitchCsr, ValidGroupIsFoundByAddress) {
  SwitchCsr csr(config());
  EXPECT_EQ(make_group(csr, 2, 64 * kMiB, 4 * kMiB, 0b101, 0x1000'0000), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::group_register(2, regs::kGroupControl)), 1u);
  EXPECT_EQ(read_register(csr, regs::group_register(2, regs::group_members_word(0))), 0b101u);
  EXPECT_EQ(read_register(csr, regs::group_register(2, regs::group_members_word(3))), 0u);
  const MulticastGroup* g = csr.group_for(64 * kMiB + 100);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g, &csr.group(2));
  EXPECT_EQ(g->local_address(64 * kMiB + 100), 0x1000'0000u + 100);
  EXPECT_TRUE(g->has_member(0));
  EXPECT_FALSE(g->has_member(1));
  EXPECT_TRUE(g->has_member(2));
  EXPECT_EQ(csr.group_for(68 * kMiB - 1), g);
  EXPECT_EQ(csr.group_for(68 * kMiB), nullptr);
  EXPECT_EQ(csr.group_for(64 * kMiB - 1), nullptr);
  // A second group below it; lookup picks the right one.
  EXPECT_EQ(make_group(csr, 0, 0, 2 * kMiB), RegisterAccess::ok);
  EXPECT_EQ(csr.group_for(kMiB), &csr.group(0));
  EXPECT_EQ(csr.group_for(65 * kMiB), &csr.group(2));
  // Clearing valid removes it from lookup.
  ASSERT_EQ(csr.write(regs::group_register(2, regs::kGroupControl), 0), RegisterAccess::ok);
  EXPECT_EQ(csr.group_for(65 * kMiB), nullptr);
  EXPECT_EQ(csr.error_status(), 0u);
}

// Each way a group can be malformed: the write of CONTROL.valid = 1 is refused with
// error_bad_register_access and the group stays invalid.
TEST(SwitchCsr, MalformedGroupsStayInvalid) {
  struct Case {
    const char* why;
    uint64_t base, size, members, local;
  };
  const Case cases[] = {
      {"base not a multiple of 2 MiB", kMiB, 2 * kMiB, 1, 0},
      {"size not a multiple of 2 MiB", 0, 3 * kMiB, 1, 0},
      {"empty", 0, 0, 1, 0},
      {"no members", 0, 2 * kMiB, 0, 0},
      {"range wraps", ~(2 * kMiB - 1), 4 * kMiB, 1, 0},
      {"local range wraps", 0, 4 * kMiB, 1, ~0ull - kMiB},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    SwitchCsr csr(config());
    EXPECT_EQ(make_group(csr, 1, c.base, c.size, c.members, c.local), RegisterAccess::rejected_value);
    EXPECT_EQ(csr.error_status(), uint32_t{regs::error_bad_register_access});
    EXPECT_EQ(read_register(csr, regs::group_register(1, regs::kGroupControl)), 0u);
    EXPECT_FALSE(csr.group(1).valid);
    EXPECT_EQ(csr.group_for(c.base), nullptr);
  }
}

TEST(SwitchCsr, OverlappingGroupIsRefusedAndAdjacentAccepted) {
  SwitchCsr csr(config());
  ASSERT_EQ(make_group(csr, 0, 10 * kMiB, 4 * kMiB), RegisterAccess::ok);
  EXPECT_EQ(make_group(csr, 1, 12 * kMiB, 4 * kMiB), RegisterAccess::rejected_value);  // overlaps the top
  EXPECT_FALSE(csr.group(1).valid);
  EXPECT_EQ(make_group(csr, 2, 8 * kMiB, 20 * kMiB), RegisterAccess::rejected_value);  // contains it
  EXPECT_EQ(csr.error_status(), uint32_t{regs::error_bad_register_access});
  ASSERT_EQ(csr.write(regs::kErrorStatus, ~0u), RegisterAccess::ok);
  // Directly below and directly above: no overlap.
  EXPECT_EQ(make_group(csr, 1, 8 * kMiB, 2 * kMiB), RegisterAccess::ok);
  EXPECT_EQ(make_group(csr, 2, 14 * kMiB, 2 * kMiB), RegisterAccess::ok);
  EXPECT_EQ(csr.error_status(), 0u);
}

TEST(SwitchCsr, FieldsOfAValidGroupAreLocked) {
  SwitchCsr csr(config());
  ASSERT_EQ(make_group(csr, 0, 0, 2 * kMiB, 0b11), RegisterAccess::ok);
  EXPECT_EQ(csr.write(regs::group_register(0, regs::group_members_word(0)), 0b111), RegisterAccess::rejected_value);
  EXPECT_EQ(csr.write(regs::group_register(0, regs::group_members_word(3)), 1), RegisterAccess::rejected_value);
  EXPECT_EQ(csr.group(0).members, 0b11u);
  // Setting valid again is no change and no error; reserved CONTROL bits read as 0.
  ASSERT_EQ(csr.write(regs::kErrorStatus, ~0u), RegisterAccess::ok);
  EXPECT_EQ(csr.write(regs::group_register(0, regs::kGroupControl), 0xFF), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::group_register(0, regs::kGroupControl)), 1u);
  EXPECT_EQ(csr.error_status(), 0u);
  // Invalidated, the group may change.
  ASSERT_EQ(csr.write(regs::group_register(0, regs::kGroupControl), 0), RegisterAccess::ok);
  EXPECT_EQ(csr.write(regs::group_register(0, regs::group_members_word(0)), 0b111), RegisterAccess::ok);
  EXPECT_EQ(csr.group(0).members, 0b111u);
}

TEST(SwitchCsr, ReductionContextPoolCountsAndRefusesWhenFull) {
  SwitchCsr csr(config(2));  // 2 ports x 2 contexts
  ASSERT_EQ(csr.reduction_context_capacity(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(csr.acquire_reduction_context());
  EXPECT_EQ(csr.error_status(), 0u);
  EXPECT_FALSE(csr.acquire_reduction_context());
  EXPECT_EQ(csr.error_status(), uint32_t{regs::error_context_pool_exhausted});
  csr.release_reduction_context();
  csr.release_reduction_context();
  EXPECT_EQ(read_register(csr, regs::kContextsInUse), 2u);
  EXPECT_EQ(read_register(csr, regs::kContextsPeak), 4u);
  csr.release_reduction_context();
  csr.release_reduction_context();
  EXPECT_THROW(csr.release_reduction_context(), std::logic_error);
}

// CONTEXTS_ENABLED: all of a port's contexts after reset; firmware may enable fewer (1 ..
// REDUCTION_CONTEXTS) while none is in use, and the pool then holds ports x that many.
TEST(SwitchCsr, ContextsEnabledSizesThePool) {
  SwitchCsr csr(config(2));  // 2 ports x 2 contexts
  EXPECT_EQ(read_register(csr, regs::kContextsEnabled), 2u) << "every context enabled after reset";
  ASSERT_EQ(csr.write(regs::kContextsEnabled, 1), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::kContextsEnabled), 1u);
  EXPECT_EQ(csr.reduction_contexts_enabled(), 1u);
  ASSERT_EQ(csr.reduction_context_capacity(), 2u);
  EXPECT_TRUE(csr.acquire_reduction_context());
  EXPECT_TRUE(csr.acquire_reduction_context());
  EXPECT_FALSE(csr.acquire_reduction_context()) << "the third context is not enabled";
  EXPECT_EQ(csr.error_status(), uint32_t{regs::error_context_pool_exhausted});
  ASSERT_EQ(csr.write(regs::kErrorStatus, ~0u), RegisterAccess::ok);

  // Refused: none, more than a port has, and any change while contexts are held.
  EXPECT_EQ(csr.write(regs::kContextsEnabled, 2), RegisterAccess::rejected_value) << "contexts in use";
  csr.release_reduction_context();
  csr.release_reduction_context();
  EXPECT_EQ(csr.write(regs::kContextsEnabled, 0), RegisterAccess::rejected_value);
  EXPECT_EQ(csr.write(regs::kContextsEnabled, 3), RegisterAccess::rejected_value);
  EXPECT_EQ(read_register(csr, regs::kContextsEnabled), 1u) << "a refused write changes nothing";
  EXPECT_EQ(csr.error_status(), uint32_t{regs::error_bad_register_access});
  ASSERT_EQ(csr.write(regs::kContextsEnabled, 2), RegisterAccess::ok) << "the pool is idle again";
  EXPECT_EQ(csr.reduction_context_capacity(), 4u);
  ASSERT_EQ(csr.write(regs::kContextsEnabled, 1), RegisterAccess::ok);
  csr.reset();
  EXPECT_EQ(read_register(csr, regs::kContextsEnabled), 2u);
  EXPECT_EQ(csr.reduction_context_capacity(), 4u);
}

TEST(SwitchCsr, DynamicExpertsPerGpuIsWritableWithin16Bits) {
  SwitchCsr csr(config());
  EXPECT_EQ(read_register(csr, regs::kDynamicExpertsPerGpu), 0u) << "dynamic multimem starts unconfigured";
  ASSERT_EQ(csr.write(regs::kDynamicExpertsPerGpu, 8), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::kDynamicExpertsPerGpu), 8u);
  EXPECT_EQ(csr.dynamic_experts_per_gpu(), 8u);
  EXPECT_EQ(csr.write(regs::kDynamicExpertsPerGpu, 0x10000), RegisterAccess::rejected_value);
  EXPECT_EQ(csr.dynamic_experts_per_gpu(), 8u) << "a refused write changes nothing";
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), uint32_t{regs::error_bad_register_access});
  ASSERT_EQ(csr.write(regs::kDynamicExpertsPerGpu, regs::kMaxDynamicExpertsPerGpu), RegisterAccess::ok);
  csr.reset();
  EXPECT_EQ(csr.dynamic_experts_per_gpu(), 0u);
}

TEST(SwitchCsr, ResetRestoresResetValues) {
  SwitchCsr csr(config());
  std::vector<bool> levels;
  csr.on_interrupt_change([&](bool line) { levels.push_back(line); });
  csr.set_route_ports(1, {3});
  ASSERT_EQ(make_group(csr, 0, 0, 2 * kMiB), RegisterAccess::ok);
  csr.count(SwitchCounter::evictions, 9);
  ASSERT_EQ(csr.write(regs::kIntEnable, ~0u), RegisterAccess::ok);
  csr.raise_error(regs::error_reduction);
  csr.reset();
  EXPECT_TRUE(csr.route_ports(1).empty());
  EXPECT_EQ(csr.group_for(0), nullptr);
  EXPECT_EQ(read_register(csr, regs::group_register(0, regs::kGroupBaseLo)), 0u);
  EXPECT_EQ(csr.counter(SwitchCounter::evictions), 0u);
  EXPECT_EQ(read_register(csr, regs::kIntEnable), 0u);
  EXPECT_EQ(read_register(csr, regs::kErrorStatus), 0u);
  EXPECT_EQ(levels, (std::vector<bool>{true, false}));
}

TEST(SwitchCsr, PortPartitionsDecideWhichGpusAPortReaches) {
  SwitchCsr csr(config());
  // GPU 0 on ports 0 and 1, GPU 1 on port 2, GPU 2 on port 3, GPU 3 on ports 4 and 5.
  csr.set_route_ports(0, {0, 1});
  csr.set_route_ports(1, {2});
  csr.set_route_ports(2, {3});
  csr.set_route_ports(3, {4, 5});
  EXPECT_FALSE(csr.partitioned()) << "all ports 0 after reset: one partition";
  EXPECT_EQ(read_register(csr, regs::port_partition_register(15)), 0u);

  // {GPU 0, GPU 1} in 7, GPU 2 in 9, GPU 3 isolated.
  for (const auto& [port, id] : std::vector<std::pair<uint32_t, uint32_t>>{
           {0, 7}, {1, 7}, {2, 7}, {3, 9}, {4, regs::kPartitionIsolated}, {5, regs::kPartitionIsolated}}) {
    ASSERT_EQ(csr.write(regs::port_partition_register(port), id), RegisterAccess::ok);
  }
  EXPECT_TRUE(csr.partitioned());
  EXPECT_EQ(read_register(csr, regs::port_partition_register(2)), 7u);
  EXPECT_EQ(csr.gpu_partition(0), 7u);
  EXPECT_EQ(csr.gpu_partition(2), 9u);
  EXPECT_TRUE(csr.may_reach(0, 1));
  EXPECT_TRUE(csr.may_reach(2, 0));
  EXPECT_FALSE(csr.may_reach(0, 2)) << "another partition";
  EXPECT_FALSE(csr.may_reach(3, 0)) << "another partition";
  EXPECT_FALSE(csr.may_reach(4, 3)) << "an isolated port reaches nobody, not even its own GPU";
  EXPECT_FALSE(csr.may_reach(0, 3)) << "nobody reaches an isolated GPU";
  EXPECT_FALSE(csr.may_reach(0, 5)) << "a GPU without a route is isolated";
  EXPECT_EQ(csr.error_status(), 0u) << "programming partitions is no error";

  // A GPU whose ports disagree is isolated; a route change is seen at once.
  ASSERT_EQ(csr.write(regs::port_partition_register(1), 9), RegisterAccess::ok);
  EXPECT_EQ(csr.gpu_partition(0), regs::kPartitionIsolated);
  csr.set_route_ports(0, {0});
  EXPECT_EQ(csr.gpu_partition(0), 7u);

  // Refusals are counted in their own 64-bit counter.
  csr.count(SwitchCounter::partition_errors, 3);
  EXPECT_EQ(read_register(csr, regs::kCounterPartitionErrors), 3u);
  EXPECT_EQ(read_register(csr, regs::kCounterPartitionErrors + 4), 0u);
  EXPECT_EQ(read_register(csr, regs::kCounterAccessErrors), 0u);
  ASSERT_EQ(csr.write(regs::kIntEnable, regs::error_partition), RegisterAccess::ok);
  EXPECT_EQ(read_register(csr, regs::kIntEnable), uint32_t{regs::error_partition}) << "bit 9 is a defined error bit";

  csr.reset();
  EXPECT_FALSE(csr.partitioned());
  EXPECT_EQ(read_register(csr, regs::port_partition_register(3)), 0u);
  EXPECT_EQ(csr.counter(SwitchCounter::partition_errors), 0u);
  EXPECT_THROW(csr.set_port_partition(16, 1), std::out_of_range);
}

TEST(SwitchCsr, ImpossibleConfigurationsAreRefused) {
  SwitchCsrConfig c = config();
  c.ports = SwitchCsr::kMaxPorts + 1;
  EXPECT_THROW(SwitchCsr{c}, std::invalid_argument);
  c.ports = 0;
  EXPECT_THROW(SwitchCsr{c}, std::invalid_argument);
  c = config();
  c.multicast_slots = 0;
  EXPECT_THROW(SwitchCsr{c}, std::invalid_argument);
  c.multicast_slots = SwitchCsr::kMaxMulticastSlots + 1;
  EXPECT_THROW(SwitchCsr{c}, std::invalid_argument);
}

}  // namespace
}  // namespace nvsvp::model
