#include "nvsvp/model/task_timing.hpp"

#include <algorithm>

namespace nvsvp::model {

double task_seconds(const GpuParams& params, const hw::Task& task, double sms) {
  const double peak = params.peak_tflops(task.precision) * 1e12;
  double math_s = 0.0;
  if (task.kind == hw::TaskKind::gemm) {
    // Blocks run one per SM in waves: a partial last wave takes as long as a full one. A
    // persistent kernel's tile takes its share of the SMs (they run other ready tiles beside it).
    const double blocks = static_cast<double>(task.thread_blocks);
    const double waves = task.persistent ? blocks / sms
                                         : static_cast<double>((task.thread_blocks + static_cast<uint64_t>(sms) - 1) /
                                                               static_cast<uint64_t>(sms));
    const double block_s = task.flops_per_block / (peak * params.gemm_efficiency / params.sms);
    math_s = waves * block_s;
  } else {
    math_s = task.flops / (peak * params.gemm_efficiency);
  }
  const double memory_s = static_cast<double>(task.memory_bytes) / (params.hbm_gbps * 1e9);
  return std::max(math_s, memory_s) + task.duration_ns * 1e-9;
}

}  // namespace nvsvp::model
