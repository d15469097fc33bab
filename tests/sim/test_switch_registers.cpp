// The switch register block on the platform: the `csr` socket from a SystemC thread (annotated
// access time, TLM errors for what is not a 4-byte access), the HAL's register calls waiting out
// that time, the interrupt line waking a waiting firmware (raised by a refused group write and by
// the datapath), bring-up programming every route through registers, and the counters firmware
// reads matching what the chips forwarded.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "../common/test_support.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

namespace regs = hw::switch_regs;

using sc_core::sc_time;
using test::ns;

constexpr uint64_t kMiB = 1ull << 20;

PlatformSpec spec_with_access_time(double register_access_ns) {
  PlatformSpec spec = test::small_platform(3, {2, 1});
  spec.switch_chip.register_access_ns = register_access_ns;
  return spec;
}

// One raw access over the platform's management bus, as a TLM initiator makes it.
struct RawAccess {
  tlm::tlm_response_status status;
  uint32_t value;
  sc_time delay;
};
RawAccess raw_access(Platform& platform, uint32_t chip, tlm::tlm_command command, uint64_t address,
                     uint32_t length, uint32_t value = 0, unsigned char* byte_enables = nullptr) {
  unsigned char data[8] = {};
  std::memcpy(data, &value, 4);
  tlm::tlm_generic_payload payload;
  payload.set_command(command);
  payload.set_address(address);
  payload.set_data_ptr(data);
  payload.set_data_length(length);
  payload.set_streaming_width(length);
  payload.set_byte_enable_ptr(byte_enables);
  payload.set_byte_enable_length(byte_enables ? length : 0);
  payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_time delay = ns(10);  // the initiator's own time offset: the chip adds to it
  platform.register_transport(chip, payload, delay);
  uint32_t out = 0;
  std::memcpy(&out, data, 4);
  return RawAccess{payload.get_response_status(), out, delay};
}

// Runs `body` as firmware on a platform of 3 GPUs on two chips (links 2 + 1), without bring-up;
// fails the test if the firmware does not finish within 1 ms.
void run_firmware(double register_access_ns, const std::function<void(TlmHal&, Platform&)>& body,
                  uint32_t reduction_contexts_per_port = 64) {
  PlatformSpec spec = spec_with_access_time(register_access_ns);
  spec.switch_chip.reduction_contexts_per_port = reduction_contexts_per_port;
  // Left to the process's end, like every module of a simulation test.
  auto& platform = *new Platform("platform", spec);
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] { body(hal, platform); });
  sc_core::sc_start(sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  ASSERT_TRUE(host.done()) << "the firmware did not finish";
}

TEST(SwitchRegisters, SocketAnswersFourByteAccessesAndAnnotatesTheAccessTime) {
  run_firmware(25.0, [](TlmHal&, Platform& platform) {
    // A read: the identity, and 25 ns added to the initiator's 10 ns; time itself has not moved.
    const RawAccess id = raw_access(platform, 1, tlm::TLM_READ_COMMAND, regs::kId, 4);
    EXPECT_EQ(id.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(id.value, regs::kIdValue);
    EXPECT_EQ(id.delay, ns(35));
    EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME);
    EXPECT_EQ(raw_access(platform, 1, tlm::TLM_READ_COMMAND, regs::kChipIndex, 4).value, 1u);
    // A write lands.
    EXPECT_EQ(raw_access(platform, 0, tlm::TLM_WRITE_COMMAND, regs::route_word(2, 0), 4, 0b110000).status,
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(platform.chip(0).route(2), (std::vector<uint16_t>{4, 5}));
    // A refused register access completes (the chip logs it); only what is no 4-byte access at
    // all is a TLM error.
    EXPECT_EQ(raw_access(platform, 0, tlm::TLM_WRITE_COMMAND, regs::kId, 4, 1).status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(platform.chip(0).registers().error_status(), uint32_t{regs::error_bad_register_access});
    // Each TLM error also sets bad_register_access (cleared between the cases here).
    model::SwitchCsr& chip1 = platform.chip(1).registers();
    auto clear_status = [&] { ASSERT_EQ(chip1.write(regs::kErrorStatus, ~0u), model::RegisterAccess::ok); };
    EXPECT_EQ(raw_access(platform, 1, tlm::TLM_READ_COMMAND, regs::kId, 8).status, tlm::TLM_BURST_ERROR_RESPONSE);
    EXPECT_EQ(chip1.error_status(), uint32_t{regs::error_bad_register_access});
    clear_status();
    unsigned char enables[4] = {0xFF, 0xFF, 0, 0};
    EXPECT_EQ(raw_access(platform, 1, tlm::TLM_WRITE_COMMAND, regs::kIntEnable, 4, 1, enables).status,
              tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    EXPECT_EQ(chip1.interrupt_enable(), 0u) << "the refused write did not land";
    EXPECT_EQ(chip1.error_status(), uint32_t{regs::error_bad_register_access});
    clear_status();
    EXPECT_EQ(raw_access(platform, 1, tlm::TLM_IGNORE_COMMAND, regs::kId, 4).status,
              tlm::TLM_COMMAND_ERROR_RESPONSE);
    EXPECT_EQ(chip1.error_status(), uint32_t{regs::error_bad_register_access});
    // An address beyond the 32-bit offsets is an unknown offset: it reads as 0.
    const RawAccess far = raw_access(platform, 1, tlm::TLM_READ_COMMAND, 0x1'0000'0000ull, 4);
    EXPECT_EQ(far.status, tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(far.value, 0u);
  });
}

// The HAL waits out each access; bring-up takes one access time per register access it makes:
// per chip 7 identity reads, ERROR_STATUS read at the start and checked at the end, INT_ENABLE,
// 2 route words per GPU and CONTEXTS_ENABLED written and read back: 2 x 7 + 2 + 2 x (1 + 6 + 2 + 1)
// = 36 accesses.
TEST(SwitchRegisters, HalAccessesTakeTheRegisterAccessTime) {
  run_firmware(25.0, [](TlmHal& hal, Platform& platform) {
    EXPECT_EQ(hal.switch_count(), 2u);
    EXPECT_EQ(hal.read_register(0, regs::kPortCount), 6u);
    EXPECT_DOUBLE_EQ(hal.now_ns(), 25.0);
    hal.write_register(1, regs::route_word(0, 0), 0b100);
    EXPECT_EQ(hal.read_register(1, regs::route_word(0, 0)), 0b100u);
    EXPECT_DOUBLE_EQ(hal.now_ns(), 75.0);
    EXPECT_EQ(platform.chip(1).route(0), (std::vector<uint16_t>{2}));
    EXPECT_THROW(hal.read_register(2, regs::kId), std::out_of_range);

    fw::SwitchFabric fabric(hal);
    const fw::FabricBringUpReport& report = fabric.bring_up(platform.fabric_topology());
    EXPECT_DOUBLE_EQ(report.duration_ns, 36 * 25.0);
    EXPECT_DOUBLE_EQ(hal.now_ns(), 75.0 + 36 * 25.0);
    EXPECT_EQ(platform.chip(1).route(0), (std::vector<uint16_t>{0})) << "bring-up rewrote the stale entry";
  });
}

// switch.reduction_contexts_per_port is what each port's unit has: the chips report it, firmware
// enables all of it, and the pool is the ports' sum.
TEST(SwitchRegisters, TheReductionContextsPerPortAreTheParameters) {
  run_firmware(
      0.0,
      [](TlmHal& hal, Platform& platform) {
        fw::SwitchFabric fabric(hal);
        const fw::FabricBringUpReport& report = fabric.bring_up(platform.fabric_topology());
        EXPECT_EQ(report.reduction_context_pool, (6u + 3u) * 24u);
        for (uint32_t c = 0; c < 2; ++c) {
          EXPECT_EQ(hal.read_register(c, regs::kReductionContexts), 24u) << "chip " << c;
          EXPECT_EQ(hal.read_register(c, regs::kContextsEnabled), 24u) << "chip " << c;
        }
      },
      24);
}

// Bring-up programs every route through the registers, messages then travel by them, and the
// counters firmware reads are what the chips forwarded.
TEST(SwitchRegisters, BringUpProgramsEveryRouteAndCountersFollowTraffic) {
  run_firmware(0.0, [](TlmHal& hal, Platform& platform) {
    for (uint32_t g = 0; g < 3; ++g) EXPECT_TRUE(platform.chip(0).route(g).empty()) << "routes before bring-up";
    fw::SwitchFabric fabric(hal);
    const fw::FabricBringUpReport& report = fabric.bring_up(platform.fabric_topology());
    ASSERT_EQ(report.chips.size(), 2u);
    EXPECT_EQ(report.chips[0].ports, 6u);
    EXPECT_EQ(report.chips[1].ports, 3u);
    EXPECT_EQ(report.chips[1].multicast_slots, 128u);
    EXPECT_EQ(report.route_entries_programmed, 6u);
    EXPECT_EQ(report.reduction_context_pool, (6u + 3u) * 64u);
    EXPECT_DOUBLE_EQ(report.duration_ns, 0.0);
    for (uint16_t g = 0; g < 3; ++g) {
      EXPECT_EQ(platform.chip(0).route(g), (std::vector<uint16_t>{static_cast<uint16_t>(2 * g),
                                                                   static_cast<uint16_t>(2 * g + 1)}));
      EXPECT_EQ(platform.chip(1).route(g), (std::vector<uint16_t>{g}));
      EXPECT_EQ(hal.read_register(1, regs::route_word(g, 0)), 1u << g);
    }
    EXPECT_EQ(platform.chip(0).registers().interrupt_enable(), model::SwitchCsr::kErrorBits);
    for (uint32_t c = 0; c < 2; ++c) {
      EXPECT_EQ(hal.read_register(c, regs::kContextsEnabled), 64u) << "every context enabled, chip " << c;
      EXPECT_EQ(report.chips[c].reduction_contexts_enabled, 64u);
    }

    constexpr uint32_t kMessages = 30;
    hw::WorkSequence sender;
    for (uint32_t i = 0; i < kMessages; ++i) sender.tasks.push_back(hw::Task::send(0, 1 + i % 2, 0, i * 256ull, 256, 0));
    hal.submit(0, std::move(sender));
    for (uint32_t g = 1; g < 3; ++g) {
      hw::WorkSequence receiver;
      receiver.tasks.push_back(hw::Task::wait(0, 0, kMessages / 2));
      hal.submit(g, std::move(receiver));
    }
    hal.wait_all_finished();
    uint64_t forwarded = 0;
    for (uint32_t c = 0; c < 2; ++c) {
      const uint64_t requests = fabric.read_counter(c, regs::kCounterForwardedRequests);
      EXPECT_EQ(requests, platform.chip(c).stats().forwarded[0]) << "chip " << c;
      EXPECT_EQ(fabric.read_counter(c, regs::kCounterForwardedResponses), 0u);
      forwarded += requests;
    }
    EXPECT_EQ(forwarded, kMessages);
    EXPECT_EQ(fabric.service_interrupts(), 0u);
    EXPECT_TRUE(fabric.error_log().empty());
  });
}

// Firmware writes a group that overlaps one the allocator made into another slot of chip 1: the
// chip refuses it and raises its interrupt; firmware's wait returns at once, the service routine
// logs the error and clears it, and a further wait times out after exactly its timeout.
TEST(SwitchRegisters, RefusedGroupWriteRaisesAnInterruptThatFirmwareServices) {
  run_firmware(0.0, [](TlmHal& hal, Platform& platform) {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology());
    fw::MulticastAllocator allocator(hal, fabric.report().chips);
    const fw::MulticastGroupHandle group = allocator.create_group(64 * kMiB, 8 * kMiB, 0x100000, 0b111);
    EXPECT_FALSE(platform.chip(1).irq());

    hal.write_register(1, regs::group_register(5, regs::kGroupBaseLo), 70 * kMiB);
    hal.write_register(1, regs::group_register(5, regs::kGroupSizeLo), 2 * kMiB);
    hal.write_register(1, regs::group_register(5, regs::kGroupMembers), 0b1);
    hal.write_register(1, regs::group_register(5, regs::kGroupControl), 1);
    EXPECT_EQ(hal.read_register(1, regs::group_register(5, regs::kGroupControl)), 0u) << "the group stays invalid";
    EXPECT_TRUE(platform.chip(1).irq());
    EXPECT_FALSE(platform.chip(0).irq());

    EXPECT_TRUE(fabric.wait_and_service(1000.0));
    EXPECT_DOUBLE_EQ(hal.now_ns(), 0.0) << "the line was already high: no waiting";
    ASSERT_EQ(fabric.error_log().size(), 1u);
    EXPECT_EQ(fabric.error_log()[0].describe(), "switch chip 1: bad_register_access at 0 ns");
    EXPECT_EQ(hal.read_register(1, regs::kErrorStatus), 0u);
    EXPECT_FALSE(platform.chip(1).irq());
    // The valid group is untouched and still found by address.
    const model::MulticastGroup* found = platform.chip(1).registers().group_for(70 * kMiB);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found, &platform.chip(1).registers().group(group.slot));

    EXPECT_FALSE(fabric.wait_and_service(500.0));
    EXPECT_DOUBLE_EQ(hal.now_ns(), 500.0);
    EXPECT_EQ(fabric.error_log().size(), 1u);
  });
}

// An error the datapath raises at 300 ns (a second process, as the chip's output process would)
// wakes firmware waiting for an interrupt at that moment. An error whose interrupt is disabled
// does not wake it, but stays in ERROR_STATUS for polling.
TEST(SwitchRegisters, DatapathErrorWakesFirmwareWaitingForAnInterrupt) {
  auto& platform = *new Platform("platform", spec_with_access_time(0.0));
  auto& hal = *new TlmHal(platform);
  std::vector<fw::SwitchErrorRecord> log;
  auto& firmware = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology());
    hal.write_register(0, regs::kIntEnable, regs::error_no_route);  // chip 0: only no_route interrupts
    EXPECT_FALSE(fabric.wait_and_service(200.0)) << "the reduction error on chip 0 at 100 ns is masked";
    EXPECT_DOUBLE_EQ(hal.now_ns(), 200.0);
    EXPECT_TRUE(fabric.wait_and_service(10000.0));
    EXPECT_DOUBLE_EQ(hal.now_ns(), 300.0);
    log = fabric.error_log();
  });
  auto& datapath = *new FirmwareHost("datapath", [&] {
    sc_core::wait(ns(100));
    platform.chip(0).registers().raise_error(regs::error_reduction);
    sc_core::wait(ns(200));
    platform.chip(1).registers().raise_error(regs::error_no_route);
  });
  sc_core::sc_start(sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  ASSERT_TRUE(firmware.done());
  ASSERT_TRUE(datapath.done());
  // Servicing reads every chip: chip 1's interrupt and chip 0's masked, polled error.
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].describe(), "switch chip 0: reduction at 300 ns");
  EXPECT_EQ(log[1].describe(), "switch chip 1: no_route at 300 ns");
  EXPECT_EQ(platform.chip(0).registers().error_status(), 0u);
  EXPECT_EQ(platform.chip(1).registers().error_status(), 0u);
}

// An interrupt raised before the simulation starts (during elaboration) is a level like any
// other: firmware's first wait sees it at once.
TEST(SwitchRegisters, InterruptRaisedBeforeTheStartIsSeen) {
  auto& platform = *new Platform("platform", spec_with_access_time(0.0));
  auto& hal = *new TlmHal(platform);
  bool fired = false;
  auto& firmware = *new FirmwareHost("firmware", [&] { fired = hal.wait_interrupt(100.0); });
  model::SwitchCsr& chip0 = platform.chip(0).registers();
  ASSERT_EQ(chip0.write(regs::kIntEnable, regs::error_reduction), model::RegisterAccess::ok);
  chip0.raise_error(regs::error_reduction);
  sc_core::sc_start(sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  ASSERT_TRUE(firmware.done());
  EXPECT_TRUE(fired);
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME);
}

}  // namespace
}  // namespace nvsvp::platform
