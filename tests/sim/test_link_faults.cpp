// Faults on a link (docs/models/nvlink_port.md#faults): bit errors fail packets, each replayed
// after the round trip, to the picosecond against a reference computed here from the same draws;
// their frequency against the rate; lost credits and their resynchronisation when the sender
// starves; a loss that never starves is not counted as credits the receiver holds; and the
// switch chip's per-port counters and error bits against the links' own counts, read through the
// registers and added up by firmware's link-error service.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <systemc>

#include "../common/port_bench.hpp"
#include "../common/test_support.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/hw/xoshiro256.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::model {
namespace {

using sc_core::sc_time;
using test::Bench;
using test::Driver;
using test::ns;

// The reference: corrupted flits at geometric gaps drawn from the same generator the port seeds,
// a corrupted flit failing its packet (17-flit packets from the message's start), the packet
// sent again from its start. Per message: the packets that failed and the flits sent in vain.
struct ReferenceErrors {
  hw::Xoshiro256 random;
  double log_keep;
  uint64_t gap;
  ReferenceErrors(double rate, uint64_t seed) : random(seed), log_keep(std::log1p(-rate)) { gap = draw(); }
  uint64_t draw() {
    const double uniform = (static_cast<double>(random.next() >> 11) + 1.0) * 0x1.0p-53;
    return static_cast<uint64_t>(std::floor(std::log(uniform) / log_keep));
  }
  // Also, for a message whose first flit leaves at `start_ns` on the test's link (1 ns a flit,
  // 100 ns a hop, a 250 ns round trip): when the receiver sees each bad flit and when the sender
  // gets each NACK and starts the replay.
  std::vector<uint64_t> receipts_ns, replays_ns;
  void message(uint64_t flits, uint32_t& failures, uint64_t& wasted, uint64_t start_ns = 0) {
    uint64_t through = 0;
    failures = 0;
    wasted = 0;
    uint64_t attempt_ns = start_ns;
    while (gap < flits - through) {
      const uint64_t error_at = through + gap;
      const uint64_t packet_start = error_at - error_at % 17;
      const uint64_t bad_flit_sent_ns = attempt_ns + (error_at - through + 1);
      receipts_ns.push_back(bad_flit_sent_ns + 100);
      replays_ns.push_back(bad_flit_sent_ns + 250);
      attempt_ns = bad_flit_sent_ns + 250;
      wasted += error_at - packet_start + 1;
      through = packet_start;
      ++failures;
      gap = draw();
    }
    gap -= flits - through;
  }
};

// Records when the port tells it of each receipt and each replay.
struct RecordingListener final : LinkFaultListener {
  std::vector<uint64_t> receipts_ns, replays_ns;
  void crc_error_received(uint32_t) override { receipts_ns.push_back(sc_core::sc_time_stamp().value() / 1000); }
  void replay_started(uint32_t) override { replays_ns.push_back(sc_core::sc_time_stamp().value() / 1000); }
  void credits_resynchronised(uint32_t) override {}
};

LinkParams faulty_link() {
  LinkParams link = test::exact_link(100.0);  // 1 ns per flit, 100 ns per hop
  link.replay_overhead_ns = 50.0;             // a failure costs its flits and 2 x 100 + 50 ns
  return link;
}

TEST(LinkFaults, CorruptedPacketsCostTheirFlitsAndARoundTripEach) {
  constexpr double kRate = 0.004;
  constexpr uint64_t kSeed = 11;
  // 17-flit messages (one packet) and 67-flit ones (packets of 17, 17, 17 and 16 flits).
  std::vector<uint64_t> bytes;
  for (int i = 0; i < 400; ++i) bytes.push_back(i % 3 == 0 ? 1000 : 256);
  Bench bench(faulty_link(), 1, 1u << 20, [&](Driver& d) {
    for (uint64_t b : bytes) d.send(b, 0);
  });
  bench.port.set_bit_error_rate(kRate, kSeed);
  RecordingListener listener;
  bench.port.set_fault_listener(&listener, 0);
  sc_core::sc_start();

  ReferenceErrors reference(kRate, kSeed);
  uint64_t end = 0, failures_total = 0, wasted_total = 0;
  size_t messages_hit = 0, multi_packet_hit = 0;
  ASSERT_EQ(bench.sink.arrivals.size(), bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    const uint64_t flits = bytes[i] == 1000 ? 67 : 17;
    uint32_t failures = 0;
    uint64_t wasted = 0;
    reference.message(flits, failures, wasted, end);
    const uint64_t replay_ns = wasted + failures * 250;
    // Back to back from time 0: each message's good copy ends after its own replays.
    end += replay_ns + flits;
    EXPECT_EQ(bench.sink.arrivals[i].tail, ns(end + 100)) << "message " << i;
    EXPECT_EQ(bench.sink.arrivals[i].head, ns(end - flits + 100 + 1)) << "message " << i;
    failures_total += failures;
    wasted_total += wasted;
    messages_hit += failures > 0;
    multi_packet_hit += failures > 0 && flits == 67;
  }
  // The draws must have hit messages of both shapes, or the comparison proves little.
  EXPECT_GE(messages_hit, 20u);
  EXPECT_GE(multi_packet_hit, 5u);
  const LinkFaultStats s = bench.port.fault_stats();
  EXPECT_EQ(s.corrupted_packets, failures_total);
  EXPECT_EQ(s.replayed_flits, wasted_total);
  EXPECT_EQ(s.replay_time_ps, ns(wasted_total + failures_total * 250).value());
  EXPECT_EQ(bench.port.stats().busy_time, ns(end));
  EXPECT_EQ(bench.port.stats().messages[0], bytes.size());  // each delivered once
  // The ends hear of each failure when it happens on the wire, not when the message was sent:
  // the receiver as the bad flit arrives, the sender a round trip after it left.
  EXPECT_EQ(listener.receipts_ns, reference.receipts_ns);
  EXPECT_EQ(listener.replays_ns, reference.replays_ns);
  EXPECT_EQ(listener.receipts_ns.size(), failures_total);
}

TEST(LinkFaults, CorruptedPacketsFollowTheRate) {
  constexpr double kRate = 1e-3;
  constexpr int kMessages = 20000;  // 17 flits each
  Bench bench(test::exact_link(), 1, 1u << 20, [&](Driver& d) {
    for (int i = 0; i < kMessages; ++i) d.send(256, 0);
  });
  bench.port.set_bit_error_rate(kRate, 3);
  sc_core::sc_start();
  // A packet fails with 1 - (1 - rate)^17; the replays' own flits add about that share again.
  const double p = 1.0 - std::pow(1.0 - kRate, 17);
  const double expected = kMessages * p * (1.0 + p);
  const double observed = static_cast<double>(bench.port.fault_stats().corrupted_packets);
  EXPECT_NEAR(observed, expected, 5.0 * std::sqrt(expected)) << "p = " << p;
  EXPECT_EQ(bench.sink.arrivals.size(), static_cast<size_t>(kMessages));
}

TEST(LinkFaults, NoRateNoReplays) {
  Bench bench(test::exact_link(), 1, 1024, [&](Driver& d) {
    for (int i = 0; i < 10; ++i) d.send(256, 0);
  });
  bench.port.set_bit_error_rate(0.0, 1);
  sc_core::sc_start();
  EXPECT_EQ(bench.port.fault_stats().corrupted_packets, 0u);
  EXPECT_EQ(bench.sink.arrivals.back().tail, ns(170 + 100));
}

// One VC of 34 flits (two 17-flit messages) and 17 credits lost at 0: one message goes, the second
// allocation fails at 0 ns, the sender starves and resynchronises 1000 ns later, when the second
// message starts. The receiver never frees anything.
TEST(LinkFaults, LostCreditsComeBackWhenTheStarvedSenderResynchronises) {
  LinkParams link = test::exact_link(100.0);
  link.credit_resync_timeout_ns = 1000.0;
  sc_time woke;
  int second_vc = -2;
  Bench* bench_ptr = nullptr;
  uint64_t outstanding_while_lost = 0;
  Bench bench(link, 1, 34, [&](Driver& d) {
    ASSERT_EQ(d.tx->allocate_vc(TrafficClass::request, 17), 0);
    d.send(256, 0);
    EXPECT_EQ(d.tx->allocate_vc(TrafficClass::request, 17), -1);  // 34 - 17 lost - 17 sent
    outstanding_while_lost = bench_ptr->port.credits_outstanding();
    d.tx->wait_for_credits(TrafficClass::request);
    sc_core::wait(d.wake);
    woke = sc_core::sc_time_stamp();
    second_vc = d.tx->allocate_vc(TrafficClass::request, 17);
    if (second_vc >= 0) d.send(256, second_vc);
  });
  bench_ptr = &bench;
  bench.port.schedule_credit_loss(sc_core::SC_ZERO_TIME, 17);
  sc_core::sc_start();

  EXPECT_EQ(outstanding_while_lost, 17u);  // the message the receiver holds, not the lost credits
  EXPECT_EQ(woke, ns(1000));
  EXPECT_EQ(second_vc, 0);
  ASSERT_EQ(bench.sink.arrivals.size(), 2u);
  EXPECT_EQ(bench.sink.arrivals[1].head, ns(1000 + 100 + 1));
  const LinkFaultStats s = bench.port.fault_stats();
  EXPECT_EQ(s.credit_losses, 1u);
  EXPECT_EQ(s.credit_flits_lost, 17u);
  EXPECT_EQ(s.credit_resyncs, 1u);
  EXPECT_EQ(s.credit_flits_resynchronised, 17u);
  EXPECT_EQ(s.credit_flits_unresolved(), 0u);
  EXPECT_EQ(s.loss_to_resync_ps, ns(1000).value());
  EXPECT_EQ(s.max_loss_to_resync_ps, ns(1000).value());
  EXPECT_EQ(bench.port.credits_outstanding(), 34u);  // both messages, still in the receiver
  // The stall lasted from the failed allocation to the resynchronisation.
  EXPECT_EQ(bench.port.hop_stats().credit_stall_ps[0], ns(1000).value());
}

// A VC of 51 flits (three messages) and two losses of 17: the first, at 0, leaves room for two
// messages, and the sender, short of a third, resynchronises at 1000 ns. The second loss, at
// 400 ns while that is pending, takes back what it gives: the sender is still short at 1000 ns,
// resynchronises again at 2000 ns and sends then. Each repair is timed from its own loss: 1000 ns
// and 1600 ns.
TEST(LinkFaults, ALossWhileAResyncIsPendingIsRepairedByTheNextAndTimedFromItself) {
  LinkParams link = test::exact_link(100.0);
  link.credit_resync_timeout_ns = 1000.0;
  std::vector<sc_time> sends;
  Bench bench(link, 1, 51, [&](Driver& d) {
    for (int i = 0; i < 3; ++i) {
      while (d.tx->allocate_vc(TrafficClass::request, 17) < 0) {
        d.tx->wait_for_credits(TrafficClass::request);
        sc_core::wait(d.wake);
      }
      sends.push_back(sc_core::sc_time_stamp());
      d.send(256, 0);
    }
  });
  bench.port.schedule_credit_loss(sc_core::SC_ZERO_TIME, 17);
  bench.port.schedule_credit_loss(ns(400), 17);
  sc_core::sc_start();
  ASSERT_EQ(sends.size(), 3u);
  EXPECT_EQ(sends[0], ns(0));
  EXPECT_EQ(sends[1], ns(0));
  EXPECT_EQ(sends[2], ns(2000));
  const LinkFaultStats s = bench.port.fault_stats();
  EXPECT_EQ(s.credit_losses, 2u);
  EXPECT_EQ(s.credit_resyncs, 2u);
  EXPECT_EQ(s.loss_to_resync_ps, ns(1000 + 1600).value());
  EXPECT_EQ(s.max_loss_to_resync_ps, ns(1600).value());
}

TEST(LinkFaults, ALossThatNeverStarvesIsReportedAndNotHeldByTheReceiver) {
  Bench bench(test::exact_link(100.0), 1, 68, [&](Driver& d) {
    sc_core::wait(ns(50));
    d.send(256, 0);
  });
  bench.port.schedule_credit_loss(ns(20), 17);
  sc_core::sc_start();
  const LinkFaultStats s = bench.port.fault_stats();
  EXPECT_EQ(s.credit_losses, 1u);
  EXPECT_EQ(s.credit_resyncs, 0u);
  EXPECT_EQ(s.credit_flits_unresolved(), 17u);
  EXPECT_EQ(bench.port.credits_outstanding(), 17u);  // the one message only
  EXPECT_EQ(bench.port.best_credits(TrafficClass::request), 68u - 17u - 17u);
}

}  // namespace
}  // namespace nvsvp::model

namespace nvsvp::platform {
namespace {

namespace regs = hw::switch_regs;

// Bit errors on every link of 3 GPUs on two chips (links 2 + 1): what the chips count at their
// ports, read by firmware through the registers, equals what the links replayed, and the
// interrupt firmware services carries link_crc.
TEST(LinkFaults, TheChipsCountEveryReplayAtItsPortAndInterrupt) {
  const PlatformSpec spec = test::small_platform(3, {2, 1});
  auto& platform = *new Platform("platform", spec);
  auto& hal = *new TlmHal(platform);
  uint64_t rx_read = 0, tx_read = 0, rx_links = 0, tx_links = 0, rx_serviced = 0, tx_serviced = 0;
  uint32_t serviced_bits = 0;
  auto& host = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology());
    for (uint32_t g = 0; g < 3; ++g) {
      for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
        platform.link(LinkDirection::gpu_to_switch, g, l).set_bit_error_rate(5e-3, 100 + g * 8 + l);
        platform.link(LinkDirection::switch_to_gpu, g, l).set_bit_error_rate(5e-3, 200 + g * 8 + l);
      }
    }
    for (uint32_t g = 0; g < 3; ++g) {
      hw::WorkSequence sender;
      for (uint32_t i = 0; i < 120; ++i) {
        sender.tasks.push_back(hw::Task::send(0, (g + 1 + i % 2) % 3, 0, (g * 1000 + i) * 256ull, 256, 0));
      }
      sender.tasks.push_back(hw::Task::wait(0, 0, 120));
      hal.submit(g, std::move(sender));
    }
    hal.wait_all_finished();
    fabric.service_interrupts();
    for (const fw::SwitchErrorRecord& record : fabric.error_log()) serviced_bits |= record.bits;
    for (uint32_t c = 0; c < 2; ++c) {
      for (uint32_t p = 0; p < platform.chip(c).registers().config().ports; ++p) {
        rx_serviced += fabric.link_error_totals(c, p).rx_crc_errors;
        tx_serviced += fabric.link_error_totals(c, p).tx_replays;
      }
    }
    for (uint32_t c = 0; c < 2; ++c) {
      const uint32_t ports = hal.read_register(c, regs::kPortCount);
      for (uint32_t p = 0; p < ports; ++p) {
        rx_read += hal.read_register(c, regs::port_error_register(p, regs::kPortRxCrcErrors));
        tx_read += hal.read_register(c, regs::port_error_register(p, regs::kPortTxReplays));
      }
      EXPECT_EQ(hal.read_register(c, regs::kErrorStatus) & regs::error_link_crc, 0u) << "serviced and cleared";
    }
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  ASSERT_TRUE(host.done());
  for (uint32_t g = 0; g < 3; ++g) {
    for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
      rx_links += platform.link(LinkDirection::gpu_to_switch, g, l).fault_stats().corrupted_packets;
      tx_links += platform.link(LinkDirection::switch_to_gpu, g, l).fault_stats().corrupted_packets;
    }
  }
  EXPECT_GT(rx_links, 0u);
  EXPECT_GT(tx_links, 0u);
  EXPECT_EQ(rx_read, rx_links);
  EXPECT_EQ(tx_read, tx_links);
  EXPECT_EQ(rx_serviced, rx_links);  // what firmware's link-error service added up
  EXPECT_EQ(tx_serviced, tx_links);
  EXPECT_NE(serviced_bits & regs::error_link_crc, 0u);
  // A write to a counter is refused like any read-only register.
  EXPECT_EQ(platform.chip(0).registers().write(regs::port_error_register(0, regs::kPortTxReplays), 0),
            model::RegisterAccess::read_only);
}

}  // namespace
}  // namespace nvsvp::platform
