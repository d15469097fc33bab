// A parameter study: one base scenario run at many points (scenario keys set to other values),
// every point checked before any runs, each run by `nvsvp run` in a process of its own; the
// results gathered into study.csv, summary.json and a console table that compares every scheme
// with a reference scheme. The points of one study may also run apart, in any order, on other
// machines (one point or one shard per process), and be merged afterwards from their folders:
// study.json names the study in its output folder, point.json each point's run.
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
  std::vector<std::string> overrides;  // the --set options it was loaded with, in order
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

// The results[] of a point's report.json, each with its scheme's step as `step` when the point
// ran one (report.json's step.schemes[scheme]), so that the study's columns read both alike.
// Empty when `report` has no results.
nlohmann::json point_results(const nlohmann::json& report);

// Why `report` cannot be read as a point's results for `schemes`: not an object, results not a
// list of objects each naming its scheme (once), a result's layer_time_us not a number or its
// checks.passed not true or false, a scheme of `schemes` without a result. Empty when it can.
std::string report_shape_problem(const nlohmann::json& report, const std::vector<std::string>& schemes);

// Reads the point's report.json at `path` into `run.results`. A report that is missing, not a
// regular file, not JSON or of another shape (report_shape_problem) leaves no results and, unless
// `run` failed already, makes the point fail saying which and why; it never throws.
void read_point_report(const std::string& path, const std::vector<std::string>& schemes, PointRun& run);

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

// summary.json: per point its status, its folder (relative to summary.json's) and every scheme's
// layer time and speedup, then the statistics. Nothing in it depends on where or when the points
// ran, so that a merge of points run elsewhere gives the same file.
nlohmann::json study_summary(const Study& study, const std::vector<PointRun>& runs);

// The console table of a summary.json; `out_dir` is where its folders are.
void print_study_summary(const nlohmann::json& summary, const std::string& out_dir, std::ostream& os);

struct StudyOptions {
  std::string out_dir;     // empty: out/<study name>
  unsigned jobs = 1;       // points run at once
  std::string executable;  // the nvsvp command that runs a point
  std::string config_dir;  // handed to it
  bool progress = false;   // a progress line on stderr: points done, elapsed, an estimate of the time left
};

// The output folder of a study: `options.out_dir`, else out/<study name>.
std::string study_out_dir(const Study& study, const StudyOptions& options);

// --- the study's and its points' records --------------------------------------------------------

// study.json: the study's name, file, schemes, reference, keys and points (each with the hash of
// its effective scenario), the nvsvp version and commit that made it, the command that defines it
// (`nvsvp study FILE [--set K=V]...`: summary.json's nvsvp.command_line) and a fingerprint of
// everything that decides the results. Every study command writes it into its output folder.
nlohmann::json study_manifest(const Study& study);

// The study a manifest describes (its points without scenarios), checked: a manifest that is not
// one, or was edited so that its fingerprint no longer matches, raises ConfigError naming `file`.
Study study_of_manifest(const nlohmann::json& manifest, const std::string& file);

// --- running -----------------------------------------------------------------------------------

// The whole study here: writes study.json and every point's scenario.yaml, runs the points (up to
// `jobs` at once, each as `nvsvp run`, its console output in run.log, its record in point.json),
// reports each as it ends, then merges the folder (merge_study) and prints the summary. Returns 0
// when every point's run passed, else 1.
int run_study(const Study& study, const StudyOptions& options, std::ostream& console);

// Some points only (0-based indices into study.points), for a scheduler: their folders and
// point.json as run_study makes them, and study.json if the folder has none. A folder whose
// study.json is another study's (or another version's) is refused (ConfigError). Returns 0 when
// every point given passed, else 1.
int run_study_points(const Study& study, const std::vector<size_t>& points, const StudyOptions& options,
                     std::ostream& console);

// The points of shard `shard` (1-based) of `shards`: points shard, shard + shards, ... (1-based),
// interleaved so that every shard gets points from all over the sweep.
std::vector<size_t> shard_points(size_t point_count, size_t shard, size_t shards);

// One shell command line per point, point k on line k: the nvsvp binary, the config folder, the
// study file and the output folder as absolute paths, `--point k` and the study's --set options,
// so that any machine that sees the same files can run it from any folder. Writes study.json.
std::string emit_study_commands(const Study& study, const StudyOptions& options);

// Builds study.csv, summary.json and wall_times.csv in `out_dir` from the point folders, as
// study.json there describes the study (or `expected`, the study loaded from its file, which must
// then be the same study). Points from another study, another nvsvp version or commit, or another
// scenario are refused (ConfigError, nothing written); missing and failed points are named, their
// rows left out, and make it return 1; else 0. Prints the summary table.
int merge_study(const std::string& out_dir, const Study* expected, std::ostream& console);

}  // namespace nvsvp::platform
