// The packet fabric (simulation.fabric: packet, docs/models/packet_fabric.md) worked by hand: a
// message cut into its engine's packets, each on the link its address interleaves to, forwarded
// packet by packet with cut-through, interleaved with another input's packets at a shared output,
// and landed whole with its last packet. The links are exact_link's: 1 ns a flit, 100 ns a hop.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <sstream>
#include <vector>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

constexpr uint64_t kNs = 1000;  // ps
constexpr uint64_t kHop = 100 * kNs;
constexpr uint64_t kFlit = 1 * kNs;

PlatformSpec packet_platform(uint32_t gpus, std::vector<uint32_t> links_per_chip) {
  PlatformSpec spec = test::small_platform(gpus, std::move(links_per_chip));
  spec.gpu.packet_fabric = true;
  spec.switch_chip.packet_fabric = true;
  return spec;
}

// One send of `bytes` from `source` to `peer`, counted on the peer's `counter`; `sm_issued`: the
// stream's SMs issue it (their packets), else a copy engine.
hw::WorkSequence one_send(uint32_t peer, uint64_t bytes, uint32_t counter, bool sm_issued) {
  hw::WorkSequence s;
  s.tasks.push_back(hw::Task::send(0, peer, 0, 0x10000, bytes, counter));
  s.issue_sms = sm_issued ? 1 : 0;
  return s;
}

// GPU 0 writes `bytes` to GPU 1 (counter 0), which waits for it.
std::function<void(TlmHal&, Platform&)> one_write_to_gpu1(uint64_t bytes, bool sm_issued) {
  return [bytes, sm_issued](TlmHal& hal, Platform&) {
    hal.submit(0, one_send(1, bytes, 0, sm_issued));
    hw::WorkSequence wait;
    wait.tasks.push_back(hw::Task::wait(0, 0, 1));
    hal.submit(1, std::move(wait));
    hal.wait_all_finished();
  };
}

void expect_nothing_outstanding(Platform& platform) {
  std::ostringstream stuck;
  EXPECT_EQ(platform.describe_outstanding(stuck), 0u) << stuck.str();
}

// A copy engine's 1 KiB write is four packets of 256 B (16 data flits + a header): back to back on
// GPU 0's link, each forwarded as its head arrives, back to back on GPU 1's link. The message
// lands with the tail of packet 3: 4 x 17 flits, two hops and the first flit's head start.
TEST(PacketFabric, CopyEngineWriteTravelsAsFourPacketsCutThrough) {
  test::Machine m(packet_platform(2, {1}), one_write_to_gpu1(1024, false));
  m.run();
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), 4 * 17 * kFlit + 2 * kHop + kFlit);
  const auto& up = m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats();
  const auto& down = m.platform.link(LinkDirection::switch_to_gpu, 1, 0).stats();
  EXPECT_EQ(up.packets[0], 4u);
  EXPECT_EQ(up.messages[0], 1u);  // counted with its first packet
  EXPECT_EQ(down.packets[0], 4u);
  EXPECT_EQ(up.wire_flits, 4u * 17);
  EXPECT_EQ(down.wire_flits, 4u * 17);
  EXPECT_EQ(m.platform.gpu(1).stats().messages_received, 1u);
  EXPECT_EQ(m.platform.gpu(1).stats().payload_bytes_received, 1024u);
  expect_nothing_outstanding(m.platform);
}

// An SM's 1 KiB write is eight packets of 128 B (8 data flits + a header): 72 flits on the wire
// where the copy engine's take 68.
TEST(PacketFabric, SmStoresTravelAsPacketsOf128Bytes) {
  test::Machine m(packet_platform(2, {1}), one_write_to_gpu1(1024, true));
  m.run();
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), 8 * 9 * kFlit + 2 * kHop + kFlit);
  EXPECT_EQ(m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats().packets[0], 8u);
  expect_nothing_outstanding(m.platform);
}

// With two links to the chip, each packet takes the link its own 256-byte granule interleaves to,
// and the chip sends it on to GPU 1's port of the same way: two pipelines side by side. (The GPU
// hashes the address in GPU 1's memory here, as the chip does, so that the two sides agree; the
// presets hash the fabric address: gpu.link_interleave.) The message lands when the link with
// more packets delivers its last.
TEST(PacketFabric, PacketsOfOneMessageSpreadOverTheLinksByAddress) {
  constexpr uint64_t kBytes = 8 * 256;
  PlatformSpec spec = packet_platform(2, {2});
  spec.gpu.link_interleave = "local_address";
  test::Machine m(spec, one_write_to_gpu1(kBytes, false));
  m.run();
  uint64_t per_link[2] = {0, 0};
  for (uint64_t p = 0; p < 8; ++p) per_link[model::interleave_way(0x10000 + p * 256, 256, 2)]++;
  ASSERT_GT(per_link[0], 0u) << "the hash puts packets on both links";
  ASSERT_GT(per_link[1], 0u);
  for (uint32_t l = 0; l < 2; ++l) {
    EXPECT_EQ(m.platform.link(LinkDirection::gpu_to_switch, 0, l).stats().packets[0], per_link[l]) << l;
    EXPECT_EQ(m.platform.link(LinkDirection::switch_to_gpu, 1, l).stats().packets[0], per_link[l]) << l;
  }
  const uint64_t busiest = std::max(per_link[0], per_link[1]);
  EXPECT_EQ(m.platform.gpu(1).counter_reached_ps(0, 1), busiest * 17 * kFlit + 2 * kHop + kFlit);
  expect_nothing_outstanding(m.platform);
}

// GPUs 0 and 1 each write two packets to GPU 2 at once. Their heads reach the chip together at
// 101 ns; the output to GPU 2 takes one packet at a time, round robin between the inputs, so the
// packets leave alternately at 101, 118, 135 and 152 ns: the first message lands at 252 ns, the
// second at 269. Whole messages (the message fabric) would land at 235 and 269.
TEST(PacketFabric, TwoInputsInterleaveTheirPacketsAtOneOutput) {
  test::Machine m(packet_platform(3, {1}), [](TlmHal& hal, Platform&) {
    hal.submit(0, one_send(2, 512, 0, false));
    hal.submit(1, one_send(2, 512, 1, false));
    hw::WorkSequence wait;
    wait.tasks.push_back(hw::Task::wait(0, 0, 1));
    wait.tasks.push_back(hw::Task::wait(0, 1, 1));
    hal.submit(2, std::move(wait));
    hal.wait_all_finished();
  });
  m.run();
  std::vector<uint64_t> landed = {m.platform.gpu(2).counter_reached_ps(0, 1),
                                  m.platform.gpu(2).counter_reached_ps(1, 1)};
  std::sort(landed.begin(), landed.end());
  EXPECT_EQ(landed[0], 252 * kNs);
  EXPECT_EQ(landed[1], 269 * kNs);
  expect_nothing_outstanding(m.platform);
}

// Head-of-line blocking, and the output queues that remove it. GPUs 0 and 1 stream 4 KiB to GPU 2;
// GPU 3 writes 256 B to GPU 2, then 256 B to GPU 4, both on its one VC (one VC per class). The
// output to GPU 2 serves its inputs in turn: GPU 0's first packet at 101 ns, GPU 1's at 118, GPU 3's
// at 135 ns. GPU 3's packet for GPU 4 (its head at the chip at 118 ns) waits in the output queue
// for GPU 4, not behind the packet for GPU 2: it leaves at 118 and lands at 235 ns. In one FIFO per
// VC (the switch's output queues off) it becomes the head only when the packet ahead of it leaves,
// at 135, and waits for that packet to cross the input's crossbar slot: it leaves at 152 and lands
// at 269.
void run_head_of_line_case(bool output_queued, uint64_t expected_ns) {
  PlatformSpec spec = packet_platform(5, {1});
  spec.switch_chip.vcs_per_class = 1;
  spec.switch_chip.packet_fabric = output_queued;
  test::Machine m(spec, [](TlmHal& hal, Platform&) {
    hal.submit(0, one_send(2, 4096, 0, false));
    hal.submit(1, one_send(2, 4096, 1, false));
    hw::WorkSequence two;
    two.tasks.push_back(hw::Task::send(0, 2, 0, 0x20000, 256, 2));
    two.tasks.push_back(hw::Task::send(0, 4, 0, 0x30000, 256, 0));
    hal.submit(3, std::move(two));
    hw::WorkSequence wait2;
    for (uint32_t c = 0; c < 3; ++c) wait2.tasks.push_back(hw::Task::wait(0, c, 1));
    hal.submit(2, std::move(wait2));
    hw::WorkSequence wait4;
    wait4.tasks.push_back(hw::Task::wait(0, 0, 1));
    hal.submit(4, std::move(wait4));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(4).counter_reached_ps(0, 1), expected_ns * kNs);
  EXPECT_EQ(m.platform.gpu(2).counter_reached_ps(2, 1), 252 * kNs);  // GPU 3's packet for GPU 2
  expect_nothing_outstanding(m.platform);
}

TEST(PacketFabric, OutputQueuesLetAPacketPassOneWaitingForAnotherOutput) { run_head_of_line_case(true, 235); }

TEST(PacketFabric, OneFifoPerVcHoldsAPacketBehindOneWaitingForAnotherOutput) { run_head_of_line_case(false, 269); }

}  // namespace
}  // namespace nvsvp::platform
