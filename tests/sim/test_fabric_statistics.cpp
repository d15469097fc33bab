// The statistics of docs/models/*.md ("Statistics") against cases computed by hand: one chip,
// one link per GPU, the exact link (16 B flits at 16 GB/s: 1 ns per flit, 100 ns per hop), no
// switch-internal latency, a 256-byte write = 16 data flits + 1 header = 17 flits.
#include <gtest/gtest.h>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/model/traffic_statistics.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

constexpr uint64_t kNs = 1000;  // ps
constexpr uint32_t kFlits = 17;  // a 256-byte write on the wire

// GPU `from` sends `count` 256-byte writes to GPU 1 at time 0 (no issue-rate hold), counted on
// counter 0 there.
hw::WorkSequence writes_to_gpu1(uint32_t count, uint64_t first_address) {
  hw::WorkSequence s;
  for (uint32_t i = 0; i < count; ++i) s.tasks.push_back(hw::Task::send(0, 1, 0, first_address + i * 256ull, 256, 0));
  return s;
}

// Three writes from GPU 0 to GPU 1 through a switch input VC of 34 flits (two messages): the
// third waits for the first one's credits.
//   up link (GPU 0 -> chip port 0): #1 on the wire 0..17, #2 17..34; #3 finds no credits at 0.
//   switch: #1's head arrives at 0 + 100 + 1 = 101 and leaves at once (101..118 on the down
//   link), its credits going back when its tail is out: 101 + 17 + 100 = 218 at GPU 0; #2 head at
//   118, leaves 118..135.
//   #3 on the up link 218..235, head at the switch 319, down link 319..336.
//   tail arrivals at GPU 1: 118 + 100 = 218, 135 + 100 = 235, 336 + 100 = 436.
TEST(FabricStatistics, OneLinkByHand) {
  PlatformSpec spec = test::small_platform(2, {1});
  spec.switch_chip.vcs_per_class = 1;
  spec.switch_chip.vc_depth_flits = 2 * kFlits;
  test::Machine machine(spec, [](TlmHal& hal, Platform&) {
    hal.submit(0, writes_to_gpu1(3, 0));
    hw::WorkSequence r;
    r.tasks.push_back(hw::Task::wait(0, 0, 3));
    hal.submit(1, std::move(r));
    hal.wait_all_finished();
  });
  machine.platform.record_link_timelines(100 * kNs);
  machine.run();
  const Platform& platform = machine.platform;
  ASSERT_EQ(platform.gpu(1).finish_time().value(), 436 * kNs) << "the hand computation's premise";

  // Injection (0 for all three) to tail arrival.
  const model::LatencyHistogram& latency =
      platform.message_latencies().by_opcode[static_cast<size_t>(model::Opcode::write)];
  EXPECT_EQ(latency.count(), 3u);
  EXPECT_EQ(latency.min(), 218 * kNs);
  EXPECT_EQ(latency.sum(), (218 + 235 + 436) * kNs);
  EXPECT_EQ(latency.max(), 436 * kNs);
  // The median is #2's 235 ns, reported as the last value of its bin (2048 ps wide there).
  EXPECT_GE(latency.percentile(0.5), 235 * kNs);
  EXPECT_LT(latency.percentile(0.5), 235 * kNs + 2048);
  EXPECT_EQ(latency.percentile(0.99), 436 * kNs);  // #3's bin, clamped to the maximum

  // Up link: queueing 0, 17 and 218 ns; the engine stalled for credits from 0 to 218.
  const model::HopStats& up = platform.link(LinkDirection::gpu_to_switch, 0, 0).hop_stats();
  const auto request = static_cast<size_t>(model::TrafficClass::request);
  EXPECT_EQ(up.flits[request], 3 * kFlits);
  EXPECT_EQ(up.queueing_ps[request], (0 + 17 + 218) * kNs);
  EXPECT_EQ(up.max_queueing_ps[request], 218 * kNs);
  EXPECT_EQ(up.credit_stall_ps[request], 218 * kNs);
  // Down link: every head left when it was ready; GPUs drain at line rate, so no stall.
  const model::HopStats& down = platform.link(LinkDirection::switch_to_gpu, 1, 0).hop_stats();
  EXPECT_EQ(down.flits[request], 3 * kFlits);
  EXPECT_EQ(down.queueing_ps[request], 0u);
  EXPECT_EQ(down.credit_stall_ps[request], 0u);
  EXPECT_EQ(platform.chip(0).arbitration_wait_ps(1, model::TrafficClass::request), 0u);

  // Switch input port 0, requests: 34 flits over 0..101, 17 over 101..118, 17 over 218..319.
  const model::OccupancyStatistics& buffer = platform.chip(0).input_occupancy(0, model::TrafficClass::request);
  EXPECT_EQ(buffer.max(), 2 * kFlits);
  EXPECT_EQ(buffer.level(), 0u);
  EXPECT_EQ(buffer.area_until(1000 * kNs), (34 * 101 + 17 * 17 + 17 * 101) * kNs);
  EXPECT_DOUBLE_EQ(buffer.mean(0, 436 * kNs), (34.0 * 101 + 17 * 17 + 17 * 101) / 436.0);
  EXPECT_EQ(platform.chip(0).input_occupancy(0, model::TrafficClass::response).max(), 0u);

  // The same per 100 ns bin.
  const model::OccupancyTimeline* bins = platform.input_occupancy_timeline(0);
  ASSERT_NE(bins, nullptr);
  const uint64_t end = 436 * kNs;
  EXPECT_DOUBLE_EQ(bins->mean(0, end), 34.0);
  EXPECT_EQ(bins->max(0, end), 34u);
  EXPECT_DOUBLE_EQ(bins->mean(1, end), (34.0 * 1 + 17 * 17) / 100.0);
  EXPECT_EQ(bins->max(1, end), 34u);
  EXPECT_DOUBLE_EQ(bins->mean(2, end), 17.0 * 82 / 100.0);
  EXPECT_EQ(bins->max(2, end), 17u);
  EXPECT_DOUBLE_EQ(bins->mean(3, end), 17.0 * 19 / 100.0);
  EXPECT_EQ(bins->max(4, end), 0u);
  // No multimem: the reduction buffers stay empty.
  EXPECT_EQ(platform.chip(0).reduction_occupancy().max(), 0u);
}

// GPUs 0 and 2 send one write each to GPU 1 at time 0: both heads reach the switch at 101 and
// ask for GPU 1's port; one goes 101..118, the other waits for it (17 ns of arbitration wait
// and of queueing on the down link) and goes 118..135. Tails at GPU 1: 218 and 235.
TEST(FabricStatistics, ArbitrationWaitByHand) {
  test::Machine machine(test::small_platform(3, {1}), [](TlmHal& hal, Platform&) {
    hal.submit(0, writes_to_gpu1(1, 0));
    hal.submit(2, writes_to_gpu1(1, 4096));
    hw::WorkSequence r;
    r.tasks.push_back(hw::Task::wait(0, 0, 2));
    hal.submit(1, std::move(r));
    hal.wait_all_finished();
  });
  machine.run();
  const Platform& platform = machine.platform;
  ASSERT_EQ(platform.gpu(1).finish_time().value(), 235 * kNs) << "the hand computation's premise";

  const auto request = static_cast<size_t>(model::TrafficClass::request);
  EXPECT_EQ(platform.chip(0).arbitration_wait_ps(1, model::TrafficClass::request), 17 * kNs);
  const model::HopStats& down = platform.link(LinkDirection::switch_to_gpu, 1, 0).hop_stats();
  EXPECT_EQ(down.queueing_ps[request], 17 * kNs);
  EXPECT_EQ(down.max_queueing_ps[request], 17 * kNs);
  for (const uint32_t gpu : {0u, 2u}) {
    const model::HopStats& up = platform.link(LinkDirection::gpu_to_switch, gpu, 0).hop_stats();
    EXPECT_EQ(up.queueing_ps[request], 0u) << "GPU " << gpu;
    EXPECT_EQ(up.credit_stall_ps[request], 0u) << "GPU " << gpu;
  }
  const model::LatencyHistogram& latency =
      platform.message_latencies().by_opcode[static_cast<size_t>(model::Opcode::write)];
  EXPECT_EQ(latency.count(), 2u);
  EXPECT_EQ(latency.min(), 218 * kNs);
  EXPECT_EQ(latency.max(), 235 * kNs);
}

}  // namespace
}  // namespace nvsvp::platform
