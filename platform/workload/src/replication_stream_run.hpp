// The `stream` section's run (docs/configuration.md#stream).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// Runs the stream: every layer's iterations, the three policies decided on each; every
// stream.simulate_every iterations, each scheme simulated under each policy (a child process per
// run). Writes stream.csv in `out_dir` (one row per layer, iteration and policy) and returns
// report.json's `stream` section: the totals per policy and per layer, the simulated runs and the
// layer-time gains of iser over none and static per scheme. `passed` is false if a policy lost or
// made up a token-expert pair or a simulated run failed its checks. `on_progress` (may be empty)
// is told what runs. Throws ConfigError for a scheduler refusal of the settings.
nlohmann::json run_replication_stream(const Scenario& scenario, const std::string& out_dir,
                                      const std::function<void(const std::string&)>& on_progress);

}  // namespace nvsvp::platform
