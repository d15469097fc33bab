// The fast fabric (simulation.fabric: fast, docs/models/fabric_engine.md) against the packet
// fabric's hand-worked timings (test_packet_fabric.cpp): each case runs on both engines and must
// land at the time worked out by hand, to the picosecond, with the same packets on every link.
// The links are exact_link's: 1 ns a flit, 100 ns a hop. A multimem store is an SM's: packets of
// 128 bytes, 9 flits.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "../common/multimem_support.hpp"
#include "../common/partition_support.hpp"
#include "../common/test_support.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

// A namespace of its own: the sanitized build compiles the tests in unity batches, where another
// file's helpers of the same names would collide.
namespace nvsvp::platform::fabric_engine_cases {
namespace {

constexpr uint64_t kNs = 1000;  // ps
constexpr uint64_t kHop = 100 * kNs;
constexpr uint64_t kFlit = 1 * kNs;

// The engine a case runs on: "packet" (the reference) or "fast".
class FabricEngines : public ::testing::TestWithParam<std::string> {
 protected:
  PlatformSpec platform(uint32_t gpus, std::vector<uint32_t> links_per_chip) const {
    PlatformSpec spec = test::small_platform(gpus, std::move(links_per_chip));
    spec.gpu.packet_fabric = true;
    spec.switch_chip.packet_fabric = true;
    spec.gpu.fast_fabric = GetParam() == "fast";
    return spec;
  }
};

hw::WorkSequence sends(std::vector<std::pair<uint32_t, uint64_t>> peer_bytes, uint32_t counter, bool sm_issued) {
  hw::WorkSequence s;
  uint64_t address = 0x10000;
  for (const auto& [peer, bytes] : peer_bytes) {
    s.tasks.push_back(hw::Task::send(0, peer, address, address, bytes, counter));
    address += 0x1000;
  }
  s.issue_sms = sm_issued ? 1 : 0;
  return s;
}

hw::WorkSequence wait_for(uint32_t counter, uint32_t arrivals) {
  hw::WorkSequence s;
  s.tasks.push_back(hw::Task::wait(0, counter, arrivals));
  return s;
}

void expect_no_message_left(Platform& platform) {
  std::ostringstream stuck;
  EXPECT_EQ(platform.describe_outstanding(stuck), 0u) << stuck.str();
}

// A copy engine's 1 KiB write: four packets of 17 flits back to back, each forwarded as its head
// arrives; it lands with the tail of packet 3. The links count packets, the first link the message.
TEST_P(FabricEngines, CopyEngineWriteLandsWithItsLastPacket) {
  test::Machine m(platform(2, {1}), [](TlmHal& hal, Platform&) {
    hal.submit(0, sends({{1, 1024}}, 0, false));
    hal.submit(1, wait_for(0, 1));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), 4 * 17 * kFlit + 2 * kHop + kFlit);
  for (const LinkDirection direction : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    const model::LinkStats& stats = m.platform.link(direction, direction == LinkDirection::gpu_to_switch ? 0 : 1, 0).stats();
    EXPECT_EQ(stats.packets[0], 4u);
    EXPECT_EQ(stats.messages[0], 1u);
    EXPECT_EQ(stats.wire_flits, 4u * 17);
    EXPECT_EQ(stats.payload_bytes, 1024u);
    EXPECT_EQ(stats.busy_time.value(), 4 * 17 * kFlit);
  }
  EXPECT_EQ(m.platform.gpu(1).stats().messages_received, 1u);
  EXPECT_EQ(m.platform.gpu(1).stats().payload_bytes_received, 1024u);
  expect_no_message_left(m.platform);
}

// An SM's 1 KiB write: eight packets of 9 flits.
TEST_P(FabricEngines, SmStoresTravelAsPacketsOf128Bytes) {
  test::Machine m(platform(2, {1}), [](TlmHal& hal, Platform&) {
    hal.submit(0, sends({{1, 1024}}, 0, true));
    hal.submit(1, wait_for(0, 1));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), 8 * 9 * kFlit + 2 * kHop + kFlit);
  EXPECT_EQ(m.platform.link(LinkDirection::switch_to_gpu, 1, 0).stats().packets[0], 8u);
  expect_no_message_left(m.platform);
}

// Two links: each packet on its granule's link and on GPU 1's port of the same way; the message
// lands when the busier link delivers its last packet.
TEST_P(FabricEngines, PacketsSpreadOverTheLinksByAddress) {
  PlatformSpec spec = platform(2, {2});
  spec.gpu.link_interleave = "local_address";
  test::Machine m(spec, [](TlmHal& hal, Platform&) {
    hal.submit(0, sends({{1, 8 * 256}}, 0, false));
    hal.submit(1, wait_for(0, 1));
    hal.wait_all_finished();
  });
  m.run();
  uint64_t per_link[2] = {0, 0};
  for (uint64_t p = 0; p < 8; ++p) per_link[model::interleave_way(0x10000 + p * 256, 256, 2)]++;
  ASSERT_GT(per_link[0] * per_link[1], 0u) << "the hash puts packets on both links";
  for (uint32_t l = 0; l < 2; ++l) {
    EXPECT_EQ(m.platform.link(LinkDirection::gpu_to_switch, 0, l).stats().packets[0], per_link[l]) << l;
    EXPECT_EQ(m.platform.link(LinkDirection::switch_to_gpu, 1, l).stats().packets[0], per_link[l]) << l;
  }
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1),
            std::max(per_link[0], per_link[1]) * 17 * kFlit + 2 * kHop + kFlit);
  expect_no_message_left(m.platform);
}

// GPUs 0 and 1 write two 256-byte packets each to GPU 2 at once, through an output arbitrating by
// `arbiter`; the two landing times, earlier first.
std::vector<uint64_t> two_writers_to_one_gpu(const PlatformSpec& base, const char* arbiter) {
  PlatformSpec spec = base;
  spec.switch_chip.arbiter = arbiter;
  test::Machine m(spec, [](TlmHal& hal, Platform&) {
    hal.submit(0, sends({{2, 512}}, 0, false));
    hal.submit(1, sends({{2, 512}}, 1, false));
    hw::WorkSequence wait = wait_for(0, 1);
    wait.tasks.push_back(hw::Task::wait(0, 1, 1));
    hal.submit(2, std::move(wait));
    hal.wait_all_finished();
  });
  m.run();
  std::vector<uint64_t> landed = {m.platform.gpu(2).counter_reached_ps(0, 1), m.platform.gpu(2).counter_reached_ps(1, 1)};
  std::sort(landed.begin(), landed.end());
  expect_no_message_left(m.platform);
  return landed;
}

// Round robin by input, the output takes the packets alternately (101, 118, 135, 152 ns): the
// messages land at 252 and 269 ns, where whole messages one after the other would land at 235 and
// 269.
TEST_P(FabricEngines, RoundRobinInterleavesTwoInputsPacketByPacket) {
  EXPECT_EQ(two_writers_to_one_gpu(platform(3, {1}), "round_robin"), (std::vector<uint64_t>{252 * kNs, 269 * kNs}));
}

// Oldest first looks at each packet's own arrival: the first input's first packet wins the tie at
// 101 ns, then the second input's first packet (101) is older than the first input's second (118),
// and so on: the same alternation, 252 and 269 ns.
TEST_P(FabricEngines, OldestFirstLooksAtEachPacketsOwnArrival) {
  EXPECT_EQ(two_writers_to_one_gpu(platform(3, {1}), "oldest_first"), (std::vector<uint64_t>{252 * kNs, 269 * kNs}));
}

// Credits: the switch input holds two 17-flit packets (one VC of 34 flits). GPU 0 sends four
// 256-byte writes to GPU 1: the first two leave at 0 and 17 ns; the third waits for the first's
// space, which frees as its tail leaves the switch (118 ns) and is known back a hop later (218 ns);
// the fourth for the second's (135 + 100 = 235 ns). Each lands 17 flits and two hops after it
// starts, plus the head flit.
TEST_P(FabricEngines, ASenderWaitsForTheSwitchInputsBufferSpace) {
  PlatformSpec spec = platform(2, {1});
  spec.switch_chip.vcs_per_class = 1;
  spec.switch_chip.vc_depth_flits = 34;
  test::Machine m(spec, [](TlmHal& hal, Platform&) {
    hal.submit(0, sends({{1, 256}, {1, 256}, {1, 256}, {1, 256}}, 0, false));
    hal.submit(1, wait_for(0, 4));
    hal.wait_all_finished();
  });
  m.run();
  const uint64_t lands = 17 * kFlit + 2 * kHop + kFlit;
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), 0 + lands);
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 2), 17 * kNs + lands);
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 3), 218 * kNs + lands);
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 4), 235 * kNs + lands);
  EXPECT_GT(m.platform.link(LinkDirection::gpu_to_switch, 0, 0).hop_stats().credit_stall_ps[0], 0u);
  expect_no_message_left(m.platform);
}

// A message larger than the switch input's buffer (one VC of 34 flits, a copy engine's 1 KiB write
// of four 17-flit packets) goes as its space comes back, packet by packet: packets 0 and 1 at 0
// and 17 ns; packet 2 once packet 0's tail has left the switch (118 ns) and its space is back a hop
// later (218); packet 3 once packet 1's is (235). It lands with packet 3: 235 + 17 + 2 hops + the
// head flit.
TEST_P(FabricEngines, AMessageLargerThanTheBufferGoesAsItsSpaceComesBack) {
  PlatformSpec spec = platform(2, {1});
  spec.switch_chip.vcs_per_class = 1;
  spec.switch_chip.vc_depth_flits = 34;
  test::Machine m(spec, [](TlmHal& hal, Platform&) {
    hal.submit(0, sends({{1, 1024}}, 0, false));
    hal.submit(1, wait_for(0, 1));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), 235 * kNs + 17 * kFlit + 2 * kHop + kFlit);
  EXPECT_EQ(m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats().packets[0], 4u);
  expect_no_message_left(m.platform);
}

// Room is per VC: three VCs of 13 flits each hold one 9-flit SM packet, not the four that 39
// flits would. An SM's 1 KiB write (eight packets) sends packets 0-2 at 0, 9 and 18 ns; packet 3
// once packet 0's room is back (it leaves the switch at 110 ns, its room is known a hop later:
// 210), 4 and 5 at 219 and 228 (behind packets 1 and 2), 6 and 7 behind packets 3 and 4 (420 and
// 429). It lands with packet 7: 429 + 9 flits + two hops + the head flit.
TEST_P(FabricEngines, APacketTakesRoomInOneVc) {
  PlatformSpec spec = platform(2, {1});
  spec.switch_chip.vcs_per_class = 3;
  spec.switch_chip.vc_depth_flits = 13;
  test::Machine m(spec, [](TlmHal& hal, Platform&) {
    hal.submit(0, sends({{1, 1024}}, 0, true));
    hal.submit(1, wait_for(0, 1));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), 429 * kNs + 9 * kFlit + 2 * kHop + kFlit);
  expect_no_message_left(m.platform);
}

// An idle link starts what is ready now, not what it knows will be ready later: GPU 0 reads
// 256 bytes from GPU 1 at 0 ns; GPU 1 learns of the read before it lands and answers it once it
// has (202 ns: one flit, two hops, the head flit), but a write GPU 1 sends to GPU 0 at 150 ns goes
// first, on the idle link, and the response follows at 202 ns, after the write's 17 flits. Each
// lands 17 flits, two hops and the head flit after it starts (the fast fabric once sent the
// response first, committed ahead, and the write at 219 ns).
TEST_P(FabricEngines, AnIdleLinkSendsWhatIsReadyBeforeWhatWillBe) {
  test::Machine m(platform(2, {1}), [](TlmHal& hal, Platform&) {
    hw::WorkSequence read;
    read.tasks.push_back(hw::Task::read(0, 1, 0x20000, 0x10000, 256, 0));
    read.tasks.push_back(hw::Task::wait(0, 0, 1));
    read.tasks.push_back(hw::Task::wait(0, 1, 1));
    hal.submit(0, std::move(read));
    hw::WorkSequence write;
    write.tasks.push_back(hw::Task::delay(0, 150.0));
    write.tasks.push_back(hw::Task::send(0, 0, 0x30000, 0x30000, 256, 1));
    hal.submit(1, std::move(write));
    hal.wait_all_finished();
  });
  m.run();
  const uint64_t lands = 17 * kFlit + 2 * kHop + kFlit;
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(1, 1), 150 * kNs + lands);
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(0, 1), 202 * kNs + lands);
  expect_no_message_left(m.platform);
}

// A multicast group of GPUs 0-2 (multimem [64 MiB, 72 MiB) -> local [1 MiB, 9 MiB)), made by
// firmware on the chips `m` brought up.
constexpr uint64_t kMultimemBase = 64ull << 20;
constexpr uint64_t kLocalBase = 1ull << 20;
void make_group_of_three(TlmHal& hal, const test::Machine& m) {
  fw::MulticastAllocator allocator(hal, m.bring_up.chips);
  allocator.create_group(kMultimemBase, 8ull << 20, kLocalBase, 0b111);
}

// GPU 0 stores 256 bytes (two packets) to the group of GPUs 0-2: the chip copies each packet to
// every member as its head arrives (101 and 110 ns), each output sends the two copies back to
// back, and every member's copy lands with its second (119 + a hop), with the bytes stored.
TEST_P(FabricEngines, AMulticastStoreLandsAtEveryMemberWithItsLastCopy) {
  const test::Bytes16 pattern = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  test::Machine m(platform(3, {1}), [&m, &pattern](TlmHal& hal, Platform&) {
    make_group_of_three(hal, m);
    hal.memory(0).write(0x1000, pattern.data(), pattern.size());
    hal.submit(0, test::one_task(hw::Task::multimem_store(0, 0x1000, kMultimemBase + 0x40, 256, 0)));
    for (uint32_t g = 0; g < 3; ++g) hal.submit(g, wait_for(0, 1));
    hal.wait_all_finished();
    for (uint32_t g = 0; g < 3; ++g) EXPECT_EQ(test::read16(hal, g, kLocalBase + 0x40), pattern) << "GPU " << g;
  });
  m.run();
  for (uint32_t g = 0; g < 3; ++g) {
    EXPECT_EQ(m.platform.gpu(g).counter_reached_ps(0, 1), 2 * 9 * kFlit + 2 * kHop + kFlit) << "GPU " << g;
    const model::LinkStats& down = m.platform.link(LinkDirection::switch_to_gpu, g, 0).stats();
    EXPECT_EQ(down.packets[0], 2u) << "GPU " << g;
    EXPECT_EQ(down.messages[0], 1u) << "GPU " << g;
    EXPECT_EQ(down.payload_bytes, 256u) << "GPU " << g;
    EXPECT_EQ(m.platform.gpu(g).stats().messages_received, 1u) << "GPU " << g;
  }
  EXPECT_EQ(m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats().packets[0], 2u);
  EXPECT_EQ(test::chips_counter(m.platform, &model::SwitchStats::replications), 2u * 3);
  expect_no_message_left(m.platform);
}

// The chip's copies wait at an output in one queue of their own, in order of arrival packet by
// packet, which takes its turn in the round robin as one input. GPU 0 stores 256 bytes to the
// group at 0 ns (its copies arrive at 101 and 110), GPU 2 at 4 ns (105 and 114), while GPU 1
// writes 256 bytes (SM packets) to GPU 2 at 0 ns. GPUs 0 and 1 get only the copies, interleaved:
// GPU 0's store lands at 228, GPU 2's at 237. GPU 2's output: GPU 1's packet 0 (101-110), a copy
// (110-119), GPU 1's packet 1 (119-128: that write lands at 228), then the other three copies
// (128-155): GPU 0's store lands at 246, GPU 2's at 255. (The packet fabric once queued a copy when
// its sender handed the packet over, up to the sender's lookahead before it arrived: there GPU 0's
// store went whole before GPU 2's.)
TEST_P(FabricEngines, TheChipsCopiesTakeTheirTurnAtAnOutputAsOneInput) {
  test::Machine m(platform(3, {1}), [&m](TlmHal& hal, Platform&) {
    make_group_of_three(hal, m);
    hal.submit(0, test::one_task(hw::Task::multimem_store(0, 0x1000, kMultimemBase, 256, 0)));
    hw::WorkSequence later;
    later.tasks.push_back(hw::Task::delay(0, 4.0));
    later.tasks.push_back(hw::Task::multimem_store(0, 0x1000, kMultimemBase + 0x1000, 256, 0));
    hal.submit(2, std::move(later));
    hal.submit(1, sends({{2, 256}}, 1, true));
    for (uint32_t g = 0; g < 3; ++g) hal.submit(g, wait_for(0, 2));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(2).counter_reached_ps(1, 1), 228 * kNs);
  EXPECT_EQ(m.platform.gpu(2).counter_reached_ps(0, 1), 246 * kNs);
  EXPECT_EQ(m.platform.gpu(2).counter_reached_ps(0, 2), 255 * kNs);
  for (uint32_t g = 0; g < 2; ++g) {
    EXPECT_EQ(m.platform.gpu(g).counter_reached_ps(0, 1), 228 * kNs) << "GPU " << g;
    EXPECT_EQ(m.platform.gpu(g).counter_reached_ps(0, 2), 237 * kNs) << "GPU " << g;
  }
  expect_no_message_left(m.platform);
}

// A packet's room at the switch input is held until its last copy has left: with one VC of 9
// flits (one SM packet), GPU 0's store of 256 bytes sends packet 1 once packet 0's three copies
// have left (110 ns) and the room is known back a hop later (210): it lands at 210 + 9 flits,
// two hops and the head flit at every member.
TEST_P(FabricEngines, AMulticastPacketHoldsItsRoomUntilItsLastCopyHasLeft) {
  PlatformSpec spec = platform(3, {1});
  spec.switch_chip.vcs_per_class = 1;
  spec.switch_chip.vc_depth_flits = 9;
  test::Machine m(spec, [&m](TlmHal& hal, Platform&) {
    make_group_of_three(hal, m);
    hal.submit(0, test::one_task(hw::Task::multimem_store(0, 0x1000, kMultimemBase, 256, 0)));
    for (uint32_t g = 0; g < 3; ++g) hal.submit(g, wait_for(0, 1));
    hal.wait_all_finished();
  });
  m.run();
  for (uint32_t g = 0; g < 3; ++g) {
    EXPECT_EQ(m.platform.gpu(g).counter_reached_ps(0, 1), 210 * kNs + 9 * kFlit + 2 * kHop + kFlit) << "GPU " << g;
  }
  expect_no_message_left(m.platform);
}

// A multimem red combines its operand into every member's copy (f32 add here).
TEST_P(FabricEngines, AMulticastRedAddsIntoEveryMember) {
  test::Machine m(platform(3, {1}), [&m](TlmHal& hal, Platform&) {
    make_group_of_three(hal, m);
    const float base[4] = {1.0f, 2.0f, 3.0f, -4.0f};
    const float operand[4] = {10.0f, 20.0f, 30.0f, 40.0f};
    for (uint32_t g = 0; g < 3; ++g) hal.memory(g).write(kLocalBase + 0x100, base, sizeof base);
    hal.memory(1).write(0x3000, operand, sizeof operand);
    hal.submit(1, test::one_task(hw::Task::multimem_red(0, 0x3000, kMultimemBase + 0x100, 16, hw::MultimemOp::add,
                                                        hw::MultimemType::f32, 0)));
    for (uint32_t g = 0; g < 3; ++g) hal.submit(g, wait_for(0, 1));
    hal.wait_all_finished();
    for (uint32_t g = 0; g < 3; ++g) {
      float sum[4];
      hal.memory(g).read(kLocalBase + 0x100, sum, sizeof sum);
      EXPECT_EQ(sum[0], 11.0f) << "GPU " << g;
      EXPECT_EQ(sum[1], 22.0f) << "GPU " << g;
      EXPECT_EQ(sum[2], 33.0f) << "GPU " << g;
      EXPECT_EQ(sum[3], 36.0f) << "GPU " << g;
    }
  });
  m.run();
  expect_no_message_left(m.platform);
}

// A request across partitions is refused by the chip: each packet answered by a header-only error
// response (one flit) queued as the chip's own back on the link it came by, and the issuer gathers
// them into one. GPUs 0 and 1 in one partition, GPU 2 in another: GPU 0's copy engine reads 1 KiB
// from GPU 2, four request packets of one flit (0-4 ns), refused as their heads arrive (101-104);
// the answers leave at 101-105 and the read's wait completes with the last (205 ns), nothing read.
TEST_P(FabricEngines, AReadAcrossPartitionsIsAnsweredByTheChipPacketByPacket) {
  test::Machine m(platform(3, {1}), [](TlmHal& hal, Platform& platform) {
    test::program_port_partitions(hal, platform.fabric_topology(), {1, 1, 2});
    hw::WorkSequence read;
    read.tasks.push_back(hw::Task::read(0, 2, 0x20000, 0x10000, 1024, 1));
    read.tasks.push_back(hw::Task::wait(0, 1, 1));
    hal.submit(0, std::move(read));
    hal.wait_all_finished();
    EXPECT_EQ(test::interrupts_pending(hal), hw::switch_regs::error_partition);
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(1, 1), 205 * kNs);
  EXPECT_EQ(m.platform.gpu(0).stats().access_errors, 1u);
  EXPECT_EQ(m.platform.gpu(2).stats().messages_received, 0u);
  EXPECT_EQ(m.platform.gpu(0).memory().write_count(0x10000), 0u) << "nothing read";
  EXPECT_EQ(test::chips_counter(m.platform, &model::SwitchStats::partition_errors), 4u);
  const model::LinkStats& back = m.platform.link(LinkDirection::switch_to_gpu, 0, 0).stats();
  EXPECT_EQ(back.packets[1], 4u);
  EXPECT_EQ(back.messages[1], 1u);
  EXPECT_EQ(back.wire_flits, 4u);
  EXPECT_EQ(back.payload_bytes, 0u);
  expect_no_message_left(m.platform);
}

// A multicast to an address no group covers: each of the store's two packets (101 and 110 ns at
// the chip) gets a one-flit multimem_error routed to the issuer, whose wait on the store's counter
// completes with the second (111 + a hop); nothing is written anywhere.
TEST_P(FabricEngines, AMulticastWithoutAGroupIsRefusedPacketByPacket) {
  test::Machine m(platform(3, {1}), [](TlmHal& hal, Platform&) {
    hal.submit(0, test::one_task(hw::Task::multimem_store(0, 0x1000, kMultimemBase, 256, 0)));
    hal.submit(0, wait_for(0, 1));
    hal.wait_all_finished();
    EXPECT_EQ(test::interrupts_pending(hal), hw::switch_regs::error_group_not_configured);
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(0, 1), 211 * kNs);
  EXPECT_EQ(m.platform.gpu(0).stats().multimem_errors, 1u);
  for (uint32_t g = 1; g < 3; ++g) EXPECT_EQ(m.platform.gpu(g).stats().messages_received, 0u) << "GPU " << g;
  EXPECT_EQ(test::chips_counter(m.platform, &model::SwitchStats::access_errors), 2u);
  EXPECT_EQ(test::chips_counter(m.platform, &model::SwitchStats::replications), 0u);
  expect_no_message_left(m.platform);
}

INSTANTIATE_TEST_SUITE_P(, FabricEngines, ::testing::Values("packet", "fast"),
                         [](const ::testing::TestParamInfo<std::string>& engine) { return engine.param; });

}  // namespace
}  // namespace nvsvp::platform::fabric_engine_cases
