// The start of an MoE layer with shared experts and hot-expert replication
// (docs/background/hot_expert_replication.md): every GPU computes the shared experts on its tokens
// while the owners of the hot experts broadcast their weights to the replicas' GPUs; the layer's
// dispatch starts when both are over on every GPU. Firmware builds the phase's work sequences and
// checks that every chunk of weights landed. SystemC-free; hardware only through the HAL.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/fw/expert_replication.hpp"
#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/hw/params.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

// The scenario's `replication` section.
struct ReplicationParams {
  std::string policy = "none";         // none | static | iser
  std::string broadcast = "multiport"; // p2p | multicast | multiport | ring
  // Sizes of the fixed groups; empty: 2, 4, 8 and all GPUs, those that divide the GPU count.
  std::vector<uint32_t> groups;
  uint32_t slots_per_gpu = 2;
  // SMs that issue the multimem stores of the multicast and multiport methods while the shared
  // experts compute on the rest (assumed: a few, so the shared experts keep 94 % of a 132-SM GPU;
  // at the calibrated gpu.sm_store_gbps = 33 they issue 264 GB/s, under one GPU's 394 GB/s of links).
  uint32_t broadcast_sms = 8;
  // Weights move in chunks of this many bytes (one message each); the ring forwards per chunk.
  uint32_t chunk_bytes = 16384;
  // The static policy's history: the routing seed whose expert popularity the offline balancer
  // saw (0: this layer's own, the best case; another seed deals the popularity to other experts,
  // as if the hot experts had moved since).
  uint64_t static_seed = 0;
  // iser in a stream: when the scheduler keeps a replica still in its slot from the layer's
  // previous iteration. on_tie: only when its group is as good as the best (the placement first);
  // when_improving: whenever its group still lowers the peak (the budget first: a kept replica
  // costs no broadcast).
  std::string keep_resident = "on_tie";

  template <class Visitor>
  void visit(Visitor& v) {
    v("policy", policy, "where hot experts get replicas: none, static (placed once from average loads), iser (per layer)",
      hw::Choices{{"none", "static", "iser"}});
    v("broadcast", broadcast, "how an iser replica's weights travel: p2p, multicast, multiport, ring",
      hw::Choices{{"p2p", "multicast", "multiport", "ring"}});
    v("groups", groups, "sizes of the fixed GPU groups (each divides the GPU count); empty: 2, 4, 8 and all GPUs",
      hw::between(2, 4096));
    v("slots_per_gpu", slots_per_gpu, "replica slots per GPU (memory for that many experts' weights)",
      hw::between(0, 64));
    v("broadcast_sms", broadcast_sms, "SMs issuing the multicast stores of a broadcast (the shared experts get the rest)",
      hw::between(1, 65535));
    v("chunk_bytes", chunk_bytes, "bytes of weights per message", hw::between(4096, 1u << 30));
    v("static_seed", static_seed,
      "static policy: routing seed of the popularity it was placed from (0: this layer's own)", hw::Range{});
    v("keep_resident", keep_resident,
      "iser in a stream: keep a replica from the previous iteration when its group is as good as the best (on_tie) "
      "or whenever it still lowers the peak (when_improving)",
      hw::Choices{{"on_tie", "when_improving"}});
  }
};

// Whether a broadcast method issues multimem stores: SM-issued (replication.broadcast_sms), through
// the fixed groups' multicast objects.
bool uses_multicast(BroadcastMethod method);
bool uses_multicast(const ReplicationParams& params);

// Device facts the scheduler's estimates use (the platform's parameters).
struct BroadcastCosts {
  double gpu_link_gbps = 450.0;  // one GPU's links together, one direction, GB/s
  double link_gbps = 25.0;       // one link (a message travels on one), GB/s
  double hop_ns = 250.0;         // one hop GPU->switch or switch->GPU
  double sm_store_gbps = 25.0;   // remote stores one SM issues, GB/s
  uint32_t broadcast_sms = 8;
  uint64_t chunk_bytes = 16384;
};

// Estimated time to broadcast `bytes` of weights from `owner` to `group` by `method`.
double estimate_broadcast_ns(BroadcastMethod method, uint64_t bytes, uint32_t owner, const FixedGroup& group,
                             const BroadcastCosts& costs);

// Bytes of one expert's weights: gate, up and down projections in `dtype`
// (docs/background/hot_expert_replication.md#sizes-and-skew; weight_bytes in moe_workload.hpp).
uint64_t expert_weight_bytes(const MoeModel& model, WeightDtype dtype);

// What replication decided for the layer, before the layer's plan is built.
struct ReplicationDecision {
  ReplicationPolicy policy = ReplicationPolicy::none;
  BroadcastMethod method = BroadcastMethod::multiport;
  std::vector<FixedGroup> groups;
  uint32_t slots_per_gpu = 0;
  uint32_t broadcast_sms = 0;
  uint64_t chunk_bytes = 0;
  uint64_t weight_bytes = 0;       // per expert
  double time_budget_ns = 0.0;     // the shared experts' estimated time
  ReplicationSchedule schedule;    // the replicas and the scheduler's estimates
  std::vector<double> load_before; // per GPU, token-expert pairs before re-routing
  std::vector<double> load_after;  // per GPU, after
  // Whether the layer broadcasts weights: iser with a replica that is not already resident (kept
  // in its slot from the layer's previous iteration, replication_stream.hpp).
  bool broadcasts() const {
    return policy == ReplicationPolicy::iser &&
           std::any_of(schedule.replicas.begin(), schedule.replicas.end(),
                       [](const ReplicaPlacement& p) { return !p.resident; });
  }
};

// Decides the replicas for the layer of `original` and re-routes its tokens. `expected_loads`
// (per expert) are what the static policy places from; `shared_expert_ns` is the iser budget;
// `weight_dtype` sizes the experts' weights the broadcasts carry.
// `resident` (iser only): replicas whose weights are still in their slots from this layer's
// previous iteration (ReplicationInput::resident).
// Returns the routing over expert copies (`original` itself when the policy is none).
MoeRouting decide_replication(const MoeRouting& original, const ReplicationParams& params, const MoeModel& model,
                              WeightDtype weight_dtype, const std::vector<double>& expected_loads,
                              const BroadcastCosts& costs, double shared_expert_ns, ReplicationDecision& decision,
                              const std::vector<ReplicaPlacement>& resident = {});

// The phase's work: per GPU, stream 0 computes the shared experts; streams 1-3 broadcast.
struct ReplicationPhase {
  std::shared_ptr<const ReplicationDecision> decision;
  std::vector<std::vector<hw::WorkSequence>> sequences;  // per GPU: its streams' sequences
  std::vector<MulticastGroupRequest> multicast_groups;   // the fixed groups (multicast methods)
  std::vector<uint64_t> expected_link_arrivals;          // per GPU
  std::vector<uint64_t> expected_bytes_sent;             // per GPU: payload its broadcasts inject
  uint64_t chunks_expected = 0;                          // (replica GPU, chunk) pairs
  bool empty() const { return sequences.empty(); }
};

// Builds the phase for a layer whose plan is `plan` (its counters are left alone: the phase counts
// on counters above them). Empty when there is neither a shared expert nor a broadcast.
ReplicationPhase build_replication_phase(const MoeLayerSpec& spec, const LayerPlan& plan);

// Declares the weight buffers and writes each owner's experts' weights (a fingerprint per chunk).
void load_expert_weights(Hal& hal, const ReplicationPhase& phase, const MoeLayerSpec& spec);

// Submits every GPU's streams (moved out of the phase) without waiting: partitions each submit
// theirs, then one wait covers them all.
void submit_replication_phase(Hal& hal, ReplicationPhase& phase);
// Submits every GPU's streams and waits until all have finished.
void run_replication_phase(Hal& hal, ReplicationPhase& phase);

struct ReplicationCheck {
  uint64_t chunks_expected = 0;
  uint64_t chunks_landed = 0;  // replica chunks holding their expert's fingerprint
  std::vector<std::string> violations;
  bool passed() const { return chunks_landed == chunks_expected; }
};

// Checks that every replica GPU holds every chunk of its replica's weights in the right slot.
ReplicationCheck verify_replication(Hal& hal, const ReplicationPhase& phase, size_t max_violations = 20);

}  // namespace nvsvp::fw
