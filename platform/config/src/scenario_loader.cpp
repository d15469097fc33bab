// Scenario loading: scenario file + --set overrides -> presets -> overrides -> semantic checks.
// Every key is checked; every error names the file, line and key path (see config_reader.hpp).
// The keys themselves are declared once, in scenario_sections.hpp; this file reads through them.
#include "nvsvp/platform/scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
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
#include "nvsvp/platform/trace_files.hpp"

namespace nvsvp::platform {

namespace {

namespace fs = std::filesystem;

std::string join_list(const std::vector<std::string>& items) { return join(items, ", "); }

// --- helpers --------------------------------------------------------------------------------

[[noreturn]] void fail_missing(const ConfigNode& parent, const std::string& path,
                               const std::string& expected) {
  config_fail(parent.key_origin, path, expected + " (required key)", "nothing");
}

void require_keys(const ConfigNode& node, const std::string& prefix,
                  std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    if (!node.find(key)) fail_missing(node, join_path(prefix, key), "a value");
  }
}

double read_positive(const ConfigNode& node, const std::string& path) {
  const double value = read_double(node, path, hw::Range{});
  if (!(value > 0.0)) config_fail(node.origin, path, "a number > 0", describe(node));
  return value;
}

std::vector<std::string> preset_names(const std::string& config_dir, const std::string& kind_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path dir = fs::path(config_dir) / kind_dir;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml" && it->is_regular_file(ec)) {
      names.push_back(it->path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string preset_file(const std::string& config_dir, const std::string& kind_dir,
                        const std::string& name) {
  return (fs::path(config_dir) / kind_dir / (name + ".yaml")).string();
}

// A preset value with a '/' or ending in .yaml names a file of the user's own, not a preset of
// config_dir.
bool is_preset_path(const std::string& value) {
  return value.find('/') != std::string::npos ||
         (value.size() > 5 && value.compare(value.size() - 5, 5, ".yaml") == 0);
}

// A path written in a file is relative to that file's directory; one given with --set is relative
// to the current directory, as a shell user would expect.
std::string resolve_written_path(const ConfigNode& node, const std::string& written_text) {
  const fs::path written(written_text);
  if (written.is_absolute() || from_command_line(node.origin)) return written.lexically_normal().string();
  const std::string origin_file = node.origin.substr(0, node.origin.rfind(':'));  // origin is FILE:LINE
  return (fs::path(origin_file).parent_path() / written).lexically_normal().string();
}

// Reads a preset file's name and summary and checks the name against the file name (of a preset
// given by path, the file's name without .yaml).
void read_preset_header(YamlReader& reader, const std::string& preset, std::string* summary) {
  const ConfigNode& doc = reader.node();
  require_keys(doc, "", {"name", "summary"});
  const ConfigNode& name_node = *reader.take("name");
  const std::string name = is_preset_path(preset) ? fs::path(preset).stem().string() : preset;
  if (read_string(name_node, "name") != name) {
    config_fail(name_node.origin, "name", "the file's own name " + name, describe(name_node));
  }
  const std::string text = read_string(*reader.take("summary"), "summary");
  if (summary) *summary = text;
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
  ScenarioLoader(std::string file, std::string config_dir)
      : file_(std::move(file)), config_dir_(std::move(config_dir)) {}

  Scenario load(const ConfigNode& doc) {
    origins_.set_fallback(file_ + ":1");
    origins_.record(doc, "", kScenarioFile, true);
    scenario_.file = file_;
    read_section(doc, "", scenario_);
    check();
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

  // Whether any of the scenario's schemes has a trait (its scheme registry entry).
  template <class Predicate>
  bool any_scheme(Predicate has) const {
    return std::any_of(scenario_.schemes.begin(), scenario_.schemes.end(),
                       [&](const std::string& s) { return has(fw::scheme_traits(s)); });
  }

  // Constraints between keys, each reported at the most specific key involved.
  void check() const {
    check_fabric();
    check_experts();
    check_reduction_buffer();
    check_gpu_resources();
    check_replication();
    check_message_size();
    check_faults();
    check_partitions();
    check_stream();
    check_step();
    check_trace_files();
  }
  void check_fabric() const;
  void check_experts() const;
  void check_reduction_buffer() const;
  void check_gpu_resources() const;
  void check_replication() const;
  void check_stream() const;
  void check_step() const;
  void check_inference() const;
  void check_trace_files() const;
  void check_trace_placeholders(const Place& at) const;
  void check_message_size() const;
  void check_faults() const;
  void check_partitions() const;

  std::string file_;
  std::string config_dir_;
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
  std::error_code ec;
  std::ifstream probe(value);
  if (!probe || fs::is_directory(value, ec)) {
    config_fail(node.origin, path, "a readable trace file",
                value + (fs::exists(value, ec) ? " (not readable)" : " (no such file)"));
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

void ScenarioLoader::check_fabric() const {
  const PlatformSpec& p = scenario_.platform;
  if (p.links_per_chip.size() != p.switch_chips) {
    const Place at = origins_.blame({"platform.links_per_chip", "platform.switch_chips"});
    config_fail(at.origin, at.path,
                "one entry of platform.links_per_chip per switch chip (switch_chips = " +
                    std::to_string(p.switch_chips) + ")",
                std::to_string(p.links_per_chip.size()) + " entries");
  }
  if (p.gpus > hw::kMaxGpus) {
    // Said before the ports: every GPU needs a route entry in every chip (ROUTE_ENTRIES).
    const Place at = origins_.blame({"platform.gpus"});
    config_fail(at.origin, at.path,
                "at most " + std::to_string(hw::kMaxGpus) + " GPUs (a switch chip's route table, ROUTE_ENTRIES)",
                std::to_string(p.gpus) + " GPUs");
  }
  for (size_t c = 0; c < p.links_per_chip.size(); ++c) {
    const uint64_t needed = static_cast<uint64_t>(p.gpus) * p.links_per_chip[c];
    if (needed <= p.switch_chip.ports) continue;
    const Place at = origins_.blame({"platform.switch.ports", "platform.gpus", "platform.links_per_chip"});
    config_fail(at.origin, at.path,
                "enough switch ports for gpus x links_per_chip[" + std::to_string(c) + "] = " +
                    std::to_string(p.gpus) + " x " + std::to_string(p.links_per_chip[c]) + " = " +
                    std::to_string(needed) + " links per chip",
                std::to_string(p.switch_chip.ports) + " ports per chip (platform.switch.ports)");
  }
}

void ScenarioLoader::check_experts() const {
  const PlatformSpec& p = scenario_.platform;
  const WorkloadSpec& w = scenario_.workload;
  if (w.top_k > w.model.experts) {
    const Place at = origins_.blame({"workload.top_k", "workload.model.experts"});
    config_fail(at.origin, at.path, "top_k <= experts (a token picks top_k distinct experts)",
                "top_k " + std::to_string(w.top_k) + " with " + std::to_string(w.model.experts) + " experts");
  }
  if (w.model.experts % p.gpus != 0) {
    const Place at = origins_.blame({"workload.model.experts", "platform.gpus"});
    config_fail(at.origin, at.path,
                "a number of experts divisible by the number of GPUs (experts are spread evenly)",
                std::to_string(w.model.experts) + " experts over " + std::to_string(p.gpus) + " GPUs");
  }
  const fw::MoeModel& m = w.model;
  if (m.dense_layers > m.layers) {
    const Place at = origins_.blame({"workload.model.dense_layers", "workload.model.layers"});
    config_fail(at.origin, at.path, "dense_layers <= layers (the first dense_layers of the model's layers are dense)",
                "dense_layers " + std::to_string(m.dense_layers) + " of " + std::to_string(m.layers) + " layers");
  }
  if (m.layers > 0 && (m.attention.kind.empty() || m.vocab == 0)) {
    const Place at = origins_.blame({"workload.model.vocab", "workload.model.layers"});
    config_fail(at.origin, at.path,
                "attention and vocab in a model that gives its layers (the parts of a whole-model step)",
                "layers " + std::to_string(m.layers) + (m.attention.kind.empty() ? ", no attention" : "") +
                    (m.vocab == 0 ? ", no vocab" : ""));
  }
  if (m.dense_layers > 0 && m.dense_hidden == 0) {
    const Place at = origins_.blame({"workload.model.dense_hidden", "workload.model.dense_layers"});
    config_fail(at.origin, at.path, "dense_hidden >= 1 for a model with dense layers",
                "dense_hidden 0 with " + std::to_string(m.dense_layers) + " dense layers");
  }
}

void ScenarioLoader::check_reduction_buffer() const {
  const model::SwitchParams& s = scenario_.platform.switch_chip;
  const uint32_t buffer = s.reduction_buffer_bytes;
  if ((buffer & (buffer - 1)) != 0) {
    const Place at = origins_.blame({"platform.switch.reduction_buffer_bytes"});
    config_fail(at.origin, at.path, "a power of two (the buffer is 8-way set-associative in 32-byte slots)",
                std::to_string(buffer));
  }
  if (s.reduction_backend != "model" && buffer != 65536) {
    const Place at = origins_.blame({"platform.switch.reduction_buffer_bytes", "platform.switch.reduction_backend"});
    config_fail(at.origin, at.path,
                "65536 with reduction_backend " + s.reduction_backend +
                    " (the RTL is built for a 64 KB buffer; other sizes run on the model)",
                std::to_string(buffer));
  }
}

void ScenarioLoader::check_gpu_resources() const {
  const model::GpuParams& gpu = scenario_.platform.gpu;
  const fw::SoftwareParams& sw = scenario_.software;
  if (sw.comm_sms >= gpu.sms) {
    const Place at = origins_.blame({"software.comm_sms", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "comm_sms below the GPU's SMs (the GEMMs need at least one)",
                std::to_string(sw.comm_sms) + " of " + std::to_string(gpu.sms) + " SMs");
  }
  const bool on_nccl = any_scheme([](const fw::SchemeTraits& t) { return t.nccl_channels; });
  if (on_nccl && sw.nccl_channels >= gpu.sms) {
    const Place at = origins_.blame({"software.nccl_channels", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "nccl_channels below the GPU's SMs (the GEMMs need at least one)",
                std::to_string(sw.nccl_channels) + " of " + std::to_string(gpu.sms) + " SMs");
  }
  if (sw.recv_queue_tokens != 0 && sw.recv_queue_tokens < sw.chunk_tokens) {
    const Place at = origins_.blame({"software.recv_queue_tokens", "software.chunk_tokens"});
    config_fail(at.origin, at.path, "0 (no rings) or a ring of at least one chunk (chunk_tokens)",
                std::to_string(sw.recv_queue_tokens) + " tokens, chunks of " + std::to_string(sw.chunk_tokens));
  }
  const uint64_t fusion_sms = static_cast<uint64_t>(sw.fusion_dispatch_sms) + sw.fusion_gemm1_sms + sw.fusion_gemm2_sms +
                              sw.fusion_combine_sms;
  const bool fused = any_scheme([](const fw::SchemeTraits& t) { return t.fused_kernel; });
  if (fused && fusion_sms > gpu.sms) {
    const Place at = origins_.blame({"software.fusion_dispatch_sms", "software.fusion_gemm1_sms",
                                     "software.fusion_gemm2_sms", "software.fusion_combine_sms", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "the fused kernel's four SM groups within the GPU's SMs",
                std::to_string(fusion_sms) + " of " + std::to_string(gpu.sms) + " SMs");
  }
  if (gpu.hub.cache_entries % gpu.hub.cache_ways != 0) {
    const Place at = origins_.blame({"platform.gpu.hub_cache_entries", "platform.gpu.hub_cache_ways"});
    config_fail(at.origin, at.path, "hub_cache_entries a multiple of hub_cache_ways (whole sets)",
                std::to_string(gpu.hub.cache_entries) + " entries in " + std::to_string(gpu.hub.cache_ways) + " ways");
  }
}

// A fault names a GPU link of the platform: both gpu and link, or (bit errors only) neither; a
// credit loss takes no more credits than the VC it hits holds.
void ScenarioLoader::check_faults() const {
  const PlatformSpec& p = scenario_.platform;
  for (size_t i = 0; i < scenario_.faults.size(); ++i) {
    const FaultSpec& f = scenario_.faults[i];
    const std::string path = "faults[" + std::to_string(i) + "]";
    const std::string origin = origins_.at(path).origin;
    const auto origin_of = [&](const char* key) { return origins_.at(path + "." + key).origin; };
    if (f.kind == "chip_down") {
      if (!f.chip) config_fail(origin, path + ".chip", "the chip that dies (chip_down needs chip)", "none");
      if (*f.chip >= p.switch_chips) {
        config_fail(origin_of("chip"), path + ".chip",
                    "a switch chip of the platform, 0 .. " + std::to_string(p.switch_chips - 1), std::to_string(*f.chip));
      }
      for (size_t j = 0; j < i; ++j) {
        const FaultSpec& e = scenario_.faults[j];
        if (e.kind == "chip_down" && *e.chip == *f.chip) {
          config_fail(origin, path, "one chip_down per chip", "a second one for chip " + std::to_string(*f.chip));
        }
      }
      continue;
    }
    const bool needs_link = f.kind == "credit_loss" || f.kind == "link_down";
    if (f.gpu.has_value() != f.link.has_value() || (needs_link && !f.gpu)) {
      config_fail(f.gpu ? origin_of("gpu") : f.link ? origin_of("link") : origin, path + (f.gpu ? ".link" : ".gpu"),
                  f.kind == "credit_loss" ? "gpu and link (the link whose credits are lost)"
                  : f.kind == "link_down" ? "gpu and link (the link that goes down)"
                                          : "gpu and link together, or neither (every link)",
                  f.gpu ? "gpu alone" : (f.link ? "link alone" : "neither"));
    }
    if (f.gpu && *f.gpu >= p.gpus) {
      config_fail(origin_of("gpu"), path + ".gpu", "a GPU of the platform, 0 .. " + std::to_string(p.gpus - 1),
                  std::to_string(*f.gpu));
    }
    if (f.link && *f.link >= p.links_per_gpu()) {
      config_fail(origin_of("link"), path + ".link", "a link of the GPU, 0 .. " + std::to_string(p.links_per_gpu() - 1),
                  std::to_string(*f.link));
    }
    if (f.kind == "bit_errors") {
      // One rate per link direction: a second entry that reaches the same one is a contradiction.
      for (size_t j = 0; j < i; ++j) {
        const FaultSpec& e = scenario_.faults[j];
        const bool same_links = !e.gpu || !f.gpu || (*e.gpu == *f.gpu && *e.link == *f.link);
        const bool same_direction = e.direction == "both" || f.direction == "both" || e.direction == f.direction;
        if (e.kind == "bit_errors" && same_links && same_direction) {
          config_fail(origin, path, "one bit-error rate per link direction",
                      "a second one for a link faults[" + std::to_string(j) + "] covers");
        }
      }
      continue;
    }
    if (f.kind == "link_down") {
      if (f.up_at_us && !(*f.up_at_us > f.at_us)) {
        config_fail(origin_of("up_at_us"), path + ".up_at_us", "a time after at_us (" + format_number(f.at_us) + ")",
                    format_number(*f.up_at_us));
      }
      const uint32_t chip = p.chip_of_link(*f.link);
      for (size_t j = 0; j < scenario_.faults.size(); ++j) {
        const FaultSpec& e = scenario_.faults[j];
        if (j < i && e.kind == "link_down" && *e.gpu == *f.gpu && *e.link == *f.link) {
          config_fail(origin, path, "one link_down per link",
                      "a second one for GPU " + std::to_string(*f.gpu) + " link " + std::to_string(*f.link));
        }
        if (e.kind == "chip_down" && e.chip && *e.chip == chip) {
          config_fail(origin, path, "a link of a chip that stays up (faults[" + std::to_string(j) + "] takes chip " +
                                        std::to_string(chip) + " down)",
                      "GPU " + std::to_string(*f.gpu) + " link " + std::to_string(*f.link));
        }
      }
      continue;
    }
    const uint32_t depth = f.direction == "to_switch"     ? p.switch_chip.vc_depth_flits
                           : f.direction == "from_switch" ? p.gpu.rx_vc_depth_flits
                                                          : std::min(p.switch_chip.vc_depth_flits, p.gpu.rx_vc_depth_flits);
    if (f.credits > depth) {
      config_fail(origin_of("credits"), path + ".credits",
                  "at most the depth of the VC it hits, " + std::to_string(depth) + " flits", std::to_string(f.credits));
    }
  }
}

// Every GPU named is one of the platform's, in one partition only; no partition is empty. GPUs
// left out are allowed (isolated: the switch refuses every access to or from them).
void ScenarioLoader::check_partitions() const {
  const uint32_t gpus = scenario_.platform.gpus;
  std::vector<int64_t> partition_of(gpus, -1);
  for (size_t i = 0; i < scenario_.partitions.size(); ++i) {
    const std::vector<uint32_t>& partition = scenario_.partitions[i];
    const std::string path = "partitions[" + std::to_string(i) + "]";
    if (partition.empty()) {
      config_fail(origins_.at(path).origin, path, "a partition of at least one GPU", "an empty list");
    }
    for (size_t j = 0; j < partition.size(); ++j) {
      const std::string gpu_path = path + "[" + std::to_string(j) + "]";
      const uint32_t gpu = partition[j];
      if (gpu >= gpus) {
        config_fail(origins_.at(gpu_path).origin, gpu_path, "a GPU of the platform, 0 .. " + std::to_string(gpus - 1),
                    std::to_string(gpu));
      }
      if (partition_of[gpu] >= 0) {
        config_fail(origins_.at(gpu_path).origin, gpu_path, "each GPU in one partition, once",
                    "GPU " + std::to_string(gpu) + " again (it is in partitions[" + std::to_string(partition_of[gpu]) + "])");
      }
      partition_of[gpu] = static_cast<int64_t>(i);
    }
  }
}

void ScenarioLoader::check_replication() const {
  const PlatformSpec& p = scenario_.platform;
  const WorkloadSpec& w = scenario_.workload;
  const fw::ReplicationParams& r = scenario_.replication;
  const std::string n_gpus = std::to_string(p.gpus);
  for (uint32_t size : r.groups) {
    if (size <= p.gpus && p.gpus % size == 0 && std::count(r.groups.begin(), r.groups.end(), size) == 1) continue;
    const Place at = origins_.blame({"replication.groups", "platform.gpus"});
    config_fail(at.origin, at.path, "group sizes that divide the GPU count (" + n_gpus + "), each once",
                "a group of " + std::to_string(size));
  }
  if (r.static_seed != 0 && (r.policy != "static" || w.routing.kind == "trace" || w.routing.kind == "uniform" ||
                               w.routing.kind == "balanced")) {
    const Place at = origins_.blame({"replication.static_seed", "replication.policy", "workload.routing.kind"});
    config_fail(at.origin, at.path,
                "static_seed only with policy static and a normal, zipf or drifting routing (the seed deals their "
                "popularity)",
                "static_seed " + std::to_string(r.static_seed) + " with policy " + r.policy + " and routing " +
                    w.routing.kind);
  }
  // A stream runs every policy, whatever replication.policy says.
  const bool stream = scenario_.stream.iterations > 0;
  if (w.pass == fw::LayerPass::backward && (r.policy != "none" || stream)) {
    // Replicas in training would need their weight gradients summed back into the original
    // expert's, which is not modeled; ISER replicates for serving.
    const Place at = origins_.blame({"workload.pass", stream ? "stream.iterations" : "replication.policy"});
    config_fail(at.origin, at.path, "hot-expert replication and streams in a forward pass only (serving)",
                stream ? std::string("a stream with pass backward") : "policy " + r.policy + " with pass backward");
  }
  if (r.policy == "none" && !stream) return;
  const bool iser = r.policy == "iser" || stream;
  const uint64_t copies = w.model.experts + static_cast<uint64_t>(p.gpus) * r.slots_per_gpu;
  if (copies > 65535) {
    const Place at = origins_.blame({"replication.slots_per_gpu", "workload.model.experts", "platform.gpus"});
    config_fail(at.origin, at.path, "experts + gpus x slots_per_gpu <= 65535 (expert copies have 16-bit IDs)",
                std::to_string(copies));
  }
  const bool multicast = fw::uses_multicast(r);
  if (iser && multicast && r.broadcast_sms >= p.gpu.sms) {
    const Place at = origins_.blame({"replication.broadcast_sms", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "broadcast_sms below the GPU's SMs (the shared experts need at least one)",
                std::to_string(r.broadcast_sms) + " of " + std::to_string(p.gpu.sms) + " SMs");
  }
  if (iser && multicast && p.gpus > hw::kMaxGpus) {
    const Place at = origins_.blame({"replication.broadcast", "platform.gpus"});
    config_fail(at.origin, at.path,
                "p2p or ring above " + std::to_string(hw::kMaxGpus) + " GPUs (a multicast group names at most " +
                    std::to_string(hw::kMaxGpus) + ")",
                r.broadcast + " on " + n_gpus + " GPUs");
  }
}

void ScenarioLoader::check_stream() const {
  if (scenario_.stream.iterations == 0) return;
  const RoutingSpec& routing = scenario_.workload.routing;
  if (routing.kind != "drifting" && routing.kind != "trace") {
    const Place at = origins_.blame({"stream.iterations", "workload.routing.kind"});
    config_fail(at.origin, at.path,
                "a stream over a drifting routing or over trace files (workload.routing.kind: drifting or trace)",
                "routing " + routing.kind);
  }
  if (routing.kind == "trace") {
    // Every iteration (and every layer of several) its own file.
    const Place at = origins_.blame({"workload.routing.file", "stream.iterations"});
    check_trace_placeholders(at);
    const uint32_t layers = scenario_.stream.layers;
    if (!names_placeholder(routing.file, "{iteration}") || (layers > 1 && !names_placeholder(routing.file, "{layer}"))) {
      config_fail(at.origin, at.path,
                  layers > 1 ? "a trace file name with the placeholders {layer} and {iteration} (the stream has " +
                                   std::to_string(layers) + " layers): one file per layer and iteration"
                             : std::string("a trace file name with the placeholder {iteration}: one file per iteration"),
                  routing.file);
    }
  }
  const bool degree_search =
      scenario_.software.tutel_degree == 0 && any_scheme([](const fw::SchemeTraits& t) { return t.searches_degree; });
  if (scenario_.stream.simulate_every > 0 && degree_search) {
    const Place at = origins_.blame({"stream.simulate_every", "software.tutel_degree"});
    config_fail(at.origin, at.path, "a fixed software.tutel_degree (1 .. 64) for tutel in a stream's simulations",
                "tutel_degree 0 (the adaptive search)");
  }
  if (!scenario_.partitions.empty()) {
    const Place at = origins_.blame({"stream.iterations", "partitions"});
    config_fail(at.origin, at.path, "a stream over every GPU (no partitions)",
                std::to_string(scenario_.partitions.size()) + " partitions");
  }
}

void ScenarioLoader::check_step() const {
  const StepSpec& step = scenario_.step;
  const auto step_only = std::find_if(scenario_.schemes.begin(), scenario_.schemes.end(), [](const std::string& s) {
    return fw::scheme_traits(s).training_step_only;
  });
  if (step_only != scenario_.schemes.end() && step.kind != "training") {
    const std::string path = "schemes[" + std::to_string(step_only - scenario_.schemes.begin()) + "]";
    const Place at = origins_.blame({path, "step.kind"});
    config_fail(at.origin, at.path,
                *step_only + " (" + fw::scheme_traits(*step_only).summary + ") in a training step",
                step.kind.empty() ? std::string("no step") : "an " + step.kind + " step");
  }
  const uint32_t stages = step.pipeline.stages, micro_batches = step.micro_batches;
  const bool under_dualpipe =
      step.pipeline.schedule == "dualpipe" ||
      any_scheme([](const fw::SchemeTraits& t) { return t.schedule == fw::StepSchedule::dualpipe; });
  if (step.kind == "training" && under_dualpipe && stages > 1 &&
      (stages % 2 != 0 || micro_batches % 2 != 0 || micro_batches < 2 * stages)) {
    const Place at = stages % 2 != 0 ? origins_.blame({"step.pipeline.stages", "step.pipeline.schedule"})
                                     : origins_.blame({"step.micro_batches", "step.pipeline.schedule"});
    config_fail(at.origin, at.path,
                "for DualPipe over several stages (scheme dualpipe or pipeline.schedule dualpipe): an even number of "
                "stages and an even number of micro_batches, at least twice the stages",
                std::to_string(stages) + " stages and " + std::to_string(micro_batches) + " micro batches");
  }
  if (step.kind.empty()) return;
  const fw::MoeModel& m = scenario_.workload.model;
  if (m.layers == 0 || m.attention.kind.empty() || m.vocab == 0 || m.dense_layers >= m.layers) {
    const Place at = origins_.blame({"workload.model", "step.kind"});
    config_fail(at.origin, at.path,
                "a model that gives its layers (at least one MoE layer), attention and vocab for a step of the whole "
                "model",
                "model " + m.name + " with " + std::to_string(m.layers) + " layers, " +
                    std::to_string(m.dense_layers) + " dense" + (m.attention.kind.empty() ? ", no attention" : "") +
                    (m.vocab == 0 ? ", no vocab" : ""));
  }
  const uint32_t moe_layers = m.layers - m.dense_layers;
  if (step.pipeline.stages > m.layers) {
    const Place at = origins_.blame({"step.pipeline.stages", "workload.model"});
    config_fail(at.origin, at.path, "at most one stage per layer (" + std::to_string(m.layers) + " layers)",
                std::to_string(step.pipeline.stages) + " stages");
  }
  if (step.sample_layers > moe_layers) {
    const Place at = origins_.blame({"step.sample_layers", "workload.model"});
    config_fail(at.origin, at.path, "at most the model's " + std::to_string(moe_layers) + " MoE layers",
                std::to_string(step.sample_layers));
  }
  if (step.kind == "inference") check_inference();
  // The step runs its passes itself, without replication, streams or partitions.
  const char* conflict = scenario_.workload.pass == fw::LayerPass::backward ? "workload.pass"
                         : scenario_.replication.policy != "none"           ? "replication.policy"
                         : scenario_.stream.iterations > 0                  ? "stream.iterations"
                         : !scenario_.partitions.empty()                    ? "partitions"
                                                                            : nullptr;
  if (conflict != nullptr) {
    const Place at = origins_.blame({conflict, "step.kind"});
    config_fail(at.origin, at.path,
                "a step alone: it runs its passes itself, with no replication, stream or partitions",
                std::string(conflict) + " given");
  }
  const bool degree_search =
      scenario_.software.tutel_degree == 0 && any_scheme([](const fw::SchemeTraits& t) { return t.searches_degree; });
  if (degree_search) {
    const Place at = origins_.blame({"step.kind", "software.tutel_degree"});
    config_fail(at.origin, at.path, "a fixed software.tutel_degree (1 .. 64) for tutel in a step",
                "tutel_degree 0 (the adaptive search)");
  }
}

// An inference request's prompts fill the GPUs' tokens evenly, and its decode batches are drawn.
void ScenarioLoader::check_inference() const {
  const StepSpec& step = scenario_.step;
  const uint32_t prompt = step.prompt_of(scenario_.workload.model);
  const uint32_t tokens = scenario_.workload.tokens_per_gpu;
  if (prompt == 0 || tokens % prompt != 0) {
    const Place at = origins_.blame({"step.prompt_tokens", "workload.tokens_per_gpu"});
    config_fail(at.origin, at.path,
                "a prompt length (step.prompt_tokens, or the model's sequence_length) that divides "
                "workload.tokens_per_gpu into whole sequences",
                "prompt " + std::to_string(prompt) + " tokens for " + std::to_string(tokens) + " tokens per GPU");
  }
  if (scenario_.workload.routing.kind == "trace") {
    const Place at = origins_.blame({"workload.routing.kind", "step.kind"});
    config_fail(at.origin, at.path,
                "a drawn routing for an inference request (its decode batches are smaller than a trace's)", "trace");
  }
}

void ScenarioLoader::check_trace_placeholders(const Place& at) const {
  const std::string& pattern = scenario_.workload.routing.file;
  try {
    trace_file_of(pattern, 0, 0, at.origin);
  } catch (const ConfigError&) {
    config_fail(at.origin, at.path, "a trace file whose braces are the placeholders {layer} and {iteration}", pattern);
  }
}

// Every trace file the run will read exists: the stream's, one per layer and iteration, before
// anything runs (so that a run does not stop at iteration 180), or the one the routing keys name.
// Their contents are checked as each is read (file:line, exit 2).
void ScenarioLoader::check_trace_files() const {
  const RoutingSpec& routing = scenario_.workload.routing;
  if (routing.kind != "trace" || routing.file.find_first_of("{}") == std::string::npos) return;
  const Place at = origins_.blame({"workload.routing.file"});
  check_trace_placeholders(at);
  const StreamSpec& stream = scenario_.stream;
  const bool in_stream = stream.iterations > 0;
  // The layers whose files a run reads: the stream's, a step's simulated MoE layers (and the
  // scenario's own layer), or the routing's one.
  std::vector<uint32_t> layers{routing.layer};
  if (in_stream) {
    layers.clear();
    for (uint32_t l = 0; l < stream.layers; ++l) layers.push_back(l);
  } else if (!scenario_.step.kind.empty()) {
    const fw::MoeModel& m = scenario_.workload.model;
    for (uint32_t k : sampled_moe_layers(m.layers - m.dense_layers, scenario_.step.sample_layers)) {
      layers.push_back(m.dense_layers + k);
    }
  }
  const uint32_t iterations = in_stream ? stream.iterations : 1;
  for (uint32_t layer : layers) {
    for (uint32_t i = 0; i < iterations; ++i) {
      const uint32_t iteration = in_stream ? i : routing.iteration;
      const std::string file = trace_file_of(routing.file, layer, iteration, at.origin);
      std::error_code ec;
      std::ifstream probe(file);
      if (!probe || fs::is_directory(file, ec)) {
        config_fail(at.origin, at.path,
                    "a readable trace file for layer " + std::to_string(layer) + ", iteration " +
                        std::to_string(iteration) + " (" + routing.file + ")",
                    file + (fs::exists(file, ec) ? " (not readable)" : " (no such file)"));
      }
    }
  }
}

void ScenarioLoader::check_message_size() const {
  const uint32_t chunk_tokens = scenario_.software.chunk_tokens;
  const uint32_t functional_bytes = scenario_.platform.gpu.functional_bytes;
  const uint64_t chunk_bytes = static_cast<uint64_t>(chunk_tokens) * functional_bytes;
  if (chunk_bytes > hw::kMaxFunctionalBytesPerMessage) {
    const Place at = origins_.blame({"software.chunk_tokens", "platform.gpu.functional_bytes"});
    config_fail(at.origin, at.path,
                "chunk_tokens x functional_bytes <= " + std::to_string(hw::kMaxFunctionalBytesPerMessage) +
                    " (the functional bytes one message carries)",
                std::to_string(chunk_tokens) + " x " + std::to_string(functional_bytes) + " = " +
                    std::to_string(chunk_bytes));
  }
}

}  // namespace

Scenario load_scenario_document(const ConfigNode& doc, const std::string& file, const std::string& config_dir) {
  return ScenarioLoader(file, config_dir).load(doc);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& config_dir) {
  return within_memory(path, "a scenario", [&] {
    ConfigNode doc = load_config_file(path);
    for (const std::string& text : overrides) apply_override(doc, text);
    return load_scenario_document(doc, path, config_dir);
  });
}

std::vector<PresetInfo> list_presets(const std::string& config_dir) {
  std::vector<PresetInfo> presets;
  for (const auto& [kind, dir] : {std::pair<std::string, std::string>{"platform", "platforms"},
                                  std::pair<std::string, std::string>{"model", "models"}}) {
    for (const std::string& name : preset_names(config_dir, dir)) {
      const ConfigNode doc = load_config_file(preset_file(config_dir, dir, name));
      YamlReader reader(doc, "");
      PresetInfo info{kind, name, ""};
      read_preset_header(reader, name, &info.summary);
      presets.push_back(std::move(info));
    }
  }
  return presets;
}

}  // namespace nvsvp::platform
