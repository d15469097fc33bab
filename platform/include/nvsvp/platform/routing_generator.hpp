// Seeded, deterministic routing of tokens to experts (uniform, normal, zipf, trace).
#pragma once

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// Every token gets workload.top_k distinct experts. Same spec and seed, same routing, on any
// machine (own RNG and samplers, no std:: distributions). Throws ConfigError for a bad trace.
fw::MoeRouting generate_routing(const WorkloadSpec& workload, uint32_t gpus);

}  // namespace nvsvp::platform
