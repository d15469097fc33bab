// nvsvp: run, validate and list scenarios of the NVLink-switch virtual platform; run studies.
// Exit codes: 0 success, 1 a run-time check failed, 2 bad input or usage.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <systemc>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/platform/anchors.hpp"
#include "nvsvp/platform/build_info.hpp"
#include "nvsvp/platform/calibration.hpp"
#include "nvsvp/platform/child_processes.hpp"
#include "nvsvp/platform/config_search.hpp"
#include "nvsvp/platform/fabric_resources.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/packet_efficiency.hpp"
#include "nvsvp/platform/plot.hpp"
#include "nvsvp/platform/run_comparison.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/scenario_run.hpp"
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

// The command line as typed, each word quoted when the shell would need it: report.json's
// A path option given as '' is a mistake (a variable that was not set), not a request for the
// default: refused like any bad value (exit 2).
const CLI::Validator kNonEmptyPath(
    [](const std::string& value) { return value.empty() ? std::string("expected a path, got an empty one") : std::string(); },
    "PATH");

// nvsvp.command_line, to rerun the same command.
std::string command_line_of(int argc, char* argv[]) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + nvsvp::platform::shell_word(argv[i]);
  return line;
}

// What the command line asks for: every subcommand's options.
struct Options {
  std::string config_dir;  // --config-dir; resolved through the search path before use
  std::string command_line;
  std::string file;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool quiet = false;
  bool dump = false;
  bool no_timelines = false;
  std::vector<std::string> logs;    // run --log PATTERN=LEVEL
  std::vector<std::string> traces;  // run --trace PATTERN
  unsigned jobs = 1;
  bool list_points = false;
  bool emit_commands = false;          // study --emit-commands
  std::vector<std::size_t> points;     // study --point N (1-based, repeatable)
  std::string shard;                   // study --shard I/N
  std::string merge_dir;               // study --merge DIR
  nvsvp::fw::CollectiveSpec allreduce;
  std::vector<std::string> collectives;  // calibrate --collective
  bool no_sm_issue_limit = false;
  std::vector<std::string> anchor_cases;
  std::uint32_t targets = 8;  // packet-efficiency --targets
  nvsvp::testbench::RtlCheckArgs check_args;
  nvsvp::testbench::RtlVerifyArgs verify_args;
  std::uint64_t verify_seed = 0;
  std::uint64_t wave_from_ns = 0;
  std::uint64_t wave_to_ns = 0;
  nvsvp::testbench::CoverageMergeArgs merge_args;
  std::string plot_format = "svg";
  std::string compare_b;                 // compare: the second run folder
  std::vector<std::string> tolerances;   // compare --tolerance KEY=FRACTION
};

// The subcommands, to see which one was given.
struct Commands {
  CLI::App* run = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* presets = nullptr;
  CLI::App* study = nullptr;
  CLI::App* study_merge = nullptr;
  CLI::App* calibrate = nullptr;
  CLI::App* anchors = nullptr;
  CLI::App* packet_efficiency = nullptr;
  CLI::App* rtl_check = nullptr;
  CLI::App* rtl_verify = nullptr;
  CLI::App* rtl_coverage_merge = nullptr;
  CLI::App* plot = nullptr;
  CLI::App* compare = nullptr;
  CLI::Option* verify_seed = nullptr;  // whether rtl-verify was given a seed
  CLI::Option* wave_from = nullptr;    // ... and a waveform window
  CLI::Option* wave_to = nullptr;
};

// run, validate, presets, study and calibrate: the commands on scenarios.
void add_scenario_commands(CLI::App& app, Options& o, Commands& c) {
  c.run = app.add_subcommand("run", "run a scenario: every scheme, checks, report");
  c.run->add_option("FILE", o.file, "scenario YAML file")->required();
  c.run->add_option("--set", o.overrides, "override a scenario key: a.b.c=value (repeatable)");
  c.run->add_option("--out", o.out_dir, "output directory (default out/<scenario name>)")->check(kNonEmptyPath);
  c.run->add_flag("--quiet", o.quiet, "no console summary and no progress line");
  c.run->add_flag("--no-timelines", o.no_timelines,
                  "no utilization_<scheme>.csv and trace_<scheme>.json (and no link time series recorded)");
  c.run->add_option("--log", o.logs,
                    "PATTERN=LEVEL: log the components PATTERN names (a glob: switch_0, gpu*, switch_*.csr, firmware) "
                    "at LEVEL (error, warn, info, debug, trace) to stderr; default warn (repeatable, the last wins)");
  c.run->add_option("--trace", o.traces,
                    "PATTERN: write transactions_<scheme>.csv for the links of the components PATTERN names, "
                    "registers_<scheme>.csv for named register blocks (switch_*.csr, firmware) (repeatable)");

  c.validate = app.add_subcommand("validate", "check a scenario file without running it");
  c.validate->add_option("FILE", o.file, "scenario YAML file")->required();
  c.validate->add_option("--set", o.overrides, "override a scenario key: a.b.c=value (repeatable)");
  c.validate->add_flag("--dump", o.dump,
                       "print the effective configuration as a scenario file on stdout (the status line goes to stderr)");

  c.presets = app.add_subcommand("presets", "list the platform and model presets, and the schemes");

  c.study = app.add_subcommand(
      "study", "run a parameter study: a base scenario at many points, each point in a process of its own");
  c.study->add_option("FILE", o.file, "study YAML file")->required();
  c.study->add_option("--jobs", o.jobs, "points run at once")->check(CLI::Range(1u, 1024u))->capture_default_str();
  c.study->add_option("--out", o.out_dir, "output directory (default out/<study name>)")->check(kNonEmptyPath);
  c.study->add_option("--set", o.overrides, "override a key of the base scenario: a.b.c=value (repeatable)");
  c.study->add_flag("--list", o.list_points, "check every point's scenario and list the points, without running them");
  c.study->add_flag("--quiet", o.quiet, "no console output (the points as they end, the summary) and no progress line");
  CLI::Option* emit = c.study->add_flag(
      "--emit-commands", o.emit_commands,
      "print one self-contained command line per point (point k on line k) for a scheduler to run, and write "
      "study.json into the output directory; run nothing");
  CLI::Option* point = c.study->add_option("--point", o.points,
                                           "run only point N (1-based, as its folder is numbered; repeatable)");
  CLI::Option* shard = c.study->add_option("--shard", o.shard,
                                           "run only shard I of N (I/N, 1-based): points I, I+N, I+2N, ...");
  CLI::Option* merge = c.study->add_option(
      "--merge", o.merge_dir, "build study.csv and summary.json of DIR's point folders, run elsewhere (as study-merge)");
  CLI::Option* list = c.study->get_option("--list");
  for (CLI::Option* one : {emit, point, shard, merge, list}) {
    for (CLI::Option* other : {emit, point, shard, merge, list}) {
      if (one != other) one->excludes(other);
    }
  }
  merge->excludes(c.study->get_option("--out"));

  c.study_merge = app.add_subcommand(
      "study-merge", "build study.csv, summary.json and wall_times.csv from a study's point folders, run anywhere");
  c.study_merge->add_option("DIR", o.merge_dir, "the study's output folder (study.json and the point folders)")
      ->required();
  c.study_merge->add_flag("--quiet", o.quiet, "no console output (the summary)");

  c.packet_efficiency = app.add_subcommand(
      "packet-efficiency",
      "payload efficiency against transfer size, dynamic multimem and explicit addressing, from the packet formats");
  c.packet_efficiency->add_option("FILE", o.file, "scenario YAML file (only its platform's link is used)")->required();
  c.packet_efficiency->add_option("--set", o.overrides, "override a scenario key: a.b.c=value (repeatable)");
  c.packet_efficiency->add_option("--targets", o.targets, "targets (destinations) of a message")
      ->check(CLI::Range(1u, 32767u))
      ->capture_default_str();

  // The all-reduce calibration against NCCL's anchors (docs/results.md).
  c.calibrate = app.add_subcommand(
      "calibrate", "all-reduce by NVLS and by a ring on the scenario's platform, as bus bandwidth next to NCCL's figures (docs/background/nvlink_nvswitch.md)");
  c.calibrate->add_option("FILE", o.file, "scenario YAML file (only its platform is used)")->required();
  c.calibrate->add_option("--set", o.overrides, "override a scenario key: a.b.c=value (repeatable)");
  c.calibrate->add_option("--bytes", o.allreduce.bytes, "buffer per GPU, bytes (a multiple of GPUs x message bytes)")
      ->capture_default_str();
  c.calibrate->add_option("--message-bytes", o.allreduce.message_bytes, "bytes of one load, store or write")
      ->capture_default_str();
  c.calibrate->add_option("--chunk-bytes", o.allreduce.chunk_bytes,
                          "nvls: loads of the next chunk overlap the stores of this one (0: all loads, then all stores)")
      ->capture_default_str();
  c.calibrate->add_option("--channels", o.allreduce.channels, "ring and all-to-all: NCCL channels, one SM each")
      ->capture_default_str();
  c.calibrate->add_option("--slice-bytes", o.allreduce.slice_bytes, "ring: bytes of one pipelined slice")
      ->capture_default_str();
  c.calibrate->add_option("--nvls-channels", o.allreduce.nvls_channels, "nvls: SMs issuing the multimem stores")
      ->capture_default_str();
  c.calibrate->add_flag("--no-sm-issue-limit", o.no_sm_issue_limit, "sends cost the issuing SMs no time (links alone pace them)");
  c.calibrate->add_option("--collective", o.collectives,
                          "run these collectives instead (repeatable; fw/collectives.hpp: allreduce_ring, allreduce_nvls, "
                          "allgather_ring, allgather_nvls, alltoall, p2p_write_oneway, p2p_write_bidir), "
                          "with the link bound and link loads");
  c.calibrate->add_option("--log", o.logs,
                          "PATTERN=LEVEL: log the components PATTERN names at LEVEL to stderr, as for run (repeatable)");

  // The calibration anchors: public hardware measurements, one case file each (docs/calibration.md).
  c.anchors = app.add_subcommand(
      "anchors", "run the calibration cases of configs/anchors/ and compare each with its public hardware figure");
  c.anchors->add_option("--case", o.anchor_cases, "run only this case (repeatable; default: every case)");
  c.anchors->add_option("--out", o.out_dir, "output directory for anchors.json (default out/anchors)")->check(kNonEmptyPath);
  c.anchors->add_option("--jobs", o.jobs, "cases run at once")->check(CLI::Range(1u, 1024u))->capture_default_str();
  c.anchors->add_option("--set", o.overrides,
                        "override a key of every case's scenario: a.b.c=value (repeatable; e.g. simulation.fabric=packet)");
  c.anchors->add_flag("--quiet", o.quiet, "no console output (the cases as they end, the table) and no progress line");
}

// rtl-check and rtl-verify: the reduction unit's verification (testbench/).
void add_rtl_commands(CLI::App& app, Options& o, Commands& c) {
  c.rtl_check = app.add_subcommand("rtl-check", "run an IEEE test-vector file through the reduction unit");
  c.rtl_check->add_option("--vectors", o.check_args.vectors, "file of 'A B RESULT [FLAGS]' lines (hex)")->required();
  c.rtl_check->add_option("--op", o.check_args.op, "add | min | max")->required();
  c.rtl_check->add_option("--dtype", o.check_args.dtype, "f16 | bf16 | f32")->required();
  c.rtl_check->add_option("--backend", o.check_args.backend, "rtl | model | both")->capture_default_str();

  c.rtl_verify = app.add_subcommand(
      "rtl-verify", "testbench of the reduction unit: directed cases, then the random regression against the model");
  c.verify_seed = c.rtl_verify->add_option("--seed", o.verify_seed, "random seed (default: a fresh one, printed)");
  c.rtl_verify->add_option("--beats", o.verify_args.beats, "contribution beats of the random regression")
      ->capture_default_str();
  c.rtl_verify->add_option("--backend", o.verify_args.backend, "rtl | model | both")->capture_default_str();
  c.rtl_verify->add_option("--wave", o.verify_args.wave,
                            "write the random regression's RTL waveform to this file, VCD or FST by its extension "
                            "(.vcd, .fst)");
  c.rtl_verify->add_option("--vcd", o.verify_args.vcd, "write the random regression's RTL waveform to this VCD file");
  c.wave_from = c.rtl_verify->add_option("--wave-from", o.wave_from_ns,
                                         "waveform window: the first clock dumped, in ns of the waveform's time "
                                         "(1 clock = 1 ns, counted from the first reset clock)")
                    ->check(CLI::NonNegativeNumber);  // an unsigned option would wrap "-5" around
  c.wave_to = c.rtl_verify->add_option("--wave-to", o.wave_to_ns, "waveform window: dump the clocks before this ns")
                  ->check(CLI::NonNegativeNumber);
  c.rtl_verify->add_option("--coverage-file", o.verify_args.coverage_file,
                            "write the random regression's functional coverage to this file (Verilator's coverage "
                            "format: nvsvp rtl-coverage-merge and verilator_coverage read it)");
  c.rtl_verify->add_flag("--coverage", o.verify_args.coverage, "print the whole functional-coverage table");
  c.rtl_verify->add_flag("--directed-only", o.verify_args.directed_only, "only the directed cases");
  c.rtl_verify->add_flag("--random-only", o.verify_args.random_only, "only the random regression");

  c.rtl_coverage_merge = app.add_subcommand(
      "rtl-coverage-merge", "merge coverage files of rtl-verify runs (counts summed per point) and report the bins");
  c.rtl_coverage_merge->add_option("FILES", o.merge_args.inputs, "coverage files (rtl-verify --coverage-file)")
      ->required();
  c.rtl_coverage_merge->add_option("--out", o.merge_args.out, "write the merged coverage to this file")->check(kNonEmptyPath);
  c.rtl_coverage_merge->add_flag("--coverage", o.merge_args.table, "print the whole functional-coverage table");
}

// plot: pictures of a run's or a study's output (scripts/nvsvp_plot.py does the drawing).
void add_plot_command(CLI::App& app, Options& o, Commands& c) {
  c.plot = app.add_subcommand(
      "plot", "draw a run's or a study's output as SVG or PNG pictures and an index.html (python3-matplotlib)");
  c.plot->add_option("DIR", o.file, "a run's output folder (report.json) or a study's (study.csv, summary.json)")
      ->required();
  c.plot->add_option("--format", o.plot_format, "svg | png")->check(CLI::IsMember({"svg", "png"}))->capture_default_str();
  c.plot->add_option("--out", o.out_dir, "where to write the pictures (default DIR)")->check(kNonEmptyPath);
}

int plot_command(const Options& o) {
  std::vector<std::string> arguments = {o.file, "--format", o.plot_format};
  if (!o.out_dir.empty()) arguments.insert(arguments.end(), {"--out", o.out_dir});
  return nvsvp::platform::exec_plot_script(std::filesystem::read_symlink("/proc/self/exe").string(), arguments);
}

// compare: two runs' output folders side by side; with tolerances, a check (exit 1 beyond them).
void add_compare_command(CLI::App& app, Options& o, Commands& c) {
  c.compare = app.add_subcommand(
      "compare", "two runs' output folders side by side, scheme by scheme (layer time, phases, GPUs, links, checks)");
  c.compare->add_option("A", o.file, "the first run's output folder (report.json, links_<scheme>.csv)")
      ->required()
      ->check(kNonEmptyPath);
  c.compare->add_option("B", o.compare_b, "the second run's output folder")->required()->check(kNonEmptyPath);
  c.compare->add_option("--tolerance", o.tolerances,
                        "KEY=FRACTION, KEY one of layer_time, phase_end, gpu_finish, link_bytes "
                        "(payload and wire bytes and packets per link; 0: equal); repeatable. With any, "
                        "what differs beyond them is listed and the command exits 1");
}

int compare_command(const Options& o) {
  try {
    nvsvp::platform::ComparisonTolerances tolerances;
    for (const std::string& t : o.tolerances) nvsvp::platform::parse_tolerance(t, tolerances);
    const nvsvp::platform::RunComparison comparison = nvsvp::platform::compare_runs(o.file, o.compare_b);
    nvsvp::platform::print_comparison(std::cout, comparison);
    const std::vector<std::string> differences = nvsvp::platform::differences_beyond(comparison, tolerances);
    if (!tolerances.any()) return 0;
    if (differences.empty()) {
      std::cout << "\nwithin tolerance\n";
      return 0;
    }
    std::cout << "\n" << differences.size() << " difference" << (differences.size() == 1 ? "" : "s")
              << " beyond tolerance:\n";
    for (const std::string& line : differences) std::cout << "  " << line << "\n";
    return kExitCheckFailed;
  } catch (const nvsvp::platform::ConfigError& e) {
    std::cerr << "nvsvp: " << e.what() << "\n";
    return kExitBadInput;
  }
}

// A progress line on long work: only for a person watching a terminal, and not with --quiet.
bool progress_wanted(const Options& o) { return !o.quiet && isatty(STDERR_FILENO) == 1; }

int presets_command(const Options& o) {
  for (const auto& p : nvsvp::platform::list_presets(o.config_dir)) {
    std::cout << p.kind << "  " << p.name << "  " << p.summary << "\n";
  }
  // The scheme registry: "scheme" runs a layer, "step-scheme" only a training step. Then the
  // multicast the scheme needs in the switch (multicast:none, groups or dynamic), and its summary.
  for (const nvsvp::fw::SchemeTraits& s : nvsvp::fw::scheme_registry()) {
    std::cout << (s.training_step_only ? "step-scheme  " : "scheme  ") << s.name
              << "  multicast:" << nvsvp::fw::to_string(s.multicast) << "  " << s.summary
              << (s.training_step_only ? " (in a training step only)" : "") << "\n";
  }
  return 0;
}

// --shard I/N: 1 <= I <= N; anything else is a usage error (exit 2).
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  std::size_t shard = 0, shards = 0;
  auto number = [](const std::string& digits, std::size_t& value) {
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    value = std::stoul(digits);
    return true;
  };
  if (slash == std::string::npos || !number(text.substr(0, slash), shard) || !number(text.substr(slash + 1), shards) ||
      shard < 1 || shard > shards) {
    throw nvsvp::platform::ConfigError("--shard: expected I/N with 1 <= I <= N (shard I of N), got " + text);
  }
  return {shard, shards};
}

int study_command(const Options& o) {
  const nvsvp::platform::Study loaded = nvsvp::platform::load_study(o.file, o.overrides, o.config_dir);
  if (o.list_points) {
    std::cout << "study " << loaded.name << ": " << loaded.points.size() << " points, schemes";
    for (const std::string& scheme : loaded.schemes) std::cout << " " << scheme;
    std::cout << " (reference " << loaded.reference << ")\n";
    for (const nvsvp::platform::StudyPoint& point : loaded.points) std::cout << "  " << point.directory << "\n";
    return 0;
  }
  nvsvp::platform::StudyOptions options;
  options.out_dir = o.out_dir;
  options.jobs = o.jobs;
  options.executable = std::filesystem::read_symlink("/proc/self/exe").string();  // each point runs `nvsvp run`
  options.config_dir = o.config_dir;
  options.progress = progress_wanted(o);
  std::ostream nowhere(nullptr);  // --quiet: what the study prints goes nowhere
  std::ostream& console = o.quiet ? nowhere : std::cout;
  if (o.emit_commands) {
    std::cout << nvsvp::platform::emit_study_commands(loaded, options);
    return 0;
  }
  if (!o.merge_dir.empty()) return nvsvp::platform::merge_study(o.merge_dir, &loaded, console);
  if (!o.points.empty() || !o.shard.empty()) {
    std::vector<std::size_t> indices;
    for (std::size_t number : o.points) {
      if (number < 1 || number > loaded.points.size()) {
        throw nvsvp::platform::ConfigError("--point: expected a point number from 1 to " +
                                           std::to_string(loaded.points.size()) + " (study " + loaded.name +
                                           "), got " + std::to_string(number));
      }
      if (std::find(indices.begin(), indices.end(), number - 1) == indices.end()) indices.push_back(number - 1);
    }
    if (!o.shard.empty()) {
      const auto [shard, shards] = parse_shard(o.shard);
      indices = nvsvp::platform::shard_points(loaded.points.size(), shard, shards);
    }
    return nvsvp::platform::run_study_points(loaded, indices, options, console);
  }
  return nvsvp::platform::run_study(loaded, options, console);
}

int study_merge_command(const Options& o) {
  std::ostream nowhere(nullptr);
  return nvsvp::platform::merge_study(o.merge_dir, nullptr, o.quiet ? nowhere : std::cout);
}

int anchors_command(const Options& o) {
  nvsvp::platform::AnchorOptions options;
  options.overrides = o.overrides;
  options.cases = o.anchor_cases;
  if (!o.out_dir.empty()) options.out_dir = o.out_dir;
  options.jobs = o.jobs;
  options.config_dir = o.config_dir;
  options.command_line = o.command_line;
  options.progress = progress_wanted(o);
  std::ostream nowhere(nullptr);  // --quiet: what the cases print goes nowhere
  return nvsvp::platform::run_anchors(options, o.quiet ? nowhere : std::cout, std::cerr);
}

int calibrate_command(const nvsvp::platform::Scenario& scenario, Options o) {
  o.allreduce.sm_issue_limit = !o.no_sm_issue_limit;
  nvsvp::platform::Observability observe;
  for (const std::string& log : o.logs) observe.logs.push_back(nvsvp::platform::parse_log_setting(log));
  nvsvp::platform::check_patterns(observe, scenario.platform);  // ConfigError: exit code 2
  std::vector<nvsvp::platform::CollectiveResult> runs;
  try {
    if (o.collectives.empty()) {
      runs = nvsvp::platform::run_allreduce_calibration(scenario.platform, o.allreduce, observe.logs);
    } else {
      std::vector<nvsvp::fw::CollectiveSpec> specs;
      for (const std::string& name : o.collectives) {
        nvsvp::fw::CollectiveSpec& spec = specs.emplace_back(o.allreduce);
        if (!nvsvp::fw::collective_from_string(name, spec.collective)) {
          std::string known;
          for (nvsvp::fw::Collective c : nvsvp::fw::all_collectives()) known += std::string(known.empty() ? "" : ", ") + nvsvp::fw::to_string(c);
          throw std::invalid_argument("--collective: expected one of " + known + ", got " + name);
        }
      }
      runs = nvsvp::platform::run_collectives(scenario.platform, specs, observe.logs);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "nvsvp: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (o.collectives.empty()) {
    nvsvp::platform::print_calibration(std::cout, scenario.platform, runs);
  } else {
    nvsvp::platform::print_collectives(std::cout, runs);
  }
  for (const auto& one : runs) {
    if (!one.ok()) return kExitCheckFailed;
  }
  return 0;
}

int validate_command(const nvsvp::platform::Scenario& scenario, const Options& o) {
  // The routing is generated too: a trace file is only read (and checked) then. Each scheme's
  // plan is brought up on the register models: the fabric must hold what it needs.
  nvsvp::platform::check_fabric_resources(scenario, nvsvp::platform::resolve_layer(scenario));
  if (o.dump) std::cout << nvsvp::platform::dump_effective(scenario);
  // With --dump stdout is the YAML alone, so that `validate --dump > s.yaml` writes a scenario.
  std::ostream& status = o.dump ? std::cerr : std::cout;
  status << o.file << ": ok (" << scenario.schemes.size() << " scheme" << (scenario.schemes.size() == 1 ? "" : "s")
         << ")\n";
  return 0;
}

// The commands on scenarios; bad input is exit code 2, any other error 1.
int scenario_command(const Commands& c, Options o) {
  try {
    if (c.study_merge->parsed()) return study_merge_command(o);  // needs no presets: study.json has it all
    o.config_dir = nvsvp::platform::find_config_dir(o.config_dir, std::getenv("NVSVP_CONFIG_PATH"),
                                                    std::filesystem::read_symlink("/proc/self/exe").string());
    if (c.presets->parsed()) return presets_command(o);
    if (c.study->parsed()) return study_command(o);
    if (c.anchors->parsed()) return anchors_command(o);
    const nvsvp::platform::Scenario scenario = nvsvp::platform::load_scenario(o.file, o.overrides, o.config_dir);
    if (c.calibrate->parsed()) return calibrate_command(scenario, o);
    if (c.packet_efficiency->parsed()) {
      std::cout << nvsvp::platform::packet_efficiency_csv(
          nvsvp::platform::packet_efficiency_table(scenario.platform.link, o.targets));
      return 0;
    }
    if (c.validate->parsed()) return validate_command(scenario, o);
    nvsvp::platform::RunOptions options;
    options.out_dir = o.out_dir;
    options.quiet = o.quiet;
    options.progress = progress_wanted(o);
    options.timelines = !o.no_timelines;
    options.command_line = o.command_line;
    for (const std::string& log : o.logs) options.observe.logs.push_back(nvsvp::platform::parse_log_setting(log));
    options.observe.traces = o.traces;
    return nvsvp::platform::run_scenario(scenario, options, std::cout);
  } catch (const nvsvp::platform::ConfigError& e) {
    std::cerr << "nvsvp: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "nvsvp: error: " << e.what() << "\n";
    return kExitCheckFailed;
  }
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  reexec_with_huge_pages(argv);
  nvsvp::platform::stop_children_on_signals();
  CLI::App app{"nvsvp: SystemC/TLM virtual platform of an NVLink switch that computes in-switch"};
  app.require_subcommand(1);
  Options options;
  app.set_version_flag("--version", nvsvp::platform::version_line());
  app.add_option("--config-dir", options.config_dir,
                 "where platform and model presets live (default: the first of NVSVP_CONFIG_PATH, then "
                 "share/nvsvp/configs beside the binary or in ../share)")
      ->check(kNonEmptyPath);
  options.command_line = command_line_of(argc, argv);
  Commands commands;
  add_scenario_commands(app, options, commands);
  add_rtl_commands(app, options, commands);
  add_plot_command(app, options, commands);
  add_compare_command(app, options, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }

  if (commands.plot->parsed()) return plot_command(options);
  if (commands.compare->parsed()) return compare_command(options);
  if (commands.rtl_check->parsed()) {
    return nvsvp::testbench::rtl_check_command(options.check_args, std::cout, std::cerr);
  }
  if (commands.rtl_verify->parsed()) {
    if (commands.verify_seed->count() > 0) options.verify_args.seed = options.verify_seed;
    if (commands.wave_from->count() > 0) options.verify_args.wave_from_ns = options.wave_from_ns;
    if (commands.wave_to->count() > 0) options.verify_args.wave_to_ns = options.wave_to_ns;
    return nvsvp::testbench::rtl_verify_command(options.verify_args, std::cout, std::cerr);
  }
  if (commands.rtl_coverage_merge->parsed()) {
    return nvsvp::testbench::rtl_coverage_merge_command(options.merge_args, std::cout, std::cerr);
  }
  return scenario_command(commands, options);
}
