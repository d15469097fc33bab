// The GEMM measure of the anchor cases (anchor_measures.hpp).
#include <cmath>

#include "anchor_measures.hpp"

namespace nvsvp::platform {

using nlohmann::json;

json measure_gemm(const PlatformSpec& platform, const GemmCaseSpec& spec) {
  const GemmCaseResult r = run_gemm_case(platform, spec);
  // What the wave model gives (docs/models/gpu.md): each group's rows and columns padded to whole
  // tiles, one tile per SM per wave, a tile at the SM's share of peak x efficiency.
  const uint64_t tile = spec.software.tile_tokens;
  const uint64_t columns = spec.software.tile_columns;
  const uint64_t blocks = spec.groups * ((spec.m_per_group + tile - 1) / tile) * ((spec.n + columns - 1) / columns);
  const double waves = static_cast<double>((blocks + platform.gpu.sms - 1) / platform.gpu.sms);
  const double block_us = 2.0 * static_cast<double>(tile * columns * spec.k) /
                          (platform.gpu.fp8_tflops * 1e12 * platform.gpu.gemm_efficiency / platform.gpu.sms) * 1e6;
  const double model_us = waves * block_us;
  const double bound = platform.gpu.fp8_tflops * platform.gpu.gemm_efficiency;
  const bool time_ok = std::abs(r.time_us - model_us) <= 1e-5 * std::max(1.0, model_us);
  json details = {
      {"layout", r.layout},  {"groups", r.groups},         {"m_per_group", r.m_per_group},
      {"n", r.n},            {"k", r.k},                   {"flops", r.flops},
      {"time_us", r.time_us}, {"metric", r.tflops},        {"wave_model_time_us", model_us},
      {"waves", waves},      {"peak_tflops", r.peak_tflops}, {"link_bound_metric", bound},
      {"passed", time_ok && r.tflops <= bound * (1 + 1e-9)},
  };
  if (!time_ok) details["failure"] = "the GEMM's time is not the wave model's";
  else if (r.tflops > bound * (1 + 1e-9)) details["failure"] = "above the GPU's peak x gemm_efficiency";
  return details;
}

}  // namespace nvsvp::platform
