// `nvsvp compare A B`: two runs' output folders side by side, scheme by scheme: layer time and
// phases, each GPU's finish, every link's bytes and packets per direction, messages, checks and the
// simulation's own cost, each with B over A. It reads what `nvsvp run` wrote (report.json and
// links_<scheme>.csv) and nothing else, so it compares runs of two binaries, two fabrics or two
// parameter sets alike. With tolerances it is a check: what differs beyond them is listed, and the
// command fails (exit 1), which is how the fabric engines are held to each other.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace nvsvp::platform {

// One figure in both runs.
struct FigurePair {
  double a = 0;
  double b = 0;
  // |b / a - 1|; 0 when both are 0, infinity when only a is.
  double relative_difference() const;
};

// One link in one direction, as links_<scheme>.csv has it.
struct LinkFigures {
  uint64_t wire_bytes = 0;
  uint64_t payload_bytes = 0;
  uint64_t packets = 0;
};

struct SchemeComparison {
  std::string scheme;
  FigurePair layer_time_us;
  std::map<std::string, FigurePair> phase_end_us;  // the phases both runs have
  std::vector<FigurePair> gpu_finish_us;           // by GPU; both runs must have the same GPUs
  bool passed_a = false;
  bool passed_b = false;
  std::map<std::string, FigurePair> messages;      // per direction
  std::map<std::string, FigurePair> packets;       // per direction
  FigurePair wall_seconds;
  FigurePair transactions;
  // Links by "direction gpu G link L": the figures of each run (absent from a run: not in the map).
  std::map<std::string, LinkFigures> links_a;
  std::map<std::string, LinkFigures> links_b;
  // The GPU whose finish differs most, and by how much.
  uint32_t worst_gpu = 0;
  double worst_gpu_difference = 0;
  // Links present in both runs whose payload bytes, wire bytes or packets differ, and the largest
  // relative difference of their wire bytes (and where).
  uint32_t links_compared = 0;
  uint32_t links_differing = 0;
  double worst_link_difference = 0;
  std::string worst_link;
};

struct RunComparison {
  std::filesystem::path a;
  std::filesystem::path b;
  std::vector<SchemeComparison> schemes;  // in A's order
  std::vector<std::string> only_in_a;
  std::vector<std::string> only_in_b;
};

// The largest relative differences allowed; a figure not given is not checked.
struct ComparisonTolerances {
  std::optional<double> layer_time;  // the layer time
  std::optional<double> phase_end;   // each phase's end
  std::optional<double> gpu_finish;  // each GPU's finish
  std::optional<double> link_bytes;  // each link's payload and wire bytes and packets (0: equal)
  bool any() const { return layer_time || phase_end || gpu_finish || link_bytes; }
};

// Reads both folders. Throws ConfigError naming the file and key when a folder is not a run's
// output (no report.json, a key missing, a links file unreadable).
RunComparison compare_runs(const std::filesystem::path& a, const std::filesystem::path& b);

// `KEY=VALUE` (layer_time, phase_end, gpu_finish, link_bytes; VALUE a fraction >= 0) into `tolerances`;
// throws ConfigError on anything else.
void parse_tolerance(const std::string& text, ComparisonTolerances& tolerances);

// What differs beyond `tolerances`, one line each (empty: nothing). Schemes in one run only, and
// failed checks in either run, differ whenever any tolerance is given.
std::vector<std::string> differences_beyond(const RunComparison& comparison, const ComparisonTolerances& tolerances);

// The side-by-side table.
void print_comparison(std::ostream& os, const RunComparison& comparison);

}  // namespace nvsvp::platform
