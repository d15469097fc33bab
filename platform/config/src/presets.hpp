// The preset files of a config directory (platforms/, models/): their names and files, their
// headers (name and summary), and preset values that name a file of the user's own instead.
#pragma once

#include <string>
#include <vector>

#include "nvsvp/platform/config_reader.hpp"

namespace nvsvp::platform {

// The presets in config_dir/<kind_dir>: the names of its .yaml files, sorted.
std::vector<std::string> preset_names(const std::string& config_dir, const std::string& kind_dir);
// The file of preset `name` in config_dir/<kind_dir>.
std::string preset_file(const std::string& config_dir, const std::string& kind_dir, const std::string& name);
// A preset value with a '/' or ending in .yaml names a file of the user's own, not a preset of
// config_dir.
bool is_preset_path(const std::string& value);
// A path written in a file is relative to that file's directory; one given with --set is relative
// to the current directory, as a shell user would expect.
std::string resolve_written_path(const ConfigNode& node, const std::string& written_text);
// Reads a preset file's name and summary and checks the name against the file name (of a preset
// given by path, the file's name without .yaml). `summary` may be null.
void read_preset_header(YamlReader& reader, const std::string& preset, std::string* summary);

}  // namespace nvsvp::platform
