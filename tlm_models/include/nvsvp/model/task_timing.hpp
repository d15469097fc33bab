// The time a compute or GEMM task takes on one GPU: the roofline the GPU executor runs its tasks
// by. SystemC-free, so that the parts of a model step that are not simulated (attention, the dense
// layers, the LM head) are timed by the same arithmetic as the tasks that are.
#pragma once

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/gpu_params.hpp"

namespace nvsvp::model {

// Seconds `task` (hw::TaskKind::compute or gemm) takes on `sms` SMs of a GPU of `params`: the
// larger of its math at the precision's peak times gemm_efficiency (a GEMM in waves of thread
// blocks, one per SM; a persistent kernel's blocks take their share of the SMs) and its memory
// bytes at hbm_gbps, plus its fixed duration_ns.
double task_seconds(const GpuParams& params, const hw::Task& task, double sms);

// Microseconds `task` takes with the whole GPU's SMs (a part of a model step that runs alone).
inline double whole_gpu_task_us(const GpuParams& params, const hw::Task& task) {
  return task_seconds(params, task, static_cast<double>(params.sms)) * 1e6;
}

}  // namespace nvsvp::model
