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

Report make_report(const Scenario& scenario, const ResolvedLayer& resolved, std::vector<SchemeRun> runs,
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
  const fw::MoeLayerSpec& layer = *resolved.layer;
  const std::vector<std::shared_ptr<const fw::MoeLayerSpec>>& parts = resolved.parts;
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
