#include "nvsvp/platform/trace_files.hpp"

#include "nvsvp/platform/config_error.hpp"

namespace nvsvp::platform {

std::string trace_file_of(const std::string& pattern, uint32_t layer, uint32_t iteration, const std::string& origin) {
  std::string file;
  for (size_t i = 0; i < pattern.size();) {
    if (pattern[i] != '{' && pattern[i] != '}') {
      file += pattern[i++];
      continue;
    }
    if (pattern.compare(i, 7, "{layer}") == 0) {
      file += std::to_string(layer);
      i += 7;
    } else if (pattern.compare(i, 11, "{iteration}") == 0) {
      file += std::to_string(iteration);
      i += 11;
    } else {
      throw ConfigError(origin + ": workload.routing.file: expected a trace file whose braces are the placeholders "
                        "{layer} and {iteration}, got " + pattern);
    }
  }
  return file;
}

bool names_placeholder(const std::string& pattern, const std::string& placeholder) {
  return pattern.find(placeholder) != std::string::npos;
}

}  // namespace nvsvp::platform
