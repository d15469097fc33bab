// Scenario loading: scenario file + --set overrides -> presets -> overrides -> semantic checks.
// Every key is checked; every error names the file, line and key path (see config_reader.hpp).
#include "nvsvp/platform/scenario.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>

#include "config_reader.hpp"
#include "scenario_document.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::platform {

const std::vector<std::string>& known_schemes() { return fw::scheme_names(); }

namespace {

namespace fs = std::filesystem;

// How specific the place that set a value is: a semantic error that involves several keys is
// reported at the most specific one, since that is most likely the one the user just changed.
enum Level : int { kDefault = -1, kPreset = 0, kScenarioFile = 1, kCommandLine = 2 };

const char* const kCommandLinePrefix = "command line";

bool from_command_line(const std::string& origin) {
  return origin.compare(0, std::char_traits<char>::length(kCommandLinePrefix), kCommandLinePrefix) == 0;
}

std::string join_list(const std::vector<std::string>& items) { return join(items, ", "); }

// --- keys of the scenario's own sections, listed once for reading and dumping ---------------

template <class V>
void visit_platform(V& v, PlatformSpec& p) {
  v("gpus", p.gpus, "GPUs on the fabric", hw::between(1, 4096));
  v("switch_chips", p.switch_chips, "switch chips; every GPU has links to every chip",
    hw::between(1, 1024));
  v("links_per_chip", p.links_per_chip,
    "links from every GPU to switch chip c, one entry per chip", hw::between(1, 4096));
}

template <class V>
void visit_model(V& v, fw::MoeModel& m) {
  v("hidden", m.hidden, "model (hidden) dimension", hw::between(1, 1 << 20));
  v("moe_hidden", m.moe_hidden, "intermediate dimension of one expert", hw::between(1, 1 << 20));
  v("heads", m.heads, "attention heads", hw::between(1, 1 << 16));
  v("sequence_length", m.sequence_length, "tokens per sequence (default tokens_per_gpu)",
    hw::between(1, 1 << 20));
  v("experts", m.experts, "routed experts of the MoE layer", hw::between(1, 65535));
  v("top_k", m.top_k, "experts per token (the model's default)", hw::between(1, 64));
  v("shared_experts", m.shared_experts, "experts every token goes through at home (the model's default)",
    hw::between(0, 64));
}

const char* const kPlatformKeys[] = {"gpus", "switch_chips", "links_per_chip", "link", "switch", "gpu"};
const char* const kModelKeys[] = {"hidden", "moe_hidden", "heads", "sequence_length", "experts", "top_k",
                                  "shared_experts"};
const char* const kWorkloadKeys[] = {"model",         "top_k",         "tokens_per_gpu", "dispatch_dtype",
                                     "combine_dtype", "routing",       "shared_experts"};
const char* const kTopLevelKeys[] = {"name",       "platform",           "workload",   "software", "schemes",
                                     "simulation", "pure_communication", "replication"};
constexpr const char* kPureCommunicationDescription =
    "no compute: expert work takes no time (its results still land), the layer is communication only";

const hw::Range kTopKRange = hw::between(1, 64);
const hw::Range kTokensRange = hw::between(1, 1 << 20);
const hw::Choices kDataTypes{{"fp8", "bf16", "fp32"}};

const char* const kTopKDescription = "experts per token";
const char* const kTokensDescription = "tokens whose home is each GPU";
const char* const kDispatchDescription = "wire format of dispatched token vectors";
const char* const kCombineDescription = "wire format of expert outputs in combine";
const char* const kSharedExpertsDescription = "shared experts every token goes through at home";
const hw::Range kSharedExpertsRange = hw::between(0, 64);
const char* const kTimelineBinDescription =
    "bin of the link utilization time series (utilization_<scheme>.csv) and the trace's counters, us";
const char* const kMaxTimeDescription =
    "simulated-time limit, us: a run still busy then is reported as stuck";

struct RoutingKind {
  const char* name;
  std::vector<std::string> keys;
};
const std::vector<RoutingKind>& routing_kinds() {
  static const std::vector<RoutingKind> kinds = {
      {"uniform", {"kind", "seed"}},
      {"normal", {"kind", "seed", "std"}},
      {"zipf", {"kind", "seed", "exponent"}},
      {"trace", {"kind", "file"}},
  };
  return kinds;
}

// --- where each effective value was set ------------------------------------------------------

struct Place {
  std::string path;
  std::string origin;
  int level = kDefault;
};

class Origins {
 public:
  // Records every key under `node` (a mapping at key path `path`). Preset files are recorded
  // after the scenario and must not replace what the scenario set, hence `overwrite`.
  void record(const ConfigNode& node, const std::string& path, int level, bool overwrite) {
    if (!node.is_mapping()) return;
    for (const auto& [key, child] : node.entries) {
      const std::string child_path = join_path(path, key);
      const int child_level = from_command_line(child.key_origin) ? kCommandLine : level;
      if (overwrite || places_.count(child_path) == 0) {
        places_[child_path] = Place{child_path, child.key_origin, child_level};
      }
      record(child, child_path, level, overwrite);
    }
  }

  // The place of `path`; a value nobody set (a struct default) is blamed on its nearest
  // ancestor that was set, at the lowest level.
  Place at(const std::string& path) const {
    for (std::string p = path;; p = p.substr(0, p.rfind('.'))) {
      const auto it = places_.find(p);
      if (it != places_.end()) {
        return p == path ? it->second : Place{path, it->second.origin, kDefault};
      }
      if (p.find('.') == std::string::npos) break;
    }
    return Place{path, fallback_, kDefault};
  }

  // The most specific of several places (the first on a tie).
  Place blame(std::initializer_list<std::string> paths) const {
    Place best;
    bool first = true;
    for (const std::string& path : paths) {
      Place place = at(path);
      if (first || place.level > best.level) best = place;
      first = false;
    }
    return best;
  }

  void set_fallback(std::string origin) { fallback_ = std::move(origin); }
  void alias(const std::string& path, const std::string& source) {
    if (places_.count(path) == 0) places_[path] = at(source);
  }

 private:
  std::map<std::string, Place> places_;
  std::string fallback_;
};

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

// Reads a preset file's name and summary and checks the name against the file name.
void read_preset_header(YamlReader& reader, const std::string& name, std::string* summary) {
  const ConfigNode& doc = reader.node();
  require_keys(doc, "", {"name", "summary"});
  const ConfigNode& name_node = *reader.take("name");
  if (read_string(name_node, "name") != name) {
    config_fail(name_node.origin, "name", "the file's own name " + name, describe(name_node));
  }
  const std::string text = read_string(*reader.take("summary"), "summary");
  if (summary) *summary = text;
}

}  // namespace

bool valid_name(const std::string& name) {
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

std::vector<std::string> split_key_path(const std::string& path) {
  std::vector<std::string> keys;
  for (size_t start = 0;;) {
    const size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  const bool well_formed = std::none_of(keys.begin(), keys.end(), [](const std::string& k) {
    return k.empty() || k.find_first_of(" \t[]{}:#") != std::string::npos;
  });
  return well_formed ? keys : std::vector<std::string>{};
}

void set_key(ConfigNode& doc, const std::vector<std::string>& keys, ConfigNode value,
             const std::string& origin) {
  value.key_origin = origin;
  ConfigNode* node = &doc;
  std::string path;
  for (size_t i = 0; i < keys.size(); ++i) {
    // A preset named by a string becomes {preset: NAME} so that keys can be set beside it.
    if (node->is_scalar() && (path == "platform" || path == "workload.model")) {
      ConfigNode preset = *node;
      preset.key_origin = node->origin;
      node->kind = ConfigNode::Kind::mapping;
      node->text.clear();
      node->quoted = false;
      node->entries = {{"preset", std::move(preset)}};
    }
    if (node->is_null()) {
      node->kind = ConfigNode::Kind::mapping;
      node->origin = origin;
    }
    if (!node->is_mapping()) {
      config_fail(origin, path.empty() ? "(document)" : path,
                  "a mapping to hold the key " + keys[i], describe(*node));
    }
    const std::string child_path = join_path(path, keys[i]);
    ConfigNode* child = node->find(keys[i]);
    if (i + 1 == keys.size()) {
      if (child) *child = std::move(value);
      else node->entries.emplace_back(keys[i], std::move(value));
      return;
    }
    if (!child) {
      ConfigNode empty;
      empty.origin = empty.key_origin = origin;
      node->entries.emplace_back(keys[i], std::move(empty));
      child = &node->entries.back().second;
    }
    node = child;
    path = child_path;
  }
}

void apply_override(ConfigNode& doc, const std::string& text) {
  const std::string origin = "command line (--set " + text + ")";
  const size_t eq = text.find('=');
  const std::vector<std::string> keys =
      eq != std::string::npos && eq > 0 ? split_key_path(text.substr(0, eq)) : std::vector<std::string>{};
  if (keys.empty()) config_fail(origin, "", "a.b.c=value", "\"" + text + "\"");
  set_key(doc, keys, parse_config_text(text.substr(eq + 1), origin), origin);
}

namespace {

// --- the loader -----------------------------------------------------------------------------

class ScenarioLoader {
 public:
  ScenarioLoader(std::string file, std::string config_dir)
      : file_(std::move(file)), config_dir_(std::move(config_dir)) {}

  Scenario load(const ConfigNode& doc) {
    origins_.set_fallback(file_ + ":1");
    origins_.record(doc, "", kScenarioFile, true);

    scenario_.file = file_;
    YamlReader top(doc, "");
    for (const char* key : kTopLevelKeys) top.declare(key);
    top.finish();
    require_keys(doc, "", {"name", "platform", "workload", "schemes"});

    const ConfigNode& name = *doc.find("name");
    scenario_.name = read_string(name, "name");
    if (!valid_name(scenario_.name)) {
      config_fail(name.origin, "name",
                  "a name of letters, digits, '_', '.' and '-' (it names the output directory)",
                  describe(name));
    }
    read_platform(*doc.find("platform"));
    read_workload(*doc.find("workload"));
    read_schemes(*doc.find("schemes"));
    if (const ConfigNode* software = doc.find("software")) read_params(*software, "software", scenario_.software);
    if (const ConfigNode* simulation = doc.find("simulation")) read_simulation(*simulation);
    if (const ConfigNode* replication = doc.find("replication")) {
      read_params(*replication, "replication", scenario_.replication);
    }
    if (const ConfigNode* pure = doc.find("pure_communication")) {
      scenario_.pure_communication = read_bool(*pure, "pure_communication");
    }
    check();
    return scenario_;
  }

 private:
  // The preset named by `node` (a string) in config_dir/<kind_dir>, loaded.
  ConfigNode load_preset(const ConfigNode& node, const std::string& path, const std::string& kind,
                         const std::string& kind_dir, std::string& name) {
    name = read_string(node, path);
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

  // `node` is a preset name, or a mapping {preset: NAME, overrides...}: returns the mapping in
  // the second case, nullptr in the first.
  static const ConfigNode* preset_overrides(const ConfigNode& node, const std::string& path,
                                            const std::string& what) {
    if (node.is_scalar()) return nullptr;
    if (!node.is_mapping()) {
      config_fail(node.origin, path, "a " + what + " preset name, or a mapping of preset and overrides",
                  describe(node));
    }
    return &node;
  }

  void apply_platform(YamlReader& reader, const std::string& path) {
    PlatformSpec& p = scenario_.platform;
    visit_platform(reader, p);
    if (const ConfigNode* n = reader.take("link")) read_params(*n, join_path(path, "link"), p.link);
    if (const ConfigNode* n = reader.take("switch")) read_params(*n, join_path(path, "switch"), p.switch_chip);
    if (const ConfigNode* n = reader.take("gpu")) read_params(*n, join_path(path, "gpu"), p.gpu);
  }

  void read_platform(const ConfigNode& node) {
    const ConfigNode* overrides = preset_overrides(node, "platform", "platform");
    const ConfigNode* preset_node = &node;
    std::string preset_path = "platform";
    if (overrides) {
      YamlReader reader(*overrides, "platform");
      reader.declare("preset");
      for (const char* key : kPlatformKeys) reader.declare(key);
      reader.finish();
      preset_node = overrides->find("preset");
      if (!preset_node) fail_missing(*overrides, "platform.preset", "a platform preset name");
      preset_path = "platform.preset";
    }

    const ConfigNode preset =
        load_preset(*preset_node, preset_path, "platform", "platforms", scenario_.platform.preset);
    {
      YamlReader reader(preset, "");
      read_preset_header(reader, scenario_.platform.preset, nullptr);
      apply_platform(reader, "");
      reader.finish();
      require_keys(preset, "", {"gpus", "switch_chips", "links_per_chip"});
      origins_.record(preset, "platform", kPreset, false);
    }
    if (overrides) {
      YamlReader reader(*overrides, "platform");
      reader.declare("preset");
      apply_platform(reader, "platform");
      reader.finish();
    }
  }

  void read_model(const ConfigNode& node) {
    const ConfigNode* overrides = preset_overrides(node, "workload.model", "model");
    const ConfigNode* preset_node = &node;
    std::string preset_path = "workload.model";
    if (overrides) {
      YamlReader reader(*overrides, "workload.model");
      reader.declare("preset");
      for (const char* key : kModelKeys) reader.declare(key);
      reader.finish();
      preset_node = overrides->find("preset");
      if (!preset_node) fail_missing(*overrides, "workload.model.preset", "a model preset name");
      preset_path = "workload.model.preset";
    }

    fw::MoeModel& model = scenario_.workload.model;
    const ConfigNode preset = load_preset(*preset_node, preset_path, "model", "models", model.name);
    {
      YamlReader reader(preset, "");
      read_preset_header(reader, model.name, nullptr);
      visit_model(reader, model);
      reader.finish();
      require_keys(preset, "", {"hidden", "moe_hidden", "heads", "sequence_length", "experts", "top_k"});
      origins_.record(preset, "workload.model", kPreset, false);
    }
    if (overrides) {
      YamlReader reader(*overrides, "workload.model");
      reader.declare("preset");
      visit_model(reader, model);
      reader.finish();
    }
  }

  static fw::DataType read_dtype(YamlReader& reader, const char* key, const char* description,
                                 fw::DataType current) {
    std::string text = fw::to_string(current);
    reader(key, text, description, kDataTypes);
    fw::DataType type = current;
    fw::parse_data_type(text, type);
    return type;
  }

  void read_workload(const ConfigNode& node) {
    YamlReader reader(node, "workload");
    for (const char* key : kWorkloadKeys) reader.declare(key);
    reader.finish();
    require_keys(node, "workload", {"model", "routing"});

    read_model(*node.find("model"));
    WorkloadSpec& w = scenario_.workload;
    w.top_k = w.model.top_k;
    w.tokens_per_gpu = w.model.sequence_length;
    reader("top_k", w.top_k, kTopKDescription, kTopKRange);
    reader("tokens_per_gpu", w.tokens_per_gpu, kTokensDescription, kTokensRange);
    w.shared_experts = w.model.shared_experts;
    reader("shared_experts", w.shared_experts, kSharedExpertsDescription, kSharedExpertsRange);
    // Defaults are blamed on the model key they came from.
    origins_.alias("workload.top_k", "workload.model.top_k");
    origins_.alias("workload.tokens_per_gpu", "workload.model.sequence_length");
    origins_.alias("workload.shared_experts", "workload.model.shared_experts");
    w.dispatch_dtype = read_dtype(reader, "dispatch_dtype", kDispatchDescription, fw::DataType::fp8);
    w.combine_dtype = read_dtype(reader, "combine_dtype", kCombineDescription, fw::DataType::bf16);
    read_routing(*node.find("routing"));
  }

  void read_routing(const ConfigNode& node) {
    const std::string path = "workload.routing";
    YamlReader reader(node, path);
    for (const char* key : {"kind", "seed", "std", "exponent", "file"}) reader.declare(key);
    reader.finish();
    RoutingSpec& routing = scenario_.workload.routing;
    routing = RoutingSpec{};
    routing.origin = node.key_origin;

    if (!node.find("kind")) fail_missing(node, path + ".kind", "one of uniform, normal, zipf, trace");
    hw::Choices kinds;
    for (const RoutingKind& kind : routing_kinds()) kinds.values.push_back(kind.name);
    reader("kind", routing.kind, "routing kind", kinds);

    const RoutingKind& kind = *std::find_if(routing_kinds().begin(), routing_kinds().end(),
                                            [&](const RoutingKind& k) { return routing.kind == k.name; });
    for (const auto& [key, value] : node.entries) {
      if (std::find(kind.keys.begin(), kind.keys.end(), key) != kind.keys.end()) continue;
      std::vector<std::string> owners;
      for (const RoutingKind& other : routing_kinds()) {
        if (std::find(other.keys.begin(), other.keys.end(), key) != other.keys.end()) owners.push_back(other.name);
      }
      config_fail(value.key_origin, join_path(path, key),
                  "one of the keys of kind " + routing.kind + ": " + join_list(kind.keys),
                  key + ", which belongs to kind " + join_list(owners));
    }

    reader("seed", routing.seed, "seed of the routing generator", hw::Range{});
    if (const ConfigNode* n = node.find("std")) routing.std = read_positive(*n, path + ".std");
    if (const ConfigNode* n = node.find("exponent")) routing.exponent = read_positive(*n, path + ".exponent");
    if (routing.kind == "trace") {
      if (!node.find("file")) fail_missing(node, path + ".file", "a trace file");
      const ConfigNode& file_node = *node.find("file");
      const std::string file = read_string(file_node, path + ".file");
      routing.file = resolve_trace(file, file_node.origin);
      std::error_code ec;
      std::ifstream probe(routing.file);
      if (!probe || fs::is_directory(routing.file, ec)) {
        config_fail(file_node.origin, path + ".file", "a readable trace file",
                    routing.file + (fs::exists(routing.file, ec) ? " (not readable)" : " (no such file)"));
      }
    }
  }

  // A trace path is relative to the directory of the file that wrote it (the scenario, or a study
  // that sets it); one given with --set is relative to the current directory, as a shell user
  // would expect.
  static std::string resolve_trace(const std::string& file, const std::string& origin) {
    const fs::path path(file);
    if (path.is_absolute() || from_command_line(origin)) return path.lexically_normal().string();
    const std::string origin_file = origin.substr(0, origin.rfind(':'));  // origin is FILE:LINE
    return (fs::path(origin_file).parent_path() / path).lexically_normal().string();
  }

  void read_schemes(const ConfigNode& node) {
    const std::vector<std::string>& known = known_schemes();
    const std::string expected = "a non-empty list of schemes among " + join_list(known);
    if (!node.is_sequence() || node.items.empty()) config_fail(node.origin, "schemes", expected, describe(node));
    for (size_t i = 0; i < node.items.size(); ++i) {
      const ConfigNode& item = node.items[i];
      const std::string path = "schemes[" + std::to_string(i) + "]";
      const std::string name = read_string(item, path);
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        config_fail(item.origin, path, "one of the schemes " + join_list(known), describe(item));
      }
      if (std::find(scenario_.schemes.begin(), scenario_.schemes.end(), name) != scenario_.schemes.end()) {
        config_fail(item.origin, path, "each scheme once", "a second " + name);
      }
      scenario_.schemes.push_back(name);
    }
  }

  void read_simulation(const ConfigNode& node) {
    YamlReader reader(node, "simulation");
    reader.declare("max_time_us");
    reader.declare("timeline_bin_us");
    reader.finish();
    if (const ConfigNode* n = node.find("max_time_us")) {
      scenario_.simulation.max_time_us = read_positive(*n, "simulation.max_time_us");
    }
    if (const ConfigNode* n = node.find("timeline_bin_us")) {
      scenario_.simulation.timeline_bin_us = read_positive(*n, "simulation.timeline_bin_us");
      if (scenario_.simulation.timeline_bin_us < 0.001) {
        config_fail(n->origin, "simulation.timeline_bin_us", "at least 0.001 (1 ns)", describe(*n));
      }
    }
  }

  // Constraints between keys, each reported at the most specific key involved.
  void check() const {
    const PlatformSpec& p = scenario_.platform;
    const WorkloadSpec& w = scenario_.workload;
    const std::string n_gpus = std::to_string(p.gpus);

    if (p.links_per_chip.size() != p.switch_chips) {
      const Place at = origins_.blame({"platform.links_per_chip", "platform.switch_chips"});
      config_fail(at.origin, at.path,
                  "one entry of platform.links_per_chip per switch chip (switch_chips = " +
                      std::to_string(p.switch_chips) + ")",
                  std::to_string(p.links_per_chip.size()) + " entries");
    }
    for (size_t c = 0; c < p.links_per_chip.size(); ++c) {
      const uint64_t needed = static_cast<uint64_t>(p.gpus) * p.links_per_chip[c];
      if (needed <= p.switch_chip.ports) continue;
      const Place at = origins_.blame({"platform.switch.ports", "platform.gpus", "platform.links_per_chip"});
      config_fail(at.origin, at.path,
                  "enough switch ports for gpus x links_per_chip[" + std::to_string(c) + "] = " + n_gpus +
                      " x " + std::to_string(p.links_per_chip[c]) + " = " + std::to_string(needed) +
                      " links per chip",
                  std::to_string(p.switch_chip.ports) + " ports per chip (platform.switch.ports)");
    }
    if (w.top_k > w.model.experts) {
      const Place at = origins_.blame({"workload.top_k", "workload.model.experts"});
      config_fail(at.origin, at.path, "top_k <= experts (a token picks top_k distinct experts)",
                  "top_k " + std::to_string(w.top_k) + " with " + std::to_string(w.model.experts) + " experts");
    }
    if (w.model.experts % p.gpus != 0) {
      const Place at = origins_.blame({"workload.model.experts", "platform.gpus"});
      config_fail(at.origin, at.path,
                  "a number of experts divisible by the number of GPUs (experts are spread evenly)",
                  std::to_string(w.model.experts) + " experts over " + n_gpus + " GPUs");
    }
    const uint32_t buffer = p.switch_chip.reduction_buffer_bytes;
    if ((buffer & (buffer - 1)) != 0) {
      const Place at = origins_.blame({"platform.switch.reduction_buffer_bytes"});
      config_fail(at.origin, at.path, "a power of two (the buffer is 8-way set-associative in 32-byte slots)",
                  std::to_string(buffer));
    }
    if (p.switch_chip.reduction_backend != "model" && buffer != 65536) {
      const Place at = origins_.blame({"platform.switch.reduction_buffer_bytes", "platform.switch.reduction_backend"});
      config_fail(at.origin, at.path,
                  "65536 with reduction_backend " + p.switch_chip.reduction_backend +
                      " (the RTL is built for a 64 KB buffer; other sizes run on the model)",
                  std::to_string(buffer));
    }
    if (scenario_.software.comm_sms >= p.gpu.sms) {
      const Place at = origins_.blame({"software.comm_sms", "platform.gpu.sms"});
      config_fail(at.origin, at.path, "comm_sms below the GPU's SMs (the GEMMs need at least one)",
                  std::to_string(scenario_.software.comm_sms) + " of " + std::to_string(p.gpu.sms) + " SMs");
    }
    const fw::SoftwareParams& sw = scenario_.software;
    const uint64_t fusion_sms = static_cast<uint64_t>(sw.fusion_dispatch_sms) + sw.fusion_gemm1_sms + sw.fusion_gemm2_sms +
                                sw.fusion_combine_sms;
    const bool fused = std::any_of(scenario_.schemes.begin(), scenario_.schemes.end(), fw::uses_fused_kernel);
    if (fused && fusion_sms > p.gpu.sms) {
      const Place at = origins_.blame({"software.fusion_dispatch_sms", "software.fusion_gemm1_sms",
                                       "software.fusion_gemm2_sms", "software.fusion_combine_sms", "platform.gpu.sms"});
      config_fail(at.origin, at.path, "the fused kernel's four SM groups within the GPU's SMs",
                  std::to_string(fusion_sms) + " of " + std::to_string(p.gpu.sms) + " SMs");
    }
    if (p.gpu.hub.cache_entries % p.gpu.hub.cache_ways != 0) {
      const Place at = origins_.blame({"platform.gpu.hub_cache_entries", "platform.gpu.hub_cache_ways"});
      config_fail(at.origin, at.path, "hub_cache_entries a multiple of hub_cache_ways (whole sets)",
                  std::to_string(p.gpu.hub.cache_entries) + " entries in " + std::to_string(p.gpu.hub.cache_ways) +
                      " ways");
    }
    const fw::ReplicationParams& r = scenario_.replication;
    for (uint32_t size : r.groups) {
      if (size <= p.gpus && p.gpus % size == 0 && std::count(r.groups.begin(), r.groups.end(), size) == 1) continue;
      const Place at = origins_.blame({"replication.groups", "platform.gpus"});
      config_fail(at.origin, at.path, "group sizes that divide the GPU count (" + n_gpus + "), each once",
                  "a group of " + std::to_string(size));
    }
    if (r.static_seed != 0 && (r.policy != "static" || w.routing.kind == "trace" || w.routing.kind == "uniform")) {
      const Place at = origins_.blame({"replication.static_seed", "replication.policy", "workload.routing.kind"});
      config_fail(at.origin, at.path,
                  "static_seed only with policy static and a normal or zipf routing (the seed deals their popularity)",
                  "static_seed " + std::to_string(r.static_seed) + " with policy " + r.policy + " and routing " +
                      w.routing.kind);
    }
    if (r.policy != "none") {
      const uint64_t copies = w.model.experts + static_cast<uint64_t>(p.gpus) * r.slots_per_gpu;
      if (copies > 65535) {
        const Place at = origins_.blame({"replication.slots_per_gpu", "workload.model.experts", "platform.gpus"});
        config_fail(at.origin, at.path, "experts + gpus x slots_per_gpu <= 65535 (expert copies have 16-bit IDs)",
                    std::to_string(copies));
      }
      const bool multicast = fw::uses_multicast(r);
      if (r.policy == "iser" && multicast && r.broadcast_sms >= p.gpu.sms) {
        const Place at = origins_.blame({"replication.broadcast_sms", "platform.gpu.sms"});
        config_fail(at.origin, at.path, "broadcast_sms below the GPU's SMs (the shared experts need at least one)",
                    std::to_string(r.broadcast_sms) + " of " + std::to_string(p.gpu.sms) + " SMs");
      }
      if (r.policy == "iser" && multicast && p.gpus > 64) {
        const Place at = origins_.blame({"replication.broadcast", "platform.gpus"});
        config_fail(at.origin, at.path, "p2p or ring above 64 GPUs (a multicast group names at most 64)",
                    r.broadcast + " on " + n_gpus + " GPUs");
      }
    }
    const uint64_t chunk_bytes = static_cast<uint64_t>(scenario_.software.chunk_tokens) * p.gpu.functional_bytes;
    if (chunk_bytes > hw::kMaxFunctionalBytesPerMessage) {
      const Place at = origins_.blame({"software.chunk_tokens", "platform.gpu.functional_bytes"});
      config_fail(at.origin, at.path,
                  "chunk_tokens x functional_bytes <= " + std::to_string(hw::kMaxFunctionalBytesPerMessage) +
                      " (the functional bytes one message carries)",
                  std::to_string(scenario_.software.chunk_tokens) + " x " +
                      std::to_string(p.gpu.functional_bytes) + " = " + std::to_string(chunk_bytes));
    }
  }

  std::string file_;
  std::string config_dir_;
  Scenario scenario_;
  Origins origins_;
};

}  // namespace

Scenario load_scenario_document(const ConfigNode& doc, const std::string& file, const std::string& config_dir) {
  return ScenarioLoader(file, config_dir).load(doc);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& config_dir) {
  ConfigNode doc = load_config_file(path);
  for (const std::string& text : overrides) apply_override(doc, text);
  return load_scenario_document(doc, path, config_dir);
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

std::string dump_effective(const Scenario& scenario) {
  std::string out;
  out += "# Effective configuration of scenario " + scenario.name;
  if (!scenario.file.empty()) out += " (" + scenario.file + ")";
  out += ": every parameter, defaults included.\n";
  YamlDumper top(out, 0);
  top.line("name", yaml_quote(scenario.name), "names the output directory");

  top.section("platform");
  {
    YamlDumper d(out, 2);
    d.line("preset", yaml_quote(scenario.platform.preset), "the preset the values below start from");
    PlatformSpec p = scenario.platform;
    visit_platform(d, p);
    d.section("link", "one NVLink link direction");
    dump_params(out, 4, p.link);
    d.section("switch", "one switch chip");
    dump_params(out, 4, p.switch_chip);
    d.section("gpu", "one GPU");
    dump_params(out, 4, p.gpu);
  }

  const WorkloadSpec& w = scenario.workload;
  top.section("workload");
  {
    YamlDumper d(out, 2);
    d.section("model");
    {
      YamlDumper m(out, 4);
      m.line("preset", yaml_quote(w.model.name), "the preset the values below start from");
      fw::MoeModel model = w.model;
      visit_model(m, model);
    }
    d("top_k", w.top_k, kTopKDescription, kTopKRange);
    d("tokens_per_gpu", w.tokens_per_gpu, kTokensDescription, kTokensRange);
    d("dispatch_dtype", std::string(fw::to_string(w.dispatch_dtype)), kDispatchDescription, kDataTypes);
    d("combine_dtype", std::string(fw::to_string(w.combine_dtype)), kCombineDescription, kDataTypes);
    d("shared_experts", w.shared_experts, kSharedExpertsDescription, kSharedExpertsRange);
    d.section("routing");
    YamlDumper r(out, 4);
    r.line("kind", yaml_quote(w.routing.kind), "uniform | normal | zipf | trace");
    if (w.routing.kind != "trace") r("seed", w.routing.seed, "seed of the routing generator", hw::Range{});
    if (w.routing.kind == "normal") {
      r("std", w.routing.std, "standard deviation of the per-expert selection probability", hw::Range{});
    }
    if (w.routing.kind == "zipf") r("exponent", w.routing.exponent, "power-law exponent", hw::Range{});
    if (w.routing.kind == "trace") {
      std::error_code ec;
      const fs::path absolute = fs::absolute(w.routing.file, ec);
      r.line("file", yaml_quote(ec ? w.routing.file : absolute.lexically_normal().string()),
             "one token per line: top_k expert IDs");
    }
  }

  std::string schemes = "[";
  for (size_t i = 0; i < scenario.schemes.size(); ++i) {
    schemes += (i ? ", " : "") + yaml_quote(scenario.schemes[i]);
  }
  top.line("schemes", schemes + "]", "known: " + join_list(known_schemes()));
  top.section("software", "how the software all-to-all schemes move tokens");
  dump_params(out, 2, scenario.software);
  top.section("simulation");
  YamlDumper(out, 2)("max_time_us", scenario.simulation.max_time_us, kMaxTimeDescription, hw::Range{});
  YamlDumper(out, 2)("timeline_bin_us", scenario.simulation.timeline_bin_us, kTimelineBinDescription, hw::Range{});
  top("pure_communication", scenario.pure_communication, kPureCommunicationDescription, hw::Range{});
  top.section("replication", "hot-expert replication (iser.md)");
  dump_params(out, 2, scenario.replication);
  return out;
}

}  // namespace nvsvp::platform
