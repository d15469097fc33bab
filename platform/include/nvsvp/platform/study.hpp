// A parameter study: one base scenario run at many points (scenario keys set to other values),
// every point checked before any runs, each run by `nvsvp run` in a process of its own; the
// results gathered into study.csv, summary.json and a console table that compares every scheme
// with a reference scheme.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// An input limit (docs/configuration.md#input-limits): the points of a study, its sweep's product
// and its list together. The largest shipped study has a few tens; every point is a run.
inline constexpr size_t kMaxStudyPoints = 10'000;

struct StudyPoint {
  std::string name;                 // from its values: "model=L,top_k=8"
  std::string directory;            // its output subdirectory: "<number>_<name, file-safe>"
  std::vector<std::string> values;  // per Study::keys, as written: the point's value, else the
                                    // base scenario's, else "" (a default or a preset's value)
  Scenario scenario;                // the base scenario with the point's values set, checked
};

struct Study {
  std::string name;                  // names the output directory
  std::string file;                  // the study file as given
  std::vector<std::string> schemes;  // every point runs these
  std::string reference;             // the scheme the summary compares every other scheme with
  std::vector<std::string> keys;     // the key paths the points set, in the order first written
  std::vector<StudyPoint> points;    // the sweep's product (first key outermost), then `points`
  bool timelines = false;            // points write utilization_<scheme>.csv and trace_<scheme>.json
};

// Loads a study file and checks every point's scenario. `overrides` ("a.b.c=value", the CLI's
// --set) change the base scenario before the points' values are set. Bad input raises ConfigError:
// "FILE:LINE: key: expected ..., got ..."; for a point, "STUDY: point NAME: " and the scenario's
// message.
Study load_study(const std::string& file, const std::vector<std::string>& overrides,
                 const std::string& config_dir);

// What running one point gave.
struct PointRun {
  std::string failure;  // empty when the run exited 0; else what happened ("exit status 1", ...)
  nlohmann::json results = nlohmann::json::array();  // report.json's results[] (none: empty)
};

// The speedup of the reference over `scheme` at one point: the scheme's layer time divided by
// the reference's (1 for the reference itself). None unless both ran and passed their checks, as
// the time of a failed run means nothing.
std::optional<double> speedup_of_reference(const nlohmann::json& results, const std::string& scheme,
                                           const std::string& reference);

struct SpeedupStatistics {
  std::string scheme;
  size_t points = 0;                     // points where the speedup over this scheme is known
  std::optional<double> geometric_mean;  // none when points == 0
  std::optional<double> max;
  std::string max_point;                 // the first point where the maximum is reached
};

// For every scheme but the reference, in the study's order: the speedup of the reference over it,
// across the points. `runs` holds one entry per point.
std::vector<SpeedupStatistics> speedup_statistics(const Study& study, const std::vector<PointRun>& runs);

// study.csv's first line: point, the study's keys, scheme, the result columns (paths into a
// scheme's report.json entry), speedup_of_reference.
std::string study_csv_header(const Study& study);

// study.csv: a header, then one row per point and scheme that gave a result, in point order.
std::string study_csv(const Study& study, const std::vector<PointRun>& runs);

// summary.json: per point its status and every scheme's layer time and speedup, then the
// statistics; `out_dir` locates the points' directories.
nlohmann::json study_summary(const Study& study, const std::vector<PointRun>& runs,
                             const std::string& out_dir);

// The console table of a summary.json.
void print_study_summary(const nlohmann::json& summary, std::ostream& os);

struct StudyOptions {
  std::string out_dir;     // empty: out/<study name>
  unsigned jobs = 1;       // points run at once
  std::string executable;  // the nvsvp command that runs a point
  std::string config_dir;  // handed to it
  std::string command_line;  // the command that asked for the study, for summary.json's nvsvp section
  bool progress = false;   // a progress line on stderr: points done, elapsed, an estimate of the time left
};

// Writes every point's scenario.yaml, runs the points (up to `jobs` at once, each as
// `nvsvp run`, its console output in run.log), reports each as it ends, then writes study.csv and
// summary.json and prints the summary. Returns 0 when every point's run exited 0, else 1.
int run_study(const Study& study, const StudyOptions& options, std::ostream& console);

}  // namespace nvsvp::platform
