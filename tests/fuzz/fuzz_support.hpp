// Shared by the libFuzzer harnesses of the input readers (tests/fuzz/, docs/reliability.md).
// The readers take file paths, so a harness writes each input to a file in a scratch directory of
// its own process, reused for every input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../common/source_paths.hpp"

// The presets the harnesses read: the source tree's configs/ (its path in one generated file,
// source_paths.hpp, so that the harnesses' objects are the same in every clone).
#define NVSVP_FUZZ_CONFIG_DIR (std::string(NVSVP_SOURCE_DIR) + "/configs")

// The libFuzzer entry point each harness defines; the replay main (plain C++) and libFuzzer's
// main both call it.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace nvsvp::fuzz {

// A temporary directory (in /dev/shm unless TMPDIR is set) laid out like the repository's
// configs/: every entry of configs/ is symlinked in except `own_subdirectory`, a real directory the
// inputs are written to. So an input written to <scratch>/scenarios/ resolves
// `../traces/example.csv` as a file in configs/scenarios/ would. Removed when the process exits
// normally.
class ScratchDirectory {
 public:
  ScratchDirectory(const std::string& config_dir, const std::string& own_subdirectory);
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory();

  // Writes `text` to <scratch>/<own_subdirectory>/<name> (replacing it) and returns the path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string root_;
  std::string own_;
};

// An input split into a document and --set override strings: the lines after the first line that
// is exactly kOverridesSeparator are overrides, one per line, at most kMaxOverrides (further lines
// are ignored). Without the separator line the whole input is the document.
inline constexpr const char* kOverridesSeparator = "##set";
inline constexpr size_t kMaxOverrides = 8;

struct DocumentAndOverrides {
  std::string document;
  std::vector<std::string> overrides;
};

DocumentAndOverrides split_overrides(const uint8_t* data, size_t size);

}  // namespace nvsvp::fuzz
