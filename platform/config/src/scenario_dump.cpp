// `nvsvp validate --dump`: a scenario's effective configuration written back as YAML through the
// declarations of its sections (scenario_sections.hpp) and of the parameter structs.
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/platform/scenario_sections.hpp"

namespace nvsvp::platform {

namespace {

// A visitor that writes a section as YAML lines at `indent` spaces: each value with its
// description as a comment, nested sections indented below their key.
class SectionDumper {
 public:
  SectionDumper(std::string& out, int indent) : out_(out), indent_(indent), yaml_(out, indent) {}

  template <class T, class Rule>
  void operator()(const char* key, const T& value, const char* description, const Rule& rule,
                  const KeyUse& use = {}) {
    if (!kind_.applies(use)) return;
    write(key, value, description, rule);
    kind_.note(value, use);
  }
  template <class T>
  void section(const char* key, T& value, const char* comment = "", const KeyUse& use = {}) {
    if (!kind_.applies(use)) return;
    if constexpr (std::is_same_v<T, StreamSpec>) {
      if (value.iterations == 0) return;  // no stream: the section is left out, as in the file
    }
    if constexpr (std::is_same_v<T, fw::AttentionShape> || std::is_same_v<T, StepSpec>) {
      if (value.kind.empty()) return;  // not given: left out, as in the file
    }
    yaml_.section(key, comment);
    SectionDumper nested(out_, indent_ + 2);
    visit_section(nested, value);
  }
  template <class T>
  void parameters(const char* key, const T& value, const char* comment) {
    yaml_.section(key, comment);
    dump_params(out_, indent_ + 2, value);
  }
  // An empty list as [], else each entry as a nested mapping behind "- ".
  template <class T>
  void section_list(const char* key, std::vector<T>& values, const char* comment) {
    if (values.empty()) {
      yaml_.line(key, "[]", comment);
      return;
    }
    yaml_.section(key, comment);
    for (T& value : values) {
      std::string entry;
      SectionDumper nested(entry, indent_ + 4);
      visit_section(nested, value);
      entry.replace(static_cast<size_t>(indent_) + 2, 2, "- ");
      out_ += entry;
    }
  }
  void preset(const std::string& name, const char*, const char*) {
    yaml_.line("preset", yaml_quote(name), "the preset the values below start from");
  }
  void origin(const std::string&) {}

 private:
  // A key with a rule of the parameter structs' kinds.
  template <class T, class Rule>
  void write(const char* key, const T& value, const char* description, const Rule& rule) {
    yaml_(key, value, description, rule);
  }
  void write(const char* key, fw::DataType value, const char* description, const hw::Choices& choices) {
    yaml_(key, std::string(fw::to_string(value)), description, choices);
  }
  void write(const char* key, fw::WeightDtype value, const char* description, const hw::Choices& choices) {
    yaml_(key, std::string(fw::to_string(value)), description, choices);
  }
  void write(const char* key, fw::LayerPass value, const char* description, const hw::Choices& choices) {
    yaml_(key, std::string(fw::to_string(value)), description, choices);
  }
  void write(const char* key, double value, const char* description, const Positive&) {
    yaml_(key, value, description, hw::Range{});
  }
  void write(const char* key, const std::string& name, const char* description, const OutputName&) {
    yaml_.line(key, yaml_quote(name), description);
  }
  void write(const char* key, const std::vector<std::string>& schemes, const char*, const SchemeList&) {
    std::string text = "[";
    for (size_t i = 0; i < schemes.size(); ++i) text += (i ? ", " : "") + yaml_quote(schemes[i]);
    yaml_.line(key, text + "]", "known: " + join(fw::scheme_names(), ", "));
  }
  // Left out when not given.
  void write(const char* key, const std::optional<uint32_t>& value, const char* description, const OptionalIndex&) {
    if (value) yaml_(key, *value, description, hw::Range{});
  }
  void write(const char* key, const std::optional<double>& value, const char* description, const OptionalTime&) {
    if (value) yaml_(key, *value, description, hw::Range{});
  }
  // In flow style, [[0, 1], [2, 3]]; [] when the GPUs are not partitioned.
  void write(const char* key, const std::vector<std::vector<uint32_t>>& partitions, const char* description,
             const GpuPartitions&) {
    std::string text = "[";
    for (size_t i = 0; i < partitions.size(); ++i) {
      text += i ? ", [" : "[";
      for (size_t j = 0; j < partitions[i].size(); ++j) text += (j ? ", " : "") + std::to_string(partitions[i][j]);
      text += "]";
    }
    yaml_.line(key, text + "]", description);
  }
  // Absolute, so that the dump can be read from anywhere.
  void write(const char* key, const std::string& file, const char* description, const TraceFile&) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    yaml_.line(key, yaml_quote(ec ? file : absolute.lexically_normal().string()), description);
  }

  std::string& out_;
  int indent_;
  YamlDumper yaml_;
  SectionKind kind_;
};

}  // namespace

std::string dump_effective(const Scenario& scenario) {
  std::string out;
  out += "# Effective configuration of scenario " + scenario.name;
  if (!scenario.file.empty()) out += " (" + scenario.file + ")";
  out += ": every parameter, defaults included.\n";
  Scenario copy = scenario;  // visit_section() takes what it visits by non-const reference
  SectionDumper dumper(out, 0);
  visit_section(dumper, copy);
  return out;
}

}  // namespace nvsvp::platform
