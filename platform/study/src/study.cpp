// Study loading: the points, each a scenario checked by the scenario loader (study_tables.cpp
// makes the tables of their results, study_run.cpp runs them, study_records.cpp merges their
// folders).
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

}  // namespace

Study load_study(const std::string& file, const std::vector<std::string>& overrides,
                 const std::string& config_dir) {
  return within_memory(file, "a study", [&] { return StudyLoader(file, config_dir).load(overrides); });
}

}  // namespace nvsvp::platform
