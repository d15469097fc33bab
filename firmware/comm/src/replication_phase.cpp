#include "nvsvp/fw/replication_phase.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "moe_plan.hpp"

namespace nvsvp::fw {

namespace {

// Where the weights live, the same in every GPU: the owner's experts, then its replica slots.
// Each expert takes whole chunks (chunks_per_expert x chunk_bytes) so chunk j of any copy is at
// the same offset.
constexpr uint64_t kExpertWeights = 0x0B00'0000'0000;
constexpr uint64_t kReplicaWeights = 0x0C00'0000'0000;
// The fixed groups' multicast ranges (multicast methods), one after another.
constexpr uint64_t kReplicationMulticast = 0x0D00'0000'0000;
// Multicast memory is bound in units of 2 MiB (docs/background/nvlink_nvswitch.md#multicast-groups).
constexpr uint64_t kMulticastGranule = 2ull << 20;

// Each chunk's first 16 bytes (what a message carries functionally) name the expert and chunk, so
// a replica that got the wrong chunk, or none, is seen.
struct ChunkFingerprint {
  uint32_t magic = 0x5745'4947;  // "WEIG"
  uint32_t expert = 0;
  uint32_t chunk = 0;
  uint32_t check = 0;
  static ChunkFingerprint of(uint32_t expert, uint32_t chunk) {
    ChunkFingerprint f;
    f.expert = expert;
    f.chunk = chunk;
    f.check = ~(expert * 2654435761u ^ chunk);
    return f;
  }
  bool operator==(const ChunkFingerprint& o) const {
    return magic == o.magic && expert == o.expert && chunk == o.chunk && check == o.check;
  }
};
static_assert(sizeof(ChunkFingerprint) == 16, "a fingerprint is one functional granule");

uint64_t chunks_per_expert(const ReplicationDecision& d) { return (d.weight_bytes + d.chunk_bytes - 1) / d.chunk_bytes; }
uint64_t padded_expert_bytes(const ReplicationDecision& d) { return chunks_per_expert(d) * d.chunk_bytes; }
uint64_t multicast_region_bytes(const ReplicationDecision& d) {
  const uint64_t bytes = std::max<uint64_t>(1, d.slots_per_gpu) * padded_expert_bytes(d);
  return (bytes + kMulticastGranule - 1) / kMulticastGranule * kMulticastGranule;
}

std::vector<double> gpu_loads(const MoeRouting& routing) {
  std::vector<double> load(routing.gpus, 0.0);
  for (uint16_t e : routing.expert_ids) load[routing.gpu_of_expert(e)] += 1.0;
  return load;
}

// The counters the layer's plan uses end below this one.
uint32_t first_free_counter(const LayerPlan& plan) {
  uint32_t first = kMoeCounters;
  auto cover = [&first](const hw::WorkSequence& seq) {
    first = std::max(first, seq.counters);
    for (const hw::CounterTableRange& r : seq.counter_tables) first = std::max(first, r.first_counter + r.counters);
    for (const hw::CounterMap& m : seq.counter_maps) {
      if (m.first.empty()) first = std::max<uint64_t>(first, m.first_counter + m.entries);
      for (uint32_t c : m.counters) first = std::max(first, c + 1);
    }
  };
  for (const hw::WorkSequence& seq : plan.sequences) cover(seq);
  for (const auto& streams : plan.extra_sequences) {
    for (const hw::WorkSequence& seq : streams) cover(seq);
  }
  return first;
}

// The layer's routing is over copies: each GPU's own experts, then its replica slots.
uint32_t owned_experts_per_gpu(const MoeRouting& routing, const ReplicationDecision& d) {
  return routing.experts_per_gpu() - d.slots_per_gpu;
}

}  // namespace

bool uses_multicast(BroadcastMethod method) {
  return method == BroadcastMethod::multicast || method == BroadcastMethod::multiport;
}

bool uses_multicast(const ReplicationParams& params) {
  BroadcastMethod method{};
  return parse_broadcast_method(params.broadcast, method) && uses_multicast(method);
}

uint64_t expert_weight_bytes(const MoeModel& model, WeightDtype dtype) {
  return weight_bytes(dtype, 3ull * model.hidden * model.moe_hidden);
}

double estimate_broadcast_ns(BroadcastMethod method, uint64_t bytes, uint32_t owner, const FixedGroup& group,
                             const BroadcastCosts& costs) {
  const double w = static_cast<double>(bytes);
  const double link = costs.gpu_link_gbps;  // GB/s = bytes/ns
  const double issue = std::min(link, costs.sm_store_gbps * costs.broadcast_sms);
  const double replicas = group.size - (group.contains(owner) ? 1.0 : 0.0);
  // A chunk's extra time per hop it waits for (a message travels whole on one link).
  const double chunk_hop = static_cast<double>(costs.chunk_bytes) / costs.link_gbps + 2.0 * costs.hop_ns;
  switch (method) {
    case BroadcastMethod::p2p:
      return replicas * w / link + chunk_hop;
    case BroadcastMethod::multicast:
      // Through a relay member when the owner is outside the group (it cannot issue to it).
      return w / issue + chunk_hop * (group.contains(owner) ? 1.0 : 2.0);
    case BroadcastMethod::multiport: {
      const double parts = group.size;
      const double scatter = w * (parts - (group.contains(owner) ? 1.0 : 0.0)) / parts / link;
      // A member receives its scattered part and then every part's multicast copy.
      const double receive = w * (1.0 + 1.0 / parts) / link;
      return std::max({scatter, receive, w / parts / issue}) + 2.0 * chunk_hop;
    }
    case BroadcastMethod::ring:
      return w / link + replicas * chunk_hop;
  }
  return 0.0;
}

MoeRouting decide_replication(const MoeRouting& original, const ReplicationParams& params, const MoeModel& model,
                              WeightDtype weight_dtype, const std::vector<double>& expected_loads,
                              const BroadcastCosts& costs, double shared_expert_ns, ReplicationDecision& decision,
                              const std::vector<ReplicaPlacement>& resident) {
  if (!parse_replication_policy(params.policy, decision.policy)) {
    throw std::invalid_argument("replication.policy: unknown policy '" + params.policy + "'");
  }
  if (!parse_broadcast_method(params.broadcast, decision.method)) {
    throw std::invalid_argument("replication.broadcast: unknown method '" + params.broadcast + "'");
  }
  std::vector<uint32_t> sizes = params.groups;
  if (sizes.empty()) {
    for (uint32_t s : {2u, 4u, 8u, original.gpus}) {
      if (s >= 2 && s <= original.gpus && original.gpus % s == 0 && std::find(sizes.begin(), sizes.end(), s) == sizes.end()) {
        sizes.push_back(s);
      }
    }
  }
  decision.groups = make_fixed_groups(original.gpus, sizes);
  decision.slots_per_gpu = params.slots_per_gpu;
  decision.broadcast_sms = params.broadcast_sms;
  decision.chunk_bytes = params.chunk_bytes;
  decision.weight_bytes = expert_weight_bytes(model, weight_dtype);
  decision.time_budget_ns = shared_expert_ns;
  decision.load_before = gpu_loads(original);
  if (decision.policy == ReplicationPolicy::none) {
    decision.load_after = decision.load_before;
    decision.schedule.load_before = decision.schedule.load_after = decision.load_before;
    decision.schedule.stop_reason = "policy none";
    return original;
  }

  ReplicationInput input;
  input.gpus = original.gpus;
  input.experts = original.experts;
  input.groups = decision.groups;
  input.slots_per_gpu = params.slots_per_gpu;
  input.owner_slot_in_group = decision.policy == ReplicationPolicy::iser && uses_multicast(decision.method);
  if (decision.policy == ReplicationPolicy::iser) {
    // This layer's loads, known once the gate has run; the broadcasts must hide behind the shared
    // experts.
    input.expert_loads.assign(original.experts, 0.0);
    for (uint16_t e : original.expert_ids) input.expert_loads[e] += 1.0;
    input.time_budget_ns = shared_expert_ns;
    input.resident = resident;
    input.prefer_resident = params.keep_resident == "when_improving";
    const uint64_t bytes = decision.weight_bytes;
    const BroadcastMethod method = decision.method;
    input.broadcast_ns = [bytes, method, costs](uint32_t owner, const FixedGroup& group) {
      return estimate_broadcast_ns(method, bytes, owner, group, costs);
    };
  } else {
    // Placed once, offline, from average loads; the weights are resident, nothing is broadcast.
    if (expected_loads.size() != original.experts) {
      throw std::invalid_argument("replication: expected loads for " + std::to_string(expected_loads.size()) +
                                  " experts, the layer has " + std::to_string(original.experts));
    }
    input.expert_loads = expected_loads;
  }
  decision.schedule = schedule_replicas(input);
  // Both policies split a replicated expert's tokens to level this layer's loads: the placement
  // is fixed (static) or per layer (iser), but the dispatcher knows the layer's counts either way.
  ReplicatedRouting rerouted =
      reroute_tokens(original, decision.schedule.replicas, params.slots_per_gpu, TokenSplit::water_fill);
  decision.load_after = rerouted.gpu_load;
  rerouted.routing.weights_of = std::move(rerouted.weights_of);
  return std::move(rerouted.routing);
}

namespace {

// A GPU's streams in the phase: the shared experts; copy-engine sends that wait for nothing; what
// a GPU issues or passes on once it has it (SM-issued multicast stores, ring forwards); the waits
// for its copies.
enum Stream : uint32_t { kShared, kCopyEngine, kPassOn, kCompletion, kStreams };
using PhaseStreams = std::vector<std::array<hw::WorkSequence, kStreams>>;

// The fixed groups' multicast objects: they exist from start-up, whether this layer uses them or not.
std::vector<MulticastGroupRequest> replication_multicast_groups(const MoeLayerSpec& spec) {
  std::vector<MulticastGroupRequest> groups;
  const std::shared_ptr<const ReplicationDecision>& decision = spec.replication;
  if (!decision || decision->policy != ReplicationPolicy::iser || !uses_multicast(decision->method)) return groups;
  if (spec.routing.gpus > hw::kMaxGpus) {
    throw std::invalid_argument("replication: multicast groups name at most " + std::to_string(hw::kMaxGpus) + " GPUs");
  }
  const uint64_t region = multicast_region_bytes(*decision);
  for (size_t i = 0; i < decision->groups.size(); ++i) {
    hw::GpuMask members;
    for (uint32_t m = 0; m < decision->groups[i].size; ++m) members.set(decision->groups[i].first_gpu + m);
    groups.push_back(MulticastGroupRequest{kReplicationMulticast + i * region, region, kReplicaWeights, members});
  }
  return groups;
}

// The shared experts: every token of the GPU through each, as the routed experts' GEMMs; on the
// SMs the broadcast's stores leave (`gemm_sms`, 0: all).
void append_shared_experts(const MoeLayerSpec& spec, uint16_t gemm_sms, PhaseStreams& streams) {
  const uint64_t tile = spec.software.tile_tokens;
  const uint64_t tile_rows = spec.shared_experts * ((spec.routing.tokens_per_gpu + tile - 1) / tile);
  const detail::ExpertGemms gemms = detail::expert_gemms(spec, detail::kSharedExpertPhase, tile_rows, spec.shared_experts,
                                                         uint64_t{spec.shared_experts} * spec.routing.tokens_per_gpu,
                                                         hw::Task::kNoKernel);
  const auto gradients = detail::weight_gradient_gemms(
      spec, detail::kSharedExpertPhase, std::vector<uint64_t>(spec.shared_experts, spec.routing.tokens_per_gpu), false);
  for (auto& gpu : streams) {
    hw::WorkSequence& seq = gpu[kShared];
    seq.tasks.push_back(gemms.gemm1);
    if (gradients) seq.tasks.push_back(gradients->down);
    seq.tasks.push_back(gemms.gemm2);
    if (gradients) seq.tasks.push_back(gradients->gate_up);
    if (gemm_sms > 0) seq.sms = gemm_sms;
  }
}

// The broadcasts of the replicas' weights, chunk by chunk, by the decision's method. Counters from
// `first_counter` on: per broadcast and chunk, one for the chunk landing in a replica and, for the
// multicast methods, one for its relay or scatter to the member that multicasts it.
class BroadcastPlanner {
 public:
  BroadcastPlanner(const MoeLayerSpec& spec, const ReplicationDecision& d, uint32_t first_counter,
                   ReplicationPhase& phase, PhaseStreams& streams)
      : d_(d),
        phase_(phase),
        streams_(streams),
        gpus_(spec.routing.gpus),
        per_gpu_(owned_experts_per_gpu(spec.routing, d)),
        chunks_(chunks_per_expert(d)),
        padded_(padded_expert_bytes(d)),
        region_(multicast_region_bytes(d)),
        stride_(chunks_ * (uses_multicast(d.method) ? 2 : 1)),
        first_counter_(first_counter),
        pass_on_items_(spec.routing.gpus) {}

  // Plans every broadcast; returns the counters the phase then uses.
  uint32_t plan() {
    const uint64_t needed = first_counter_ + stride_ * d_.schedule.replicas.size();
    if (needed > hw::kMaxArrivalCounters) {
      throw std::length_error("replication: " + std::to_string(needed) + " arrival counters needed, a GPU has " +
                              std::to_string(hw::kMaxArrivalCounters));
    }
    // One order, chunk by chunk and broadcast by broadcast, for every stream's tasks. Only the
    // pass-on streams wait, each on what copy-engine sends or other pass-ons deliver, and a ring's
    // chain never returns to its owner: no cycle of waits.
    for (uint64_t j = 0; j < chunks_; ++j) {
      for (size_t b = 0; b < d_.schedule.replicas.size(); ++b) broadcast_chunk(b, j);
    }
    queue_pass_ons();
    wait_for_copies();
    return static_cast<uint32_t>(needed);
  }

 private:
  uint32_t landed(size_t b, uint64_t j) const { return static_cast<uint32_t>(first_counter_ + stride_ * b + j); }
  uint32_t relayed(size_t b, uint64_t j) const {
    return static_cast<uint32_t>(first_counter_ + stride_ * b + chunks_ + j);
  }

  hw::Task send_task(uint32_t from, uint32_t to, uint64_t source, uint64_t target, uint64_t bytes, uint32_t counter) {
    phase_.expected_link_arrivals[to]++;
    phase_.expected_bytes_sent[from] += bytes;
    return hw::Task::send(detail::kBroadcastPhase, to, source, target, bytes, counter);
  }
  void send(uint32_t from, uint32_t to, uint64_t source, uint64_t target, uint64_t bytes, uint32_t counter) {
    streams_[from][kCopyEngine].tasks.push_back(send_task(from, to, source, target, bytes, counter));
  }
  hw::Task multicast(uint32_t issuer, const FixedGroup& group, size_t group_index, uint64_t source, uint64_t offset,
                     uint64_t bytes, uint32_t counter) {
    for (uint32_t m = 0; m < group.size; ++m) phase_.expected_link_arrivals[group.first_gpu + m]++;
    phase_.expected_bytes_sent[issuer] += bytes;
    return hw::Task::multimem_store(detail::kBroadcastPhase, source,
                                    kReplicationMulticast + group_index * region_ + offset, bytes, counter);
  }
  // What a member passes on once it has it (a relay's or multiport member's multicast, a ring
  // member's forward): one item each, taken in the order the chunks land, so a chunk held up on
  // a busy link holds up no other.
  void pass_on(uint32_t gpu, uint32_t wait_counter, const hw::Task& task) {
    pass_on_items_[gpu].push_back(hw::Task::wait(detail::kBroadcastPhase, wait_counter, 1));
    pass_on_items_[gpu].push_back(task);
  }

  // Chunk j of broadcast b.
  void broadcast_chunk(size_t b, uint64_t j) {
    const ReplicaPlacement& p = d_.schedule.replicas[b];
    if (p.resident) return;  // its weights are in its slots already
    const uint64_t bytes = std::min(d_.chunk_bytes, d_.weight_bytes - j * d_.chunk_bytes);
    const uint64_t source = kExpertWeights + (p.expert % per_gpu_) * padded_ + j * d_.chunk_bytes;
    const uint64_t offset = p.slot * padded_ + j * d_.chunk_bytes;
    const uint64_t target = kReplicaWeights + offset;
    switch (d_.method) {
      case BroadcastMethod::p2p:
        for (uint32_t r : p.replica_gpus) send(p.owner, r, source, target, bytes, landed(b, j));
        break;
      case BroadcastMethod::ring: {
        // Owner, then the replicas in order after it (cyclically), each forwarding what landed.
        std::vector<uint32_t> chain = p.replica_gpus;
        std::stable_sort(chain.begin(), chain.end(), [&](uint32_t a, uint32_t c) {
          return (a + gpus_ - p.owner) % gpus_ < (c + gpus_ - p.owner) % gpus_;
        });
        send(p.owner, chain.front(), source, target, bytes, landed(b, j));
        for (size_t i = 0; i + 1 < chain.size(); ++i) {
          pass_on(chain[i], landed(b, j), send_task(chain[i], chain[i + 1], target, target, bytes, landed(b, j)));
        }
        break;
      }
      case BroadcastMethod::multicast:
      case BroadcastMethod::multiport: {
        // The issuer of this chunk: the owner when it is a member (single-port multicast), a
        // relay member otherwise; multiport deals the chunks round the group's members.
        const FixedGroup& group = d_.groups[p.group];
        uint32_t issuer = group.contains(p.owner) ? p.owner : p.replica_gpus.front();
        if (d_.method == BroadcastMethod::multiport) issuer = group.first_gpu + static_cast<uint32_t>(j % group.size);
        if (issuer == p.owner) {
          streams_[issuer][kPassOn].tasks.push_back(multicast(issuer, group, p.group, source, offset, bytes, landed(b, j)));
        } else {
          send(p.owner, issuer, source, target, bytes, relayed(b, j));
          pass_on(issuer, relayed(b, j), multicast(issuer, group, p.group, target, offset, bytes, landed(b, j)));
        }
        break;
      }
    }
    phase_.chunks_expected += p.replica_gpus.size();
  }

  void queue_pass_ons() {
    for (uint32_t g = 0; g < gpus_; ++g) {
      if (pass_on_items_[g].empty()) continue;
      std::vector<hw::Task>& tasks = streams_[g][kPassOn].tasks;
      tasks.push_back(hw::Task::take_ready(detail::kBroadcastPhase, pass_on_items_[g].size() / 2, 1));
      tasks.insert(tasks.end(), pass_on_items_[g].begin(), pass_on_items_[g].end());
    }
  }

  // Every GPU that receives copies waits for all of them: the layer starts on weights that are there.
  void wait_for_copies() {
    for (size_t b = 0; b < d_.schedule.replicas.size(); ++b) {
      const ReplicaPlacement& p = d_.schedule.replicas[b];
      if (p.resident) continue;
      std::vector<uint32_t> receivers = p.replica_gpus;
      if (uses_multicast(d_.method) && d_.groups[p.group].contains(p.owner)) receivers.push_back(p.owner);  // its copy comes back
      for (uint32_t r : receivers) {
        std::vector<hw::Task>& tasks = streams_[r][kCompletion].tasks;
        // A phase opens with its first task that is not a wait: this one opens the receiver's
        // broadcast phase at the start, so its end is the last chunk's landing.
        if (tasks.empty()) tasks.push_back(hw::Task::delay(detail::kBroadcastPhase, 0.0));
        for (uint64_t j = 0; j < chunks_; ++j) tasks.push_back(hw::Task::wait(detail::kBroadcastPhase, landed(b, j), 1));
      }
    }
  }

  const ReplicationDecision& d_;
  ReplicationPhase& phase_;
  PhaseStreams& streams_;
  const uint32_t gpus_;
  const uint32_t per_gpu_;
  const uint64_t chunks_;
  const uint64_t padded_;
  const uint64_t region_;
  const uint64_t stride_;  // counters per broadcast
  const uint32_t first_counter_;
  std::vector<std::vector<hw::Task>> pass_on_items_;
};

}  // namespace

ReplicationPhase build_replication_phase(const MoeLayerSpec& spec, const LayerPlan& plan) {
  ReplicationPhase phase;
  const std::shared_ptr<const ReplicationDecision> decision = spec.replication;
  const bool broadcasts = decision && decision->broadcasts();
  const bool shared = spec.shared_experts > 0;
  phase.multicast_groups = replication_multicast_groups(spec);
  if (!broadcasts && !shared) return phase;
  const ReplicationDecision none;
  const ReplicationDecision& d = decision ? *decision : none;
  const uint32_t gpus = spec.routing.gpus;
  phase.decision = decision;
  phase.expected_link_arrivals.assign(gpus, 0);
  phase.expected_bytes_sent.assign(gpus, 0);
  PhaseStreams streams(gpus);

  const bool sm_broadcast = broadcasts && uses_multicast(d.method);
  if (sm_broadcast && d.broadcast_sms >= spec.gpu_sms) {
    throw std::invalid_argument("replication.broadcast_sms " + std::to_string(d.broadcast_sms) +
                                " leaves no SM of " + std::to_string(spec.gpu_sms) + " for the shared experts");
  }
  if (shared && !spec.pure_communication) {
    append_shared_experts(spec, sm_broadcast ? static_cast<uint16_t>(spec.gpu_sms - d.broadcast_sms) : 0, streams);
  }
  uint32_t counters = first_free_counter(plan);
  if (broadcasts) counters = BroadcastPlanner(spec, d, counters, phase, streams).plan();

  phase.sequences.resize(gpus);
  for (uint32_t g = 0; g < gpus; ++g) {
    for (uint32_t s = 0; s < kStreams; ++s) {
      hw::WorkSequence& seq = streams[g][s];
      if (seq.tasks.empty()) continue;
      seq.stream = s;
      seq.counters = counters;
      seq.phase_names = detail::moe_phase_names();
      if (s == kPassOn && sm_broadcast) seq.issue_sms = static_cast<uint16_t>(d.broadcast_sms);
      phase.sequences[g].push_back(std::move(seq));
    }
  }
  return phase;
}

void load_expert_weights(Hal& hal, const ReplicationPhase& phase, const MoeLayerSpec& spec) {
  if (!phase.decision || !phase.decision->broadcasts()) return;
  const ReplicationDecision& d = *phase.decision;
  const MoeRouting& routing = spec.routing;
  const uint32_t per_gpu = owned_experts_per_gpu(routing, d);
  const uint64_t chunks = chunks_per_expert(d);
  const uint64_t padded = padded_expert_bytes(d);
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    hw::MemoryAccess& memory = hal.memory(g);
    memory.declare_buffer(kExpertWeights, d.chunk_bytes, per_gpu * chunks);
    memory.declare_buffer(kReplicaWeights, d.chunk_bytes, d.slots_per_gpu * chunks);
  }
  // Only the broadcast experts' weights are written: the others (kept replicas included) are
  // never read functionally.
  for (const ReplicaPlacement& p : d.schedule.replicas) {
    if (p.resident) continue;
    for (uint64_t j = 0; j < chunks; ++j) {
      const ChunkFingerprint f = ChunkFingerprint::of(p.expert, static_cast<uint32_t>(j));
      hal.memory(p.owner).write(kExpertWeights + (p.expert % per_gpu) * padded + j * d.chunk_bytes, &f, sizeof f);
    }
  }
}

void submit_replication_phase(Hal& hal, ReplicationPhase& phase) {
  for (uint32_t g = 0; g < phase.sequences.size(); ++g) {
    for (hw::WorkSequence& seq : phase.sequences[g]) hal.submit(g, std::move(seq));
  }
}

void run_replication_phase(Hal& hal, ReplicationPhase& phase) {
  submit_replication_phase(hal, phase);
  hal.wait_all_finished();
}

ReplicationCheck verify_replication(Hal& hal, const ReplicationPhase& phase, size_t max_violations) {
  ReplicationCheck check;
  check.chunks_expected = phase.chunks_expected;
  if (!phase.decision || !phase.decision->broadcasts()) return check;
  const ReplicationDecision& d = *phase.decision;
  const uint64_t chunks = chunks_per_expert(d);
  const uint64_t padded = padded_expert_bytes(d);
  for (const ReplicaPlacement& p : d.schedule.replicas) {
    if (p.resident) continue;  // nothing was sent
    for (uint32_t r : p.replica_gpus) {
      for (uint64_t j = 0; j < chunks; ++j) {
        // A message carries its first bytes only, so a last chunk shorter than a fingerprint
        // carries part of it.
        const size_t carried = static_cast<size_t>(std::min<uint64_t>(
            sizeof(ChunkFingerprint), std::min(d.chunk_bytes, d.weight_bytes - j * d.chunk_bytes)));
        const ChunkFingerprint want = ChunkFingerprint::of(p.expert, static_cast<uint32_t>(j));
        ChunkFingerprint got{};
        hal.memory(r).read(kReplicaWeights + p.slot * padded + j * d.chunk_bytes, &got, carried);
        if (std::memcmp(&got, &want, carried) == 0) {
          check.chunks_landed++;
        } else if (check.violations.size() < max_violations) {
          check.violations.push_back("GPU " + std::to_string(r) + " slot " + std::to_string(p.slot) + ": chunk " +
                                     std::to_string(j) + " of expert " + std::to_string(p.expert) + " (owner " +
                                     std::to_string(p.owner) + ") did not land");
        }
      }
    }
  }
  return check;
}

}  // namespace nvsvp::fw
