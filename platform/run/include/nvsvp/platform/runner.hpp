// Running one layer under a scheme: one simulation, in this process or in a child process of its
// own (SystemC elaborates once per process), its result one entry of report.json's results[].
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/observability.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/scheme_job.hpp"

namespace nvsvp::platform {

class Platform;

// Elaborates the job's machine, runs the job's plans on it (consuming them: scheme_job.hpp) and
// checks the result. Call at most once per process. `with_timeline`: also record the links' busy time per bin and gather the timeline
// files' data. `inspect` (tests) sees the platform once the simulation is over. `observe`: the
// components' log levels and the trace files (observability.hpp), written before it returns.
// `simulated_ps` (the progress line): where to store the simulated time reached, in picoseconds,
// as the simulation goes; the kernel then runs in slices of kProgressSliceUs of simulated time,
// which changes no result.
SchemeRun run_scheme(SchemeJob job, bool with_timeline, const std::function<void(Platform&)>& inspect = {},
                     const Observability& observe = Observability{}, std::atomic<std::uint64_t>* simulated_ps = nullptr);
constexpr double kProgressSliceUs = 1.0;

// `scheme` planned on the scenario's machine and `layer` (plan_scheme), then run_scheme without a
// timeline, its result alone: one entry of report.json's results[].
nlohmann::json simulate_scheme(const Scenario& scenario, const std::string& scheme,
                               std::shared_ptr<const fw::MoeLayerSpec> layer,
                               const std::function<void(Platform&)>& inspect = {});

// run_scheme in a child process of its own (the child sends what it gave through a pipe), so that
// one process can run several. A child that failed or died gives {"scheme", "error"}. With
// `on_progress`, the parent calls it with the child's simulated time (us) when the child starts,
// about every quarter second while it runs, and when it ends.
SchemeRun run_scheme_in_child(const SchemeJob& job, bool with_timeline = false,
                              const Observability& observe = Observability{},
                              const std::function<void(double simulated_us)>& on_progress = {});
// The same for a layer made elsewhere (a step's, a stream's iteration): resolved (its parts) and
// planned on the scenario's machine first, in this process.
SchemeRun run_scheme_in_child(const Scenario& scenario, const std::string& scheme,
                              const std::shared_ptr<const fw::MoeLayerSpec>& layer, bool with_timeline = false,
                              const Observability& observe = Observability{},
                              const std::function<void(double simulated_us)>& on_progress = {});

// The job as a scenario runs it: in a child process (run_scheme_in_child), or, for a scheme whose
// registry traits search its degree with software.tutel_degree 0, every candidate degree planned
// anew (job.layer with the degree) and run in a process of its own, the fastest kept; its result lists every candidate under
// "tutel_search". `on_progress` (may be empty) is told a label (the scheme, or the scheme and the
// candidate degree) and the simulated time reached (us).
SchemeRun run_scheme_as_configured(const SchemeJob& job, bool timelines, const Observability& observe,
                                   const std::function<void(const std::string& label, double simulated_us)>& on_progress);

}  // namespace nvsvp::platform
