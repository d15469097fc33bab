// The GEMM measure of the anchor cases (anchor_measures.hpp).
#include "anchor_measures.hpp"

namespace nvsvp::platform {

using nlohmann::json;

json measure_gemm(const PlatformSpec& platform, const GemmCaseSpec& spec) {
  const GemmCaseResult r = run_gemm_case(platform, spec);
  // The best the GPU's GEMM model allows: every SM busy at peak x efficiency.
  const double bound = platform.gpu.fp8_tflops * platform.gpu.gemm_efficiency;
  const bool within_bound = r.tflops <= bound * (1 + 1e-9);
  json details = {
      {"layout", r.layout},   {"groups", r.groups},  {"m_per_group", r.m_per_group},
      {"n", r.n},             {"k", r.k},            {"flops", r.flops},
      {"time_us", r.time_us}, {"metric", r.tflops},  {"peak_tflops", r.peak_tflops},
      {"compute_bound_metric", bound}, {"passed", within_bound},
  };
  if (!within_bound) details["failure"] = "above the GPU's peak x gemm_efficiency";
  return details;
}

}  // namespace nvsvp::platform
