// A training step's pipeline across NVLink domains: each stage runs its operations on the micro
// batches in the order a schedule gives, and an operation starts when its stage is free and its
// input has arrived from the neighbouring stage. Arithmetic over the stages' operation times (the
// simulated MoE layers and the timed parts around them); no simulation.
#pragma once

#include <array>
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

enum class PipelineOpKind : uint8_t {
  forward,
  backward,          // input gradients, and with_weight its weight gradients too
  weight,            // a backward's weight gradients, run apart from it
  forward_backward,  // DualPipe: one direction's forward beside the other's backward, overlapped
};
const char* to_string(PipelineOpKind kind);

struct PipelineOp {
  PipelineOpKind kind = PipelineOpKind::forward;
  uint32_t rank = 0;  // the pipeline position that runs it (1F1B: the stage)
  // DualPipe: 0 for the micro batches that enter at rank 0 (rank r runs their stage r), 1 for
  // those that enter at the last rank (rank r runs their stage P - 1 - r). 1F1B: 0.
  uint8_t direction = 0;
  uint32_t micro_batch = 0;           // of its direction; forward_backward: the forward's
  uint32_t backward_micro_batch = 0;  // forward_backward: the other direction's backward
  bool with_weight = false;           // a backward (or forward_backward) that does its weight gradients too
  bool output_with_next = false;      // a forward whose output leaves when the rank's next operation ends
  double start_us = 0.0;
  double end_us = 0.0;
};

struct PipelineTiming {
  double step_us = 0.0;            // from the first operation's start to the last one's end
  std::vector<double> busy_us;     // per stage: the time its operations take
  double mean_bubble_us = 0.0;     // per stage on average: step_us - busy_us
  std::vector<PipelineOp> ops;     // every operation, per stage in the schedule's order
};

// One DualPipe rank's costs, us: its stage of each direction (its forward, its backward's input
// gradients, its weight gradients), and each direction's forward run beside the other direction's
// whole backward, overlapped.
struct DualPipeRankCosts {
  std::array<StageCosts, 2> direction;
  std::array<double, 2> forward_backward_us{};  // [d]: d's forward beside the other direction's backward
};

// 1F1B (PipeDream-Flush): stage s runs min(P - 1 - s, M) forwards, then alternates one forward
// and one backward, then the remaining backwards; a backward's weight gradients follow it at once.
// `costs` has one entry per stage. Throws std::invalid_argument for zero stages or micro batches,
// a costs list of another length, or a negative time.
PipelineTiming time_one_f_one_b(const PipelineSpec& spec, const std::vector<StageCosts>& costs);

// DualPipe (DeepSeek-V3's bidirectional schedule, github deepseek-ai/DualPipe): P ranks (even),
// M micro batches (even, at least 2P), half of them in each direction, so each rank holds two
// stages. Each rank runs the reference implementation's eight steps: warm-up forwards of its
// nearer direction, forwards of both, zero-bubble backwards (weight gradients deferred), the main
// steps of overlapped forward-backward pairs, and the cool-down backwards with the deferred weight
// gradients last. A forward's output and a backward's input gradient reach the neighbouring rank
// spec.transfer_us after the operation that sends them ends (the schedule sends some forwards'
// outputs after the rank's next operation). `ranks` has one entry per rank. When the input and the
// weight gradients each take as long as the forward (W = F, a whole backward B = 2F), the most idle
// rank idles (P/2 - 1)(F&B + B - 3W), the bubble of DeepSeek-V3's report. Throws std::invalid_argument for an
// odd or zero P, an odd M or M < 2P, a costs list of another length, or a negative time.
PipelineTiming time_dualpipe(const PipelineSpec& spec, const std::vector<DualPipeRankCosts>& ranks);

}  // namespace nvsvp::platform
