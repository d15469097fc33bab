// The search for the config directory: --config-dir, NVSVP_CONFIG_PATH, then beside the binary.
#include "nvsvp/platform/config_search.hpp"

#include <filesystem>

#include "nvsvp/platform/config_reader.hpp"

namespace nvsvp::platform {

namespace {

namespace fs = std::filesystem;

// A directory of presets: one that holds a platforms/ or a models/ folder.
bool holds_presets(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "platforms", ec) || fs::is_directory(dir / "models", ec);
}

}  // namespace

std::vector<std::string> data_directories(const std::string& executable) {
  const fs::path dir = fs::path(executable).parent_path();
  return {(dir / "share" / "nvsvp").lexically_normal().string(),
          (dir / ".." / "share" / "nvsvp").lexically_normal().string()};
}

std::string find_config_dir(const std::string& explicit_dir, const char* search_path, const std::string& executable) {
  std::error_code ec;
  if (!explicit_dir.empty()) {
    if (fs::is_directory(explicit_dir, ec)) return explicit_dir;
    config_fail("command line (--config-dir)", "--config-dir", "a directory of presets (platforms/, models/)",
                explicit_dir + (fs::exists(explicit_dir, ec) ? " (not a directory)" : " (no such directory)"));
  }
  std::vector<std::string> searched;
  if (search_path != nullptr && *search_path != '\0') {
    const std::string path = search_path;
    for (size_t start = 0; start <= path.size();) {
      const size_t colon = std::min(path.find(':', start), path.size());
      const std::string dir = path.substr(start, colon - start);
      start = colon + 1;
      if (dir.empty()) continue;
      if (holds_presets(dir)) return dir;
      searched.push_back(dir + " (NVSVP_CONFIG_PATH)");
    }
  } else {
    searched.push_back("NVSVP_CONFIG_PATH (not set)");
  }
  for (const std::string& data : data_directories(executable)) {
    const std::string dir = (fs::path(data) / "configs").string();
    if (holds_presets(dir)) return dir;
    searched.push_back(dir + " (beside " + executable + ")");
  }
  throw ConfigError("config directory: expected a directory holding platforms/ or models/ (give --config-dir or set "
                    "NVSVP_CONFIG_PATH), got none in " + join(searched, ", "));
}

}  // namespace nvsvp::platform
