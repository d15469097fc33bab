#include "nvsvp/platform/report.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "nvsvp/fw/replication_stream.hpp"
#include "nvsvp/model/message_kind.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario_sections.hpp"
#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

// The scenario's routing as report.json shows it: the keys of its kind, as the routing section
// declares them (scenario_sections.hpp), with their values as read.
class RoutingSummary {
 public:
  template <class T, class Rule>
  void operator()(const char* key, const T& value, const char*, const Rule&, const KeyUse& use = {}) {
    if (!kind_.applies(use)) return;
    summary[key] = value;
    kind_.note(value, use);
  }
  void origin(const std::string&) {}

  json summary = json::object();

 private:
  SectionKind kind_;
};

json routing_summary(const RoutingSpec& routing) {
  RoutingSpec copy = routing;  // visit_section() takes what it visits by non-const reference
  RoutingSummary summary;
  visit_section(summary, copy);
  return summary.summary;
}

}  // namespace

Report make_report(const Scenario& scenario, const fw::MoeLayerSpec& layer, std::vector<SchemeRun> runs,
                   double wall_seconds) {
  Report report;
  report.passed = true;
  uint64_t transactions = 0;
  double peak_rss = 0.0;
  std::vector<json> results;
  for (SchemeRun& run : runs) {
    results.push_back(std::move(run.result));
    report.links.push_back(std::move(run.links));
    report.timelines.push_back(std::move(run.timeline));
    report.hops.push_back(std::move(run.hops));
    report.latency.push_back(std::move(run.latency));
    json& r = results.back();
    if (r.contains("error")) {
      report.passed = false;
      continue;
    }
    report.passed = report.passed && r["checks"]["passed"].get<bool>();
    transactions += r["sim"]["transactions"].get<uint64_t>();
    peak_rss = std::max(peak_rss, r["sim"]["peak_rss_mb"].get<double>());
  }
  // The layer, or each partition's (its own GPUs and routing seed): tokens and copies summed.
  const std::vector<std::shared_ptr<const fw::MoeLayerSpec>> parts =
      layer_part_specs(scenario, std::shared_ptr<const fw::MoeLayerSpec>(&layer, [](const fw::MoeLayerSpec*) {}));
  uint64_t tokens = 0, copies = 0;
  json partitions = json::array();
  for (size_t p = 0; p < parts.size(); ++p) {
    const fw::MoeRouting& routing = parts[p]->routing;
    uint64_t part_copies = 0;
    std::vector<uint32_t> dests;
    for (uint64_t t = 0; t < routing.tokens(); ++t) {
      fw::destination_gpus(routing, t, dests);
      part_copies += dests.size();
    }
    tokens += routing.tokens();
    copies += part_copies;
    if (!scenario.partitions.empty()) {
      partitions.push_back({{"gpus", scenario.partitions[p]},
                            {"routing_seed", partition_alone(scenario, p).workload.routing.seed},
                            {"tokens", routing.tokens()},
                            {"token_copies", part_copies}});
    }
  }
  const PlatformSpec& p = scenario.platform;
  report.document = {
      {"scenario",
       {{"name", scenario.name},
        {"file", scenario.file},
        {"platform", p.preset},
        {"gpus", p.gpus},
        {"switch_chips", p.switch_chips},
        {"links_per_gpu", p.links_per_gpu()},
        {"model", layer.model.name},
        {"experts", layer.model.experts},
        {"top_k", layer.top_k},
        {"tokens_per_gpu", layer.tokens_per_gpu},
        {"pass", fw::to_string(layer.pass)},
        {"dispatch_dtype", fw::to_string(layer.dispatch_dtype)},
        {"combine_dtype", fw::to_string(layer.combine_dtype)},
        {"weight_dtype", fw::to_string(layer.weight_dtype)},
        {"routing", routing_summary(scenario.workload.routing)},
        {"pure_communication", scenario.pure_communication}}},
      {"workload",
       {{"tokens", tokens},
        {"token_copies", copies},
        {"destinations_per_token", tokens ? static_cast<double>(copies) / tokens : 0.0},
        {"dispatch_bytes_per_token", fw::vector_bytes(layer.dispatch_dtype, layer.model.hidden)},
        {"combine_bytes_per_token", fw::vector_bytes(layer.combine_dtype, layer.model.hidden)}}},
      {"results", results},
      {"sim", {{"wall_seconds", wall_seconds}, {"transactions", transactions}, {"peak_rss_mb", peak_rss}}},
      {"passed", report.passed},
  };
  if (!scenario.partitions.empty()) report.document["workload"]["partitions"] = partitions;
  return report;
}

namespace {

// A text file filled through a buffer that is written out a chunk at a time, so that no file is
// ever held whole in memory. Throws "cannot write PATH" when the file cannot be opened or written.
class TextFile {
 public:
  explicit TextFile(std::string path) : path_(std::move(path)), file_(path_, std::ios::binary) {
    if (!file_) fail();
    text_.reserve(2 * kChunk);
  }
  // Append here; call flush_if_full() now and then.
  std::string& text() { return text_; }
  void flush_if_full() {
    if (text_.size() >= kChunk) flush();
  }
  void close() {
    flush();
    file_.close();
    if (!file_) fail();
  }

 private:
  static constexpr size_t kChunk = 1 << 20;
  void flush() {
    file_.write(text_.data(), static_cast<std::streamsize>(text_.size()));
    if (!file_) fail();
    text_.clear();
  }
  [[noreturn]] void fail() const { throw std::runtime_error("cannot write " + path_); }

  std::string path_;
  std::ofstream file_;
  std::string text_;
};

// Numbers as text, without streams or a JSON document (a run writes millions of them).
void append_integer(std::string& out, uint64_t value) {
  char buffer[24];
  const char* end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, static_cast<size_t>(end - buffer));
}

// As an ostream prints it by default (printf's %g: 6 significant digits), which the utilization
// CSV has always used.
void append_general(std::string& out, double value) {
  char buffer[32];
  const char* end = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 6).ptr;
  out.append(buffer, static_cast<size_t>(end - buffer));
}

// As nlohmann::json's dump() writes it (the shortest text that reads back exactly, "0.0" for
// zero), so the links CSV and the trace keep the text they had when written from JSON documents.
void append_json_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[64];
  const char* end = nlohmann::detail::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, static_cast<size_t>(end - buffer));
}

std::string json_string(const std::string& text) { return json(text).dump(); }

// utilization_<scheme>.csv: per bin (time from the layer's start), the mean utilization of all
// GPU links of each direction, then each GPU's links per direction.
void write_utilization_csv(const Timeline& timeline, const std::string& path) {
  TextFile file(path);
  std::string& out = file.text();
  const size_t gpus = timeline.gpus;
  out += "time_us,gpu_to_switch,switch_to_gpu";
  for (size_t g = 0; g < gpus; ++g) {
    out += ",gpu";
    append_integer(out, g);
    out += "_to_switch,switch_to_gpu";
    append_integer(out, g);
  }
  out += "\n";
  const size_t bins = gpus > 0 ? timeline.bins : 0;
  for (size_t b = 0; b < bins; ++b) {
    const double* up = &timeline.utilization[0][b * gpus];
    const double* down = &timeline.utilization[1][b * gpus];
    double up_sum = 0.0, down_sum = 0.0;
    for (size_t g = 0; g < gpus; ++g) {
      up_sum += up[g];
      down_sum += down[g];
    }
    append_general(out, timeline.first_bin_start_us + static_cast<double>(b) * timeline.bin_us);
    out += ',';
    append_general(out, up_sum / static_cast<double>(gpus));
    out += ',';
    append_general(out, down_sum / static_cast<double>(gpus));
    for (size_t g = 0; g < gpus; ++g) {
      out += ',';
      append_general(out, up[g]);
      out += ',';
      append_general(out, down[g]);
    }
    out += '\n';
    file.flush_if_full();
  }
  file.close();
}

// Chrome / Perfetto trace events appended to `out`, each event's keys in the order nlohmann::json
// sorts them: every event ends with "ph", "pid", "tid" (if any) and "ts" (if any).
class TraceEvents {
 public:
  explicit TraceEvents(std::string& out) : out_(out) {}

  void metadata(const char* kind, uint32_t pid, const std::string& name, std::optional<uint32_t> tid) {
    begin_event();
    out_ += "\"args\":{\"name\":";
    out_ += json_string(name);
    out_ += "},\"name\":\"";
    out_ += kind;
    out_ += "\",";
    end_event('M', pid, tid, std::nullopt);
  }
  void slice(uint32_t pid, uint32_t tid, const std::string& quoted_name, double start_us, double duration_us) {
    begin_event();
    out_ += "\"dur\":";
    append_json_number(out_, duration_us);
    out_ += ",\"name\":";
    out_ += quoted_name;
    out_ += ',';
    end_event('X', pid, tid, start_us);
  }
  void utilization(uint32_t pid, double ts_us, double to_switch, double to_gpu) {
    begin_event();
    out_ += "\"args\":{\"gpu_to_switch\":";
    append_json_number(out_, to_switch);
    out_ += ",\"switch_to_gpu\":";
    append_json_number(out_, to_gpu);
    out_ += "},\"name\":\"link utilization\",";
    end_event('C', pid, std::nullopt, ts_us);
  }

 private:
  void begin_event() {
    out_ += first_event_ ? "{" : ",{";
    first_event_ = false;
  }
  void end_event(char ph, uint32_t pid, std::optional<uint32_t> tid, std::optional<double> ts_us) {
    out_ += "\"ph\":\"";
    out_ += ph;
    out_ += "\",\"pid\":";
    append_integer(out_, pid);
    if (tid) {
      out_ += ",\"tid\":";
      append_integer(out_, *tid);
    }
    if (ts_us) {
      out_ += ",\"ts\":";
      append_json_number(out_, *ts_us);
    }
    out_ += '}';
  }

  std::string& out_;
  bool first_event_ = true;
};

// A span's start and end in whole nanoseconds, as Perfetto reads the trace's microseconds
// (rounded to the nearest nanosecond): the trace writes these, so that the tracks below are
// disjoint as Perfetto sees them.
struct SpanNs {
  long long start = 0;
  long long end = 0;
};
SpanNs span_ns(const Timeline::Span& span) {
  return {std::llround(span.start_us * 1000.0), std::llround(span.end_us * 1000.0)};
}

// Perfetto keeps slices on one track only when they nest or are disjoint; it drops a slice that
// overlaps another without nesting. The spans of one kind (a GPU's phases, one executor stream's
// compute) overlap in the fused schedules, so each kind gets as many tracks as it needs: a span
// goes on the first track whose last span ended by its start (first fit over spans ordered by
// start).
std::vector<uint32_t> first_fit_tracks(const std::vector<SpanNs>& spans, uint32_t& tracks) {
  std::vector<size_t> order(spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a].start < spans[b].start; });
  std::vector<long long> track_end;  // per track, the end of its last span
  std::vector<uint32_t> track_of(spans.size(), 0);
  for (const size_t i : order) {
    uint32_t t = 0;
    while (t < track_end.size() && track_end[t] > spans[i].start) ++t;
    if (t == track_end.size()) track_end.push_back(0);
    track_end[t] = spans[i].end;
    track_of[i] = t;
  }
  tracks = static_cast<uint32_t>(track_end.size());
  return track_of;
}

// The name of track `index` of a kind: the kind's name, then "name (2)", "name (3)", ...
std::string track_name(const std::string& kind, uint32_t index) {
  return index == 0 ? kind : kind + " (" + std::to_string(index + 1) + ")";
}

// One kind of spans of one GPU on tracks of their own, from thread `next_tid` on.
void write_span_tracks(const std::vector<const Timeline::Span*>& spans, const std::string& kind,
                       const std::vector<std::string>& quoted_names, uint32_t gpu, uint32_t& next_tid,
                       TraceEvents& events) {
  std::vector<SpanNs> times;
  for (const Timeline::Span* span : spans) times.push_back(span_ns(*span));
  uint32_t tracks = 0;
  const std::vector<uint32_t> track_of = first_fit_tracks(times, tracks);
  for (uint32_t t = 0; t < tracks; ++t) events.metadata("thread_name", gpu, track_name(kind, t), next_tid + t);
  for (size_t i = 0; i < spans.size(); ++i) {
    events.slice(gpu, next_tid + track_of[i], quoted_names[spans[i]->name], static_cast<double>(times[i].start) / 1000.0,
                 static_cast<double>(times[i].end - times[i].start) / 1000.0);
  }
  next_tid += tracks;
}

// Each GPU's process: its phases on the "phases" tracks, its compute intervals on tracks per
// executor stream (SM group), "compute, stream S".
void write_gpu_slices(const Timeline& timeline, TraceEvents& events, TextFile& file) {
  std::vector<std::string> phase_names, compute_names;  // quoted, per name index
  for (const std::string& name : timeline.names) {
    phase_names.push_back(json_string(name));
    compute_names.push_back(json_string("compute (" + name + ")"));
  }
  auto phase = timeline.phases.begin();
  auto compute = timeline.compute.begin();
  for (uint32_t g = 0; g < timeline.gpus; ++g) {
    events.metadata("process_name", g, "GPU " + std::to_string(g), std::nullopt);
    uint32_t next_tid = 0;
    std::vector<const Timeline::Span*> spans;
    for (; phase != timeline.phases.end() && phase->gpu == g; ++phase) spans.push_back(&*phase);
    write_span_tracks(spans, "phases", phase_names, g, next_tid, events);
    std::vector<std::vector<const Timeline::Span*>> per_stream;
    for (; compute != timeline.compute.end() && compute->gpu == g; ++compute) {
      if (compute->stream >= per_stream.size()) per_stream.resize(compute->stream + 1);
      per_stream[compute->stream].push_back(&*compute);
    }
    for (uint32_t stream = 0; stream < per_stream.size(); ++stream) {
      if (per_stream[stream].empty()) continue;
      write_span_tracks(per_stream[stream], "compute, stream " + std::to_string(stream), compute_names, g, next_tid,
                        events);
    }
    file.flush_if_full();
  }
}

// The links' utilization as counters: each GPU's, and the mean over GPUs on the fabric process
// `fabric`. A sample where a value changes (and the last bin), so idle stretches cost nothing.
void write_utilization_counters(const Timeline& timeline, uint32_t fabric, TraceEvents& events, TextFile& file) {
  const uint32_t gpus = timeline.gpus;
  const size_t bins = gpus > 0 ? timeline.bins : 0;
  double last_up_mean = -1.0, last_down_mean = -1.0;
  std::vector<std::pair<double, double>> last(gpus, {-1.0, -1.0});
  for (size_t b = 0; b < bins; ++b) {
    const double ts_us = timeline.first_bin_start_us + static_cast<double>(b) * timeline.bin_us;
    const double* up = &timeline.utilization[0][b * gpus];
    const double* down = &timeline.utilization[1][b * gpus];
    double up_sum = 0.0, down_sum = 0.0;
    for (uint32_t g = 0; g < gpus; ++g) {
      const double u = up[g];
      const double d = down[g];
      up_sum += u;
      down_sum += d;
      if (u != last[g].first || d != last[g].second || b + 1 == bins) events.utilization(g, ts_us, u, d);
      last[g] = {u, d};
    }
    const double up_mean = up_sum / static_cast<double>(gpus);
    const double down_mean = down_sum / static_cast<double>(gpus);
    if (up_mean != last_up_mean || down_mean != last_down_mean || b + 1 == bins) {
      events.utilization(fabric, ts_us, up_mean, down_mean);
    }
    last_up_mean = up_mean;
    last_down_mean = down_mean;
    file.flush_if_full();
  }
}

// trace_<scheme>.json: Chrome / Perfetto trace events (open in ui.perfetto.dev or
// chrome://tracing). One process per GPU with its phases and its compute intervals (tracks per
// executor stream, i.e. SM group) as slices, overlapping ones on tracks of their own, and its
// links' utilization per direction as a counter; a "fabric" process with the mean over all GPUs. Written as text, each event's keys in
// the order nlohmann::json sorts them, so the file is the one the JSON document used to give.
void write_trace(const Timeline& timeline, const std::string& scheme, const std::string& path) {
  TextFile file(path);
  TraceEvents events(file.text());
  const uint32_t fabric = timeline.gpus;
  file.text() += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  events.metadata("process_name", fabric, "fabric (" + scheme + ")", std::nullopt);
  write_gpu_slices(timeline, events, file);
  write_utilization_counters(timeline, fabric, events, file);
  file.text() += "]}\n";
  file.close();
}

// links_<scheme>.csv: a row per link and direction (only the header when the scheme failed).
void write_links_csv(const std::vector<LinkStatistics>& links, const std::string& path) {
  TextFile file(path);
  std::string& out = file.text();
  out += "direction,gpu,link,chip,port,messages,wire_bytes,payload_bytes,busy_us,utilization\n";
  for (const LinkStatistics& l : links) {
    out += l.gpu_to_switch ? "gpu_to_switch," : "switch_to_gpu,";
    for (const uint64_t value : {uint64_t{l.gpu}, uint64_t{l.link}, uint64_t{l.chip}, uint64_t{l.port}, l.messages,
                                 l.wire_bytes, l.payload_bytes}) {
      append_integer(out, value);
      out += ',';
    }
    append_json_number(out, l.busy_us);
    out += ',';
    append_json_number(out, l.utilization);
    out += '\n';
  }
  file.close();
}

// stats_<scheme>.csv: a row per GPU link, direction and traffic class (only the header when the
// scheme failed). A column that does not apply to the row's direction is empty.
void write_stats_csv(const std::vector<HopStatistics>& hops, const std::string& path) {
  TextFile file(path);
  std::string& out = file.text();
  out += "component,direction,gpu,link,chip,port,vc_class,messages,wire_flits,queueing_mean_ns,queueing_max_ns,"
         "credit_stall_us,arbitration_wait_us,input_buffer_mean_flits,input_buffer_max_flits\n";
  for (const HopStatistics& h : hops) {
    out += h.gpu_to_switch ? "gpu_link_engine,gpu_to_switch," : "switch_output,switch_to_gpu,";
    for (const uint64_t value : {uint64_t{h.gpu}, uint64_t{h.link}, uint64_t{h.chip}, uint64_t{h.port}}) {
      append_integer(out, value);
      out += ',';
    }
    out += model::to_string(static_cast<model::TrafficClass>(h.traffic_class));
    out += ',';
    append_integer(out, h.messages);
    out += ',';
    append_integer(out, h.wire_flits);
    for (const double value : {h.queueing_mean_ns, h.queueing_max_ns, h.credit_stall_us}) {
      out += ',';
      append_json_number(out, value);
    }
    out += ',';
    if (!h.gpu_to_switch) append_json_number(out, h.arbitration_wait_us);
    out += ',';
    if (h.gpu_to_switch) append_json_number(out, h.input_buffer_mean_flits);
    out += ',';
    if (h.gpu_to_switch) append_integer(out, h.input_buffer_max_flits);
    out += '\n';
  }
  file.close();
}

// latency_<scheme>.csv: the fabric-wide latency histogram, a row per message class and bin that
// holds messages (only the header when the scheme failed).
void write_latency_csv(const std::vector<LatencyBin>& bins, const std::string& path) {
  TextFile file(path);
  std::string& out = file.text();
  out += "class,bin_start_ns,bin_end_ns,messages\n";
  for (const LatencyBin& b : bins) {
    out += model::to_string(static_cast<model::Opcode>(b.opcode));
    out += ',';
    append_json_number(out, static_cast<double>(b.bin_start_ps) / 1e3);
    out += ',';
    append_json_number(out, static_cast<double>(b.bin_end_ps) / 1e3);
    out += ',';
    append_integer(out, b.messages);
    out += '\n';
  }
  file.close();
}

// occupancy_<scheme>.csv: per bin (time from the layer's start), every chip's input buffers
// (flits) and reduction buffers (bytes), the bin's time-weighted mean and maximum.
void write_occupancy_csv(const Timeline& timeline, const std::string& path) {
  TextFile file(path);
  std::string& out = file.text();
  const size_t chips = timeline.chips;
  out += "time_us";
  for (size_t c = 0; c < chips; ++c) {
    for (const char* series : {"_input_mean_flits", "_input_max_flits", "_reduction_mean_bytes",
                               "_reduction_max_bytes"}) {
      out += ",switch";
      append_integer(out, c);
      out += series;
    }
  }
  out += "\n";
  const size_t bins = chips > 0 ? timeline.bins : 0;
  for (size_t b = 0; b < bins; ++b) {
    append_general(out, timeline.first_bin_start_us + static_cast<double>(b) * timeline.bin_us);
    for (size_t c = 0; c < chips; ++c) {
      const size_t i = b * chips + c;
      for (const double value : {timeline.input_mean_flits[i], timeline.input_max_flits[i],
                                 timeline.reduction_mean_bytes[i], timeline.reduction_max_bytes[i]}) {
        out += ',';
        append_general(out, value);
      }
    }
    out += '\n';
  }
  file.close();
}

}  // namespace

void write_report_files(const Report& report, const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw std::runtime_error("cannot create output directory " + out_dir + ": " + ec.message());
  {
    TextFile file(out_dir + "/report.json");
    file.text() = report.document.dump(2) + "\n";
    file.close();
  }
  const json& results = report.document["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string scheme = results[i]["scheme"].get<std::string>();
    write_links_csv(report.links[i], out_dir + "/links_" + scheme + ".csv");
    write_stats_csv(report.hops[i], out_dir + "/stats_" + scheme + ".csv");
    write_latency_csv(report.latency[i], out_dir + "/latency_" + scheme + ".csv");
    if (!report.timelines[i]) continue;
    write_utilization_csv(*report.timelines[i], out_dir + "/utilization_" + scheme + ".csv");
    write_occupancy_csv(*report.timelines[i], out_dir + "/occupancy_" + scheme + ".csv");
    write_trace(*report.timelines[i], scheme, out_dir + "/trace_" + scheme + ".json");
  }
}

namespace {

std::string percent_or_dash(const json& fraction) {
  return fraction.is_null() ? std::string("-") : fixed(100.0 * fraction.get<double>(), 1) + " %";
}

// The replication stream (report.json's `stream`): per policy the excess removed over the run, and
// with simulated iterations the MoE layer's and the whole model's prefill gains.
void print_stream_summary(const json& stream, std::ostream& os) {
  os << "stream: " << stream["layers"] << " layer(s) x " << stream["iterations"] << " iterations ("
     << stream["file"].get<std::string>() << ")\n";
  os << std::left << std::setw(22) << "  policy" << std::right << std::setw(16) << "excess_removed" << std::setw(18)
     << "max/mean_before" << std::setw(17) << "max/mean_after" << std::setw(14) << "replicas/it" << "\n";
  for (const fw::ReplicationPolicy policy : fw::kStreamPolicies) {
    const std::string name = fw::to_string(policy);
    const json& p = stream["policies"][name];
    os << std::left << std::setw(22) << std::string("  ") + name << std::right << std::setw(16)
       << percent_or_dash(p["removed_fraction"]) << std::setw(18) << fixed(p["mean_max_over_mean_before"].get<double>(), 3)
       << std::setw(17) << fixed(p["mean_max_over_mean_after"].get<double>(), 3) << std::setw(14)
       << fixed(p["mean_replicas"].get<double>(), 1) << "\n";
  }
  for (const auto& [scheme, g] : stream["layer_time_gains"].items()) {
    os << "  " << scheme << " MoE layer (simulated): none " << fixed(g["none_layer_time_us"].get<double>(), 1)
       << " us, static " << fixed(g["static_layer_time_us"].get<double>(), 1) << " us, iser "
       << fixed(g["iser_layer_time_us"].get<double>(), 1) << " us; iser gains " << percent_or_dash(g["iser_gain_over_none"])
       << " over none, " << percent_or_dash(g["iser_gain_over_static"]) << " over static\n";
  }
  if (!stream["passed"].get<bool>()) {
    os << "stream failed:\n";
    for (const json& v : stream["violations"]) os << "  " << v.get<std::string>() << "\n";
  }
  const json& prefill = stream["prefill"];
  if (!prefill.is_object()) return;
  for (const auto& [scheme, p] : prefill["schemes"].items()) {
    const json& t = p["policies"];
    os << "  " << scheme << " whole-model prefill per iteration: none "
       << fixed(t["none"]["model_time_us"].get<double>() / 1e3, 1) << " ms, static "
       << fixed(t["static"]["model_time_us"].get<double>() / 1e3, 1) << " ms, iser "
       << fixed(t["iser"]["model_time_us"].get<double>() / 1e3, 1) << " ms; iser gains "
       << percent_or_dash(p["iser_gain_over_none"]) << " over none, " << percent_or_dash(p["iser_gain_over_static"])
       << " over static\n";
  }
}

// An inference request (report.json's `step`): per scheme the request, the first token, each
// output token, and a decode step's MoE layer and its fixed costs.
void print_inference_summary(const json& step, std::ostream& os) {
  os << "inference: " << step["layers"] << " layers (" << step["simulated_layers"].size() << " of "
     << step["moe_layers"] << " MoE layers simulated), " << step["sequences_per_gpu"] << " sequence(s) per GPU of "
     << step["prompt_tokens"] << " prompt tokens, " << step["decode_steps"] << " decode steps\n";
  os << std::left << std::setw(28) << "  scheme" << std::right << std::setw(12) << "request_ms" << std::setw(12)
     << "ttft_ms" << std::setw(12) << "tpot_us" << std::setw(14) << "out_tok/s" << std::setw(18) << "decode_moe_us"
     << std::setw(20) << "decode_fixed_us" << "\n";
  for (const auto& [scheme, s] : step["schemes"].items()) {
    os << std::left << std::setw(28) << "  " + scheme << std::right << std::setw(12)
       << fixed(s["step_time_us"].get<double>() / 1e3, 2) << std::setw(12)
       << fixed(s["time_to_first_token_us"].get<double>() / 1e3, 2) << std::setw(12)
       << fixed(s["time_per_output_token_us"].get<double>(), 1) << std::setw(14)
       << fixed(s["tokens_per_second"].get<double>(), 0) << std::setw(18)
       << fixed(s["moe_layer_us"]["decode"].get<double>(), 1) << std::setw(20)
       << fixed(s["software_delays_us"]["decode"].get<double>(), 1) << "\n";
  }
  os << "  (decode_moe_us: one MoE layer of a decode step; decode_fixed_us: its software delays)\n";
  for (const json& failure : step["failures"]) os << "  FAILED " << failure.get<std::string>() << "\n";
}

// The training step (report.json's `step`): per scheme its time, throughput and where it goes.
void print_step_summary(const json& step, std::ostream& os) {
  if (step["kind"] == "inference") {
    print_inference_summary(step, os);
    return;
  }
  os << "step: " << step["kind"].get<std::string>() << ", " << step["layers"] << " layers ("
     << step["simulated_layers"].size() << " of " << step["moe_layers"] << " MoE layers simulated), "
     << step["micro_batches"] << " micro batches, " << step["pipeline"]["stages"] << " stage(s) "
     << step["pipeline"]["schedule"].get<std::string>() << "\n";
  const char* const parts[] = {"attention_us", "dense_us", "moe_compute_us", "exposed_comm_us", "pipeline_bubble_us"};
  os << std::left << std::setw(28) << "  scheme" << std::right << std::setw(12) << "step_ms" << std::setw(14)
     << "tokens/s";
  for (const char* part : parts) os << std::setw(20) << std::string(part).substr(0, std::string(part).size() - 3);
  os << "\n";
  for (const auto& [scheme, s] : step["schemes"].items()) {
    const json& b = s["breakdown"];
    os << std::left << std::setw(28) << "  " + scheme << std::right << std::setw(12)
       << fixed(s["step_time_us"].get<double>() / 1e3, 2) << std::setw(14)
       << fixed(s["tokens_per_second"].get<double>(), 0);
    for (const char* part : parts) os << std::setw(20) << fixed(b[part].get<double>() / 1e3, 2);
    os << "\n";
  }
  os << "  (parts in ms per step, each stage's on average)\n";
  for (const json& failure : step["failures"]) os << "  FAILED " << failure.get<std::string>() << "\n";
}

}  // namespace

void print_summary(const Report& report, const std::string& out_dir, std::ostream& os) {
  const json& doc = report.document;
  const json& s = doc["scenario"];
  os << "scenario " << s["name"].get<std::string>() << ": " << s["platform"].get<std::string>() << " ("
     << s["gpus"] << " GPUs, " << s["switch_chips"] << " switch chips, " << s["links_per_gpu"]
     << " links/GPU), model " << s["model"].get<std::string>() << " top-" << s["top_k"] << ", "
     << s["tokens_per_gpu"] << " tokens/GPU, routing " << s["routing"]["kind"].get<std::string>();
  if (s["routing"].contains("seed")) os << " seed " << s["routing"]["seed"];
  if (s["routing"].contains("file")) os << " " << s["routing"]["file"].get<std::string>();
  os << "\n";
  os << std::left << std::setw(22) << "scheme" << std::right << std::setw(12) << "layer_us"
     << std::setw(14) << "gpu->sw_MB" << std::setw(14) << "sw->gpu_MB" << std::setw(10) << "util_up"
     << std::setw(10) << "util_dn" << std::setw(22) << "copies_delivered" << std::setw(16)
     << "combine_errors" << std::setw(8) << "check" << "\n";
  for (const json& r : doc["results"]) {
    os << std::left << std::setw(22) << r["scheme"].get<std::string>() << std::right;
    if (r.contains("error")) {
      os << "  ERROR: " << r["error"].get<std::string>() << "\n";
      continue;
    }
    const json& c = r["checks"];
    const std::string copies = std::to_string(c["token_copies_delivered"].get<uint64_t>()) + "/" +
                               std::to_string(c["token_copies_expected"].get<uint64_t>());
    os << std::setw(12) << fixed(r["layer_time_us"].get<double>(), 2) << std::setw(14)
       << fixed(r["traffic_bytes"]["gpu_to_switch"].get<double>() / 1e6, 2) << std::setw(14)
       << fixed(r["traffic_bytes"]["switch_to_gpu"].get<double>() / 1e6, 2) << std::setw(10)
       << fixed(r["utilization"]["gpu_to_switch"].get<double>(), 3) << std::setw(10)
       << fixed(r["utilization"]["switch_to_gpu"].get<double>(), 3) << std::setw(22) << copies
       << std::setw(16) << c["combine_errors"].get<uint64_t>() << std::setw(8)
       << (c["passed"].get<bool>() ? "ok" : "FAILED") << "\n";
    std::vector<std::tuple<double, double, std::string>> ordered;  // by start time
    for (const auto& [phase, t] : r["phases"].items()) {
      ordered.emplace_back(t["start_us"].get<double>(), t["end_us"].get<double>(), phase);
    }
    std::sort(ordered.begin(), ordered.end());
    std::string phases;
    for (const auto& [start, end, phase] : ordered) {
      phases += (phases.empty() ? "" : ", ") + phase + " " + fixed(start, 1) + "-" + fixed(end, 1);
    }
    if (!phases.empty()) os << std::left << std::setw(22) << "" << "phases (us): " << phases << "\n";
    os << std::left << std::setw(22) << "" << "ideal communication " << fixed(r["ideal_comm_time_us"].get<double>(), 2)
       << " us (busiest GPU and direction, all its links busy), communication efficiency "
       << fixed(r["comm_efficiency"].get<double>(), 3) << "\n";
    // Hot-expert replication: how far the loads were levelled, and whether the broadcast hid.
    const json& rep = r["replication"];
    if (rep.is_object() && (rep["policy"] != "none" || rep["shared_experts"].get<uint32_t>() > 0)) {
      os << std::left << std::setw(22) << "" << "replication " << rep["policy"].get<std::string>();
      if (rep["broadcast"].is_string()) os << " (" << rep["broadcast"].get<std::string>() << ")";
      os << ": " << rep["replicas"].size() << " hot experts replicated, max/mean load "
         << fixed(rep["max_mean_before"].get<double>(), 3) << " -> " << fixed(rep["max_mean_after"].get<double>(), 3)
         << ", excess removed "
         << (rep["excess_load_removed"].is_null() ? std::string("-") : fixed(rep["excess_load_removed"].get<double>(), 3))
         << "; shared experts " << fixed(rep["shared_expert_time_us"].get<double>(), 1) << " us, broadcast "
         << fixed(rep["broadcast_time_us"].get<double>(), 1) << " us ("
         << (rep["hidden"].get<bool>() ? "hidden" : "exposed " + fixed(rep["exposed_broadcast_us"].get<double>(), 1) + " us")
         << ")\n";
    }
    // What the switches computed, for the multimem schemes.
    const json& sw = r["switch"];
    if (sw["replications"].get<uint64_t>() > 0 || sw["access_errors"].get<uint64_t>() > 0) {
      os << std::left << std::setw(22) << "" << "switch: " << sw["replications"].get<uint64_t>() << " replications, "
         << sw["reductions"].get<uint64_t>() << " reductions, " << sw["evictions"].get<uint64_t>() << " evictions, "
         << sw["access_errors"].get<uint64_t>() << " access errors; payload efficiency "
         << fixed(r["payload_efficiency"]["total"].get<double>(), 4);
      if (!r["hub"]["cache_hit_rate"].is_null()) {
        os << "; Hub cache hit rate " << fixed(r["hub"]["cache_hit_rate"].get<double>(), 4);
      }
      os << "\n";
    }
  }
  for (const json& r : doc["results"]) {
    if (r.contains("error") || r["checks"]["passed"].get<bool>()) continue;
    const json& c = r["checks"];
    os << "scheme " << r["scheme"].get<std::string>() << " failed its checks:\n";
    if (!c["stuck"].is_null()) os << c["stuck"].get<std::string>();
    if (!c["violations"].empty()) os << "first violations:\n";
    for (const json& v : c["violations"]) os << "  " << v.get<std::string>() << "\n";
  }
  for (const json& r : doc["results"]) {
    if (r.contains("error")) continue;
    const json& sim = r["sim"];
    os << "sim " << r["scheme"].get<std::string>() << ": " << fixed(sim["wall_seconds"].get<double>(), 3)
       << " s wall, " << sim["transactions"].get<uint64_t>() << " link transactions, "
       << fixed(sim["remote_token_copies_per_wall_second"].get<double>() / 1e6, 3)
       << " M remote token copies/s, peak RSS " << fixed(sim["peak_rss_mb"].get<double>(), 1) << " MB\n";
  }
  if (doc.contains("stream")) print_stream_summary(doc["stream"], os);
  if (doc.contains("step")) print_step_summary(doc["step"], os);
  os << "report: " << out_dir << "/report.json\n";
}

}  // namespace nvsvp::platform
