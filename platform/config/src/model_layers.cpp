// The model's layers as a step sees them (scenario.hpp): which MoE layers it simulates, and the
// workload of one layer.
#include <cmath>

#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

std::vector<uint32_t> sampled_moe_layers(uint32_t moe_layers, uint32_t sample) {
  std::vector<uint32_t> layers;
  if (sample == 0 || sample >= moe_layers) {
    for (uint32_t l = 0; l < moe_layers; ++l) layers.push_back(l);
    return layers;
  }
  for (uint32_t i = 0; i < sample; ++i) {
    // Evenly spaced from the first to the last (one sample: the middle layer).
    const double at = sample == 1 ? (moe_layers - 1) / 2.0 : static_cast<double>(i) * (moe_layers - 1) / (sample - 1);
    layers.push_back(static_cast<uint32_t>(std::lround(at)));
  }
  return layers;
}

WorkloadSpec workload_of_layer(const WorkloadSpec& workload, uint32_t layer) {
  WorkloadSpec w = workload;
  if (w.routing.kind == "drifting" || w.routing.kind == "trace") {
    w.routing.layer = layer;
  } else {
    w.routing.seed = workload.routing.seed + layer;
  }
  return w;
}

}  // namespace nvsvp::platform
