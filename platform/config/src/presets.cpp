#include "presets.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "nvsvp/platform/key_origins.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

namespace fs = std::filesystem;

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
  for (const char* key : {"name", "summary"}) {
    if (!doc.find(key)) config_fail(doc.key_origin, key, "a value (required key)", "nothing");
  }
  const ConfigNode& name_node = *reader.take("name");
  const std::string name = is_preset_path(preset) ? fs::path(preset).stem().string() : preset;
  if (read_string(name_node, "name") != name) {
    config_fail(name_node.origin, "name", "the file's own name " + name, describe(name_node));
  }
  const std::string text = read_string(*reader.take("summary"), "summary");
  if (summary) *summary = text;
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
