// report.json, the per-scheme files (links_<scheme>.csv, utilization_<scheme>.csv,
// trace_<scheme>.json) and the console summary of a run.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// One link in one direction over the layer: a row of links_<scheme>.csv.
struct LinkStatistics {
  bool gpu_to_switch = true;  // else switch_to_gpu
  uint32_t gpu = 0;
  uint32_t link = 0;
  uint32_t chip = 0;
  uint32_t port = 0;
  uint64_t messages = 0;  // whose first packet the link carried (model::LinkStats)
  uint64_t packets = 0;
  uint64_t wire_bytes = 0;
  uint64_t payload_bytes = 0;
  double busy_us = 0.0;
  double utilization = 0.0;  // busy time over the layer time
};

// One row of stats_<scheme>.csv: one GPU link in one direction, one traffic class (VC class):
// the hop's sender (the GPU's link engine, or the switch chip's output port), what waited there,
// and for gpu_to_switch the switch input buffer the link feeds (docs/configuration.md).
struct HopStatistics {
  bool gpu_to_switch = true;  // else switch_to_gpu
  uint32_t gpu = 0;
  uint32_t link = 0;
  uint32_t chip = 0;
  uint32_t port = 0;
  uint32_t traffic_class = 0;  // model::TrafficClass
  uint64_t messages = 0;  // whose first packet the hop carried (model::LinkStats)
  uint64_t packets = 0;
  uint64_t sends = 0;     // transactions the queueing is averaged over (not a column)
  uint64_t wire_flits = 0;
  double queueing_mean_ns = 0.0;
  double queueing_max_ns = 0.0;
  double credit_stall_us = 0.0;
  double arbitration_wait_us = 0.0;     // switch_to_gpu: at the chip's output port
  double input_buffer_mean_flits = 0.0;  // gpu_to_switch: the switch input port's buffers
  uint64_t input_buffer_max_flits = 0;
};

// One row of latency_<scheme>.csv: messages of one kind whose injection-to-tail-arrival latency
// fell in [bin_start_ps, bin_end_ps).
struct LatencyBin {
  uint32_t opcode = 0;  // model::Opcode
  uint64_t bin_start_ps = 0;
  uint64_t bin_end_ps = 0;
  uint64_t messages = 0;
};

// What utilization_<scheme>.csv and trace_<scheme>.json show of one scheme's layer. Plain
// numbers rather than JSON: there are hundreds of thousands of them. Times are from the layer's
// start, in microseconds.
struct Timeline {
  double bin_us = 0.0;
  double first_bin_start_us = 0.0;  // bins are aligned to time 0: the first may start before the layer
  uint32_t gpus = 0;
  uint64_t bins = 0;
  // Each GPU's links' busy fraction per bin, [0] gpu_to_switch, [1] switch_to_gpu; the entry of
  // bin b and GPU g is [b * gpus + g].
  std::vector<double> utilization[2];
  struct Span {
    double start_us = 0.0;
    double end_us = 0.0;
    uint32_t gpu = 0;
    uint32_t name = 0;    // into `names`
    uint32_t stream = 0;  // of a compute span: the executor stream (SM group) it ran on
  };
  std::vector<std::string> names;  // the phases' names the spans refer to
  std::vector<Span> phases;        // every GPU's phases, GPU after GPU
  std::vector<Span> compute;       // every GPU's compute intervals, GPU after GPU
  // occupancy_<scheme>.csv, on the same bins: per chip the input buffers' flits and the
  // reduction buffers' bytes, each the bin's time-weighted mean and its maximum; the entry of bin b
  // and chip c is [b * chips + c].
  uint32_t chips = 0;
  std::vector<double> input_mean_flits;
  std::vector<double> input_max_flits;
  std::vector<double> reduction_mean_bytes;
  std::vector<double> reduction_max_bytes;
};

// What one scheme's run gave.
struct SchemeRun {
  nlohmann::json result;              // an entry of report.json's results[]; {"scheme", "error"} when it failed
  std::vector<LinkStatistics> links;  // none when it failed
  std::optional<Timeline> timeline;   // when it was asked for and the scheme ran
  std::vector<HopStatistics> hops;    // stats_<scheme>.csv; none when it failed
  std::vector<LatencyBin> latency;    // latency_<scheme>.csv; none when it failed
};

struct Report {
  nlohmann::json document;                         // report.json
  std::vector<std::vector<LinkStatistics>> links;  // per scheme, for links_<scheme>.csv
  std::vector<std::optional<Timeline>> timelines;  // per scheme, for utilization_<scheme>.csv and trace_<scheme>.json
  std::vector<std::vector<HopStatistics>> hops;    // per scheme, for stats_<scheme>.csv
  std::vector<std::vector<LatencyBin>> latency;    // per scheme, for latency_<scheme>.csv
  bool passed = false;
};

// report.json of the runs of the resolved layer's schemes (its summary of the workload from
// layer.parts: every partition's own), with the links', timelines' and statistics' data.
Report make_report(const Scenario& scenario, const ResolvedLayer& layer, std::vector<SchemeRun> runs,
                   double wall_seconds);
// Creates `out_dir` and writes report.json, every scheme's links CSV and the timeline files of
// those that have one. Throws std::runtime_error naming the path it cannot create or write.
void write_report_files(const Report& report, const std::string& out_dir);
void print_summary(const Report& report, const std::string& out_dir, std::ostream& os);

// The per-scheme file kinds a run writes, <kind>_<scheme>.<ext> (links, utilization, trace, ...).
const std::vector<std::string>& run_output_kinds();
// What stands for the scheme in the file names of a degree search's candidate: <scheme>_degree<d>.
constexpr const char* kDegreeCandidateMarker = "_degree";
inline std::string degree_candidate_label(const std::string& scheme, uint32_t degree) {
  return scheme + kDegreeCandidateMarker + std::to_string(degree);
}
// The files of `dir` that an earlier run wrote and this one would not overwrite as they are:
// report.json (and a report.json.partial a failed write left), stream.csv and every
// <kind>_<scheme>.<ext> of run_output_kinds() and fw::scheme_names(). Nothing
// else (scenario.yaml, which may be the run's input, and files nvsvp does not write stay).
std::vector<std::string> earlier_run_outputs(const std::string& dir);
// Removes earlier_run_outputs(dir); throws std::runtime_error naming a file it cannot remove.
void remove_earlier_run_outputs(const std::string& dir);
// A run's hold on its output folder: an exclusive lock on DIR/.nvsvp_run.lock for as long as
// it lives, so that a second run into a folder in use is refused instead of mixing its files
// with the first one's.
class OutputFolderLock {
 public:
  // ConfigError (--out) when another process holds the folder; its pid is named.
  explicit OutputFolderLock(const std::string& out_dir);
  OutputFolderLock(OutputFolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OutputFolderLock(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(OutputFolderLock&&) = delete;
  ~OutputFolderLock();

 private:
  int fd_ = -1;
};

// Readies `out_dir` for a run and holds it (the lock returned) until the run ends: creates it
// (ConfigError naming --out when it cannot be made or written), refuses it when another run holds
// it, removes an earlier run's outputs and writes scenario.yaml, the effective scenario
// (dump_effective), which `nvsvp run` reruns as it is.
[[nodiscard]] OutputFolderLock prepare_output_directory(const Scenario& scenario, const std::string& out_dir);
// report.json's `nvsvp` section: version, git_commit and the command line that made the report.
nlohmann::json nvsvp_build_json(const std::string& command_line);

}  // namespace nvsvp::platform
