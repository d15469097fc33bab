// Hot-expert replication across a serving run (docs/background/hot_expert_replication.md#streams):
// one layer's successive iterations, with the three policies decided on the same routing. Each
// policy keeps what it keeps between iterations: iser the replicas still in their slots (kept at no
// broadcast, or evicted), static its placement and the loads it refreshes it from. Plain arithmetic
// over the firmware's scheduler; SystemC-free, HAL-free.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/fw/replication_phase.hpp"

namespace nvsvp::fw {

// What one policy did in one iteration.
struct StreamPolicyStep {
  ReplicationPolicy policy = ReplicationPolicy::none;
  double pairs_before = 0.0;         // token-expert pairs over every GPU (the same after)
  double pairs_after = 0.0;
  double excess_before = 0.0;        // token-expert pairs above the mean, summed over GPUs
  double excess_after = 0.0;
  double max_over_mean_before = 0.0; // the most loaded GPU over the mean
  double max_over_mean_after = 0.0;
  uint32_t replicas = 0;             // experts with replicas this iteration
  uint32_t kept = 0;                 // iser: of them, already in their slots (no broadcast)
  uint32_t evicted = 0;              // iser: last iteration's replicas not kept
  uint64_t weight_bytes_broadcast = 0;  // iser: the new replicas' weights (each expert's bytes once)
  double estimated_broadcast_ns = 0.0;  // iser: the scheduler's estimate of the broadcasts
  double budget_ns = 0.0;               // iser: the shared experts' time they must hide behind
  bool refreshed = false;               // static: re-placed before this iteration
  std::string stop_reason;              // the scheduler's (none: "policy none")
};

// Empty when `step` kept every token-expert pair of a routing of `pairs` pairs, both before and
// after its re-routing; else what it lost or made up.
std::string pairs_violation(const StreamPolicyStep& step, double pairs);

// The stream's policies, in the order every per-policy array below holds them.
inline constexpr std::array<ReplicationPolicy, 3> kStreamPolicies = {ReplicationPolicy::none, ReplicationPolicy::fixed,
                                                                     ReplicationPolicy::iser};

struct StreamStep {
  std::array<StreamPolicyStep, 3> policies;  // in kStreamPolicies' order
  // Only when step() is asked to keep them: per policy, its decision (iser's kept replicas marked
  // `resident`) and the routing over expert copies it made, what a simulated layer of this
  // iteration runs.
  std::array<std::shared_ptr<const ReplicationDecision>, 3> decisions;
  std::array<std::shared_ptr<const MoeRouting>, 3> routings;
};

// The settings the scheduler's decisions take (the scenario's replication section and platform).
struct StreamSettings {
  ReplicationParams params;       // groups, slots, broadcast method, ...; policy is ignored
  MoeModel model;
  WeightDtype weight_dtype = WeightDtype::fp8;
  BroadcastCosts costs;
  double shared_expert_ns = 0.0;  // iser's budget
  uint32_t static_refresh = 0;    // 0: the static placement is never refreshed
};

class LayerReplicationStream {
 public:
  // `initial_loads` (per expert): what the static balancer is first placed from (the layer's
  // expected popularity, as an offline profile sees it).
  LayerReplicationStream(StreamSettings settings, std::vector<double> initial_loads);

  // Decides the next iteration, whose routing is `routing` (over original experts), by every
  // policy. Throws std::invalid_argument for a routing of another shape than the first.
  // With `keep_layers` the step also holds each policy's decision and routing.
  StreamStep step(const MoeRouting& routing, bool keep_layers = false);

 private:
  StreamPolicyStep decide(const MoeRouting& routing, ReplicationPolicy policy, StreamStep* keep, size_t index);

  StreamSettings settings_;
  std::vector<double> static_loads_;         // what the static placement is made from
  std::vector<double> window_loads_;         // per expert: summed over the iterations since a refresh
  uint32_t window_iterations_ = 0;
  std::vector<ReplicaPlacement> resident_;   // iser: the replicas in their slots now
  uint64_t iteration_ = 0;
  bool refreshed_now_ = false;
};

}  // namespace nvsvp::fw
