// The MoE layer a scenario describes, resolved into the firmware's layer spec: the routing drawn
// from its seed (routing_generator.hpp), hot-expert replication decided over it, and one spec per
// partition. Everything below simulates what these give.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// The layer the scenario describes, routing generated (deterministic for the seed).
std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario);

// The scenario's layer with a routing and a replication decision made elsewhere (a stream's
// iteration): `routing` is over expert copies when `replication` replicated any.
std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario, fw::MoeRouting routing,
                                                        std::shared_ptr<const fw::ReplicationDecision> replication);

// Partition `p`'s layer run alone: the scenario with the partition's GPUs as a platform of their
// own (platform.gpus = its size), no partitions, no faults, and the routing seed plus `p`, so that
// partitions route differently and each can be rerun alone with `--set`.
Scenario partition_alone(const Scenario& scenario, size_t p);

// The layer a run simulates, resolved once from the scenario and handed down to everything that
// checks, plans, runs or reports it: the machine's layer spec (its routing drawn, its replication
// decided) and the spec each part of the simulation runs: the layer itself when the scenario has
// no partitions, else one per partition, each with the layer of partition_alone (with `layer`'s
// software, so that a tutel degree search reaches every partition).
struct ResolvedLayer {
  std::shared_ptr<const fw::MoeLayerSpec> layer;
  std::vector<std::shared_ptr<const fw::MoeLayerSpec>> parts;
};

// The scenario's layer, resolved: make_layer_spec, then its parts. Throws ConfigError naming
// `partitions[p]` for a partition whose layer cannot be made (experts not divisible by its GPUs, a
// trace of another size).
ResolvedLayer resolve_layer(const Scenario& scenario);
// `layer` (made elsewhere: a step's layer, a stream's iteration) with its parts.
ResolvedLayer resolve_layer(const Scenario& scenario, std::shared_ptr<const fw::MoeLayerSpec> layer);
// The same layer with other software parameters (a degree search's candidate): every spec copied
// with `software`, routings and replication kept, nothing drawn again.
ResolvedLayer with_software(const ResolvedLayer& resolved, const fw::SoftwareParams& software);

// The platform's figures the replication scheduler's broadcast estimates use.
fw::BroadcastCosts replication_broadcast_costs(const Scenario& scenario);

// The shared experts' GEMM time of one layer: iser's budget. With `sm_broadcast` the broadcast's
// SMs (replication.broadcast_sms) are taken from the shared experts.
double shared_expert_budget_ns(const Scenario& scenario, bool sm_broadcast);

}  // namespace nvsvp::platform
