// nvsvp: run, validate and list scenarios of the NVLink-switch virtual platform; run studies.
// Exit codes: 0 success, 1 a run-time check failed, 2 bad input or usage.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <systemc>

#include "nvsvp/platform/calibration.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/study.hpp"
#include "nvsvp/testbench/commands.hpp"

namespace {

// SystemC prints its banner before sc_main runs; a static initializer comes earlier still.
const bool kBannerOff = (setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0), true);

constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;

// Large runs allocate hundreds of MB of model state; with 4 KiB pages, first-touch page faults
// and TLB misses cost a fifth of the run. glibc backs malloc with transparent huge pages when its
// tunable is set, which must happen before the process starts: re-execute once with it set.
void reexec_with_huge_pages(char* argv[]) {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) return;
  std::string value = "glibc.malloc.hugetlb=1";
  if (tunables != nullptr && *tunables != '\0') value = std::string(tunables) + ":" + value;
  setenv("GLIBC_TUNABLES", value.c_str(), 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then run as we are
}

std::string default_config_dir() {
  const char* env = std::getenv("NVSVP_CONFIG_DIR");
  return env != nullptr ? env : NVSVP_DEFAULT_CONFIG_DIR;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  reexec_with_huge_pages(argv);
  CLI::App app{"nvsvp: SystemC/TLM virtual platform of an NVLink switch that computes in-switch"};
  app.require_subcommand(1);
  std::string config_dir = default_config_dir();
  app.add_option("--config-dir", config_dir, "where platform and model presets live")
      ->capture_default_str();

  std::string file;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool quiet = false;
  bool dump = false;

  CLI::App* run = app.add_subcommand("run", "run a scenario: every scheme, checks, report");
  run->add_option("FILE", file, "scenario YAML file")->required();
  run->add_option("--set", overrides, "override a scenario key: a.b.c=value (repeatable)");
  run->add_option("--out", out_dir, "output directory (default out/<scenario name>)");
  run->add_flag("--quiet", quiet, "no console summary");
  bool no_timelines = false;
  run->add_flag("--no-timelines", no_timelines,
                "no utilization_<scheme>.csv and trace_<scheme>.json (and no link time series recorded)");

  CLI::App* validate = app.add_subcommand("validate", "check a scenario file without running it");
  validate->add_option("FILE", file, "scenario YAML file")->required();
  validate->add_option("--set", overrides, "override a scenario key: a.b.c=value (repeatable)");
  validate->add_flag("--dump", dump, "print the effective configuration");

  CLI::App* presets = app.add_subcommand("presets", "list the platform and model presets, and the schemes");

  unsigned jobs = 1;
  CLI::App* study = app.add_subcommand(
      "study", "run a parameter study: a base scenario at many points, each point in a process of its own");
  study->add_option("FILE", file, "study YAML file")->required();
  study->add_option("--jobs", jobs, "points run at once")->check(CLI::Range(1u, 1024u))->capture_default_str();
  study->add_option("--out", out_dir, "output directory (default out/<study name>)");
  study->add_option("--set", overrides, "override a key of the base scenario: a.b.c=value (repeatable)");
  bool list_points = false;
  study->add_flag("--list", list_points, "check every point's scenario and list the points, without running them");

  // The all-reduce calibration against NCCL's anchors (docs/results.md).
  nvsvp::fw::AllReduceSpec allreduce;
  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "all-reduce by NVLS and by a ring on the scenario's platform, as bus bandwidth next to NCCL's figures (docs/background/nvlink_nvswitch.md)");
  calibrate->add_option("FILE", file, "scenario YAML file (only its platform is used)")->required();
  calibrate->add_option("--set", overrides, "override a scenario key: a.b.c=value (repeatable)");
  calibrate->add_option("--bytes", allreduce.bytes, "buffer per GPU, bytes (a multiple of GPUs x message bytes)")
      ->capture_default_str();
  calibrate->add_option("--message-bytes", allreduce.message_bytes, "bytes of one load, store or write")
      ->capture_default_str();
  calibrate->add_option("--chunk-bytes", allreduce.chunk_bytes,
                        "nvls: loads of the next chunk overlap the stores of this one (0: all loads, then all stores)")
      ->capture_default_str();

  // The reduction unit's verification (testbench/): IEEE vector files and the testbench.
  nvsvp::testbench::RtlCheckArgs check_args;
  CLI::App* rtl_check = app.add_subcommand("rtl-check", "run an IEEE test-vector file through the reduction unit");
  rtl_check->add_option("--vectors", check_args.vectors, "file of 'A B RESULT [FLAGS]' lines (hex)")->required();
  rtl_check->add_option("--op", check_args.op, "add | min | max")->required();
  rtl_check->add_option("--dtype", check_args.dtype, "f16 | bf16 | f32")->required();
  rtl_check->add_option("--backend", check_args.backend, "rtl | model | both")->capture_default_str();

  nvsvp::testbench::RtlVerifyArgs verify_args;
  std::uint64_t verify_seed = 0;
  CLI::App* rtl_verify = app.add_subcommand(
      "rtl-verify", "testbench of the reduction unit: directed cases, then the random regression against the model");
  CLI::Option* seed_option = rtl_verify->add_option("--seed", verify_seed, "random seed (default: a fresh one, printed)");
  rtl_verify->add_option("--beats", verify_args.beats, "contribution beats of the random regression")
      ->capture_default_str();
  rtl_verify->add_option("--backend", verify_args.backend, "rtl | model | both")->capture_default_str();
  rtl_verify->add_option("--vcd", verify_args.vcd, "write the random regression's RTL waveform to this VCD file");
  rtl_verify->add_flag("--coverage", verify_args.coverage, "print the whole functional-coverage table");
  rtl_verify->add_flag("--directed-only", verify_args.directed_only, "only the directed cases");
  rtl_verify->add_flag("--random-only", verify_args.random_only, "only the random regression");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }

  if (rtl_check->parsed()) return nvsvp::testbench::rtl_check_command(check_args, std::cout, std::cerr);
  if (rtl_verify->parsed()) {
    if (seed_option->count() > 0) verify_args.seed = verify_seed;
    return nvsvp::testbench::rtl_verify_command(verify_args, std::cout, std::cerr);
  }

  try {
    if (presets->parsed()) {
      for (const auto& p : nvsvp::platform::list_presets(config_dir)) {
        std::cout << p.kind << "  " << p.name << "  " << p.summary << "\n";
      }
      for (const std::string& scheme : nvsvp::platform::known_schemes()) std::cout << "scheme  " << scheme << "\n";
      return 0;
    }
    if (study->parsed()) {
      const nvsvp::platform::Study loaded = nvsvp::platform::load_study(file, overrides, config_dir);
      if (list_points) {
        std::cout << "study " << loaded.name << ": " << loaded.points.size() << " points, schemes";
        for (const std::string& scheme : loaded.schemes) std::cout << " " << scheme;
        std::cout << " (reference " << loaded.reference << ")\n";
        for (const nvsvp::platform::StudyPoint& point : loaded.points) std::cout << "  " << point.directory << "\n";
        return 0;
      }
      nvsvp::platform::StudyOptions options;
      options.out_dir = out_dir;
      options.jobs = jobs;
      options.executable = std::filesystem::read_symlink("/proc/self/exe").string();  // each point runs `nvsvp run`
      options.config_dir = config_dir;
      return nvsvp::platform::run_study(loaded, options, std::cout);
    }
    const nvsvp::platform::Scenario scenario = nvsvp::platform::load_scenario(file, overrides, config_dir);
    if (calibrate->parsed()) {
      std::vector<nvsvp::fw::AllReduceRun> runs;
      try {
        runs = nvsvp::platform::run_allreduce_calibration(scenario.platform, allreduce);
      } catch (const std::invalid_argument& e) {
        std::cerr << "nvsvp: " << e.what() << "\n";
        return kExitBadInput;
      }
      nvsvp::platform::print_calibration(std::cout, scenario.platform, runs);
      for (const auto& one : runs) {
        if (!one.values_ok) return kExitCheckFailed;
      }
      return 0;
    }
    if (validate->parsed()) {
      // The routing is generated too: a trace file is only read (and checked) then.
      nvsvp::platform::make_layer_spec(scenario);
      if (dump) std::cout << nvsvp::platform::dump_effective(scenario);
      std::cout << file << ": ok (" << scenario.schemes.size() << " scheme"
                << (scenario.schemes.size() == 1 ? "" : "s") << ")\n";
      return 0;
    }
    nvsvp::platform::RunOptions options;
    options.out_dir = out_dir;
    options.quiet = quiet;
    options.timelines = !no_timelines;
    return nvsvp::platform::run_scenario(scenario, options, std::cout);
  } catch (const nvsvp::platform::ConfigError& e) {
    std::cerr << "nvsvp: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "nvsvp: error: " << e.what() << "\n";
    return kExitCheckFailed;
  }
}
