// Scenario loading: scenario file + --set overrides -> presets -> overrides -> the checks between
// keys (scenario_checks.cpp). Every key is checked; every error names the file, line and key path
// (see config_reader.hpp). The keys themselves are declared once, in scenario_sections.hpp; this
// file reads through them.
#include "nvsvp/platform/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/key_origins.hpp"
#include "nvsvp/platform/scenario_document.hpp"
#include "nvsvp/platform/scenario_sections.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/hw/work.hpp"
#include "presets.hpp"
#include "scenario_checks.hpp"

namespace nvsvp::platform {

namespace {

namespace fs = std::filesystem;

std::string join_list(const std::vector<std::string>& items) { return join(items, ", "); }

// --- helpers --------------------------------------------------------------------------------

[[noreturn]] void fail_missing(const ConfigNode& parent, const std::string& path,
                               const std::string& expected) {
  config_fail(parent.key_origin, path, expected + " (required key)", "nothing");
}

double read_positive(const ConfigNode& node, const std::string& path) {
  const double value = read_double(node, path, hw::Range{});
  if (!(value > 0.0)) config_fail(node.origin, path, "a number > 0", describe(node));
  return value;
}

// --- the keys a section declares ------------------------------------------------------------

// A visitor that lists a section's keys in declaration order, with how each is used.
class SectionKeys {
 public:
  struct Key {
    std::string name;
    KeyUse use;
    std::string expected;  // what the message about its absence says is expected
  };

  template <class T, class Rule>
  void operator()(const char* key, const T&, const char*, const Rule& rule, const KeyUse& use = {}) {
    keys_.push_back({key, use, expected_when_missing(rule)});
  }
  template <class T>
  void section(const char* key, const T&, const char* = "", const KeyUse& use = {}) {
    keys_.push_back({key, use, "a value"});
  }
  template <class T>
  void parameters(const char* key, const T&, const char*) {
    keys_.push_back({key, KeyUse{}, "a value"});
  }
  template <class T>
  void section_list(const char* key, const std::vector<T>&, const char*) {
    keys_.push_back({key, KeyUse{}, "a list"});
  }
  void preset(std::string& name, const char* kind, const char* directory) {
    preset_name_ = &name;
    preset_kind_ = kind;
    preset_directory_ = directory;
  }
  void origin(std::string&) {}

  // Whether the section starts from a preset, which kind ("platform") in which directory of
  // config_dir, and the member that holds its name.
  bool has_preset() const { return preset_name_ != nullptr; }
  const std::string& preset_kind() const { return preset_kind_; }
  const std::string& preset_directory() const { return preset_directory_; }
  std::string& preset_name() const { return *preset_name_; }

  // Makes `reader` accept every key.
  void declare(YamlReader& reader) const {
    for (const Key& key : keys_) reader.declare(key.name);
  }
  // Fails on the first required key (of every kind) that `node`, the section at `path`, lacks.
  void require(const ConfigNode& node, const std::string& path) const {
    for (const Key& key : keys_) {
      if (key.use.required && key.use.kinds.empty() && !node.find(key.name)) {
        fail_missing(node, join_path(path, key.name), key.expected);
      }
    }
  }
  const Key* find(const std::string& name) const {
    for (const Key& key : keys_) {
      if (key.name == name) return &key;
    }
    return nullptr;
  }
  // The keys a section of kind `kind` may have.
  std::vector<std::string> of_kind(const std::string& kind) const {
    std::vector<std::string> names;
    for (const Key& key : keys_) {
      if (belongs_to_kind(key.use, kind)) names.push_back(key.name);
    }
    return names;
  }

 private:
  static std::string expected_when_missing(const hw::Choices& choices) {
    return "one of " + join_list(choices.values);
  }
  static std::string expected_when_missing(const TraceFile&) { return "a trace file"; }
  template <class Rule>
  static std::string expected_when_missing(const Rule&) {
    return "a value";
  }

  std::vector<Key> keys_;
  std::string* preset_name_ = nullptr;
  std::string preset_kind_;
  std::string preset_directory_;
};

// --- the loader -----------------------------------------------------------------------------

class ScenarioLoader {
 public:
  ScenarioLoader(std::string file, std::string config_dir, ScenarioUse use = ScenarioUse::whole)
      : file_(std::move(file)), config_dir_(std::move(config_dir)), use_(use) {}

  Scenario load(const ConfigNode& doc) {
    origins_.set_fallback(file_ + ":1");
    origins_.record(doc, "", kScenarioFile, true);
    scenario_.file = file_;
    read_section(doc, "", scenario_);
    if (use_ == ScenarioUse::whole) {
      check_scenario(scenario_, origins_);
    } else {
      check_platform(scenario_, origins_);
    }
    scenario_.platform.gpu.packet_fabric = scenario_.simulation.fabric != "message";
    scenario_.platform.gpu.fast_fabric = scenario_.simulation.fabric == "fast";
    scenario_.platform.switch_chip.packet_fabric = scenario_.platform.gpu.packet_fabric;
    scenario_.origins = std::make_shared<const KeyOrigins>(origins_);
    return scenario_;
  }

  // Reads `node`, the section at `path`, onto `section` through its declaration: unknown keys are
  // rejected first, then required ones looked for, then the values read in declaration order.
  template <class Section>
  void read_section(const ConfigNode& node, const std::string& path, Section& section);

  // A default taken from another key (`source`) is blamed on that key.
  void alias(const std::string& path, const std::string& source) { origins_.alias(path, source); }

 private:
  // A section that starts from a preset: `node` is the preset's name, or a mapping of `preset`
  // and overrides. The preset file is read (its header, values, unknown keys, required keys),
  // then the overrides over it.
  template <class Section>
  void read_preset_section(const ConfigNode& node, const std::string& path, Section& section,
                           const SectionKeys& keys);

  // The preset named by `node` (a string) in config_dir/<kind_dir>, loaded.
  // A value naming a file (is_preset_path) is that file, relative to the directory of the file
  // that wrote the value; `name` becomes its absolute path, for the report and the dump.
  ConfigNode load_preset(const ConfigNode& node, const std::string& path, const std::string& kind,
                         const std::string& kind_dir, std::string& name) {
    name = read_string(node, path);
    if (is_preset_path(name)) {
      const std::string file = resolve_written_path(node, name);
      std::error_code ec;
      if (!fs::is_regular_file(file, ec)) {
        config_fail(node.origin, path, "a " + kind + " preset name, or the path of a " + kind + " file",
                    file + (fs::exists(file, ec) ? " (not a file)" : " (no such file)"));
      }
      const fs::path absolute = fs::absolute(file, ec);
      name = ec ? file : absolute.lexically_normal().string();
      return load_config_file(name);
    }
    const std::vector<std::string> names = preset_names(config_dir_, kind_dir);
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      const std::string dir = (fs::path(config_dir_) / kind_dir).string();
      config_fail(node.origin, path,
                  names.empty() ? "a " + kind + " preset (none found in " + dir + ")"
                                : "one of the " + kind + " presets " + join_list(names),
                  describe(node));
    }
    return load_config_file(preset_file(config_dir_, kind_dir, name));
  }

  std::string file_;
  std::string config_dir_;
  ScenarioUse use_;
  Scenario scenario_;
  KeyOrigins origins_;
};

// A visitor that reads one mapping onto a section (see ScenarioLoader::read_section): each key
// by its rule, a nested section through the loader, a parameter struct by read_params.
class SectionReader {
 public:
  enum class Mode {
    section,           // a section of the scenario document
    preset_file,       // a preset file: its header (name, summary) stands for `preset`
    preset_overrides,  // the mapping that names a preset (key `preset`) and overrides its values
  };

  SectionReader(ScenarioLoader& loader, const ConfigNode& node, std::string path, const SectionKeys& keys,
                Mode mode)
      : loader_(loader), keys_(keys), mode_(mode), yaml_(node, path), path_(std::move(path)) {}

  // Rejects every key the section does not declare; in a section, then fails on a missing
  // required key.
  void check_keys() {
    if (mode_ == Mode::preset_overrides) yaml_.declare("preset");
    keys_.declare(yaml_);
    yaml_.finish();
    if (mode_ == Mode::section) keys_.require(yaml_.node(), path_);
  }
  // Rejects every key that was not declared (after the values: a preset file's order).
  void finish() const { yaml_.finish(); }

  template <class T, class Rule>
  void operator()(const char* key, T& value, const char* description, const Rule& rule, const KeyUse& use = {});

  template <class T>
  void section(const char* key, T& value, const char* = "", const KeyUse& = {}) {
    if (const ConfigNode* node = yaml_.take(key)) loader_.read_section(*node, join_path(path_, key), value);
  }
  template <class T>
  void parameters(const char* key, T& value, const char*) {
    if (const ConfigNode* node = yaml_.take(key)) read_params(*node, join_path(path_, key), value);
  }
  template <class T>
  void section_list(const char* key, std::vector<T>& values, const char*) {
    const ConfigNode* node = yaml_.take(key);
    if (!node) return;
    const std::string path = join_path(path_, key);
    if (!node->is_sequence()) config_fail(node->origin, path, "a list of mappings", describe(*node));
    if (node->items.size() > kMaxSectionListEntries) {
      config_fail(node->origin, path,
                  "at most " + std::to_string(kMaxSectionListEntries) + " entries (an input limit)",
                  std::to_string(node->items.size()));
    }
    values.assign(node->items.size(), T{});
    for (size_t i = 0; i < node->items.size(); ++i) {
      const ConfigNode& item = node->items[i];
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      if (!item.is_mapping()) config_fail(item.origin, item_path, "a mapping", describe(item));
      loader_.read_section(item, item_path, values[i]);
    }
  }
  void preset(std::string& name, const char*, const char*) {
    if (mode_ == Mode::preset_file) read_preset_header(yaml_, name, nullptr);
  }
  void origin(std::string& where) { where = yaml_.node().key_origin; }

 private:
  // A key with a rule of the parameter structs' kinds.
  template <class T, class Rule>
  void read_value(const char* key, const ConfigNode&, const std::string&, T& value, const char* description,
                  const Rule& rule) {
    yaml_(key, value, description, rule);
  }
  // The firmware's named values: read as text among `choices`, then parsed.
  template <class Named>
  void read_named(const char* key, Named& value, const char* description, const hw::Choices& choices,
                  bool (*parse)(const std::string&, Named&)) {
    std::string text = fw::to_string(value);
    yaml_(key, text, description, choices);
    parse(text, value);
  }
  void read_value(const char* key, const ConfigNode&, const std::string&, fw::DataType& value,
                  const char* description, const hw::Choices& choices) {
    read_named(key, value, description, choices, fw::parse_data_type);
  }
  void read_value(const char* key, const ConfigNode&, const std::string&, fw::WeightDtype& value,
                  const char* description, const hw::Choices& choices) {
    read_named(key, value, description, choices, fw::parse_weight_dtype);
  }
  void read_value(const char* key, const ConfigNode&, const std::string&, fw::LayerPass& value,
                  const char* description, const hw::Choices& choices) {
    read_named(key, value, description, choices, fw::parse_layer_pass);
  }
  void read_value(const char* key, const ConfigNode& node, const std::string& path, double& value,
                  const char* description, const Positive& rule);
  void read_value(const char* key, const ConfigNode& node, const std::string& path, std::string& value,
                  const char* description, const OutputName&);
  void read_value(const char* key, const ConfigNode& node, const std::string& path,
                  std::vector<std::string>& value, const char* description, const SchemeList&);
  void read_value(const char* key, const ConfigNode& node, const std::string& path, std::string& value,
                  const char* description, const TraceFile&);
  void read_value(const char* key, const ConfigNode& node, const std::string& path,
                  std::optional<uint32_t>& value, const char* description, const OptionalIndex&);
  void read_value(const char* key, const ConfigNode& node, const std::string& path,
                  std::optional<double>& value, const char* description, const OptionalTime&);
  void read_value(const char* key, const ConfigNode& node, const std::string& path,
                  std::vector<std::vector<uint32_t>>& value, const char* description, const GpuPartitions&);

  // After the section's kind is known: a key that belongs to other kinds only is an error.
  void reject_keys_of_other_kinds(const std::string& selector) const;

  ScenarioLoader& loader_;
  const SectionKeys& keys_;
  Mode mode_;
  YamlReader yaml_;
  std::string path_;
  SectionKind kind_;
};

template <class Section>
void ScenarioLoader::read_section(const ConfigNode& node, const std::string& path, Section& section) {
  SectionKeys keys;
  visit_section(keys, section);
  if (keys.has_preset()) {
    read_preset_section(node, path, section, keys);
    return;
  }
  SectionReader reader(*this, node, path, keys, SectionReader::Mode::section);
  reader.check_keys();
  visit_section(reader, section);
}

template <class Section>
void ScenarioLoader::read_preset_section(const ConfigNode& node, const std::string& path, Section& section,
                                         const SectionKeys& keys) {
  const std::string& kind = keys.preset_kind();
  const ConfigNode* preset_node = &node;
  std::string preset_path = path;
  std::optional<SectionReader> overrides;
  if (!node.is_scalar()) {
    if (!node.is_mapping()) {
      config_fail(node.origin, path, "a " + kind + " preset name, or a mapping of preset and overrides",
                  describe(node));
    }
    overrides.emplace(*this, node, path, keys, SectionReader::Mode::preset_overrides);
    overrides->check_keys();
    preset_path = join_path(path, "preset");
    preset_node = node.find("preset");
    if (!preset_node) fail_missing(node, preset_path, "a " + kind + " preset name");
  }

  const ConfigNode preset = load_preset(*preset_node, preset_path, kind, keys.preset_directory(), keys.preset_name());
  SectionReader defaults(*this, preset, "", keys, SectionReader::Mode::preset_file);
  visit_section(defaults, section);
  defaults.finish();
  keys.require(preset, "");
  origins_.record(preset, path, kPreset, false);

  if (overrides) {
    visit_section(*overrides, section);
    overrides->finish();
  }
}

template <class T, class Rule>
void SectionReader::operator()(const char* key, T& value, const char* description, const Rule& rule,
                               const KeyUse& use) {
  const std::string path = join_path(path_, key);
  if constexpr (std::is_same_v<T, uint32_t>) {
    if (use.default_value) {
      value = *use.default_value;
      loader_.alias(path, join_path(path_, use.default_key));
    }
  }
  const ConfigNode* node = yaml_.take(key);
  if (!node) {
    // Keys required of every kind were looked for before; this one is required of some.
    if (use.required && !use.kinds.empty() && kind_.applies(use)) {
      fail_missing(yaml_.node(), path, keys_.find(key)->expected);
    }
    return;
  }
  read_value(key, *node, path, value, description, rule);
  kind_.note(value, use);
  if (use.selects_kind) reject_keys_of_other_kinds(key);
}

void SectionReader::read_value(const char*, const ConfigNode& node, const std::string& path, double& value,
                               const char*, const Positive& rule) {
  value = read_positive(node, path);
  if (value < rule.min) {
    config_fail(node.origin, path, "at least " + format_number(rule.min) + " (" + rule.min_means + ")",
                describe(node));
  }
}

void SectionReader::read_value(const char*, const ConfigNode& node, const std::string& path, std::string& value,
                               const char*, const OutputName&) {
  value = read_string(node, path);
  if (!valid_name(value)) {
    config_fail(node.origin, path, "a name of letters, digits, '_', '.' and '-' (it names the output directory)",
                describe(node));
  }
}

void SectionReader::read_value(const char*, const ConfigNode& node, const std::string& path,
                               std::vector<std::string>& value, const char*, const SchemeList&) {
  const std::vector<std::string>& known = fw::scheme_names();
  const std::string expected = "a non-empty list of schemes among " + join_list(known);
  if (!node.is_sequence() || node.items.empty()) config_fail(node.origin, path, expected, describe(node));
  std::vector<std::string> schemes;
  for (size_t i = 0; i < node.items.size(); ++i) {
    const ConfigNode& item = node.items[i];
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    const std::string name = read_string(item, item_path);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      config_fail(item.origin, item_path, "one of the schemes " + join_list(known), describe(item));
    }
    if (std::find(schemes.begin(), schemes.end(), name) != schemes.end()) {
      config_fail(item.origin, item_path, "each scheme once", "a second " + name);
    }
    schemes.push_back(name);
  }
  value = std::move(schemes);
}

// A trace path is relative to the directory of the file that wrote it (the scenario, or a study
// that sets it), or to the current directory when given with --set (resolve_written_path).
void SectionReader::read_value(const char*, const ConfigNode& node, const std::string& path, std::string& value,
                               const char*, const TraceFile&) {
  value = resolve_written_path(node, read_string(node, path));
  // A name with placeholders is checked once the layers and iterations it names are known
  // (ScenarioLoader::check_trace_files).
  if (value.find_first_of("{}") != std::string::npos) return;
  if (const std::string why = unreadable_file(value); !why.empty()) {
    config_fail(node.origin, path, "a readable trace file (a regular file)", value + " (" + why + ")");
  }
}

void SectionReader::read_value(const char* key, const ConfigNode&, const std::string&,
                               std::optional<uint32_t>& value, const char* description, const OptionalIndex&) {
  uint32_t index = 0;
  yaml_(key, index, description, hw::between(0, 1u << 20));
  value = index;
}

void SectionReader::read_value(const char* key, const ConfigNode&, const std::string&,
                               std::optional<double>& value, const char* description, const OptionalTime&) {
  double time = 0.0;
  yaml_(key, time, description, hw::between(0.0, 1e9));
  value = time;
}

// The shape only (lists of GPU numbers); check_partitions() checks them against the platform.
void SectionReader::read_value(const char*, const ConfigNode& node, const std::string& path,
                               std::vector<std::vector<uint32_t>>& value, const char*, const GpuPartitions&) {
  const std::string expected = "a list of partitions, each a list of GPU indices";
  if (!node.is_sequence()) config_fail(node.origin, path, expected, describe(node));
  if (node.items.size() > kMaxSectionListEntries) {
    config_fail(node.origin, path, "at most " + std::to_string(kMaxSectionListEntries) + " partitions (an input limit)",
                std::to_string(node.items.size()));
  }
  std::vector<std::vector<uint32_t>> partitions(node.items.size());
  for (size_t i = 0; i < node.items.size(); ++i) {
    const ConfigNode& item = node.items[i];
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (!item.is_sequence()) config_fail(item.origin, item_path, "a list of GPU indices", describe(item));
    for (size_t j = 0; j < item.items.size(); ++j) {
      const std::string gpu_path = item_path + "[" + std::to_string(j) + "]";
      partitions[i].push_back(static_cast<uint32_t>(
          read_unsigned(item.items[j], gpu_path, hw::between(0, 4095), std::numeric_limits<uint32_t>::max())));
    }
  }
  value = std::move(partitions);
}

void SectionReader::reject_keys_of_other_kinds(const std::string& selector) const {
  for (const auto& [key, value] : yaml_.node().entries) {
    const SectionKeys::Key* declared = keys_.find(key);
    if (declared == nullptr || kind_.applies(declared->use)) continue;
    config_fail(value.key_origin, join_path(path_, key),
                "one of the keys of " + selector + " " + kind_.name() + ": " + join_list(keys_.of_kind(kind_.name())),
                key + ", which belongs to " + selector + " " + join_list(declared->use.kinds));
  }
}

// --- constraints between keys ---------------------------------------------------------------

}  // namespace

Scenario load_scenario_document(const ConfigNode& doc, const std::string& file, const std::string& config_dir,
                                ScenarioUse use) {
  return ScenarioLoader(file, config_dir, use).load(doc);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& config_dir) {
  return within_memory(path, "a scenario", [&] {
    ConfigNode doc = load_config_file(path);
    for (const std::string& text : overrides) apply_override(doc, text);
    return load_scenario_document(doc, path, config_dir);
  });
}

}  // namespace nvsvp::platform
