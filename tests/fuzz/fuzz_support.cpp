#include "fuzz_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace nvsvp::fuzz {

namespace fs = std::filesystem;

namespace {

// Memory-backed when possible: every input rewrites a file, and on a disk file system (ext4's
// replace-by-truncate heuristic) each rewrite waits for the disk, some 3 ms, which made the I/O
// most of a run's time.
fs::path scratch_parent() {
  std::error_code ec;
  if (std::getenv("TMPDIR") == nullptr && fs::is_directory("/dev/shm", ec)) return "/dev/shm";
  return fs::temp_directory_path();
}

}  // namespace

ScratchDirectory::ScratchDirectory(const std::string& config_dir, const std::string& own_subdirectory) {
  const fs::path base = scratch_parent() / "nvsvp-fuzz-XXXXXX";
  std::string pattern = base.string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("fuzz: cannot create " + base.string());
  root_ = pattern;
  for (const fs::directory_entry& entry : fs::directory_iterator(config_dir)) {
    const std::string name = entry.path().filename().string();
    if (name != own_subdirectory) fs::create_directory_symlink(fs::absolute(entry.path()), fs::path(root_) / name);
  }
  own_ = (fs::path(root_) / own_subdirectory).string();
  fs::create_directory(own_);
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;  // symlinks are removed, not followed
  fs::remove_all(root_, ignored);
}

std::string ScratchDirectory::write(const std::string& name, const std::string& text) const {
  const std::string path = (fs::path(own_) / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("fuzz: cannot write " + path);
  return path;
}

DocumentAndOverrides split_overrides(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string separator = kOverridesSeparator;
  DocumentAndOverrides result;
  size_t pos = 0;
  while (pos < input.size()) {
    size_t end = input.find('\n', pos);
    if (end == std::string::npos) end = input.size();
    if (input.compare(pos, end - pos, separator) == 0) break;
    pos = end + 1;
  }
  if (pos >= input.size()) {
    result.document = input;
    return result;
  }
  result.document = input.substr(0, pos);
  pos += separator.size() + 1;
  while (pos < input.size() && result.overrides.size() < kMaxOverrides) {
    size_t end = input.find('\n', pos);
    if (end == std::string::npos) end = input.size();
    result.overrides.push_back(input.substr(pos, end - pos));
    pos = end + 1;
  }
  return result;
}

}  // namespace nvsvp::fuzz
