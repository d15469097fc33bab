// Study loading (the points, each a scenario checked by the scenario loader), and the tables of
// its results: the CSV, the summary and the console's table (study_run.cpp runs the points,
// study_records.cpp merges their folders).
#include "nvsvp/platform/study.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <vector>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/text.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario_document.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

const char* const kStudyKeys[] = {"name", "scenario", "base", "schemes", "reference", "sweep", "points", "timelines"};
// The default reference, the product's own scheme; until it exists, a study names another.
const char* const kDefaultReference = "dysharp";

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

// A value as written, compactly, for point names and CSV cells: 8, L, [2,4], {kind:zipf,exponent:2}.
std::string value_text(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::null: return "null";
    case ConfigNode::Kind::scalar: return node.text;
    case ConfigNode::Kind::sequence: {
      std::vector<std::string> items;
      for (const ConfigNode& item : node.items) items.push_back(value_text(item));
      return "[" + join(items, ",") + "]";
    }
    case ConfigNode::Kind::mapping: break;
  }
  std::vector<std::string> entries;
  for (const auto& [key, value] : node.entries) entries.push_back(key + ":" + value_text(value));
  return "{" + join(entries, ",") + "}";
}

// The value written at `keys` in a scenario document, if any (not one a preset or default gives).
const ConfigNode* written_value(const ConfigNode& doc, const std::vector<std::string>& keys) {
  const ConfigNode* node = &doc;
  for (const std::string& key : keys) {
    node = node->is_mapping() ? node->find(key) : nullptr;
    if (!node) return nullptr;
  }
  return node;
}

// The shortest tail of each key path that no other key path ends with, to name points by:
// workload.top_k -> top_k; with both workload.top_k and workload.model.top_k, they stay apart.
std::vector<std::string> short_labels(const std::vector<std::string>& paths) {
  auto ends_with = [](const std::string& path, const std::string& tail) {
    return path == tail || (path.size() > tail.size() &&
                            path.compare(path.size() - tail.size() - 1, std::string::npos, "." + tail) == 0);
  };
  std::vector<std::string> labels;
  for (const std::string& path : paths) {
    std::string label = path;
    // Tails from the last key outward: "top_k", then "workload.top_k".
    for (size_t dot = path.rfind('.'); dot != std::string::npos && dot > 0; dot = path.rfind('.', dot - 1)) {
      const std::string tail = path.substr(dot + 1);
      if (std::none_of(paths.begin(), paths.end(),
                       [&](const std::string& other) { return other != path && ends_with(other, tail); })) {
        label = tail;
        break;
      }
    }
    labels.push_back(label);
  }
  return labels;
}

// A point's directory: its number (padded, so that listings keep the study's order) and its name
// with anything a shell or file system would trip on replaced, cut to a safe length.
std::string point_directory(size_t index, size_t count, const std::string& name) {
  const std::string number = std::to_string(index + 1);
  const size_t width = std::to_string(count).size();
  std::string safe = name.substr(0, 100);
  for (char& c : safe) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._=,+-", c) != nullptr)) c = '_';
  }
  return std::string(width - number.size(), '0') + number + "_" + safe;
}

// One value a point sets.
struct Setting {
  std::string path;               // "workload.top_k"
  std::vector<std::string> keys;  // {"workload", "top_k"}
  const ConfigNode* value;        // in the study document
  std::string key_origin;         // where the key path is written
};

// A point before it is checked: where it was written (for messages) and its settings in order.
struct PointDraft {
  std::string origin;
  std::string path;  // "sweep" or "points[i]"
  std::vector<Setting> settings;
};

class StudyLoader {
 public:
  StudyLoader(std::string file, std::string config_dir)
      : file_(std::move(file)), config_dir_(std::move(config_dir)) {}

  Study load(const std::vector<std::string>& overrides) {
    const ConfigNode doc = load_config_file(file_);
    YamlReader top(doc, "");
    for (const char* key : kStudyKeys) top.declare(key);
    top.finish();

    study_.file = file_;
    study_.overrides = overrides;
    read_name(doc);
    ConfigNode base = read_base(doc);
    // The study's own keys first, so that --set can still change them, as on `nvsvp run`.
    if (const ConfigNode* schemes = doc.find("schemes")) set_key(base, {"schemes"}, *schemes, schemes->key_origin);
    ConfigNode name;
    name.kind = ConfigNode::Kind::scalar;
    name.text = study_.name;
    name.origin = name.key_origin = name_origin_;
    set_key(base, {"name"}, name, name_origin_);  // every point's report names the study
    for (const std::string& text : overrides) apply_override(base, text);

    std::vector<PointDraft> drafts;
    if (const ConfigNode* sweep = doc.find("sweep")) drafts = read_sweep(*sweep);
    if (const ConfigNode* points = doc.find("points")) read_points(*points, drafts);
    if (drafts.empty()) {
      config_fail(doc.key_origin, "", "at least one point (keys sweep or points)", "none");
    }
    make_points(base, drafts);
    read_reference(doc);
    if (const ConfigNode* timelines = doc.find("timelines")) study_.timelines = read_bool(*timelines, "timelines");
    return std::move(study_);
  }

 private:
  void read_name(const ConfigNode& doc) {
    const ConfigNode* node = doc.find("name");
    name_origin_ = node ? node->origin : doc.key_origin;
    study_.name = node ? read_string(*node, "name") : fs::path(file_).stem().string();
    if (!valid_name(study_.name)) {
      config_fail(name_origin_, "name",
                  "a name of letters, digits, '_', '.' and '-' (it names the output directory)",
                  node ? describe(*node) : study_.name + " (the file's name; set name)");
    }
  }

  // The base scenario's document: the file `scenario` names (relative to the study file), or the
  // mapping `base`.
  ConfigNode read_base(const ConfigNode& doc) {
    const ConfigNode* path = doc.find("scenario");
    const ConfigNode* inline_base = doc.find("base");
    const std::string expected = "a base scenario: scenario (a file) or base (a mapping)";
    if (!path && !inline_base) config_fail(doc.key_origin, "scenario", expected + " (required key)", "nothing");
    if (path && inline_base) config_fail(inline_base->key_origin, "base", expected + ", not both", "both");
    if (inline_base) {
      if (!inline_base->is_mapping()) {
        config_fail(inline_base->origin, "base", "a scenario mapping", describe(*inline_base));
      }
      base_file_ = file_;
      return *inline_base;
    }
    const fs::path written(read_string(*path, "scenario"));
    base_file_ = written.is_absolute() ? written.string()
                                       : (fs::path(file_).parent_path() / written).lexically_normal().string();
    std::error_code ec;
    if (!fs::is_regular_file(base_file_, ec)) {
      config_fail(path->origin, "scenario", "an existing scenario file", base_file_ + " (no such file)");
    }
    return load_config_file(base_file_);
  }

  // A key path a point sets: well-formed, and not `schemes` (the study's own key chooses them).
  Setting read_setting(const std::string& path, const ConfigNode& value, const std::string& parent) const {
    const std::vector<std::string> keys = split_key_path(path);
    const std::string at = join_path(parent, path);
    if (keys.empty()) config_fail(value.key_origin, at, "a scenario key path a.b.c", "\"" + path + "\"");
    if (keys[0] == "schemes") {
      config_fail(value.key_origin, at, "a scenario key other than schemes (the study's key schemes lists them)",
                  "schemes");
    }
    return Setting{path, keys, &value, value.key_origin};
  }

  // The cartesian product of the swept values, the first key outermost.
  std::vector<PointDraft> read_sweep(const ConfigNode& sweep) const {
    const std::string expected = "a mapping of scenario key paths to lists of values";
    if (!sweep.is_mapping() || sweep.entries.empty()) {
      config_fail(sweep.origin, "sweep", expected, sweep.is_mapping() ? "an empty mapping" : describe(sweep));
    }
    std::vector<std::vector<Setting>> axes;
    size_t product = 1;
    for (const auto& [path, values] : sweep.entries) {
      const std::string at = join_path("sweep", path);
      if (!values.is_sequence() || values.items.empty()) {
        config_fail(values.origin, at, "a non-empty list of values", describe(values));
      }
      // Before the values are compared with each other (quadratic in their number).
      if (values.items.size() > kMaxStudyPoints / product) {
        config_fail(values.origin, at, "a sweep of at most " + std::to_string(kMaxStudyPoints) + " points (an input limit)",
                    std::to_string(product) + " x " + std::to_string(values.items.size()) + " points so far");
      }
      product *= values.items.size();
      const Setting first = read_setting(path, values, "sweep");
      std::vector<Setting> axis;
      for (const ConfigNode& value : values.items) {
        for (const Setting& earlier : axis) {
          if (value_text(*earlier.value) == value_text(value)) {
            config_fail(value.origin, at, "each value once", "a second " + value_text(value));
          }
        }
        axis.push_back(first);
        axis.back().value = &value;
      }
      axes.push_back(std::move(axis));
    }
    std::vector<PointDraft> drafts;
    std::vector<size_t> choice(axes.size(), 0);
    for (;;) {
      PointDraft draft{sweep.key_origin, "sweep", {}};
      for (size_t a = 0; a < axes.size(); ++a) draft.settings.push_back(axes[a][choice[a]]);
      drafts.push_back(std::move(draft));
      size_t a = axes.size();  // advance the last key fastest, like nested loops
      while (a > 0 && ++choice[a - 1] == axes[a - 1].size()) choice[--a] = 0;
      if (a == 0) return drafts;
    }
  }

  void read_points(const ConfigNode& points, std::vector<PointDraft>& drafts) const {
    if (!points.is_sequence()) {
      config_fail(points.origin, "points", "a list of mappings (key path: value)", describe(points));
    }
    if (drafts.size() + points.items.size() > kMaxStudyPoints) {
      config_fail(points.origin, "points", "at most " + std::to_string(kMaxStudyPoints) + " points with the sweep's (an input limit)",
                  std::to_string(drafts.size()) + " + " + std::to_string(points.items.size()));
    }
    for (size_t i = 0; i < points.items.size(); ++i) {
      const ConfigNode& point = points.items[i];
      const std::string at = "points[" + std::to_string(i) + "]";
      if (!point.is_mapping() || point.entries.empty()) {
        config_fail(point.origin, at, "a mapping of scenario key paths to values",
                    point.is_mapping() ? "an empty mapping" : describe(point));
      }
      PointDraft draft{point.origin, at, {}};
      for (const auto& [path, value] : point.entries) draft.settings.push_back(read_setting(path, value, at));
      drafts.push_back(std::move(draft));
    }
  }

  void make_points(const ConfigNode& base, const std::vector<PointDraft>& drafts) {
    for (const PointDraft& draft : drafts) {
      for (const Setting& s : draft.settings) {
        if (std::find(study_.keys.begin(), study_.keys.end(), s.path) == study_.keys.end()) {
          study_.keys.push_back(s.path);
        }
      }
    }
    const std::vector<std::string> labels = short_labels(study_.keys);
    std::map<std::string, std::string> first_origin;  // point name -> where it was first written
    for (const PointDraft& draft : drafts) {
      // Named in the keys' order whatever order a point writes them in, so equal points have
      // equal names.
      StudyPoint point;
      std::vector<std::string> parts;
      for (size_t k = 0; k < study_.keys.size(); ++k) {
        const auto set = std::find_if(draft.settings.begin(), draft.settings.end(),
                                      [&](const Setting& s) { return s.path == study_.keys[k]; });
        if (set != draft.settings.end()) {
          parts.push_back(labels[k] + "=" + value_text(*set->value));
          point.values.push_back(value_text(*set->value));
        } else {
          const ConfigNode* written = written_value(base, split_key_path(study_.keys[k]));
          point.values.push_back(written ? value_text(*written) : "");
        }
      }
      point.name = join(parts, ",");
      const auto [earlier, inserted] = first_origin.emplace(point.name, draft.origin);
      if (!inserted) {
        config_fail(draft.origin, draft.path, "each point once",
                    point.name + " again (first at " + earlier->second + ")");
      }

      ConfigNode doc = base;
      for (const Setting& s : draft.settings) set_key(doc, s.keys, *s.value, s.key_origin);
      try {
        point.scenario = load_scenario_document(doc, base_file_, config_dir_);
        make_layer_spec(point.scenario);  // as `nvsvp validate` does: a trace file is read only then
      } catch (const ConfigError& e) {
        throw ConfigError(file_ + ": point " + point.name + ": " + e.what());
      }
      study_.points.push_back(std::move(point));
    }
    for (size_t i = 0; i < study_.points.size(); ++i) {
      study_.points[i].directory = point_directory(i, study_.points.size(), study_.points[i].name);
    }
    study_.schemes = study_.points.front().scenario.schemes;
  }

  void read_reference(const ConfigNode& doc) {
    const ConfigNode* node = doc.find("reference");
    study_.reference = node ? read_string(*node, "reference") : kDefaultReference;
    if (std::find(study_.schemes.begin(), study_.schemes.end(), study_.reference) != study_.schemes.end()) return;
    config_fail(node ? node->origin : doc.key_origin, "reference",
                "one of the study's schemes " + join(study_.schemes, ", "),
                node ? describe(*node) : study_.reference + " (the default)");
  }

  std::string file_;
  std::string config_dir_;
  std::string base_file_;
  std::string name_origin_;
  Study study_;
};

// A result value as a CSV cell: numbers in the fewest digits that read back exactly.
std::string csv_value(const json& value) {
  if (value.is_number_float()) return format_number(value.get<double>());
  if (value.is_number() || value.is_boolean()) return value.dump();
  if (value.is_string()) return csv_field(value.get<std::string>());
  return "";
}

// The result of `scheme` if it ran and passed its checks (the time of a failed run means nothing).
const json* passed_result(const json& results, const std::string& scheme) {
  for (const json& r : results) {
    const bool passed = r.value(json::json_pointer("/checks/passed"), false);
    if (r.value("scheme", "") == scheme && r.contains("layer_time_us") && passed) return &r;
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

Study load_study(const std::string& file, const std::vector<std::string>& overrides,
                 const std::string& config_dir) {
  return within_memory(file, "a study", [&] { return StudyLoader(file, config_dir).load(overrides); });
}

json point_results(const json& report) {
  if (!report.contains("results")) return json::array();
  json results = report["results"];
  const json* steps = report.contains("step") ? &report["step"]["schemes"] : nullptr;
  for (json& result : results) {
    const std::string scheme = result.value("scheme", "");
    if (steps != nullptr && steps->contains(scheme)) result["step"] = (*steps)[scheme];
  }
  return results;
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
std::string csv_cell(const json& result, const std::string& path) {
  std::string pointer = "/" + path;
  std::replace(pointer.begin(), pointer.end(), '.', '/');
  return csv_value(result.value(json::json_pointer(pointer), json()));
}

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
