// Fuzzes the scenario loader with --set overrides, as `nvsvp validate` runs it: load_scenario,
// then make_layer_spec, which generates the routing (and reads a trace file). The input is the
// scenario YAML, optionally followed by a line "##set" and override lines "a.b.c=value".
// Bad input must raise ConfigError; anything else (another exception, a sanitizer report, a hang)
// is a finding.
#include <cstdint>

#include "fuzz_support.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace {

// The layer is built only for scenarios up to this many token-expert pairs: a valid scenario's
// routing takes time and memory in proportion to its size (millions of pairs are legitimate), which
// says nothing about the reader. The real configs/ scenarios are below or near it.
constexpr uint64_t kMaxPairsForLayer = uint64_t{1} << 18;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nvsvp::fuzz::ScratchDirectory scratch(NVSVP_FUZZ_CONFIG_DIR, "scenarios");
  const nvsvp::fuzz::DocumentAndOverrides input = nvsvp::fuzz::split_overrides(data, size);
  const std::string file = scratch.write("fuzz_scenario.yaml", input.document);
  try {
    const nvsvp::platform::Scenario scenario =
        nvsvp::platform::load_scenario(file, input.overrides, NVSVP_FUZZ_CONFIG_DIR);
    const uint64_t pairs = uint64_t{scenario.workload.tokens_per_gpu} * scenario.platform.gpus *
                           scenario.workload.top_k;
    if (pairs <= kMaxPairsForLayer) nvsvp::platform::make_layer_spec(scenario);
  } catch (const nvsvp::platform::ConfigError&) {
    // Refused as bad input: the documented outcome.
  }
  return 0;
}
