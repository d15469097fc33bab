// The platform's side of the runtime service loop: TlmHal::wait_finished_or_interrupt returns on
// a switch interrupt raised while the GPUs work (a second process raising a chip's error, as the
// datapath would), returns again on completion once firmware has serviced it, and returns false
// first when a line is high although the work is done. Each test in its own process.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/hw/work.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

namespace regs = hw::switch_regs;

using sc_core::sc_time;
using test::ns;

constexpr double kAccessNs = 10.0;

PlatformSpec spec() {
  PlatformSpec s = test::small_platform(3, {2, 1});
  s.switch_chip.register_access_ns = kAccessNs;
  return s;
}

// GPU g busy for `duration_ns`.
void submit_delay(TlmHal& hal, uint32_t gpu, double duration_ns) {
  hw::WorkSequence sequence;
  sequence.phase_names = {"busy"};
  sequence.tasks.push_back(hw::Task::delay(0, duration_ns));
  hal.submit(gpu, std::move(sequence));
}

// GPUs 0 and 1 busy for 1000 and 500 ns from 10 ns; chip 1 raises an error at 300 ns. The
// firmware's first wait returns false at 300 ns; servicing reads both chips' ERROR_STATUS and
// clears chip 1's (3 accesses; the record's time is after chip 1's read, 320 ns); the second wait
// returns true when the last GPU finishes.
TEST(RuntimeServiceLoop, InterruptMidRunThenCompletion) {
  auto& platform = *new Platform("platform", spec());
  auto& hal = *new TlmHal(platform);
  double interrupt_ns = -1.0;
  double serviced_ns = -1.0;
  double finished_ns = -1.0;
  bool first = true;
  bool second = false;
  std::vector<fw::SwitchErrorRecord> log;
  auto& firmware = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    hal.write_register(1, regs::kIntEnable, regs::kErrorBitsDefined);  // 10 ns
    submit_delay(hal, 0, 1000.0);
    submit_delay(hal, 1, 500.0);
    first = hal.wait_finished_or_interrupt();
    interrupt_ns = hal.now_ns();
    fabric.service_interrupts();
    serviced_ns = hal.now_ns();
    second = hal.wait_finished_or_interrupt();
    finished_ns = hal.now_ns();
    log = fabric.error_log();
  });
  auto& datapath = *new FirmwareHost("datapath", [&] {
    sc_core::wait(ns(300));
    platform.chip(1).registers().raise_error(regs::error_no_route);
  });
  sc_core::sc_start(sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  ASSERT_TRUE(firmware.done());
  ASSERT_TRUE(datapath.done());
  EXPECT_FALSE(first) << "the interrupt, before the work is done";
  EXPECT_DOUBLE_EQ(interrupt_ns, 300.0);
  EXPECT_DOUBLE_EQ(serviced_ns, 300.0 + 3 * kAccessNs) << "two reads and one write-1-to-clear";
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].describe(), "switch chip 1: no_route at 320 ns");
  EXPECT_TRUE(second);
  const sc_time last_finish = std::max(platform.gpu(0).finish_time(), platform.gpu(1).finish_time());
  EXPECT_GE(last_finish, ns(1010));
  EXPECT_DOUBLE_EQ(finished_ns, last_finish.to_seconds() * 1e9) << "returned when the last GPU finished";
  EXPECT_FALSE(platform.chip(1).irq());
}

// The work finishes at 210 ns, an error was raised at 100 ns and not serviced: the wait returns
// false (service first) although nothing runs, and true once the error is cleared, at once.
TEST(RuntimeServiceLoop, LineHighWinsOverFinishedWork) {
  auto& platform = *new Platform("platform", spec());
  auto& hal = *new TlmHal(platform);
  std::vector<bool> results;
  std::vector<double> times;
  auto& firmware = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    hal.write_register(0, regs::kIntEnable, regs::kErrorBitsDefined);
    submit_delay(hal, 2, 200.0);
    hal.wait_all_finished();  // the error at 100 ns is not looked at here
    results.push_back(hal.wait_finished_or_interrupt());
    times.push_back(hal.now_ns());
    fabric.service_interrupts();
    results.push_back(hal.wait_finished_or_interrupt());
    times.push_back(hal.now_ns());
  });
  auto& datapath = *new FirmwareHost("datapath", [&] {
    sc_core::wait(ns(100));
    platform.chip(0).registers().raise_error(regs::error_reduction);
  });
  sc_core::sc_start(sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  ASSERT_TRUE(firmware.done());
  ASSERT_TRUE(datapath.done());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0]);
  EXPECT_TRUE(results[1]);
  const double finish_ns = platform.gpu(2).finish_time().to_seconds() * 1e9;
  EXPECT_DOUBLE_EQ(times[0], finish_ns) << "no waiting: the line was already high";
  EXPECT_DOUBLE_EQ(times[1], finish_ns + 3 * kAccessNs) << "no waiting after the service either";
}

// The whole loop on the platform: run_layer with the fabric's service, an error at 250 ns, and
// the loop returns when the work is done with the error logged.
TEST(RuntimeServiceLoop, RunLayerServicesOnThePlatform) {
  auto& platform = *new Platform("platform", spec());
  auto& hal = *new TlmHal(platform);
  std::vector<fw::SwitchErrorRecord> log;
  double end_ns = 0.0;
  auto& firmware = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology());
    fw::LayerPlan plan;
    plan.sequences.resize(3);
    for (uint32_t g = 0; g < 3; ++g) {
      plan.sequences[g].phase_names = {"busy"};
      plan.sequences[g].tasks.push_back(hw::Task::delay(0, 5000.0));
    }
    fw::run_layer(hal, plan, [&] { fabric.service_interrupts(); });
    end_ns = hal.now_ns();
    log = fabric.error_log();
  });
  auto& datapath = *new FirmwareHost("datapath", [&] {
    sc_core::wait(ns(2500));  // after bring-up's accesses (well under 1 us), inside the 5 us layer
    platform.chip(0).registers().raise_error(regs::error_reduction);
  });
  sc_core::sc_start(sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  ASSERT_TRUE(firmware.done());
  ASSERT_TRUE(datapath.done());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].chip, 0u);
  EXPECT_DOUBLE_EQ(log[0].time_ns, 2500.0 + kAccessNs);
  sc_time last = sc_core::SC_ZERO_TIME;
  for (uint32_t g = 0; g < 3; ++g) last = std::max(last, platform.gpu(g).finish_time());
  EXPECT_GT(last, ns(2500 + 3 * kAccessNs)) << "the error came while the layer ran";
  EXPECT_DOUBLE_EQ(end_ns, last.to_seconds() * 1e9);
}

}  // namespace
}  // namespace nvsvp::platform
