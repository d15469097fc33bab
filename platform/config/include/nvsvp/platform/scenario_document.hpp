// Scenario loading in steps, private to platform/: a study builds every point's scenario from a
// base document (a file, or a mapping inside the study file) and values set at key paths, with
// the same rules and messages as `nvsvp run --set`.
#pragma once

#include <string>
#include <vector>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// "a.b.c" -> {"a", "b", "c"}; empty when malformed (an empty component, or a character that YAML
// would read as structure).
std::vector<std::string> split_key_path(const std::string& path);

// Sets the key at `keys` to `value` by the --set rules: missing mappings are created, a preset
// given by name becomes {preset: NAME} to hold keys beside it, the last key is replaced whole.
// `origin` is where the key was written, for messages about the key itself.
void set_key(ConfigNode& doc, const std::vector<std::string>& keys, ConfigNode value,
             const std::string& origin);

// "a.b.c=value" (a --set) applied onto `doc`.
void apply_override(ConfigNode& doc, const std::string& text);

// What of a scenario is used: all of it, or its platform and simulation keys only (a collective or
// GEMM anchor case, whose layer is never run: its layer's checks are not made).
enum class ScenarioUse { whole, platform_only };

// Reads and checks a scenario document. `file` is the file it stands for: relative trace paths in
// it and messages about keys nobody wrote refer to it.
Scenario load_scenario_document(const ConfigNode& doc, const std::string& file, const std::string& config_dir,
                                ScenarioUse use = ScenarioUse::whole);

// Whether `name` can name an output directory: letters, digits, '_', '.' and '-', not only dots.
bool valid_name(const std::string& name);

}  // namespace nvsvp::platform
