// Running a scenario: its layer under every scheme, then its stream or its step.
#include "nvsvp/platform/scenario_run.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nvsvp/platform/build_info.hpp"
#include "nvsvp/platform/fabric_resources.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/model_inference.hpp"
#include "nvsvp/platform/model_step.hpp"
#include "nvsvp/platform/progress_line.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scheme_job.hpp"
#include "nvsvp/platform/text.hpp"
#include "replication_stream_run.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

// report.json's faults.fault_free_layer_time_us and faults.slowdown (this run's layer time over
// the fault-free one's; null unless both passed their checks).
void add_fault_free_comparison(json& result, const json& fault_free) {
  json& faults = result["faults"];
  const bool passed = result.value(json::json_pointer("/checks/passed"), false) &&
                      fault_free.value(json::json_pointer("/checks/passed"), false);
  const double time = result.value("layer_time_us", 0.0);
  const double clean = fault_free.value("layer_time_us", 0.0);
  faults["fault_free_layer_time_us"] = fault_free.contains("layer_time_us") ? fault_free["layer_time_us"] : json();
  faults["fault_free_passed"] = fault_free.value(json::json_pointer("/checks/passed"), false);
  faults["slowdown"] = passed && clean > 0.0 ? json(time / clean) : json();
}

}  // namespace

int run_scenario(const Scenario& scenario, const RunOptions& options, std::ostream& console) {
  const auto wall_start = std::chrono::steady_clock::now();
  // Patterns that name no component are bad input, found before anything runs.
  check_patterns(options.observe, scenario.platform);
  // The layer resolved once (routing drawn, replication decided, each partition's spec), and what
  // checks, runs and reports it takes it from here.
  const ResolvedLayer layer = resolve_layer(scenario);
  // A plan the fabric cannot hold is bad input, found before any scheme starts.
  check_fabric_resources(scenario, layer);
  const auto machine = std::make_shared<const MachineSetup>(machine_setup(scenario));
  // The same machine without the faults: each scheme's fault-free twin runs on it.
  MachineSetup without_faults = *machine;
  without_faults.faults.clear();
  const auto fault_free_machine = std::make_shared<const MachineSetup>(std::move(without_faults));
  const std::string out_dir = options.out_dir.empty() ? "out/" + scenario.name : options.out_dir;
  const OutputFolderLock folder = prepare_output_directory(scenario, out_dir);
  Observability observe = options.observe;
  observe.trace_dir = out_dir;
  std::vector<SchemeRun> runs;
  ProgressLine progress(options.progress);
  const size_t count = scenario.schemes.size();
  for (const std::string& scheme : scenario.schemes) {
    // Planned here, once: the scheme's process and its run without faults take this job.
    const SchemeJob job = plan_scheme(machine, scheme, layer);
    std::function<void(const std::string&, double)> on_progress;  // "scheme 2/5 comet: simulated 153.0 us"
    if (progress.enabled()) {
      on_progress = [&, k = runs.size() + 1](const std::string& label, double us) {
        progress.show("scheme " + std::to_string(k) + "/" + std::to_string(count) + " " + label + ": simulated " +
                      fixed(us, 1) + " us");
      };
    }
    runs.push_back(run_scheme_as_configured(job, options.timelines, observe, on_progress));
    if (scenario.faults.empty()) continue;
    // The slowdown the faults caused: the same plans on the same machine without them, in a
    // process of its own, with no timelines and no traces.
    SchemeJob fault_free = job;
    fault_free.machine = fault_free_machine;
    std::function<void(const std::string&, double)> twin_progress;
    if (on_progress) {
      twin_progress = [&on_progress](const std::string& label, double us) { on_progress(label + " without faults", us); };
    }
    const SchemeRun twin = run_scheme_as_configured(fault_free, false, Observability{}, twin_progress);
    add_fault_free_comparison(runs.back().result, twin.result);
  }
  progress.clear();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  Report report = make_report(scenario, layer, std::move(runs), wall);
  if (scenario.stream.iterations > 0) {
    std::function<void(const std::string&)> on_progress;
    if (progress.enabled()) on_progress = [&progress](const std::string& what) { progress.show(what); };
    json stream = run_replication_stream(scenario, out_dir, on_progress);
    progress.clear();
    report.passed = report.passed && stream.at("passed").get<bool>();
    report.document["passed"] = report.passed;
    report.document["stream"] = std::move(stream);
  }
  if (!scenario.step.kind.empty()) {
    std::function<void(const std::string&)> on_progress;
    if (progress.enabled()) on_progress = [&progress](const std::string& what) { progress.show(what); };
    json step = scenario.step.kind == "inference" ? run_inference_request(scenario, on_progress)
                                                  : run_model_step(scenario, on_progress);
    progress.clear();
    report.passed = report.passed && step.at("passed").get<bool>();
    report.document["passed"] = report.passed;
    report.document["step"] = std::move(step);
  }
  report.document["nvsvp"] = nvsvp_build_json(options.command_line);
  write_report_files(report, out_dir);
  if (!options.quiet) print_summary(report, out_dir, console);
  return report.passed ? 0 : 1;
}

}  // namespace nvsvp::platform
