// Where the presets live. A binary carries no source path: it looks for its configs through a
// search path, so that a moved, copied or installed build reads its own (docs/configuration.md
// #where-presets-are-found).
#pragma once

#include <string>
#include <vector>

namespace nvsvp::platform {

// The folder of data beside a binary at `executable`: <dir>/share/nvsvp in a build tree,
// <dir>/../share/nvsvp once installed (bin/nvsvp). Both candidates, in that order.
std::vector<std::string> data_directories(const std::string& executable);

// The config directory (platforms/, models/, anchors/, ...) to read presets from: `explicit_dir`
// (--config-dir) when given, which must be a directory; else the first directory of `search_path`
// (NVSVP_CONFIG_PATH, colon-separated; null when unset) that holds platforms/ or models/; else
// configs/ in the first data directory of `executable` that has one. Throws ConfigError naming
// every place searched when none fits.
std::string find_config_dir(const std::string& explicit_dir, const char* search_path, const std::string& executable);

}  // namespace nvsvp::platform
