#include "nvsvp/platform/gemm_case.hpp"

#include <stdexcept>

#include <systemc>

#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {

namespace {

constexpr const char* kDeepGemmSource =
    "DeepGEMM README, Performance (H800 SXM5, NVCC 12.8; deepseek-ai/DeepGEMM commit 55ab91f, 2025-03-25)";

GemmCaseSpec deepgemm_case(const char* name, const char* layout, fw::ExpertGemm gemm, uint32_t groups, uint64_t m,
                           uint64_t n, uint64_t k, double tflops) {
  GemmCaseSpec c;
  c.name = name;
  c.layout = layout;
  c.gemm = gemm;
  c.groups = groups;
  c.m_per_group = m;
  c.n = n;
  c.k = k;
  c.anchor_tflops = tflops;
  c.source = kDeepGemmSource;
  return c;
}

}  // namespace

const std::vector<GemmCaseSpec>& gemm_cases() {
  using fw::ExpertGemm;
  // DeepSeek-V3's experts: GEMM-1 7168 -> 2 x 2048 (N 4096, K 7168), GEMM-2 2048 -> 7168 (N 7168, K 2048).
  static const std::vector<GemmCaseSpec> cases{
      deepgemm_case("deepgemm-h800-grouped-contiguous-n4096-k7168", "contiguous", ExpertGemm::gemm1, 8, 4096, 4096,
                    7168, 1346.0),
      deepgemm_case("deepgemm-h800-grouped-contiguous-n7168-k2048", "contiguous", ExpertGemm::gemm2, 8, 4096, 7168,
                    2048, 1214.0),
      deepgemm_case("deepgemm-h800-grouped-masked-n4096-k7168", "masked", ExpertGemm::gemm1, 1, 1024, 4096, 7168,
                    1233.0)};
  return cases;
}

const GemmCaseSpec* find_gemm_case(const std::string& name) {
  for (const GemmCaseSpec& c : gemm_cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

GemmCaseResult run_gemm_case(const PlatformSpec& platform_spec, const GemmCaseSpec& spec) {
  // Built before elaboration: a bad shape is a usage error, not a failed run.
  const hw::Task gemm = fw::grouped_expert_gemm(spec.software, spec.gemm, spec.groups, spec.m_per_group, spec.n, spec.k);
  GemmCaseResult result;
  result.name = spec.name;
  result.layout = spec.layout;
  result.groups = spec.groups;
  result.m_per_group = spec.m_per_group;
  result.n = spec.n;
  result.k = spec.k;
  result.flops = 2.0 * static_cast<double>(spec.m_per_group) * static_cast<double>(spec.n) *
                 static_cast<double>(spec.k) * spec.groups;
  result.peak_tflops = platform_spec.gpu.fp8_tflops;
  result.anchor_tflops = spec.anchor_tflops;
  result.source = spec.source;
  double start_ns = 0.0;
  double end_ns = 0.0;
  // Modules live to the process's end, as SystemC wants them.
  auto& platform = *new Platform("platform", platform_spec);
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    hw::WorkSequence sequence;
    sequence.phase_names = {"gemm"};
    sequence.tasks.push_back(gemm);
    start_ns = hal.now_ns();
    hal.submit(0, std::move(sequence));  // one GPU does the work, on all its SMs
    hal.wait_all_finished();
    end_ns = hal.now_ns();
  });
  sc_core::sc_start();
  if (!host.done()) throw std::runtime_error("GEMM case " + spec.name + ": the GPU did not finish");
  result.time_us = (end_ns - start_ns) / 1000.0;
  result.tflops = result.time_us > 0.0 ? result.flops / (result.time_us * 1e-6) / 1e12 : 0.0;
  return result;
}

}  // namespace nvsvp::platform
