#include "nvsvp/platform/report.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

json routing_summary(const RoutingSpec& r) {
  json j = {{"kind", r.kind}};
  if (r.kind != "trace") j["seed"] = r.seed;
  if (r.kind == "normal") j["std"] = r.std;
  if (r.kind == "zipf") j["exponent"] = r.exponent;
  if (r.kind == "trace") j["file"] = r.file;
  return j;
}

}  // namespace

Report make_report(const Scenario& scenario, const fw::MoeLayerSpec& layer, std::vector<json> results,
                   double wall_seconds) {
  Report report;
  report.passed = true;
  uint64_t transactions = 0;
  double peak_rss = 0.0;
  for (json& r : results) {
    // Bulky per-link and per-bin data go to their own files, not into report.json.
    for (auto [key, kept] : {std::pair{"links", &report.link_stats}, std::pair{"timeline", &report.timelines}}) {
      if (r.contains(key)) {
        kept->push_back(std::move(r[key]));
        r.erase(key);
      } else {
        kept->push_back(json());
      }
    }
    if (r.contains("error")) {
      report.passed = false;
      continue;
    }
    report.passed = report.passed && r["checks"]["passed"].get<bool>();
    transactions += r["sim"]["transactions"].get<uint64_t>();
    peak_rss = std::max(peak_rss, r["sim"]["peak_rss_mb"].get<double>());
  }
  const fw::MoeRouting& routing = layer.routing;
  uint64_t copies = 0;
  std::vector<uint32_t> dests;
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    fw::destination_gpus(routing, t, dests);
    copies += dests.size();
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
        {"dispatch_dtype", fw::to_string(layer.dispatch_dtype)},
        {"combine_dtype", fw::to_string(layer.combine_dtype)},
        {"routing", routing_summary(scenario.workload.routing)},
        {"pure_communication", scenario.pure_communication}}},
      {"workload",
       {{"tokens", routing.tokens()},
        {"token_copies", copies},
        {"destinations_per_token", routing.tokens() ? static_cast<double>(copies) / routing.tokens() : 0.0},
        {"dispatch_bytes_per_token", fw::vector_bytes(layer.dispatch_dtype, layer.model.hidden)},
        {"combine_bytes_per_token", fw::vector_bytes(layer.combine_dtype, layer.model.hidden)}}},
      {"results", results},
      {"sim", {{"wall_seconds", wall_seconds}, {"transactions", transactions}, {"peak_rss_mb", peak_rss}}},
      {"passed", report.passed},
  };
  return report;
}

namespace {

// utilization_<scheme>.csv: per bin (time from the layer's start), the mean utilization of all
// GPU links of each direction, then each GPU's links per direction.
void write_utilization_csv(const json& timeline, const std::string& path) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  const json& up = timeline["gpu_to_switch"];
  const json& down = timeline["switch_to_gpu"];
  const size_t gpus = up.size();
  f << "time_us,gpu_to_switch,switch_to_gpu";
  for (size_t g = 0; g < gpus; ++g) f << ",gpu" << g << "_to_switch,switch_to_gpu" << g;
  f << "\n";
  const size_t bins = gpus > 0 ? up[0].size() : 0;
  const double bin_us = timeline["bin_us"].get<double>();
  const double first_us = timeline["first_bin_start_us"].get<double>();
  for (size_t b = 0; b < bins; ++b) {
    double up_sum = 0.0, down_sum = 0.0;
    for (size_t g = 0; g < gpus; ++g) {
      up_sum += up[g][b].get<double>();
      down_sum += down[g][b].get<double>();
    }
    f << first_us + static_cast<double>(b) * bin_us << "," << up_sum / static_cast<double>(gpus) << ","
      << down_sum / static_cast<double>(gpus);
    for (size_t g = 0; g < gpus; ++g) f << "," << up[g][b].get<double>() << "," << down[g][b].get<double>();
    f << "\n";
  }
}

// trace_<scheme>.json: Chrome / Perfetto trace events (open in ui.perfetto.dev or
// chrome://tracing). One process per GPU with its phases and its compute intervals (a thread per
// executor stream, i.e. SM group) as slices and its links' utilization per direction as a
// counter; a "fabric" process with the mean over all GPUs.
void write_trace(const json& timeline, const std::string& scheme, const std::string& path) {
  json events = json::array();
  auto name_thread = [&](int pid, int tid, const std::string& name) {
    events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", name}}}});
  };
  const json& gpus = timeline["gpus"];
  const json& up = timeline["gpu_to_switch"];
  const json& down = timeline["switch_to_gpu"];
  const double bin_us = timeline["bin_us"].get<double>();
  const double first_us = timeline["first_bin_start_us"].get<double>();
  const int fabric = static_cast<int>(gpus.size());
  events.push_back({{"ph", "M"}, {"pid", fabric}, {"name", "process_name"}, {"args", {{"name", "fabric (" + scheme + ")"}}}});
  for (size_t g = 0; g < gpus.size(); ++g) {
    const int pid = static_cast<int>(g);
    events.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", "GPU " + std::to_string(g)}}}});
    name_thread(pid, 0, "phases");
    for (const json& p : gpus[g]["phases"]) {
      events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", 0}, {"name", p[0]}, {"ts", p[1]},
                        {"dur", p[2].get<double>() - p[1].get<double>()}});
    }
    // Compute on one thread per executor stream (SM group).
    std::vector<bool> named;
    for (const json& c : gpus[g]["compute"]) {
      const auto stream = c[3].get<uint32_t>();
      if (stream >= named.size()) named.resize(stream + 1, false);
      if (!named[stream]) name_thread(pid, 1 + static_cast<int>(stream), "compute, stream " + std::to_string(stream));
      named[stream] = true;
      events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", 1 + static_cast<int>(stream)},
                        {"name", "compute (" + c[0].get<std::string>() + ")"}, {"ts", c[1]},
                        {"dur", c[2].get<double>() - c[1].get<double>()}});
    }
  }
  // Counters: a sample where a value changes (and the last bin), so idle stretches cost nothing.
  const size_t bins = gpus.empty() ? 0 : up[0].size();
  auto counter = [&](int pid, size_t b, double to_switch, double to_gpu) {
    events.push_back({{"ph", "C"}, {"pid", pid}, {"name", "link utilization"}, {"ts", first_us + static_cast<double>(b) * bin_us},
                      {"args", {{"gpu_to_switch", to_switch}, {"switch_to_gpu", to_gpu}}}});
  };
  double last_up_mean = -1.0, last_down_mean = -1.0;
  std::vector<std::pair<double, double>> last(gpus.size(), {-1.0, -1.0});
  for (size_t b = 0; b < bins; ++b) {
    double up_sum = 0.0, down_sum = 0.0;
    for (size_t g = 0; g < gpus.size(); ++g) {
      const double u = up[g][b].get<double>();
      const double d = down[g][b].get<double>();
      up_sum += u;
      down_sum += d;
      if (u != last[g].first || d != last[g].second || b + 1 == bins) counter(static_cast<int>(g), b, u, d);
      last[g] = {u, d};
    }
    const double up_mean = up_sum / static_cast<double>(gpus.size());
    const double down_mean = down_sum / static_cast<double>(gpus.size());
    if (up_mean != last_up_mean || down_mean != last_down_mean || b + 1 == bins) counter(fabric, b, up_mean, down_mean);
    last_up_mean = up_mean;
    last_down_mean = down_mean;
  }
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump() << "\n";
}

void write_timeline_files(const Report& report, const std::string& out_dir) {
  const json& results = report.document["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    if (report.timelines[i].is_null()) continue;
    const std::string scheme = results[i]["scheme"].get<std::string>();
    write_utilization_csv(report.timelines[i], out_dir + "/utilization_" + scheme + ".csv");
    write_trace(report.timelines[i], scheme, out_dir + "/trace_" + scheme + ".json");
  }
}

}  // namespace

void write_report_files(const Report& report, const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw std::runtime_error("cannot create output directory " + out_dir + ": " + ec.message());
  {
    std::ofstream f(out_dir + "/report.json");
    if (!f) throw std::runtime_error("cannot write " + out_dir + "/report.json");
    f << report.document.dump(2) << "\n";
  }
  const json& results = report.document["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string path = out_dir + "/links_" + results[i]["scheme"].get<std::string>() + ".csv";
    std::ofstream f(path);
    if (!f) throw std::runtime_error("cannot write " + path);
    f << "direction,gpu,link,chip,port,messages,wire_bytes,payload_bytes,busy_us,utilization\n";
    if (report.link_stats[i].is_null()) continue;
    for (const json& l : report.link_stats[i]) {
      f << l["direction"].get<std::string>() << "," << l["gpu"] << "," << l["link"] << "," << l["chip"] << ","
        << l["port"] << "," << l["messages"] << "," << l["wire_bytes"] << "," << l["payload_bytes"] << ","
        << l["busy_us"] << "," << l["utilization"] << "\n";
    }
  }
  write_timeline_files(report, out_dir);
}

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
  os << "report: " << out_dir << "/report.json\n";
}

}  // namespace nvsvp::platform
