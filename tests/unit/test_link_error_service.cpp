// Firmware's runtime service loop and link-error service against a mocked HAL. Behind the mock,
// a small register file per chip answers what the service reads: ERROR_STATUS (sticky, write 1
// to clear), INT_ENABLE, PORT_COUNT and the per-port link-error counters. The tests: an interrupt
// raised while the layer runs is serviced and the loop then returns when the work is done; the
// deltas per port over two services (a wrapping counter included), totals and last counts; the
// bits cleared; the new bits' names; no interrupt => no register access at all; a service that
// cannot clear the line is an error, not a spin.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/mock_hal.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {
namespace {

namespace regs = hw::switch_regs;

using ::testing::_;
using ::testing::AnyNumber;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::NiceMock;

constexpr uint32_t kPorts = 4;

// What the service may read and write of a chip with link-error counters.
struct LinkErrorChip {
  uint32_t error_status = 0;
  uint32_t int_enable = regs::kErrorBitsDefined;
  std::map<uint32_t, uint32_t> port_counters;  // by register offset

  bool line() const { return (error_status & int_enable) != 0; }
  void count(uint32_t port, uint32_t field, uint32_t value) { port_counters[regs::port_error_register(port, field)] = value; }
};

class LinkErrorServiceTest : public ::testing::Test {
 protected:
  LinkErrorServiceTest() : chips_(2) {
    ON_CALL(hal_, switch_count()).WillByDefault(Invoke([this] { return static_cast<uint32_t>(chips_.size()); }));
    ON_CALL(hal_, now_ns()).WillByDefault(Invoke([this] { return now_ns_; }));
    ON_CALL(hal_, read_register(_, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset) -> uint32_t {
      ++reads_;
      LinkErrorChip& c = chips_.at(chip);
      if (offset == regs::kErrorStatus) return c.error_status;
      if (offset == regs::kPortCount) return port_count_;
      if (offset >= regs::kPortErrorTable && offset < regs::port_error_register(kPorts, 0)) {
        ++port_counter_reads_;
        return c.port_counters[offset];
      }
      ADD_FAILURE() << "read of offset " << offset << " the service has no business with";
      return 0;
    }));
    ON_CALL(hal_, write_register(_, _, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset, uint32_t value) {
      ++writes_;
      ASSERT_EQ(offset, regs::kErrorStatus) << "the service writes nothing but ERROR_STATUS";
      chips_.at(chip).error_status &= ~value;  // write 1 to clear
    }));
  }

  void raise(uint32_t chip, uint32_t bits) { chips_.at(chip).error_status |= bits; }
  bool any_line() const {
    for (const LinkErrorChip& chip : chips_) {
      if (chip.line()) return true;
    }
    return false;
  }

  std::vector<LinkErrorChip> chips_;
  double now_ns_ = 0.0;
  uint32_t port_count_ = kPorts;
  int reads_ = 0;
  int writes_ = 0;
  int port_counter_reads_ = 0;
  NiceMock<test::MockHal> hal_;
  SwitchFabric fabric_{hal_};
};

// Four GPUs' sequences; the mock raises a CRC error on chip 1 port 2 as the second one is
// submitted. The loop's first wait sees the line, services it (reads, logs, clears), and its
// second wait returns on completion. wait_all_finished is never called.
TEST_F(LinkErrorServiceTest, InterruptRaisedWhileTheLayerRunsIsServicedThenTheLoopReturns) {
  LayerPlan plan;
  plan.sequences.resize(4);
  int submitted = 0;
  EXPECT_CALL(hal_, submit(_, _)).Times(4).WillRepeatedly(Invoke([&](uint32_t, hw::WorkSequence) {
    if (++submitted == 2) {
      chips_[1].count(2, regs::kPortRxCrcErrors, 3);
      chips_[1].count(2, regs::kPortTxReplays, 1);
      raise(1, regs::error_link_crc);
    }
  }));
  int waits = 0;
  EXPECT_CALL(hal_, wait_finished_or_interrupt()).Times(2).WillRepeatedly(Invoke([&] {
    ++waits;
    if (any_line()) return false;
    now_ns_ = 900.0;  // the work finishes
    return true;
  }));
  EXPECT_CALL(hal_, wait_all_finished()).Times(0);
  int services = 0;
  now_ns_ = 40.0;
  run_layer(hal_, plan, [&] {
    ++services;
    fabric_.service_interrupts();
  });
  EXPECT_EQ(waits, 2);
  EXPECT_EQ(services, 1);
  EXPECT_DOUBLE_EQ(now_ns_, 900.0);
  ASSERT_EQ(fabric_.error_log().size(), 1u);
  EXPECT_EQ(fabric_.error_log()[0].describe(), "switch chip 1: link_crc at 40 ns");
  ASSERT_EQ(fabric_.link_error_log().size(), 1u);
  EXPECT_EQ(fabric_.link_error_log()[0].describe(),
            "switch chip 1 port 2: +3 rx CRC errors, +1 tx replays, +0 rx credit resyncs, +0 tx credit resyncs at 40 ns");
  EXPECT_EQ(chips_[1].error_status, 0u) << "cleared";
  EXPECT_EQ(port_counter_reads_, 4 * static_cast<int>(kPorts)) << "every port of chip 1, chip 0 untouched";
}

// Without a service the layer's wait is the plain one, as before.
TEST_F(LinkErrorServiceTest, RunLayerWithoutAServiceWaitsForCompletionOnly) {
  LayerPlan plan;
  plan.sequences.resize(2);
  EXPECT_CALL(hal_, submit(_, _)).Times(2);
  EXPECT_CALL(hal_, wait_all_finished()).Times(1);
  EXPECT_CALL(hal_, wait_finished_or_interrupt()).Times(0);
  run_layer(hal_, plan);
}

// No interrupt during the layer: one wait, no register access at all.
TEST_F(LinkErrorServiceTest, NoInterruptMeansNoRegisterAccess) {
  LayerPlan plan;
  plan.sequences.resize(2);
  EXPECT_CALL(hal_, wait_finished_or_interrupt()).Times(1).WillOnce(Invoke([] { return true; }));
  EXPECT_CALL(hal_, read_register(_, _)).Times(0);
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  run_layer(hal_, plan, [&] { fabric_.service_interrupts(); });
  EXPECT_TRUE(fabric_.error_log().empty());
  EXPECT_TRUE(fabric_.link_error_log().empty());
}

// Two services of chip 0: the records carry what changed since the previous read, per port;
// totals add them up; the last counts are kept. Port 1's RX CRC counter wraps between the two.
TEST_F(LinkErrorServiceTest, DeltasPerPortOverTwoServices) {
  chips_[0].count(0, regs::kPortRxCrcErrors, 3);
  chips_[0].count(1, regs::kPortRxCrcErrors, 0xFFFFFFFEu);
  raise(0, regs::error_link_crc);
  now_ns_ = 10.0;
  EXPECT_CALL(hal_, write_register(0, regs::kErrorStatus, uint32_t{regs::error_link_crc}));
  EXPECT_EQ(fabric_.service_interrupts(), 1u);
  ASSERT_EQ(fabric_.link_error_log().size(), 2u);
  EXPECT_EQ(fabric_.link_error_log()[0].port, 0u);
  EXPECT_EQ(fabric_.link_error_log()[0].rx_crc_errors, 3u);
  EXPECT_EQ(fabric_.link_error_log()[1].port, 1u);
  EXPECT_EQ(fabric_.link_error_log()[1].rx_crc_errors, 0xFFFFFFFEu);

  chips_[0].count(0, regs::kPortRxCrcErrors, 5);
  chips_[0].count(1, regs::kPortRxCrcErrors, 1);  // wrapped: 3 more
  chips_[0].count(3, regs::kPortTxCreditResyncs, 1);
  chips_[0].count(3, regs::kPortRxCreditResyncs, 2);
  raise(0, regs::error_link_crc | regs::error_credit_resync);
  now_ns_ = 70.0;
  EXPECT_CALL(hal_, write_register(0, regs::kErrorStatus, uint32_t{regs::error_link_crc | regs::error_credit_resync}));
  EXPECT_EQ(fabric_.service_interrupts(), 1u);
  ASSERT_EQ(fabric_.link_error_log().size(), 5u);
  const LinkErrorRecord& port0 = fabric_.link_error_log()[2];
  EXPECT_EQ(port0.chip, 0u);
  EXPECT_EQ(port0.port, 0u);
  EXPECT_EQ(port0.rx_crc_errors, 2u);
  EXPECT_DOUBLE_EQ(port0.time_ns, 70.0);
  EXPECT_EQ(fabric_.link_error_log()[3].port, 1u);
  EXPECT_EQ(fabric_.link_error_log()[3].rx_crc_errors, 3u);
  EXPECT_EQ(fabric_.link_error_log()[4].describe(),
            "switch chip 0 port 3: +0 rx CRC errors, +0 tx replays, +2 rx credit resyncs, +1 tx credit resyncs at 70 ns");

  EXPECT_EQ(fabric_.link_error_totals(0, 0).rx_crc_errors, 5u);
  EXPECT_EQ(fabric_.link_error_totals(0, 1).rx_crc_errors, 0xFFFFFFFEull + 3);
  EXPECT_EQ(fabric_.link_error_totals(0, 3).tx_credit_resyncs, 1u);
  EXPECT_EQ(fabric_.link_error_totals(0, 2).rx_crc_errors, 0u) << "a port that never moved";
  EXPECT_EQ(fabric_.link_error_counters(0, 1).rx_crc_errors, 1u) << "what the counter read last";
  EXPECT_EQ(chips_[0].error_status, 0u);
  EXPECT_EQ(port_counter_reads_, 2 * 4 * static_cast<int>(kPorts));
}

// An error that is no link error is cleared without reading a port counter.
TEST_F(LinkErrorServiceTest, OtherErrorsReadNoPortCounter) {
  raise(1, regs::error_no_route);
  chips_[1].count(0, regs::kPortRxCrcErrors, 7);
  EXPECT_EQ(fabric_.service_interrupts(), 1u);
  EXPECT_EQ(port_counter_reads_, 0);
  EXPECT_TRUE(fabric_.link_error_log().empty());
  EXPECT_EQ(reads_, 2) << "ERROR_STATUS of each chip";
  EXPECT_EQ(writes_, 1) << "the W1C of chip 1";
  EXPECT_EQ(chips_[1].error_status, 0u);
}

// A PORT_COUNT beyond the register map's 64 ports is named, not read port by port.
TEST_F(LinkErrorServiceTest, ImplausiblePortCountIsAFabricError) {
  port_count_ = 0xFFFFFFFFu;
  raise(0, regs::error_credit_resync);
  try {
    fabric_.service_interrupts();
    ADD_FAILURE() << "no error";
  } catch (const FabricError& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch chip 0: PORT_COUNT reads 4294967295 (at most 128)"));
  }
  EXPECT_EQ(port_counter_reads_, 0);
}

// A service that does not lower the line would spin for ever at the same simulated time: the
// loop stops and says so.
TEST_F(LinkErrorServiceTest, ServiceThatCannotClearTheLineIsAnError) {
  LayerPlan plan;
  plan.sequences.resize(1);
  raise(0, regs::error_link_crc);
  EXPECT_CALL(hal_, wait_finished_or_interrupt()).Times(AnyNumber()).WillRepeatedly(Invoke([this] { return !any_line(); }));
  int services = 0;
  try {
    run_layer(hal_, plan, [&] { ++services; });
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("interrupt line stayed high after 1000 services"));
  }
  EXPECT_EQ(services, static_cast<int>(kMaxServicesWithoutProgress));
}

}  // namespace
}  // namespace nvsvp::fw
