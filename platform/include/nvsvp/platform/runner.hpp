// Running a scenario: one simulation per scheme, each in its own process (SystemC elaborates once
// per process), results gathered into report.json, links_<scheme>.csv and a console table.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

class Platform;

// The layer the scenario describes, routing generated (deterministic for the seed).
std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario);

// Elaborates the platform, runs `scheme` on it and checks the result. Call at most once per
// process. The JSON is one entry of report.json's results[], plus "links" (per-link statistics).
// `inspect` (tests) sees the platform once the simulation is over.
nlohmann::json simulate_scheme(const Scenario& scenario, const std::string& scheme,
                               std::shared_ptr<const fw::MoeLayerSpec> layer,
                               const std::function<void(Platform&)>& inspect = {});

// simulate_scheme in a child process of its own (the child sends its JSON through a pipe), so
// that one process can run several: the result, or {"scheme", "error"} when the child failed or died.
nlohmann::json run_scheme_in_child(const Scenario& scenario, const std::string& scheme,
                                   const std::shared_ptr<const fw::MoeLayerSpec>& layer);

struct RunOptions {
  std::string out_dir;  // empty: out/<scenario name>
  bool quiet = false;   // no console table
};

// Runs every scheme of the scenario in a child process of its own, writes the report files and
// prints the summary. Returns 0 when every check passed, 1 otherwise.
int run_scenario(const Scenario& scenario, const RunOptions& options, std::ostream& console);

}  // namespace nvsvp::platform
