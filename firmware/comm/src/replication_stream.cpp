// Hot-expert replication across a serving run (replication_stream.hpp).
#include "nvsvp/fw/replication_stream.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace nvsvp::fw {

std::string pairs_violation(const StreamPolicyStep& step, double pairs) {
  if (step.pairs_before == pairs && step.pairs_after == pairs) return "";
  auto count = [](double value) { return std::to_string(static_cast<long long>(std::llround(value))); };
  return std::string("policy ") + to_string(step.policy) + ": " + count(pairs) +
         " token-expert pairs routed, the GPUs' loads hold " + count(step.pairs_before) + " before and " +
         count(step.pairs_after) + " after the re-routing";
}

LayerReplicationStream::LayerReplicationStream(StreamSettings settings, std::vector<double> initial_loads)
    : settings_(std::move(settings)), static_loads_(std::move(initial_loads)) {}

StreamStep LayerReplicationStream::step(const MoeRouting& routing, bool keep_layers) {
  if (static_loads_.size() != routing.experts) {
    throw std::invalid_argument("replication stream: the routing has " + std::to_string(routing.experts) +
                                " experts, the stream " + std::to_string(static_loads_.size()));
  }
  // The static balancer is refreshed between iterations from the loads it has seen since.
  refreshed_now_ = false;
  if (settings_.static_refresh > 0 && iteration_ > 0 && iteration_ % settings_.static_refresh == 0) {
    static_loads_ = window_loads_;
    for (double& load : static_loads_) load /= window_iterations_;
    window_loads_.assign(routing.experts, 0.0);
    window_iterations_ = 0;
    refreshed_now_ = true;
  }
  StreamStep step;
  StreamStep* keep = keep_layers ? &step : nullptr;
  for (size_t p = 0; p < kStreamPolicies.size(); ++p) step.policies[p] = decide(routing, kStreamPolicies[p], keep, p);
  window_loads_.resize(routing.experts, 0.0);
  for (uint16_t e : routing.expert_ids) window_loads_[e] += 1.0;
  ++window_iterations_;
  ++iteration_;
  return step;
}

StreamPolicyStep LayerReplicationStream::decide(const MoeRouting& routing, ReplicationPolicy policy, StreamStep* keep,
                                                size_t index) {
  ReplicationParams params = settings_.params;
  params.policy = to_string(policy);
  auto kept_decision = std::make_shared<ReplicationDecision>();
  ReplicationDecision& decision = *kept_decision;
  const bool iser = policy == ReplicationPolicy::iser;
  MoeRouting copies =
      decide_replication(routing, params, settings_.model, settings_.weight_dtype, static_loads_, settings_.costs,
                         settings_.shared_expert_ns, decision, iser ? resident_ : std::vector<ReplicaPlacement>{});
  if (keep) {
    keep->decisions[index] = kept_decision;
    keep->routings[index] = std::make_shared<const MoeRouting>(std::move(copies));
  }
  StreamPolicyStep out;
  out.policy = policy;
  out.pairs_before = std::accumulate(decision.load_before.begin(), decision.load_before.end(), 0.0);
  out.pairs_after = std::accumulate(decision.load_after.begin(), decision.load_after.end(), 0.0);
  out.excess_before = excess_load(decision.load_before);
  out.excess_after = excess_load(decision.load_after);
  out.max_over_mean_before = max_over_mean(decision.load_before);
  out.max_over_mean_after = max_over_mean(decision.load_after);
  out.replicas = static_cast<uint32_t>(decision.schedule.replicas.size());
  out.stop_reason = decision.schedule.stop_reason;
  out.refreshed = policy == ReplicationPolicy::fixed && refreshed_now_;
  if (!iser) return out;
  out.budget_ns = settings_.shared_expert_ns;
  out.estimated_broadcast_ns = decision.schedule.estimated_broadcast_ns;
  for (const ReplicaPlacement& p : decision.schedule.replicas) {
    if (p.resident) {
      ++out.kept;
    } else {
      out.weight_bytes_broadcast += decision.weight_bytes;
    }
  }
  out.evicted = static_cast<uint32_t>(resident_.size()) - out.kept;
  resident_ = decision.schedule.replicas;
  for (ReplicaPlacement& p : resident_) p.resident = false;
  return out;
}

}  // namespace nvsvp::fw
