// Fuzzes what `nvsvp study` and `nvsvp study-merge` do with a point's report.json: read_point_report
// (the file's shape checked), then the study's summary and table built from it. Whatever the file
// holds, the point gets results or a failure saying why; nothing throws and nothing crashes. The
// study is tests/data/studies/tiny.yaml (its schemes deepep and dysharp-basic).
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "nvsvp/platform/study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nvsvp::fuzz::ScratchDirectory scratch(NVSVP_FUZZ_CONFIG_DIR, "points");
  static const nvsvp::platform::Study study = nvsvp::platform::load_study(
      std::string(NVSVP_SOURCE_DIR) + "/tests/data/studies/tiny.yaml", {}, NVSVP_FUZZ_CONFIG_DIR);
  const std::string path = scratch.write("report.json", std::string(reinterpret_cast<const char*>(data), size));
  std::vector<nvsvp::platform::PointRun> runs(study.points.size());
  nvsvp::platform::read_point_report(path, study.schemes, runs[0]);
  if (runs[0].results.empty() == runs[0].failure.empty()) __builtin_trap();  // one or the other
  nvsvp::platform::study_summary(study, runs);
  nvsvp::platform::study_csv(study, runs);
  return 0;
}
