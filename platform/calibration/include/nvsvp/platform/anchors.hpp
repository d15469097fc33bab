// The calibration anchors (`nvsvp anchors`, docs/calibration.md): public measurements of real
// hardware, each reproduced by a case file under configs/anchors/. A case file is a scenario
// (platform, and for a MoE case its workload, software and schemes) with two more sections:
// `anchor` (the measured figure, its unit and source) and `measure` (what the case runs and which
// figure of the run it compares). Every case runs in a child process of its own (SystemC
// elaborates once per process) and passes the same checks as the run it is made of.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/collectives.hpp"
#include "nvsvp/platform/gemm_case.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// The public figure a case is held against: between `low` and `high` (equal for a single value).
struct AnchorFigure {
  std::string metric;  // e.g. "logical bandwidth", "busBW"
  std::string unit;    // e.g. "GB/s"
  double low = 0.0;
  double high = 0.0;
  std::string source;  // where the figure was published
};

// What a case runs.
//   moe_phase:  scheme `scheme` on the scenario's layer, the metric of phase `phase` (dispatch or
//               combine) in DeepEP's convention (docs/calibration.md#conventions);
//   collective: NCCL's collective `collective` (fw/collectives.hpp) on the scenario's platform,
//               its bus bandwidth in nccl-tests' convention;
//   gemm:       one grouped fp8 GEMM (platform/gemm_case.hpp) on one GPU, its TFLOPS.
// A collective or gemm case file has a platform and no workload or schemes.
struct AnchorMeasure {
  std::string kind;    // moe_phase | collective | gemm
  std::string scheme;  // moe_phase
  std::string phase;   // moe_phase: dispatch | combine
  fw::CollectiveSpec collective;  // collective
  GemmCaseSpec gemm;              // gemm
};

struct AnchorCase {
  std::string name;  // the case name (the scenario's name)
  std::string what;  // one line: what was measured on which machine
  std::string file;  // the case file
  AnchorFigure anchor;
  AnchorMeasure measure;
  Scenario scenario;
};

// The case files in config_dir/anchors, sorted by name.
std::vector<std::string> anchor_case_files(const std::string& config_dir);
// Reads and checks one case file; throws ConfigError naming file, line and key.
// `overrides` ("a.b.c=value", as --set) apply to the case's scenario after its own keys.
AnchorCase load_anchor_case(const std::string& file, const std::string& config_dir,
                            const std::vector<std::string>& overrides = {});

// Runs a case in this process (call at most once per process: it elaborates a platform) and
// returns its entry of anchors.json: case, metric, unit, model, anchor_low, anchor_high, source,
// ratio (model / the nearer end of the anchor's range, 1 inside it), passed, and the run's
// figures under "details". A failed check gives passed = false and the reason under "error".
nlohmann::json run_anchor_case(const AnchorCase& anchor_case);

struct AnchorOptions {
  std::vector<std::string> cases;  // names to run; empty: every case
  std::string out_dir = "out/anchors";
  std::vector<std::string> overrides;  // --set, applied to every case's scenario
  unsigned jobs = 1;
  std::string config_dir = "configs";
  std::string command_line;  // the command that asked for the run, for anchors.json's nvsvp section
  bool progress = false;  // a progress line on stderr: cases done, elapsed, an estimate of the time left
};

// Runs the cases, each in a child process, `jobs` at a time; prints the table and writes
// anchors.json into out_dir. Returns 0 when every case ran and passed its checks, 1 otherwise, and
// kAnchorsBadInput when a case's sizes were refused by its plan (its entry says why, with
// "bad_input": true). A bad case file or an unknown case name is a ConfigError. Each refused
// case's reason also goes to `errors`, which --quiet does not silence.
inline constexpr int kAnchorsBadInput = 2;
int run_anchors(const AnchorOptions& options, std::ostream& console, std::ostream& errors);

}  // namespace nvsvp::platform
