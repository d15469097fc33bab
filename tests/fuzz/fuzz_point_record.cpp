// Fuzzes `nvsvp study-merge`'s reading of a point's point.json (its record): a folder of
// tests/data/studies/tiny.yaml made once (study.json of this build, point 1's scenario.yaml), the
// input written as point 1's point.json, then merge_study. Any record must be merged or refused
// (exit code or ConfigError), never a crash or another exception. So that inputs reach past the
// identity checks, "@BUILD", "@FINGERPRINT" and "@HASH" in the input stand for this build's
// identity, the study's fingerprint and point 1's scenario hash (as JSON values).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz_support.hpp"
#include "nvsvp/platform/study.hpp"

namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

struct StudyFolder {
  std::string dir;
  nlohmann::json manifest;
  std::string point_dir;
};

StudyFolder make_folder(const nvsvp::fuzz::ScratchDirectory& scratch) {
  const nvsvp::platform::Study study = nvsvp::platform::load_study(
      std::string(NVSVP_SOURCE_DIR) + "/tests/data/studies/tiny.yaml", {}, NVSVP_FUZZ_CONFIG_DIR);
  StudyFolder folder;
  folder.manifest = nvsvp::platform::study_manifest(study);
  const std::string manifest_path = scratch.write("study.json", folder.manifest.dump(2));
  folder.dir = std::filesystem::path(manifest_path).parent_path().string();
  folder.point_dir = folder.dir + "/" + study.points[0].directory;
  std::filesystem::create_directories(folder.point_dir);
  std::ofstream(folder.point_dir + "/scenario.yaml") << nvsvp::platform::dump_effective(study.points[0].scenario);
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nvsvp::fuzz::ScratchDirectory scratch(NVSVP_FUZZ_CONFIG_DIR, "merge");
  static const StudyFolder folder = make_folder(scratch);
  std::string record(reinterpret_cast<const char*>(data), size);
  replace_all(record, "@BUILD", folder.manifest["nvsvp"].dump());
  replace_all(record, "@FINGERPRINT", folder.manifest["fingerprint"].dump());
  replace_all(record, "@HASH", folder.manifest["points"][0]["scenario_hash"].dump());
  std::ofstream(folder.point_dir + "/point.json") << record;
  std::ostringstream console;
  try {
    nvsvp::platform::merge_study(folder.dir, nullptr, console);
  } catch (const nvsvp::platform::ConfigError&) {
    // Refused as bad input: the documented outcome.
  }
  return 0;
}
