// report.json, links_<scheme>.csv and the console summary of a run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

struct Report {
  nlohmann::json document;                // report.json
  std::vector<nlohmann::json> link_stats; // per scheme, for links_<scheme>.csv
  std::vector<nlohmann::json> timelines;  // per scheme, for utilization_<scheme>.csv and trace_<scheme>.json
  bool passed = false;
};

// `results`: one simulate_scheme() JSON per scheme (or {"scheme", "error"} when it failed).
Report make_report(const Scenario& scenario, const fw::MoeLayerSpec& layer,
                   std::vector<nlohmann::json> results, double wall_seconds);
void write_report_files(const Report& report, const std::string& out_dir);
void print_summary(const Report& report, const std::string& out_dir, std::ostream& os);

}  // namespace nvsvp::platform
