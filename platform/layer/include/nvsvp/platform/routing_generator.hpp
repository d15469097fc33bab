// Seeded, deterministic routing of tokens to experts (uniform, normal, zipf, drifting, balanced, trace).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/trace_files.hpp"

namespace nvsvp::platform {

// Input limits of a routing trace (docs/configuration.md#input-limits): the file's size, and its
// token lines (a trace names every token of the layer, so gpus x tokens_per_gpu must fit too).
inline constexpr uint64_t kMaxTraceFileBytes = 1ull << 30;
inline constexpr uint64_t kMaxTraceTokens = 1ull << 24;

// Every token gets workload.top_k distinct experts. Same spec and seed, same routing, on any
// machine (own RNG and samplers, no std:: distributions). Throws ConfigError for a bad trace.
fw::MoeRouting generate_routing(const WorkloadSpec& workload, uint32_t gpus);

// drifting: per expert, its zipf weight (rank^-exponent) at `spec.iteration` of layer `spec.layer`.
// The layer's ranks are dealt once; then every iteration each rank, with chance 1/(2 hot_lifetime),
// swaps its expert with a uniformly drawn rank, so an expert keeps its rank hot_lifetime iterations
// on average. Costs iteration x experts draws.
std::vector<double> drifting_popularity(const RoutingSpec& spec, uint32_t experts);

// Per expert, the token-expert pairs its popularity implies for `routing` (generated from
// `workload`): what an offline balancer sees averaged over many batches (the static replication
// policy places from it). A trace's own counts.
std::vector<double> expected_expert_loads(const WorkloadSpec& workload, const fw::MoeRouting& routing);

}  // namespace nvsvp::platform
