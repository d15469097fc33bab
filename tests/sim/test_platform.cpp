// The assembled platform: wiring (GPU link j reaches the same chip from every GPU), address
// interleaving over links, the stuck report of a deadlocked machine, and the rate one stream of
// large writes reaches on one link (exact and against the analytic line-rate formula).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

TEST(Platform, LinksOfTheSameIndexReachTheSameChip) {
  Platform platform("platform", test::small_platform(3, {2, 1}));
  ASSERT_EQ(platform.links_per_gpu(), 3u);
  for (uint32_t g = 0; g < 3; ++g) {
    EXPECT_EQ(platform.link_end(g, 0).chip, 0u);
    EXPECT_EQ(platform.link_end(g, 0).port, 2 * g);
    EXPECT_EQ(platform.link_end(g, 1).chip, 0u);
    EXPECT_EQ(platform.link_end(g, 1).port, 2 * g + 1);
    EXPECT_EQ(platform.link_end(g, 2).chip, 1u);
    EXPECT_EQ(platform.link_end(g, 2).port, g);
    // The chips come up without routes: firmware programs them (test_switch_registers.cpp).
    EXPECT_TRUE(platform.chip(0).route(g).empty());
  }
  // The cabling firmware gets: one cable per GPU link, where link_end says it lands.
  const fw::FabricTopology topology = platform.fabric_topology();
  EXPECT_EQ(topology.gpus, 3u);
  EXPECT_EQ(topology.switch_chips, 2u);
  ASSERT_EQ(topology.cables.size(), 9u);
  for (const fw::SwitchCable& cable : topology.cables) {
    bool found = false;
    for (uint32_t l = 0; l < 3; ++l) {
      const LinkEnd end = platform.link_end(cable.gpu, l);
      found = found || (end.chip == cable.chip && end.port == cable.port);
    }
    EXPECT_TRUE(found) << "GPU " << cable.gpu << " chip " << cable.chip << " port " << cable.port;
  }
}

// Writes spread over the sender's links by target address; each stays on the chip of the link it
// took, and that chip spreads it over the receiver's ports there by the same address hash.
TEST(Platform, SendsSpreadOverLinksByAddress) {
  Platform platform("platform", test::small_platform(2, {2, 1}));
  TlmHal hal(platform);
  constexpr uint32_t kMessages = 90;
  FirmwareHost host("firmware", [&] {
    test::bring_up_switches(hal, platform);
    hw::WorkSequence s;
    for (uint32_t i = 0; i < kMessages; ++i) s.tasks.push_back(hw::Task::send(0, 1, 0, i * 256ull, 256, 0));
    hal.submit(0, std::move(s));
    hw::WorkSequence r;
    r.tasks.push_back(hw::Task::wait(0, 0, kMessages));
    hal.submit(1, std::move(r));
    hal.wait_all_finished();
  });
  sc_core::sc_start(sc_time(1, sc_core::SC_MS));
  ASSERT_TRUE(host.done());
  std::vector<uint64_t> up_expected(3, 0), down_expected(3, 0);
  for (uint32_t i = 0; i < kMessages; ++i) {
    const uint64_t address = i * 256ull;
    // GPU 0 hashes GPU 1's fabric address (gpu.link_interleave: fabric_address); the chip, the
    // address in GPU 1's memory.
    const uint32_t up = model::interleave_way(address + (uint64_t{1} << model::GpuLinkEngines::kPeerApertureBits), 256, 3);
    up_expected[up]++;
    // Chip 0 holds links 0 and 1 and picks between them; chip 1 has only link 2.
    down_expected[up < 2 ? model::interleave_way(address, 256, 2) : 2]++;
  }
  for (uint32_t l = 0; l < 3; ++l) {
    EXPECT_GT(up_expected[l], 0u);
    EXPECT_EQ(platform.link(LinkDirection::gpu_to_switch, 0, l).stats().messages[0], up_expected[l]) << "link " << l;
    EXPECT_EQ(platform.link(LinkDirection::switch_to_gpu, 1, l).stats().messages[0], down_expected[l]) << "link " << l;
    EXPECT_EQ(platform.link(LinkDirection::gpu_to_switch, 1, l).stats().messages[0], 0u);
  }
  EXPECT_EQ(platform.chip(0).stats().forwarded[0], up_expected[0] + up_expected[1]);
  EXPECT_EQ(platform.chip(1).stats().forwarded[0], up_expected[2]);
  std::ostringstream quiet;
  EXPECT_EQ(platform.describe_outstanding(quiet), 0u) << quiet.str();
}

// GPU 0 waits for an arrival nobody sends: the simulation runs dry, and the stuck report names
// the GPU, its task and the counter. GPU 1 finished and is not listed.
TEST(Platform, DeadlockIsDescribedWithGpuTaskAndCounter) {
  // Left to the process's end: a module whose thread never finished is not torn down mid-test.
  auto& platform = *new Platform("platform", test::small_platform(2, {1}));
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    hw::WorkSequence stuck;
    stuck.phase_names = {"gather"};
    stuck.counters = 6;
    stuck.tasks.push_back(hw::Task::delay(0, 10.0));
    stuck.tasks.push_back(hw::Task::wait(0, 5, 1));
    hal.submit(0, std::move(stuck));
    hw::WorkSequence fine;
    fine.tasks.push_back(hw::Task::delay(0, 20.0));
    hal.submit(1, std::move(fine));
    hal.wait_all_finished();
  });
  sc_core::sc_start(sc_time(1, sc_core::SC_MS));
  EXPECT_FALSE(host.done());
  EXPECT_FALSE(sc_core::sc_pending_activity()) << "nothing can make progress";
  std::ostringstream os;
  EXPECT_GT(platform.describe_outstanding(os), 0u);
  const std::string report = os.str();
  EXPECT_NE(report.find("platform.gpu_0"), std::string::npos) << report;
  EXPECT_NE(report.find("at task 1 (wait_counter, phase gather)"), std::string::npos) << report;
  EXPECT_NE(report.find("waiting for counter 5: 0 of 1 arrivals"), std::string::npos) << report;
  EXPECT_EQ(report.find("gpu_1"), std::string::npos) << report;
}

// One GPU streams 4 KiB writes to another over one link per GPU with the default link (25 GB/s,
// efficiency 0.875, 250 ns per hop). Each message is 256 + 16 = 272 flits of 731.43 ps, so the
// stream runs at 25 x 0.875 x 4096 / (272 x 16) GB/s of payload.
TEST(Platform, OneStreamReachesTheLineRateShare) {
  Platform platform("platform", test::small_platform(2, {1}, model::LinkParams{}));
  TlmHal hal(platform);
  constexpr uint32_t kMessages = 2000;
  constexpr uint64_t kBytes = 4096;
  FirmwareHost host("firmware", [&] {
    test::bring_up_switches(hal, platform);
    hw::WorkSequence s;
    for (uint32_t i = 0; i < kMessages; ++i) s.tasks.push_back(hw::Task::send(0, 1, 0, i * kBytes, kBytes, 0));
    hal.submit(0, std::move(s));
    hw::WorkSequence r;
    r.tasks.push_back(hw::Task::wait(0, 0, kMessages));
    hal.submit(1, std::move(r));
    hal.wait_all_finished();
  });
  sc_core::sc_start(sc_time(10, sc_core::SC_MS));
  ASSERT_TRUE(host.done());
  const double layer_s = platform.gpu(1).finish_time().to_seconds();

  const model::LinkParams link;
  const double payload_rate = link.line_rate_gbps * 1e9 * link.efficiency * kBytes /
                              (link.wire_flits(kBytes) * link.flit_bytes);
  const double analytic_s = kMessages * kBytes / payload_rate;
  EXPECT_NEAR(layer_s, analytic_s, 0.01 * analytic_s);
  // Exactly: back-to-back messages on both hops, plus two latencies and the first flit.
  const uint64_t message_ps = 198949;  // 272 x 731.428... ps, rounded once
  EXPECT_EQ(platform.gpu(1).finish_time(),
            sc_time::from_value(kMessages * message_ps + 2 * 250000 + 731));
  const auto& up = platform.link(LinkDirection::gpu_to_switch, 0, 0).stats();
  const auto& down = platform.link(LinkDirection::switch_to_gpu, 1, 0).stats();
  EXPECT_EQ(up.wire_bytes, uint64_t{kMessages} * 272 * 16);
  EXPECT_EQ(up.payload_bytes, uint64_t{kMessages} * kBytes);
  EXPECT_EQ(down.wire_bytes, up.wire_bytes);
  EXPECT_GT(up.busy_time.to_seconds() / layer_s, 0.99);  // the link never idled
}

}  // namespace
}  // namespace nvsvp::platform
