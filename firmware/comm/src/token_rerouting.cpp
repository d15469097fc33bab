// Hot-expert replication's re-routing of tokens over an expert's copies (expert_replication.hpp,
// reroute_tokens): every (token, expert) pair to one copy of the expert, the copies' shares in
// whole pairs.
#include "nvsvp/fw/expert_replication.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "water_fill.hpp"

namespace nvsvp::fw {

namespace {

// Integer quotas from real shares summing to `total`: each share rounded down, then one more to
// the largest remainders (ties: the earlier copy) until the quotas sum to `total` exactly.
std::vector<uint64_t> largest_remainder(const std::vector<double>& shares, uint64_t total) {
  const size_t n = shares.size();
  std::vector<uint64_t> quotas(n);
  std::vector<double> remainders(n);
  uint64_t assigned = 0;
  for (size_t c = 0; c < n; ++c) {
    // The nudge keeps a share that is whole in exact arithmetic (2.9999999...) from losing a pair.
    const double share = std::max(0.0, shares[c]);
    quotas[c] = static_cast<uint64_t>(std::floor(share + 1e-9));
    remainders[c] = share - static_cast<double>(quotas[c]);
    assigned += quotas[c];
  }
  if (assigned > total) throw std::logic_error("largest remainder: shares exceed their total");
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return remainders[a] > remainders[b]; });
  for (size_t i = 0; assigned < total; i = (i + 1) % n, ++assigned) ++quotas[order[i]];
  return quotas;
}

void check_routing(const MoeRouting& routing) {
  const std::string who = "token re-routing: ";
  if (routing.gpus == 0) throw std::invalid_argument(who + "the routing has 0 GPUs");
  if (routing.experts == 0 || routing.experts % routing.gpus != 0) {
    throw std::invalid_argument(who + std::to_string(routing.experts) + " experts do not spread evenly over " +
                                std::to_string(routing.gpus) + " GPUs");
  }
  if (routing.expert_ids.size() != routing.tokens() * routing.top_k) {
    throw std::invalid_argument(who + std::to_string(routing.expert_ids.size()) + " expert IDs for " +
                                std::to_string(routing.tokens()) + " tokens x top-" + std::to_string(routing.top_k));
  }
  for (uint16_t expert : routing.expert_ids) {
    if (expert >= routing.experts) {
      throw std::invalid_argument(who + "the routing names expert " + std::to_string(expert) + " of " +
                                  std::to_string(routing.experts));
    }
  }
}

// How copies are numbered: every GPU's own experts, then its replica slots.
struct CopyNumbering {
  uint32_t per_gpu = 0;
  uint64_t copies_per_gpu = 0;
  uint32_t original_copy(uint32_t expert) const {
    return static_cast<uint32_t>((expert / per_gpu) * copies_per_gpu + expert % per_gpu);
  }
  uint32_t slot_copy(uint32_t gpu, uint32_t slot) const {
    return static_cast<uint32_t>(gpu * copies_per_gpu + per_gpu + slot);
  }
  uint32_t gpu_of(uint32_t copy) const { return static_cast<uint32_t>(copy / copies_per_gpu); }
};

// Checks placement p against the routing and what earlier placements took (`weights_of`,
// `placement_of`); throws std::invalid_argument naming what is wrong.
void check_placement(const MoeRouting& original, const ReplicaPlacement& placement, uint32_t p, uint32_t slots_per_gpu,
                     const CopyNumbering& numbering, const std::vector<uint16_t>& weights_of,
                     const std::vector<uint32_t>& placement_of, uint32_t not_replicated) {
  const uint32_t per_gpu = numbering.per_gpu;
  const std::string who = "token re-routing: placement " + std::to_string(p) + " (expert " +
                          std::to_string(placement.expert) + "): ";
  if (placement.expert >= original.experts) {
    throw std::invalid_argument(who + "no such expert (" + std::to_string(original.experts) + " experts)");
  }
  if (placement_of[placement.expert] != not_replicated) {
    throw std::invalid_argument(who + "the expert is already replicated by placement " +
                                std::to_string(placement_of[placement.expert]));
  }
  if (placement.owner != placement.expert / per_gpu) {
    throw std::invalid_argument(who + "names owner GPU " + std::to_string(placement.owner) +
                                ", but the expert lives on GPU " + std::to_string(placement.expert / per_gpu));
  }
  if (placement.slot >= slots_per_gpu) {
    throw std::invalid_argument(who + "replica slot " + std::to_string(placement.slot) + ", but GPUs have " +
                                std::to_string(slots_per_gpu) + " replica slots");
  }
  if (placement.replica_gpus.empty()) throw std::invalid_argument(who + "no replica GPUs");
  for (size_t i = 0; i < placement.replica_gpus.size(); ++i) {
    const uint32_t gpu = placement.replica_gpus[i];
    if (gpu >= original.gpus) {
      throw std::invalid_argument(who + "replica GPU " + std::to_string(gpu) + " is out of range (" +
                                  std::to_string(original.gpus) + " GPUs)");
    }
    if (gpu == placement.owner) throw std::invalid_argument(who + "replica GPU " + std::to_string(gpu) + " is the owner");
    if (i > 0 && gpu <= placement.replica_gpus[i - 1]) {
      throw std::invalid_argument(who + "replica GPUs must be ascending and distinct (" + std::to_string(gpu) +
                                  " follows " + std::to_string(placement.replica_gpus[i - 1]) + ")");
    }
    const uint32_t copy = numbering.slot_copy(gpu, placement.slot);
    if (weights_of[copy] != kEmptyReplicaSlot) {
      throw std::invalid_argument(who + "replica slot " + std::to_string(placement.slot) + " on GPU " +
                                  std::to_string(gpu) + " already holds expert " + std::to_string(weights_of[copy]));
    }
  }
}

// [placement]: the quota of the replicated expert's pairs (`pairs_of`) for each of its copies
// (`copies_of`), by `split`.
std::vector<std::vector<uint64_t>> split_quotas(const MoeRouting& original, const std::vector<ReplicaPlacement>& replicas,
                                                const std::vector<std::vector<uint32_t>>& copies_of,
                                                const std::vector<uint64_t>& pairs_of, const CopyNumbering& numbering,
                                                TokenSplit split) {
  std::vector<std::vector<uint64_t>> quotas(replicas.size());
  if (split == TokenSplit::even) {
    for (uint32_t p = 0; p < replicas.size(); ++p) {
      const uint64_t pairs = pairs_of[replicas[p].expert];
      const uint64_t n = copies_of[p].size();
      for (uint64_t c = 0; c < n; ++c) quotas[p].push_back(pairs / n + (c < pairs % n ? 1 : 0));
    }
    return quotas;
  }
  // The scheduler's arithmetic in whole pairs: every expert starts at its owner, and in the
  // schedule's order each replicated expert leaves its owner and is water-filled over its
  // copies, so the split levels what the scheduler estimated.
  std::vector<double> gpu_pairs(original.gpus, 0.0);
  for (uint32_t expert = 0; expert < original.experts; ++expert) gpu_pairs[expert / numbering.per_gpu] += pairs_of[expert];
  for (uint32_t p = 0; p < replicas.size(); ++p) {
    const uint64_t pairs = pairs_of[replicas[p].expert];
    std::vector<double> bases(copies_of[p].size());
    for (size_t c = 0; c < bases.size(); ++c) bases[c] = gpu_pairs[numbering.gpu_of(copies_of[p][c])];
    bases[0] -= static_cast<double>(pairs);
    quotas[p] = largest_remainder(detail::water_fill(bases, static_cast<double>(pairs)), pairs);
    for (size_t c = 0; c < bases.size(); ++c) {
      gpu_pairs[numbering.gpu_of(copies_of[p][c])] = bases[c] + static_cast<double>(quotas[p][c]);
    }
  }
  return quotas;
}

}  // namespace

ReplicatedRouting reroute_tokens(const MoeRouting& original, const std::vector<ReplicaPlacement>& replicas,
                                 uint32_t slots_per_gpu, TokenSplit split) {
  check_routing(original);
  const uint32_t gpus = original.gpus;
  CopyNumbering numbering;
  numbering.per_gpu = original.experts_per_gpu();
  numbering.copies_per_gpu = uint64_t{numbering.per_gpu} + slots_per_gpu;
  const uint64_t copy_count = uint64_t{gpus} * numbering.copies_per_gpu;
  if (copy_count > uint64_t{std::numeric_limits<uint16_t>::max()} + 1) {
    throw std::invalid_argument("token re-routing: " + std::to_string(gpus) + " GPUs x (" +
                                std::to_string(numbering.per_gpu) + " experts + " + std::to_string(slots_per_gpu) +
                                " replica slots) = " + std::to_string(copy_count) +
                                " expert copies do not fit 16-bit expert IDs");
  }

  ReplicatedRouting out;
  out.weights_of.assign(copy_count, kEmptyReplicaSlot);
  for (uint32_t expert = 0; expert < original.experts; ++expert) {
    out.weights_of[numbering.original_copy(expert)] = static_cast<uint16_t>(expert);
  }

  // Each replicated expert's copies: the owner's first, then the replicas by GPU.
  constexpr uint32_t kNotReplicated = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> placement_of(original.experts, kNotReplicated);
  std::vector<std::vector<uint32_t>> copies_of(replicas.size());
  for (uint32_t p = 0; p < replicas.size(); ++p) {
    const ReplicaPlacement& placement = replicas[p];
    check_placement(original, placement, p, slots_per_gpu, numbering, out.weights_of, placement_of, kNotReplicated);
    copies_of[p].push_back(numbering.original_copy(placement.expert));
    for (uint32_t gpu : placement.replica_gpus) {
      const uint32_t copy = numbering.slot_copy(gpu, placement.slot);
      out.weights_of[copy] = static_cast<uint16_t>(placement.expert);
      copies_of[p].push_back(copy);
    }
    placement_of[placement.expert] = p;
  }

  std::vector<uint64_t> pairs_of(original.experts, 0);
  for (uint16_t expert : original.expert_ids) ++pairs_of[expert];
  const std::vector<std::vector<uint64_t>> quotas = split_quotas(original, replicas, copies_of, pairs_of, numbering, split);

  out.routing.gpus = gpus;
  out.routing.experts = static_cast<uint32_t>(copy_count);
  out.routing.top_k = original.top_k;
  out.routing.tokens_per_gpu = original.tokens_per_gpu;
  out.routing.expert_ids.resize(original.expert_ids.size());
  // A replicated expert's pairs, in token order, fill its copies one after another.
  std::vector<size_t> filling(replicas.size(), 0);
  std::vector<uint64_t> filled(replicas.size(), 0);
  out.gpu_load.assign(gpus, 0.0);
  for (size_t i = 0; i < original.expert_ids.size(); ++i) {
    const uint16_t expert = original.expert_ids[i];
    const uint32_t p = placement_of[expert];
    uint32_t copy = numbering.original_copy(expert);
    if (p != kNotReplicated) {
      while (filled[p] == quotas[p][filling[p]]) {
        ++filling[p];
        filled[p] = 0;
      }
      copy = copies_of[p][filling[p]];
      ++filled[p];
    }
    out.routing.expert_ids[i] = static_cast<uint16_t>(copy);
    out.gpu_load[numbering.gpu_of(copy)] += 1.0;
  }
  return out;
}

}  // namespace nvsvp::fw
