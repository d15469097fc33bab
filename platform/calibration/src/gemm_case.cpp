#include "nvsvp/platform/gemm_case.hpp"

#include <stdexcept>

#include <systemc>

#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {

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
