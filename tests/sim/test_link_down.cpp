#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: the link comes back up
// Link and chip outages (docs/configuration.md#faults): a port down for a window carries only
// what ends before it goes down and wakes its sender when it comes back; a whole layer with a link
// down (firmware retires the link, the GPU spreads over its chip's other links, nothing is lost)
// and with a chip down (what the chip held comes back to its issuers and goes again, once).
#include <gtest/gtest.h>

#include <string>

#include <systemc>

#include "../common/port_bench.hpp"
#include "../common/test_support.hpp"

namespace nvsvp::model {
namespace {

using test::Bench;
using test::Driver;
using test::ns;

TEST(LinkDown, PortCarriesOnlyWhatArrivesBeforeItGoesDown) {
  // 1 ns per flit, 10 ns per hop; down from 100 ns to 300 ns.
  bool checked = false;
  Bench bench(test::exact_link(10.0), 1, 1u << 20, [&](Driver& d) {
    NvlinkPort& port = *bound_port(d.tx);
    EXPECT_TRUE(port.carries(90));   // ends at 90 + 10 = 100 ns: in time
    EXPECT_FALSE(port.carries(91));  // its tail would arrive at 101 ns
    d.send(16 * 50, 0);              // 50 flits (with header): the link is busy until about 51 ns
    EXPECT_FALSE(port.carries(45));  // starts when the link frees, ends past 100 ns
    EXPECT_TRUE(port.carries(30));
    sc_core::wait(ns(150));
    EXPECT_TRUE(port.down_now());
    EXPECT_FALSE(port.carries(1));
    sc_core::wait(ns(150));  // 300 ns: up again
    EXPECT_FALSE(port.down_now());
    EXPECT_TRUE(port.carries(1000));
    checked = true;
  });
  bench.port.schedule_down(ns(100), ns(300));
  sc_core::sc_start();
  EXPECT_TRUE(checked);
}

TEST(LinkDown, ComingBackUpWakesTheSender) {
  bool woken = false;
  Bench bench(test::exact_link(10.0), 1, 1u << 20, [&](Driver& d) {
    sc_core::wait(d.wake);
    woken = sc_core::sc_time_stamp() == ns(300);
  });
  bench.port.schedule_down(ns(100), ns(300));
  sc_core::sc_spawn_options options;
  sc_core::sc_spawn(
      [&] {
        sc_core::wait(ns(300));
        bench.port.went_up();
      },
      "up", &options);
  sc_core::sc_start();
  EXPECT_TRUE(woken);
}

}  // namespace
}  // namespace nvsvp::model

namespace nvsvp::platform {
namespace {

const char* kScenario = R"(
name: outage
workload:
  model: S
  top_k: 8
  tokens_per_gpu: 32
  routing: {kind: uniform, seed: 5}
schemes: [deepep, nvls, dysharp]
simulation: {max_time_us: 10000}
)";
// Firmware's register accesses take time here (an assumed 1 us each, as in the faults study), so
// that recovery takes time too.
const char* kAccessTime = "platform: {preset: dgx-h100, switch: {register_access_ns: 1000}}\n";

TEST(LinkDown, FirmwareRetiresTheLinkAndNothingIsLost) {
  test::TempDir dir;
  // GPU 2's link 5 is chip 1's first (5, 4, 4, 5 links per chip): chip 1 keeps three to GPU 2.
  const nlohmann::json report = test::run_scenario_text(
      dir, "link_down", std::string(kScenario) + kAccessTime + "faults: [{kind: link_down, gpu: 2, link: 5, at_us: 3}]\n");
  uint64_t moved = 0;
  for (const char* scheme : {"deepep", "nvls", "dysharp"}) {
    const nlohmann::json& r = test::result_of(report, scheme);
    ASSERT_TRUE(r.at("checks").at("passed")) << scheme;
    const nlohmann::json& o = r.at("faults").at("outages");
    ASSERT_EQ(o.at("recoveries").size(), 1u) << scheme << o.dump();
    const nlohmann::json& e = o.at("recoveries")[0];
    EXPECT_EQ(e.at("kind"), "link_down");
    EXPECT_EQ(e.at("chip"), 1);
    EXPECT_EQ(e.at("port"), 2 * 4);  // GPU g's first port on chip 1 (4 links per GPU) is 4 g
    EXPECT_EQ(e.at("gpu"), 2);
    EXPECT_EQ(e.at("link"), 5);
    EXPECT_GE(e.at("detected_us").get<double>(), 3.0);
    EXPECT_GT(e.at("fault_to_recovery_us").get<double>(), 0.0);
    EXPECT_EQ(o.at("lost").at("messages"), 0) << scheme;  // the chip is alive: re-routing does it
    EXPECT_EQ(o.at("lost").at("loads"), 0) << scheme;
    EXPECT_EQ(o.at("reissued"), 0) << scheme;
    EXPECT_TRUE(o.at("accounted"));
    moved += o.at("messages_moved").get<uint64_t>();
  }
  EXPECT_GT(moved, 0u);  // some scheme had traffic for the link after it went down
}

TEST(LinkDown, WhatADeadChipHeldGoesAgainOnce) {
  test::TempDir dir;
  const nlohmann::json report =
      test::run_scenario_text(dir, "chip_down", std::string(kScenario) + kAccessTime + "faults: [{kind: chip_down, chip: 1, at_us: 10}]\n");
  uint64_t lost_everywhere = 0;
  for (const char* scheme : {"deepep", "nvls", "dysharp"}) {
    const nlohmann::json& r = test::result_of(report, scheme);
    ASSERT_TRUE(r.at("checks").at("passed")) << scheme;  // every copy once, every combine exact
    const nlohmann::json& o = r.at("faults").at("outages");
    bool chip_down_seen = false;
    for (const nlohmann::json& e : o.at("recoveries")) chip_down_seen |= e.at("kind") == "chip_down" && e.at("chip") == 1;
    EXPECT_TRUE(chip_down_seen) << o.dump();
    const uint64_t lost = o.at("lost").at("messages").get<uint64_t>() + o.at("lost").at("loads").get<uint64_t>();
    EXPECT_EQ(o.at("reissued").get<uint64_t>(), lost) << scheme;
    EXPECT_EQ(o.at("held"), 0);
    lost_everywhere += lost;
  }
  EXPECT_GT(lost_everywhere, 0u);  // the chip held something at 10 us (dysharp: loads in progress)
}

}  // namespace
}  // namespace nvsvp::platform
