// Fuzzes the study loader: load_study checks every point's scenario (and builds its layer, as
// `nvsvp validate` does). The input is the study YAML, optionally followed by a line "##set" and
// override lines "a.b.c=value" (the CLI's --set on the base scenario). Bad input must raise
// ConfigError; anything else is a finding. A study file's relative `scenario:` path (../scenarios/<NAME>.yaml)
// resolves against the repository's configs/.
#include <cstdint>

#include "fuzz_support.hpp"
#include "nvsvp/platform/study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nvsvp::fuzz::ScratchDirectory scratch(NVSVP_FUZZ_CONFIG_DIR, "studies");
  const nvsvp::fuzz::DocumentAndOverrides input = nvsvp::fuzz::split_overrides(data, size);
  const std::string file = scratch.write("fuzz_study.yaml", input.document);
  try {
    nvsvp::platform::load_study(file, input.overrides, NVSVP_FUZZ_CONFIG_DIR);
  } catch (const nvsvp::platform::ConfigError&) {
    // Refused as bad input: the documented outcome.
  }
  return 0;
}
