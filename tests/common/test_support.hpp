// Helpers shared by the test binaries: a per-test temporary directory, small platform specs with
// exact timing, the switch bring-up, and a firmware entry point that runs hand-made work sequences.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include <nlohmann/json.hpp>

#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario_run.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/tlm_hal.hpp"
#include "source_paths.hpp"
#include "trace_nesting.hpp"

namespace nvsvp::test {

// A directory of its own for the running test, removed afterwards (its traces checked first).
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("nvsvp_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  // Every trace the test wrote here must keep Perfetto's nesting rule (trace_nesting.hpp).
  ~TempDir() {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.rfind("trace_", 0) != 0 || it->path().extension() != ".json") continue;
      for (const std::string& v : trace_nesting_violations(it->path().string())) ADD_FAILURE() << v;
    }
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `name` and returns the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline sc_core::sc_time ns(double value) { return sc_core::sc_time(value, sc_core::SC_NS); }

inline std::string config_dir() { return std::string(NVSVP_SOURCE_DIR) + "/configs"; }

// Every scheme the firmware builds, as a scenario's list ("deepep, nvls, ...").
inline std::string every_scheme_list() {
  std::string list;
  for (const std::string& scheme : fw::layer_scheme_names()) list += (list.empty() ? "" : ", ") + scheme;
  return list;
}

// Runs `scenario` as the command does (a child process per scheme, files in `out_dir`), fails the
// test unless it exits with `exit_code` (0: every check passed), and returns its report.json.
inline nlohmann::json run_and_read_report(const platform::Scenario& scenario, const std::string& out_dir,
                                          int exit_code = 0) {
  platform::RunOptions options;
  options.out_dir = out_dir;
  options.quiet = true;
  std::ostringstream console;
  EXPECT_EQ(platform::run_scenario(scenario, options, console), exit_code) << console.str();
  std::ifstream file(out_dir + "/report.json");
  return nlohmann::json::parse(file);
}

// Writes `text` as scenario `name` into `dir`, runs it as run_and_read_report does, and returns
// its report.json.
inline nlohmann::json run_scenario_text(const TempDir& dir, const std::string& name, const std::string& text,
                                        int exit_code = 0) {
  const platform::Scenario scenario = platform::load_scenario(dir.write(name + ".yaml", text), {}, config_dir());
  return run_and_read_report(scenario, dir.path() + "/" + name, exit_code);
}

// The entry of `scheme` in a report.json's results.
inline const nlohmann::json& result_of(const nlohmann::json& report, const std::string& scheme) {
  for (const nlohmann::json& r : report.at("results")) {
    if (r.at("scheme") == scheme) return r;
  }
  throw std::runtime_error("no result for " + scheme);
}

// A report.json result without what the host measured (`sim`: wall times, memory): what two runs
// of the same layer must agree on.
inline nlohmann::json without_host_measurements(nlohmann::json result) {
  result.erase("sim");
  return result;
}

// A link whose flit takes exactly 1 ns (16 B at 16 GB/s, no overhead), so that expected times are
// whole nanoseconds that a test can write down.
inline model::LinkParams exact_link(double latency_ns = 100.0) {
  model::LinkParams link;
  link.line_rate_gbps = 16.0;
  link.efficiency = 1.0;
  link.latency_ns = latency_ns;
  return link;
}

// `gpus` GPUs on chips with `links_per_chip` links each, default parameters otherwise.
inline platform::PlatformSpec small_platform(uint32_t gpus, std::vector<uint32_t> links_per_chip,
                                             const model::LinkParams& link = exact_link()) {
  platform::PlatformSpec spec;
  spec.preset = "test";
  spec.gpus = gpus;
  spec.switch_chips = static_cast<uint32_t>(links_per_chip.size());
  spec.links_per_chip = std::move(links_per_chip);
  spec.link = link;
  return spec;
}

// Brings the platform's switch chips up through firmware and registers (routes from the cabling),
// as the runner does; call it from the firmware thread before any message travels.
inline fw::FabricBringUpReport bring_up_switches(platform::TlmHal& hal, const platform::Platform& platform) {
  fw::SwitchFabric fabric(hal);
  return fabric.bring_up(platform.fabric_topology());
}

// A platform and a firmware thread that brings the switches up and then runs `body`: for tests
// that drive GPUs with hand-made work sequences. Simulation tests only (one per process).
struct Machine {
  platform::Platform platform;
  platform::TlmHal hal;
  platform::FirmwareHost host;
  fw::FabricBringUpReport bring_up;  // what bring-up found (its chips, for a multicast allocator)

  Machine(const platform::PlatformSpec& spec,
          std::function<void(platform::TlmHal&, platform::Platform&)> body)
      : platform("platform", spec), hal(platform), host("firmware", [this, body] {
          bring_up = bring_up_switches(hal, platform);
          body(hal, platform);
        }) {}

  // Runs until nothing is left to do (at most 1 ms); fails the test, listing what is stuck, if the
  // firmware did not finish.
  void run() {
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
    std::ostringstream stuck;
    ASSERT_TRUE(host.done()) << "the firmware did not finish:\n"
                             << (platform.describe_outstanding(stuck), stuck.str());
  }
};

}  // namespace nvsvp::test
