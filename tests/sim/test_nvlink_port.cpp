// NvlinkPort timing and credits, exact to the picosecond: head arrival = start + latency + one
// flit, tail arrival = start + wire_flits x flit time + latency, back-to-back messages serialize,
// statistics count flits, bytes and busy time; a receiver that keeps its buffers stops the sender
// once the credits of every VC are used, and a credit return wakes the sender one latency later.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/sim_time.hpp"
#include "../common/port_bench.hpp"
#include "../common/test_support.hpp"

namespace nvsvp::model {
namespace {

using sc_core::sc_time;

using test::ns;
using test::Bench;
using test::Driver;

TEST(NvlinkPort, HeadAndTailArrivalAndBackToBackSerialization) {
  const LinkParams link = test::exact_link(100.0);  // 1 ns per flit, 100 ns latency
  sc_time busy_after_sends;
  Bench bench(link, 2, 1024, [&](Driver& d) {
    d.send(256, 0);   // 17 flits: 0 .. 17 ns on the wire
    d.send(1000, 1);  // 63 data flits + 4 headers = 67 flits: 17 .. 84 ns
    busy_after_sends = d.tx->busy_until();
    sc_core::wait(ns(500));
    d.send(0, 0);     // header only, on an idle link: 500 .. 501 ns
  });
  sc_core::sc_start();

  const auto& a = bench.sink.arrivals;
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].flits, 17u);
  EXPECT_EQ(a[1].flits, 67u);
  EXPECT_EQ(a[2].flits, 1u);
  EXPECT_EQ(a[0].head, ns(100 + 1));
  EXPECT_EQ(a[0].tail, ns(17 + 100));
  EXPECT_EQ(a[1].head, ns(17 + 100 + 1));  // starts when the first one ends
  EXPECT_EQ(a[1].tail, ns(17 + 67 + 100));
  EXPECT_EQ(busy_after_sends, ns(84));
  EXPECT_EQ(a[2].head, ns(500 + 100 + 1));
  EXPECT_EQ(a[2].tail, ns(500 + 1 + 100));

  const LinkStats& s = bench.port.stats();
  EXPECT_EQ(s.messages[0], 3u);
  EXPECT_EQ(s.messages[1], 0u);
  EXPECT_EQ(s.packets[0], 1u + 4u + 1u);  // the packets each message's wire size holds
  EXPECT_EQ(bench.port.hop_stats().sends[0], 3u);
  EXPECT_EQ(s.wire_flits, 17u + 67u + 1u);
  EXPECT_EQ(s.wire_bytes, (17u + 67u + 1u) * 16u);
  EXPECT_EQ(s.payload_bytes, 256u + 1000u);
  EXPECT_EQ(s.busy_time, ns(17 + 67 + 1));
}

TEST(NvlinkPort, DefaultLinkTimesRoundOncePerMessage) {
  const LinkParams link;  // 25 GB/s x 0.875: 731.428... ps per flit, 250 ns latency
  std::vector<sc_time> tails;
  Bench bench(link, 8, 256, [&](Driver& d) {
    EXPECT_EQ(d.tx->serialization_time(1), picoseconds(731));
    EXPECT_EQ(d.tx->serialization_time(17), picoseconds(12434));      // 12434.29 ps
    EXPECT_EQ(d.tx->serialization_time(272), picoseconds(198949));    // 198948.57 ps
    EXPECT_EQ(d.tx->serialization_time(1000), picoseconds(731429));   // 731428.57 ps
    d.send(4096, 0);
    d.send(4096, 1);
  });
  sc_core::sc_start();
  ASSERT_EQ(bench.sink.arrivals.size(), 2u);
  EXPECT_EQ(bench.sink.arrivals[0].head, picoseconds(250000 + 731));
  EXPECT_EQ(bench.sink.arrivals[0].tail, picoseconds(198949 + 250000));
  EXPECT_EQ(bench.sink.arrivals[1].tail, picoseconds(2 * 198949 + 250000));
  EXPECT_EQ(bench.port.stats().busy_time, picoseconds(2 * 198949));
}

TEST(NvlinkPort, ClassesAreCountedSeparately) {
  Bench bench(test::exact_link(), 1, 64, [&](Driver& d) {
    d.send(64, 0, TrafficClass::request);
    d.send(64, 0, TrafficClass::response);
    d.send(64, 0, TrafficClass::response);
  });
  sc_core::sc_start();
  EXPECT_EQ(bench.port.stats().messages[0], 1u);
  EXPECT_EQ(bench.port.stats().messages[1], 2u);
  EXPECT_EQ(bench.sink.arrivals.size(), 3u);
}

// Receiver depth 64 flits per VC, 2 VCs, 17-flit messages: 3 fit per VC, so 6 go out; the 7th
// waits for a credit return.
TEST(NvlinkPort, CreditsStopTheSenderAndAReturnWakesItOneLatencyLater) {
  const LinkParams link = test::exact_link(100.0);
  std::vector<int> vcs;
  int refused_vc = 0;
  uint32_t credits_when_stuck = 0, response_credits = 0, credits_after = 0;
  uint64_t outstanding_when_stuck = 0;
  sc_time woke;
  Bench* bench_ptr = nullptr;
  Bench bench(link, 2, 64, [&](Driver& d) {
    EXPECT_EQ(d.tx->credits_needed(17), 17u);
    EXPECT_EQ(d.tx->credits_needed(100), 64u);  // a message larger than a VC needs all of it
    for (;;) {
      const int vc = d.tx->allocate_vc(TrafficClass::request, 17);
      if (vc < 0) break;
      vcs.push_back(vc);
      d.send(256, vc);
    }
    refused_vc = d.tx->allocate_vc(TrafficClass::request, 17);
    credits_when_stuck = d.tx->best_credits(TrafficClass::request);
    response_credits = d.tx->best_credits(TrafficClass::response);
    outstanding_when_stuck = bench_ptr->port.credits_outstanding();
    d.tx->wait_for_credits(TrafficClass::request);
    sc_core::wait(d.wake);
    woke = sc_core::sc_time_stamp();
    credits_after = d.tx->best_credits(TrafficClass::request);
    const int vc = d.tx->allocate_vc(TrafficClass::request, 17);
    EXPECT_EQ(vc, 0);  // the VC whose buffer was freed
    if (vc >= 0) d.send(256, vc);
  });
  bench_ptr = &bench;
  // The sink frees the first message's buffer at 1000 ns + 50 ns.
  uint32_t credits_in_flight = 0;
  sc_core::sc_spawn([&] {
    sc_core::wait(ns(1000));
    bench.sink.return_credits(0, ns(50));
    sc_core::wait(ns(149));  // 1149 ns: the credit is still on the wire
    credits_in_flight = bench.port.best_credits(TrafficClass::request);
  });
  sc_core::sc_start();

  EXPECT_EQ(vcs, (std::vector<int>{0, 1, 0, 1, 0, 1}));  // round robin over VCs
  EXPECT_EQ(refused_vc, -1);
  EXPECT_EQ(credits_when_stuck, 64u - 3u * 17u);
  EXPECT_EQ(response_credits, 64u);  // the other class is untouched
  EXPECT_EQ(outstanding_when_stuck, 6u * 17u);
  EXPECT_EQ(credits_in_flight, 13u);
  EXPECT_EQ(woke, ns(1000 + 50 + 100));
  EXPECT_EQ(credits_after, 13u + 17u);
  ASSERT_EQ(bench.sink.arrivals.size(), 7u);
  EXPECT_EQ(bench.sink.arrivals[6].head, ns(1150 + 100 + 1));  // sent the moment it woke
  EXPECT_EQ(bench.port.credits_outstanding(), 6u * 17u);
}

// A sender that asks for credits after the receiver already returned some (still in flight) is
// woken when the first of them lands.
TEST(NvlinkPort, WaitingForCreditsAlreadyInFlight) {
  const LinkParams link = test::exact_link(100.0);
  sc_time woke;
  int sent = 0;
  Bench* bench_ptr = nullptr;
  Bench bench(link, 1, 17, [&](Driver& d) {
    d.send(256, d.tx->allocate_vc(TrafficClass::request, 17));
    ++sent;
    EXPECT_EQ(d.tx->allocate_vc(TrafficClass::request, 17), -1);
    sc_core::wait(ns(1050));  // the receiver frees the buffer at 1000 ns; it lands at 1100 ns
    EXPECT_EQ(d.tx->allocate_vc(TrafficClass::request, 17), -1);
    d.tx->wait_for_credits(TrafficClass::request);
    sc_core::wait(d.wake);
    woke = sc_core::sc_time_stamp();
    const int vc = d.tx->allocate_vc(TrafficClass::request, 17);
    EXPECT_EQ(vc, 0);
    if (vc >= 0) {
      d.send(256, vc);
      ++sent;
    }
    (void)bench_ptr;
  });
  bench_ptr = &bench;
  sc_core::sc_spawn([&] {
    sc_core::wait(ns(1000));
    bench.sink.return_credits(0, sc_core::SC_ZERO_TIME);
  });
  sc_core::sc_start();
  EXPECT_EQ(woke, ns(1100));
  EXPECT_EQ(sent, 2);
  ASSERT_EQ(bench.sink.arrivals.size(), 2u);
  EXPECT_EQ(bench.sink.arrivals[1].tail, ns(1100 + 17 + 100));
}

}  // namespace
}  // namespace nvsvp::model
