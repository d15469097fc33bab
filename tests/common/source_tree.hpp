// Reading the repository's own files, for the tests that check rules on the source tree
// (layering, sizes, cited files).
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "source_paths.hpp"

namespace nvsvp::test {

inline const std::filesystem::path& source_root() {
  static const std::filesystem::path root = NVSVP_SOURCE_DIR;
  return root;
}

inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Every C++ source and header (.cpp, .cc, .hpp, .h) under `dir` of the repository, sorted.
inline std::vector<std::filesystem::path> cpp_sources_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_root() / dir)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".cpp" || ext == ".cc" || ext == ".hpp" || ext == ".h")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace nvsvp::test
