// In-switch replication of hot experts (docs/background/hot_expert_replication.md): the fixed
// multicast groups, the per-layer scheduler that assigns hot experts to them, and the re-routing of
// tokens over an expert's owner and its replicas. Plain data and arithmetic; SystemC-free,
// HAL-free.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_workload.hpp"

namespace nvsvp::fw {

enum class ReplicationPolicy : uint8_t {
  none,    // every expert only at its owner
  fixed,   // "static": replicas placed once from the average (expected) loads, as offline
           // balancers do; their weights are resident, so a layer broadcasts nothing
  iser,    // per layer, from this layer's loads; the replicas' weights are broadcast in the layer
};
const char* to_string(ReplicationPolicy policy);  // "none", "static", "iser"
bool parse_replication_policy(const std::string& text, ReplicationPolicy& policy);

enum class BroadcastMethod : uint8_t {
  p2p,        // the owner copies the weights to every replica GPU
  multicast,  // the owner multimem-stores them through the switch (one port: the owner's)
  multiport,  // the owner scatters one chunk to each member, each member multicasts its chunk
  ring,       // pipelined chain owner -> member -> member ...
};
const char* to_string(BroadcastMethod method);  // "p2p", "multicast", "multiport", "ring"
bool parse_broadcast_method(const std::string& text, BroadcastMethod& method);

// A fixed group (docs/background/hot_expert_replication.md#fixed-groups): GPUs first_gpu ..
// first_gpu + size - 1. For each configured size the GPUs are partitioned into consecutive groups
// of that size; the groups are created once, at start-up (one multicast object each), and only the
// choice of group per hot expert changes.
struct FixedGroup {
  uint32_t first_gpu = 0;
  uint32_t size = 0;
  bool contains(uint32_t gpu) const { return gpu - first_gpu < size; }
};

// The groups of every size in `sizes` (in the order given, each size's groups by first GPU).
// Throws std::invalid_argument for a size below 2, above `gpus`, not dividing `gpus`, or given twice.
std::vector<FixedGroup> make_fixed_groups(uint32_t gpus, const std::vector<uint32_t>& sizes);

// One hot expert's replicas.
struct ReplicaPlacement {
  uint32_t expert = 0;  // the (original) expert
  uint32_t owner = 0;   // the GPU that holds its weights
  uint32_t group = 0;   // index into the fixed groups
  uint32_t slot = 0;    // replica slot, the same on every replica GPU (free on each)
  std::vector<uint32_t> replica_gpus;  // the group's members other than the owner, ascending
  // Its weights already sit in that slot on every GPU it is written to (kept from this layer's
  // previous iteration): nothing is broadcast for it.
  bool resident = false;
};

struct ReplicationInput {
  uint32_t gpus = 0;
  uint32_t experts = 0;              // expert e's owner is e / (experts / gpus)
  std::vector<double> expert_loads;  // per expert: its token-expert pairs (what is balanced)
  std::vector<FixedGroup> groups;
  uint32_t slots_per_gpu = 0;        // replica slots (memory for that many experts' weights)
  // The broadcasts must fit in this (the shared expert's compute time); infinity: no budget.
  double time_budget_ns = std::numeric_limits<double>::infinity();
  // Estimated time to broadcast one expert from `owner` to `group`'s members by the chosen method.
  std::function<double(uint32_t owner, const FixedGroup& group)> broadcast_ns;
  // The broadcast writes the replica slot on every member of the group, the owner included when
  // it is one (a multicast reaches its issuer too): the slot must then be free on the owner as well.
  bool owner_slot_in_group = false;
  // Replicas whose weights sit in their slots from this layer's previous iteration (at most one
  // per expert). Choosing such an expert on the same group keeps it in its slot at no broadcast
  // cost (the placement comes out `resident`). A new replica takes a slot that no resident
  // replica of a still-unplaced expert holds while one is free, else it evicts one.
  std::vector<ReplicaPlacement> resident;
  // Whether a choice that keeps a resident replica beats every choice that does not as long as it
  // lowers the peak (true), or only at an equal peak and spread (false).
  bool prefer_resident = false;
};

struct ReplicationSchedule {
  std::vector<ReplicaPlacement> replicas;  // in the order chosen
  std::vector<double> load_before;         // per GPU
  std::vector<double> load_after;          // per GPU, with each replicated expert water-filled
  // Max over GPUs of the summed estimated times of the broadcasts it takes part in (owner or
  // member): broadcasts that share a GPU are assumed to run one after another.
  double estimated_broadcast_ns = 0.0;
  std::string stop_reason;  // why the greedy loop stopped (for the report)
};

// The greedy scheduler of docs/background/hot_expert_replication.md#the-scheduler: experts in
// decreasing load; for each, every fixed group that does not already hold it and has a slot free on
// all its members; choose the one whose water-filled split over owner + replicas gives the lowest
// max GPU load; stop when no choice lowers the max load, when slots run out, or when the broadcasts
// no longer fit the budget. Deterministic; never raises the max load.
//
// In detail: an expert is placed at most once (one group; the group need not contain its owner
// but must have another member). Each step takes the hottest unplaced expert that has an
// acceptable choice, places it, and starts again from the hottest (a placement moves the max to
// another GPU, whose hot experts may have been passed over). A choice is acceptable if a slot
// index is free on all members other than the owner (the lowest such index is taken), the
// broadcast estimate with it added stays within time_budget_ns, and it improves the peak: it
// lowers the max GPU load, or keeps it and leaves fewer GPUs at it (water-filling often leaves
// several GPUs level at the max, and one placement relieves only its owner). Among acceptable
// choices: the best peak, then the lowest load the copies end at, then the lower group index.
// stop_reason, from the last scan (the one that placed nothing):
//   "replica slots ran out"          every GPU's replica slots are taken;
//   "broadcast budget reached"       a choice would improve the peak but not fit the budget;
//   "no common free replica slot"    a choice would improve the peak but its members other than
//                                    the owner share no free slot;
//   "no choice lowers the max load"  otherwise.
// With resident replicas (ReplicationInput::resident) a choice that keeps one costs no broadcast,
// and at an equal peak and copy load it beats one that does not.
// Throws std::invalid_argument for inconsistent input (experts not a multiple of gpus, loads
// not one per expert or negative, a group outside the GPUs, a resident replica naming an expert,
// group or slot that does not exist, or an expert twice).
ReplicationSchedule schedule_replicas(const ReplicationInput& input);

// Excess load (docs/background/hot_expert_replication.md#definitions): the sum over GPUs of
// max(0, load - mean).
double excess_load(const std::vector<double>& gpu_loads);

// The highest load over the mean load (0 when there is no load): how skewed loads are.
double max_over_mean(const std::vector<double>& loads);

// What ReplicatedRouting::weights_of holds for a replica slot no placement uses (no token goes
// there). Never an original expert: with a slot per GPU, 16-bit copy IDs leave at most 65535
// experts (IDs up to 65534).
inline constexpr uint16_t kEmptyReplicaSlot = 0xFFFF;

// The layer's routing over expert copies. Every GPU serves `experts_per_gpu` original experts
// followed by `slots_per_gpu` replica slots: copy c lives on GPU c / (experts_per_gpu +
// slots_per_gpu); local index i < experts_per_gpu is original expert gpu * experts_per_gpu + i,
// local index experts_per_gpu + s is replica slot s. The routing's expert IDs become copy IDs.
struct ReplicatedRouting {
  MoeRouting routing;                  // over copies; experts = gpus * (per + slots)
  std::vector<uint16_t> weights_of;    // per copy: the original expert whose weights it holds
                                       // (kEmptyReplicaSlot for an unused slot)
  std::vector<double> gpu_load;        // per GPU: token-expert pairs it serves now
};

// How a replicated expert's tokens are split over owner + replicas.
enum class TokenSplit : uint8_t {
  even,        // as evenly as possible over the copies (offline balancers)
  water_fill,  // so that the copies' GPUs end as level as possible (the scheduler's estimate)
};

// Re-routes `original` (over original experts) by `schedule`: each replicated expert's
// token-expert pairs, in token order, go to its copies by the split's quotas. A token's k
// experts stay distinct copies. Deterministic.
//
// A replicated expert's copies in order: the owner's, then the replicas by GPU. Quotas of its N
// pairs over n copies: even gives N / n each and the remainder one each to the first copies;
// water_fill repeats the scheduler's arithmetic in whole pairs (every expert starts at its owner;
// in `replicas` order each replicated expert leaves its owner and is water-filled over its
// copies' GPUs, rounded by largest remainder, ties to the earlier copy). Throws
// std::invalid_argument if the copies do not fit 16-bit IDs, or for a placement with a wrong
// owner, an expert placed twice, no replica GPUs, a replica GPU out of range / equal to the owner
// / not ascending, a slot >= slots_per_gpu, or a slot taken twice on one GPU.
ReplicatedRouting reroute_tokens(const MoeRouting& original, const std::vector<ReplicaPlacement>& replicas,
                                 uint32_t slots_per_gpu, TokenSplit split);

}  // namespace nvsvp::fw
