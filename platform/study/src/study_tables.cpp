// A study's results as tables (study.hpp): the points' results, study.csv, the speedups and
// summary.json, and the console summary.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/study.hpp"
#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

// The CSV's columns after point, keys and scheme: paths into a scheme's result in report.json.
const char* const kResultColumns[] = {
    "layer_time_us",
    "ideal_comm_time_us",
    "comm_efficiency",
    "traffic_bytes.gpu_to_switch",
    "traffic_bytes.switch_to_gpu",
    "payload_bytes.gpu_to_switch",
    "payload_bytes.switch_to_gpu",
    "utilization.gpu_to_switch",
    "utilization.switch_to_gpu",
    "payload_efficiency.total",
    "load.max_mean_gpu",
    "load.max_mean_expert",
    "hub.cache_hit_rate",
    "switch.reduction_no_eviction_rate",
    "time_breakdown.comm_only_us",
    "time_breakdown.compute_only_us",
    "time_breakdown.overlap_us",
    "time_breakdown.idle_us",
    "replication.max_mean_before",
    "replication.max_mean_after",
    "replication.excess_load_removed",
    "replication.broadcast_time_us",
    "replication.shared_expert_time_us",
    "replication.hidden",
    "checks.passed",
    "faults.slowdown",
    "faults.replays.packets",
    "faults.replays.bytes",
    "faults.credit_loss.resyncs",
};

// A result value as a CSV cell: numbers in the fewest digits that read back exactly.
std::string csv_value(const json& value) {
  if (value.is_number_float()) return format_number(value.get<double>());
  if (value.is_number() || value.is_boolean()) return value.dump();
  if (value.is_string()) return csv_field(value.get<std::string>());
  return "";
}

// The value at `path` ("a.b.c": object keys) in `document`, or null where the path leaves
// objects: a report of another shape reads as missing values, never as an exception.
const json& value_at(const json& document, const std::string& path) {
  static const json missing;
  const json* at = &document;
  for (size_t start = 0; start <= path.size();) {
    const size_t dot = std::min(path.find('.', start), path.size());
    if (!at->is_object()) return missing;
    const auto it = at->find(path.substr(start, dot - start));
    if (it == at->end()) return missing;
    at = &*it;
    start = dot + 1;
  }
  return *at;
}

// The result of `scheme` if it ran and passed its checks (the time of a failed run means nothing).
const json* passed_result(const json& results, const std::string& scheme) {
  for (const json& r : results) {
    const json& passed = value_at(r, "checks.passed");
    if (value_at(r, "scheme") == scheme && value_at(r, "layer_time_us").is_number() && passed.is_boolean() &&
        passed.get<bool>()) {
      return &r;
    }
  }
  return nullptr;
}

// Prints rows as columns, each as wide as its widest cell: the first and last left-aligned (names),
// the others right-aligned (numbers).
void print_table(const std::vector<std::vector<std::string>>& rows, std::ostream& os) {
  std::vector<size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - row[c].size(), ' ');
      if (c == 0) line += row[c] + pad;
      else if (c + 1 == row.size()) line += "  " + row[c];
      else line += "  " + pad + row[c];
    }
    os << line << "\n";
  }
}

std::string text_or_dash(const json& value, int decimals) {
  return value.is_number() ? fixed(value.get<double>(), decimals) : "-";
}

}  // namespace

json point_results(const json& report) {
  const json& listed = value_at(report, "results");
  if (!listed.is_array()) return json::array();
  json results = listed;
  const json& steps = value_at(report, "step.schemes");
  for (json& result : results) {
    const json& scheme = value_at(result, "scheme");
    if (scheme.is_string() && steps.is_object() && steps.contains(scheme.get<std::string>())) {
      result["step"] = steps[scheme.get<std::string>()];
    }
  }
  return results;
}

std::string report_shape_problem(const json& report, const std::vector<std::string>& schemes) {
  if (!report.is_object()) return "not a JSON object";
  const json& results = value_at(report, "results");
  if (!results.is_array()) return "results is not a list";
  std::set<std::string> seen;
  for (size_t i = 0; i < results.size(); ++i) {
    const json& result = results[i];
    const std::string at = "results[" + std::to_string(i) + "]";
    if (!result.is_object() || !value_at(result, "scheme").is_string()) return at + " is not an object naming its scheme";
    const std::string scheme = result["scheme"].get<std::string>();
    if (!seen.insert(scheme).second) return "two results of scheme " + scheme;
    if (result.contains("layer_time_us") && !result["layer_time_us"].is_number()) {
      return at + ".layer_time_us is not a number";
    }
    if (result.contains("checks") && !value_at(result, "checks.passed").is_boolean()) {
      return at + ".checks.passed is not true or false";
    }
  }
  for (const std::string& scheme : schemes) {
    if (seen.count(scheme) == 0) return "no result of scheme " + scheme;
  }
  return "";
}

std::optional<double> speedup_of_reference(const json& results, const std::string& scheme,
                                           const std::string& reference) {
  const json* of_scheme = passed_result(results, scheme);
  const json* of_reference = passed_result(results, reference);
  if (!of_scheme || !of_reference) return std::nullopt;
  const double reference_us = (*of_reference)["layer_time_us"].get<double>();
  if (!(reference_us > 0.0)) return std::nullopt;
  return (*of_scheme)["layer_time_us"].get<double>() / reference_us;
}

std::vector<SpeedupStatistics> speedup_statistics(const Study& study, const std::vector<PointRun>& runs) {
  std::vector<SpeedupStatistics> statistics;
  for (const std::string& scheme : study.schemes) {
    if (scheme == study.reference) continue;
    SpeedupStatistics s;
    s.scheme = scheme;
    double log_sum = 0.0;
    for (size_t p = 0; p < study.points.size(); ++p) {
      const std::optional<double> speedup = speedup_of_reference(runs[p].results, scheme, study.reference);
      if (!speedup) continue;
      ++s.points;
      log_sum += std::log(*speedup);
      if (!s.max || *speedup > *s.max) {
        s.max = *speedup;
        s.max_point = study.points[p].name;
      }
    }
    if (s.points > 0) s.geometric_mean = std::exp(log_sum / static_cast<double>(s.points));
    statistics.push_back(std::move(s));
  }
  return statistics;
}

namespace {

// A step's columns, after the layer's (only in a study whose scenario runs a step): the column
// and its path in a result's `step` (point_results). An inference request's two more after them.
const std::pair<const char*, const char*> kStepColumns[] = {
    {"step_time_us", "step_time_us"},
    {"step_tokens_per_second", "tokens_per_second"},
    {"step_attention_us", "breakdown.attention_us"},
    {"step_dense_us", "breakdown.dense_us"},
    {"step_moe_compute_us", "breakdown.moe_compute_us"},
    {"step_exposed_comm_us", "breakdown.exposed_comm_us"},
    {"step_pipeline_bubble_us", "breakdown.pipeline_bubble_us"},
};

const std::pair<const char*, const char*> kInferenceColumns[] = {
    {"step_time_to_first_token_us", "time_to_first_token_us"},
    {"step_time_per_output_token_us", "time_per_output_token_us"},
};

bool runs_a_step(const Study& study) {
  return std::any_of(study.points.begin(), study.points.end(),
                     [](const StudyPoint& p) { return !p.scenario.step.kind.empty(); });
}

bool runs_an_inference(const Study& study) {
  return std::any_of(study.points.begin(), study.points.end(),
                     [](const StudyPoint& p) { return p.scenario.step.kind == "inference"; });
}

// The cell of `path` ("a.b.c") in `result`, as the CSV writes it.
std::string csv_cell(const json& result, const std::string& path) { return csv_value(value_at(result, path)); }

}  // namespace

std::string study_csv_header(const Study& study) {
  std::vector<std::string> header = {"point"};
  for (const std::string& key : study.keys) header.push_back(csv_field(key));
  header.push_back("scheme");
  for (const char* column : kResultColumns) header.push_back(column);
  header.push_back("speedup_of_reference");
  if (runs_a_step(study)) {
    for (const auto& [column, path] : kStepColumns) header.push_back(column);
  }
  if (runs_an_inference(study)) {
    for (const auto& [column, path] : kInferenceColumns) header.push_back(column);
  }
  return join(header, ",");
}

std::string study_csv(const Study& study, const std::vector<PointRun>& runs) {
  std::string csv = study_csv_header(study) + "\n";
  const bool step = runs_a_step(study);
  const bool inference = runs_an_inference(study);

  for (size_t p = 0; p < study.points.size(); ++p) {
    const StudyPoint& point = study.points[p];
    for (const json& result : runs[p].results) {
      if (!result.contains("layer_time_us")) continue;  // the scheme's process died: nothing to list
      const std::string scheme = result["scheme"].get<std::string>();
      std::vector<std::string> row = {csv_field(point.name)};
      for (const std::string& value : point.values) row.push_back(csv_field(value));
      row.push_back(csv_field(scheme));
      for (const char* column : kResultColumns) row.push_back(csv_cell(result, column));
      const std::optional<double> speedup = speedup_of_reference(runs[p].results, scheme, study.reference);
      row.push_back(speedup ? format_number(*speedup) : "");
      if (step) {
        for (const auto& [column, path] : kStepColumns) row.push_back(csv_cell(result, std::string("step.") + path));
      }
      if (inference) {
        for (const auto& [column, path] : kInferenceColumns) {
          row.push_back(csv_cell(result, std::string("step.") + path));
        }
      }
      csv += join(row, ",") + "\n";
    }
  }
  return csv;
}

json study_summary(const Study& study, const std::vector<PointRun>& runs) {
  json points = json::array();
  for (size_t p = 0; p < study.points.size(); ++p) {
    const StudyPoint& point = study.points[p];
    json values = json::object();
    for (size_t k = 0; k < study.keys.size(); ++k) values[study.keys[k]] = point.values[k];
    json layer_time_us = json::object();
    json speedups = json::object();
    for (const std::string& scheme : study.schemes) {
      const json* result = passed_result(runs[p].results, scheme);
      layer_time_us[scheme] = result ? (*result)["layer_time_us"] : json();
      if (scheme == study.reference) continue;
      const std::optional<double> speedup = speedup_of_reference(runs[p].results, scheme, study.reference);
      speedups[scheme] = speedup ? json(*speedup) : json();
    }
    points.push_back({{"name", point.name},
                      {"directory", point.directory},
                      {"values", values},
                      {"passed", runs[p].failure.empty()},
                      {"failure", runs[p].failure.empty() ? json() : json(runs[p].failure)},
                      {"layer_time_us", layer_time_us},
                      {"speedup_of_reference", speedups}});
  }
  json statistics = json::object();
  for (const SpeedupStatistics& s : speedup_statistics(study, runs)) {
    statistics[s.scheme] = {{"points", s.points},
                            {"geometric_mean", s.geometric_mean ? json(*s.geometric_mean) : json()},
                            {"max", s.max ? json(*s.max) : json()},
                            {"max_point", s.max ? json(s.max_point) : json()}};
  }
  const bool passed = std::all_of(runs.begin(), runs.end(), [](const PointRun& r) { return r.failure.empty(); });
  return {{"study", study.name},
          {"file", study.file},
          {"schemes", study.schemes},
          {"reference", study.reference},
          {"keys", study.keys},
          {"points", points},
          {"speedup_of_reference", statistics},
          {"passed", passed}};
}

void print_study_summary(const json& summary, const std::string& out_dir, std::ostream& os) {
  const std::string reference = summary["reference"].get<std::string>();
  std::vector<std::string> others;
  for (const json& scheme : summary["schemes"]) {
    if (scheme != reference) others.push_back(scheme.get<std::string>());
  }
  os << "study " << summary["study"].get<std::string>() << ": layer time (us) of each scheme that passed its checks";
  if (!others.empty()) {
    os << "; X/ref: that of X over that of " << reference << " (the speedup of " << reference << " over X)";
  }
  os << "\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"point"};
  for (const json& scheme : summary["schemes"]) header.push_back(scheme.get<std::string>());
  for (const std::string& scheme : others) header.push_back(scheme + "/ref");
  header.push_back("run");
  rows.push_back(header);
  for (const json& point : summary["points"]) {
    std::vector<std::string> row = {point["name"].get<std::string>()};
    for (const json& scheme : summary["schemes"]) {
      row.push_back(text_or_dash(point["layer_time_us"][scheme.get<std::string>()], 2));
    }
    for (const std::string& scheme : others) row.push_back(text_or_dash(point["speedup_of_reference"][scheme], 3));
    const bool missing = point["failure"].is_string() && point["failure"].get<std::string>().rfind("missing", 0) == 0;
    row.push_back(point["passed"].get<bool>() ? "ok" : missing ? "MISSING" : "FAILED");
    rows.push_back(row);
  }
  print_table(rows, os);

  if (!others.empty()) {
    os << "speedup of " << reference << " over each scheme, across the points where both passed:\n";
    rows = {{"scheme", "points", "geomean", "max", "at point"}};
    for (const std::string& scheme : others) {
      const json& s = summary["speedup_of_reference"][scheme];
      rows.push_back({scheme, std::to_string(s["points"].get<size_t>()), text_or_dash(s["geometric_mean"], 3),
                      text_or_dash(s["max"], 3), s["max_point"].is_string() ? s["max_point"].get<std::string>() : "-"});
    }
    print_table(rows, os);
  }
  for (const json& point : summary["points"]) {
    if (point["passed"].get<bool>()) continue;
    const std::string failure = point["failure"].get<std::string>();
    const std::string folder = out_dir + "/" + point["directory"].get<std::string>();
    os << "point " << point["name"].get<std::string>() << " FAILED: " << failure
       << (failure.rfind("missing", 0) == 0 ? "; its folder: " + folder : "; its output: " + folder + "/run.log") << "\n";
  }
  os << "csv: " << out_dir << "/study.csv, summary: " << out_dir << "/summary.json\n";
}

}  // namespace nvsvp::platform
