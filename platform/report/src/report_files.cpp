// The files of a run (write_report_files, report.hpp): report.json, and per scheme the link,
// statistics, latency, utilization and occupancy CSVs and the Perfetto trace, each written as text
// straight from the numbers, a chunk at a time.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "nvsvp/model/message_kind.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

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
  out += "direction,gpu,link,chip,port,messages,packets,wire_bytes,payload_bytes,busy_us,utilization\n";
  for (const LinkStatistics& l : links) {
    out += l.gpu_to_switch ? "gpu_to_switch," : "switch_to_gpu,";
    for (const uint64_t value : {uint64_t{l.gpu}, uint64_t{l.link}, uint64_t{l.chip}, uint64_t{l.port}, l.messages,
                                 l.packets, l.wire_bytes, l.payload_bytes}) {
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
  out += "component,direction,gpu,link,chip,port,vc_class,messages,packets,wire_flits,queueing_mean_ns,queueing_max_ns,"
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
    append_integer(out, h.packets);
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
  // The report last, whole or not at all: written beside, then renamed over. A write that failed
  // above (a full disk) leaves no report saying the run passed.
  const std::string path = out_dir + "/report.json";
  {
    TextFile file(path + ".partial");
    file.text() = report.document.dump(2) + "\n";
    file.close();
  }
  std::filesystem::rename(path + ".partial", path, ec);
  if (ec) throw std::runtime_error("cannot write " + path + ": " + ec.message());
}

}  // namespace nvsvp::platform
