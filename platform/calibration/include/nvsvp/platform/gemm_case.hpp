// The GEMM anchors (configs/anchors/deepgemm-*.yaml): one grouped fp8 GEMM of a shape DeepGEMM
// (deepseek-ai/DeepGEMM, README "Performance", H800 SXM5) publishes, run alone on one GPU of the
// platform as the task the MoE schemes run for their expert GEMMs (fw::grouped_expert_gemm).
// H800 has H100 SXM's SMs and clock (132 SMs, 1979 dense fp8 TFLOPS), so the presets' GPU serves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

struct GemmCaseSpec {
  std::string name;
  std::string layout;  // DeepGEMM's: "contiguous" (prefill, groups back to back) or "masked" (decode)
  fw::ExpertGemm gemm = fw::ExpertGemm::gemm1;  // the expert GEMM of that shape (N, K)
  uint32_t groups = 0;
  uint64_t m_per_group = 0;
  uint64_t n = 0;
  uint64_t k = 0;
  fw::SoftwareParams software;  // the tiling (tile_tokens x tile_columns)
};

struct GemmCaseResult {
  std::string name;
  std::string layout;
  uint32_t groups = 0;
  uint64_t m_per_group = 0;
  uint64_t n = 0;
  uint64_t k = 0;
  double flops = 0.0;        // 2 x M x N x K x groups
  double time_us = 0.0;
  double tflops = 0.0;       // flops / time
  double peak_tflops = 0.0;  // the GPU's dense fp8 peak
};

// Elaborates `platform`, runs the case's GEMM on GPU 0 and times it. Call at most once per
// process (SystemC elaborates once). Throws std::invalid_argument for a bad shape and
// std::runtime_error if the GPU does not finish.
GemmCaseResult run_gemm_case(const PlatformSpec& platform, const GemmCaseSpec& spec);

}  // namespace nvsvp::platform
