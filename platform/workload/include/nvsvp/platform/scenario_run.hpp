// Running a scenario (`nvsvp run`): its layer under every scheme, each in a process of its own,
// then its stream or its step; report.json, the per-scheme files and the console table.
#pragma once

#include <ostream>
#include <string>

#include "nvsvp/platform/observability.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

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
