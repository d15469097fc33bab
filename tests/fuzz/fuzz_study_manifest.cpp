// Fuzzes the reading of a study's study.json (study_of_manifest, which `nvsvp study-merge` trusts
// only after it): any JSON document must give a study or a ConfigError, never a crash or another
// exception. Input that is not JSON is skipped (the merge refuses it before this reader).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "nvsvp/platform/study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json manifest = nlohmann::json::parse(text, nullptr, false);
  if (manifest.is_discarded()) return 0;
  try {
    const nvsvp::platform::Study study = nvsvp::platform::study_of_manifest(manifest, "study.json");
    // What the merge then relies on: a folder name and a value per key for every point.
    for (const nvsvp::platform::StudyPoint& point : study.points) {
      if (point.directory.empty() || point.directory.find('/') != std::string::npos ||
          point.values.size() != study.keys.size()) {
        __builtin_trap();
      }
    }
  } catch (const nvsvp::platform::ConfigError&) {
    // Refused as bad input: the documented outcome.
  }
  return 0;
}
