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

// Every link of GPU 0 (18 on dgx-h100), as faults.
std::string all_links_of_gpu0_down(const std::string& window) {
  std::string faults = "faults:\n";
  for (int link = 0; link < 18; ++link) {
    faults += "  - {kind: link_down, gpu: 0, link: " + std::to_string(link) + ", " + window + "}\n";
  }
  return faults;
}

// A GPU that loses every link, at the layer's start or later, and keeps none (its links down,
// or every chip dead): firmware waits its bound for a link to come back, then stops the layer
// naming the GPU; the scheme's process ends normally with that error (it used to abort, "every
// link of the GPU is out of use", or to end in SystemC's "uncaught exception").
TEST(LinkDown, AGpuWithNoLinkLeftStopsTheLayerWithItsReason) {
  const std::string every_chip_down =
      "faults: [{kind: chip_down, chip: 0, at_us: 0}, {kind: chip_down, chip: 1, at_us: 0},\n"
      "         {kind: chip_down, chip: 2, at_us: 0}, {kind: chip_down, chip: 3, at_us: 0}]\n";
  for (const std::string& faults : {all_links_of_gpu0_down("at_us: 0"), all_links_of_gpu0_down("at_us: 1"), every_chip_down}) {
    SCOPED_TRACE(faults);
    test::TempDir dir;
    const nlohmann::json report =
        test::run_scenario_text(dir, "isolated", std::string(kScenario) + "platform: dgx-h100\n" + faults, 1);
    for (const char* scheme : {"deepep", "nvls", "dysharp"}) {
      const nlohmann::json& r = test::result_of(report, scheme);
      ASSERT_TRUE(r.contains("error")) << scheme << ": " << r.dump().substr(0, 300);
      const std::string error = r.at("error");
      EXPECT_NE(error.find("firmware stopped the layer at "), std::string::npos) << error;
      EXPECT_NE(error.find("link-down recovery impossible: GPU 0 has no usable link left (link 0 to switch chip 0 "
                           "port 0: "),
                std::string::npos)
          << error;
      EXPECT_NE(error.find("none came back within 100 us"), std::string::npos) << error;
      EXPECT_EQ(error.find("signal"), std::string::npos) << error;
      EXPECT_EQ(error.find("E549"), std::string::npos) << error;
    }
  }
}

// Every link of GPU 0 down from 1 us to 20 us: firmware waits for them (keeping the routes to
// GPU 0), GPU 0's messages wait in the GPU and the others' for it at the chips, and the layer
// completes with every check passed and every outage recorded.
TEST(LinkDown, FirmwareWaitsForALinkThatComesBack) {
  test::TempDir dir;
  const nlohmann::json report = test::run_scenario_text(
      dir, "returns", std::string(kScenario) + "platform: dgx-h100\n" + all_links_of_gpu0_down("at_us: 1, up_at_us: 20"));
  for (const char* scheme : {"deepep", "nvls", "dysharp"}) {
    const nlohmann::json& r = test::result_of(report, scheme);
    ASSERT_FALSE(r.contains("error")) << scheme << ": " << r.at("error");
    EXPECT_TRUE(r.at("checks").at("passed")) << scheme << ": " << r.at("checks").dump();
    const nlohmann::json& o = r.at("faults").at("outages");
    size_t downs = 0, ups = 0;
    for (const nlohmann::json& e : o.at("recoveries")) {
      downs += e.at("kind") == "link_down" ? 1 : 0;
      ups += e.at("kind") == "link_up" ? 1 : 0;
      EXPECT_NE(e.at("kind"), "chip_retired") << scheme << ": a GPU without links retires no chip";
    }
    EXPECT_EQ(downs, 18u) << scheme;
    EXPECT_EQ(ups, 18u) << scheme;
    EXPECT_TRUE(o.at("accounted")) << scheme;
    EXPECT_GT(r.at("layer_time_us").get<double>(), 20.0) << scheme << ": GPU 0 finished while its links were down";
  }
}

}  // namespace
}  // namespace nvsvp::platform
