// A training step's pipeline across NVLink domains: each stage runs its operations on the micro
// batches in the order a schedule gives, and an operation starts when its stage is free and its
// input has arrived from the neighbouring stage. Arithmetic over the stages' operation times (the
// simulated MoE layers and the timed parts around them); no simulation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvsvp::platform {

// One micro batch through one stage's layers, us: the forward pass, the backward pass's input
// gradients, and its weight gradients (which no other stage waits for).
struct StageCosts {
  double forward_us = 0.0;
  double backward_us = 0.0;
  double weight_us = 0.0;
};

struct PipelineSpec {
  uint32_t stages = 1;
  uint32_t micro_batches = 1;
  // A micro batch's activations (forward) or their gradients (backward) from one stage to the
  // next over the link between NVLink domains, us.
  double transfer_us = 0.0;
};

enum class PipelineOpKind : uint8_t { forward, backward, weight };
const char* to_string(PipelineOpKind kind);

struct PipelineOp {
  PipelineOpKind kind = PipelineOpKind::forward;
  uint32_t stage = 0;
  uint32_t micro_batch = 0;
  double start_us = 0.0;
  double end_us = 0.0;
};

struct PipelineTiming {
  double step_us = 0.0;            // from the first operation's start to the last one's end
  std::vector<double> busy_us;     // per stage: the time its operations take
  double mean_bubble_us = 0.0;     // per stage on average: step_us - busy_us
  std::vector<PipelineOp> ops;     // every operation, per stage in the schedule's order
};

// 1F1B (PipeDream-Flush): stage s runs min(P - 1 - s, M) forwards, then alternates one forward
// and one backward, then the remaining backwards; a backward's weight gradients follow it at once.
// `costs` has one entry per stage. Throws std::invalid_argument for zero stages or micro batches,
// a costs list of another length, or a negative time.
PipelineTiming time_one_f_one_b(const PipelineSpec& spec, const std::vector<StageCosts>& costs);

}  // namespace nvsvp::platform
