// Fuzzes the routing-trace reader through generate_routing with a RoutingSpec of kind "trace"
// (then the trace's expert loads, as the static replication policy reads them). The input is the
// trace file. Its shape (GPUs, experts, top_k, tokens per GPU) is that of
// configs/scenarios/trace_example.yaml, so configs/traces/example.csv reads as it is, unless the
// first line is "#shape G E K T" (a comment to the reader), e.g. "#shape 2 4 2 3" for a short
// trace. Bad input must raise ConfigError; anything else is a finding.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_support.hpp"
#include "nvsvp/platform/routing_generator.hpp"

namespace {

struct TraceShape {
  unsigned gpus = 8, experts = 64, top_k = 8, tokens_per_gpu = 64;  // trace_example.yaml's
};

// Large shapes are legitimate but allocate in proportion; the reader is what is fuzzed.
constexpr uint64_t kMaxPairs = uint64_t{1} << 16;

TraceShape shape_of(const uint8_t* data, size_t size) {
  TraceShape shape;
  const std::string first(reinterpret_cast<const char*>(data), std::min<size_t>(size, 64));
  TraceShape given;
  if (std::sscanf(first.c_str(), "#shape %u %u %u %u", &given.gpus, &given.experts, &given.top_k,
                  &given.tokens_per_gpu) == 4 &&
      given.experts <= 65535 && given.gpus <= kMaxPairs && given.tokens_per_gpu <= kMaxPairs &&
      given.top_k <= kMaxPairs && uint64_t{given.gpus} * given.tokens_per_gpu * given.top_k <= kMaxPairs) {
    shape = given;  // generate_routing checks the rest (divisibility, top_k <= experts, ...)
  }
  return shape;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nvsvp::fuzz::ScratchDirectory scratch(NVSVP_FUZZ_CONFIG_DIR, "traces");
  const TraceShape shape = shape_of(data, size);
  nvsvp::platform::WorkloadSpec workload;
  workload.model.experts = shape.experts;
  workload.top_k = shape.top_k;
  workload.tokens_per_gpu = shape.tokens_per_gpu;
  workload.routing.kind = "trace";
  workload.routing.file =
      scratch.write("fuzz_trace.csv", std::string(reinterpret_cast<const char*>(data), size));
  workload.routing.origin = "fuzz_scenario.yaml:1";
  try {
    const nvsvp::fw::MoeRouting routing = nvsvp::platform::generate_routing(workload, shape.gpus);
    nvsvp::platform::expected_expert_loads(workload, routing);
  } catch (const nvsvp::platform::ConfigError&) {
    // Refused as bad input: the documented outcome.
  }
  return 0;
}
