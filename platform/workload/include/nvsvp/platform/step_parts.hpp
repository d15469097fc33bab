// Where the time of a whole-model step goes: the parts of a pass, and a layer's passes. Shared by
// the simulated MoE layers (layer_simulations.hpp) and the steps composed from them
// (model_step.hpp, model_inference.hpp).
#pragma once

namespace nvsvp::platform {

// Where a pass's time goes, us: the parts that compute on every GPU alone, and an MoE layer's
// compute (its GEMMs, overlapped communication included) and communication that no compute hides.
struct StepParts {
  double attention_us = 0.0;
  double dense_us = 0.0;  // the dense layers' FFN and the output head
  double moe_compute_us = 0.0;
  double exposed_comm_us = 0.0;
  double total_us() const { return attention_us + dense_us + moe_compute_us + exposed_comm_us; }
  StepParts& operator+=(const StepParts& other);
  StepParts scaled(double factor) const;
};

// One layer (or the output head) of one micro batch on every GPU of a stage.
struct LayerPasses {
  StepParts forward;
  StepParts backward;  // input and weight gradients together (1F1B does not split them)
  StepParts weight;    // the part of `backward` that is weight gradients (DualPipe runs it apart)
};

}  // namespace nvsvp::platform
