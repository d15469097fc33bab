// Running a scenario: one simulation per scheme, each in its own process (SystemC elaborates once
// per process), results gathered into report.json, the per-scheme files and a console table.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/observability.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

class Platform;

// The layer the scenario describes, routing generated (deterministic for the seed).
std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario);

// The scenario's layer with a routing and a replication decision made elsewhere (a stream's
// iteration): `routing` is over expert copies when `replication` replicated any.
std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario, fw::MoeRouting routing,
                                                        std::shared_ptr<const fw::ReplicationDecision> replication);

// Elaborates the platform, runs `scheme` on it and checks the result. Call at most once per
// process. `with_timeline`: also record the links' busy time per bin and gather the timeline
// files' data. `inspect` (tests) sees the platform once the simulation is over. `observe`: the
// components' log levels and the trace files (observability.hpp), written before it returns.
// `simulated_ps` (the progress line): where to store the simulated time reached, in picoseconds,
// as the simulation goes; the kernel then runs in slices of kProgressSliceUs of simulated time,
// which changes no result.
SchemeRun run_scheme(const Scenario& scenario, const std::string& scheme, std::shared_ptr<const fw::MoeLayerSpec> layer,
                     bool with_timeline, const std::function<void(Platform&)>& inspect = {},
                     const Observability& observe = Observability{}, std::atomic<std::uint64_t>* simulated_ps = nullptr);
constexpr double kProgressSliceUs = 1.0;

// run_scheme without a timeline, its result alone: one entry of report.json's results[].
nlohmann::json simulate_scheme(const Scenario& scenario, const std::string& scheme,
                               std::shared_ptr<const fw::MoeLayerSpec> layer,
                               const std::function<void(Platform&)>& inspect = {});

// run_scheme in a child process of its own (the child sends what it gave through a pipe), so that
// one process can run several. A child that failed or died gives {"scheme", "error"}. With
// `on_progress`, the parent calls it with the child's simulated time (us) when the child starts,
// about every quarter second while it runs, and when it ends.
SchemeRun run_scheme_in_child(const Scenario& scenario, const std::string& scheme,
                              const std::shared_ptr<const fw::MoeLayerSpec>& layer, bool with_timeline = false,
                              const Observability& observe = Observability{},
                              const std::function<void(double simulated_us)>& on_progress = {});

struct RunOptions {
  std::string out_dir;  // empty: out/<scenario name>
  bool quiet = false;   // no console table
  bool timelines = true;  // also utilization_<scheme>.csv and trace_<scheme>.json
  std::string command_line;  // the command that asked for the run, for report.json's nvsvp section
  bool progress = false;  // a progress line on stderr: scheme k/n and the simulated time it reached
  Observability observe;  // --log and --trace (its trace_dir is set to the output directory)
};

// Readies the output folder (prepare_output_directory), runs every scheme of the scenario in a
// child process of its own, writes the report files and prints the summary. Returns 0 when every check passed, 1 otherwise.
int run_scenario(const Scenario& scenario, const RunOptions& options, std::ostream& console);

}  // namespace nvsvp::platform
