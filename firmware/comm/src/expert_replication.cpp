// In-switch replication of hot experts (expert_replication.hpp,
// docs/background/hot_expert_replication.md): the fixed groups and the greedy scheduler; the
// re-routing of tokens over an expert's copies is in token_rerouting.cpp.
#include "nvsvp/fw/expert_replication.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "water_fill.hpp"

namespace nvsvp::fw {

const char* to_string(ReplicationPolicy policy) {
  switch (policy) {
    case ReplicationPolicy::none: return "none";
    case ReplicationPolicy::fixed: return "static";
    case ReplicationPolicy::iser: return "iser";
  }
  return "?";
}

bool parse_replication_policy(const std::string& text, ReplicationPolicy& policy) {
  if (text == "none") policy = ReplicationPolicy::none;
  else if (text == "static") policy = ReplicationPolicy::fixed;
  else if (text == "iser") policy = ReplicationPolicy::iser;
  else return false;
  return true;
}

const char* to_string(BroadcastMethod method) {
  switch (method) {
    case BroadcastMethod::p2p: return "p2p";
    case BroadcastMethod::multicast: return "multicast";
    case BroadcastMethod::multiport: return "multiport";
    case BroadcastMethod::ring: return "ring";
  }
  return "?";
}

bool parse_broadcast_method(const std::string& text, BroadcastMethod& method) {
  if (text == "p2p") method = BroadcastMethod::p2p;
  else if (text == "multicast") method = BroadcastMethod::multicast;
  else if (text == "multiport") method = BroadcastMethod::multiport;
  else if (text == "ring") method = BroadcastMethod::ring;
  else return false;
  return true;
}

std::vector<FixedGroup> make_fixed_groups(uint32_t gpus, const std::vector<uint32_t>& sizes) {
  std::vector<FixedGroup> groups;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint32_t size = sizes[i];
    const std::string what = "fixed groups: size " + std::to_string(size) + " for " + std::to_string(gpus) + " GPUs";
    if (size < 2) throw std::invalid_argument(what + ": a group needs at least 2 GPUs");
    if (size > gpus) throw std::invalid_argument(what + ": larger than the GPUs");
    if (gpus % size != 0) throw std::invalid_argument(what + ": does not divide the GPUs");
    if (std::find(sizes.begin(), sizes.begin() + i, size) != sizes.begin() + i) {
      throw std::invalid_argument(what + ": given twice");
    }
    for (uint32_t first = 0; first < gpus; first += size) groups.push_back(FixedGroup{first, size});
  }
  return groups;
}

namespace {

void check_schedule_input(const ReplicationInput& input) {
  const std::string who = "replication schedule: ";
  if (input.gpus == 0) throw std::invalid_argument(who + "0 GPUs");
  if (input.experts == 0 || input.experts % input.gpus != 0) {
    throw std::invalid_argument(who + std::to_string(input.experts) + " experts do not spread evenly over " +
                                std::to_string(input.gpus) + " GPUs");
  }
  if (input.expert_loads.size() != input.experts) {
    throw std::invalid_argument(who + std::to_string(input.expert_loads.size()) + " expert loads for " +
                                std::to_string(input.experts) + " experts");
  }
  for (uint32_t e = 0; e < input.experts; ++e) {
    const double load = input.expert_loads[e];
    if (!std::isfinite(load) || load < 0.0) {
      throw std::invalid_argument(who + "expert " + std::to_string(e) + " has load " + std::to_string(load) +
                                  "; loads must be finite and >= 0");
    }
  }
  for (size_t g = 0; g < input.groups.size(); ++g) {
    const FixedGroup& group = input.groups[g];
    if (group.size == 0 || group.first_gpu >= input.gpus || group.size > input.gpus - group.first_gpu) {
      throw std::invalid_argument(who + "group " + std::to_string(g) + " (GPUs " + std::to_string(group.first_gpu) +
                                  " + " + std::to_string(group.size) + ") lies outside the " +
                                  std::to_string(input.gpus) + " GPUs");
    }
  }
  if (std::isnan(input.time_budget_ns)) throw std::invalid_argument(who + "the time budget is NaN");
  std::vector<bool> resident_expert(input.experts, false);
  for (const ReplicaPlacement& r : input.resident) {
    const std::string what = who + "resident replica of expert " + std::to_string(r.expert) + ": ";
    if (r.expert >= input.experts) throw std::invalid_argument(what + "no such expert");
    if (resident_expert[r.expert]) throw std::invalid_argument(what + "the expert is resident twice");
    resident_expert[r.expert] = true;
    if (r.group >= input.groups.size()) throw std::invalid_argument(what + "no group " + std::to_string(r.group));
    if (r.slot >= input.slots_per_gpu) throw std::invalid_argument(what + "no slot " + std::to_string(r.slot));
  }
}

// The scheduler's state between choices: GPU loads with every accepted split applied, which
// replica slots are taken, and how long each GPU is busy broadcasting.
class GreedyScheduler {
 public:
  explicit GreedyScheduler(const ReplicationInput& input)
      : in_(input),
        per_gpu_(input.experts / input.gpus),
        load_(input.gpus, 0.0),
        slot_taken_(input.gpus, std::vector<bool>(input.slots_per_gpu, false)),
        busy_ns_(input.gpus, 0.0),
        placed_(input.experts, false),
        resident_of_(input.experts, kNotResident),
        resident_holder_(input.gpus, std::vector<uint32_t>(input.slots_per_gpu, kNotResident)) {
    for (uint32_t e = 0; e < in_.experts; ++e) load_[e / per_gpu_] += in_.expert_loads[e];
    for (uint32_t r = 0; r < in_.resident.size(); ++r) {
      const ReplicaPlacement& kept = in_.resident[r];
      resident_of_[kept.expert] = r;
      for (uint32_t gpu : group_slot_holders(kept.expert / per_gpu_, kept.group)) {
        resident_holder_[gpu][kept.slot] = kept.expert;
      }
    }
  }

  ReplicationSchedule run() {
    ReplicationSchedule schedule;
    schedule.load_before = load_;
    std::vector<uint32_t> hottest_first(in_.experts);
    std::iota(hottest_first.begin(), hottest_first.end(), 0u);
    std::sort(hottest_first.begin(), hottest_first.end(), [&](uint32_t a, uint32_t b) {
      const double la = in_.expert_loads[a], lb = in_.expert_loads[b];
      return la != lb ? la > lb : a < b;
    });

    // Each step places the hottest expert whose best choice improves the peak, then starts again
    // from the hottest: a placement moves the max to another GPU, whose hot experts may have been
    // passed over before. Every expert is placed at most once, so this ends.
    while (true) {
      Scan scan;
      for (uint32_t expert : hottest_first) {
        if (placed_[expert]) continue;
        const std::optional<Choice> choice = best_choice(expert, scan);
        if (!choice) continue;
        place(expert, *choice, schedule);
        scan.placed = true;
        break;
      }
      if (!scan.placed) {
        schedule.stop_reason = stop_reason(scan);
        break;
      }
    }
    schedule.load_after = load_;
    schedule.estimated_broadcast_ns = estimated_ns_;
    return schedule;
  }

 private:
  // The greedy's objective: the max GPU load, then how many GPUs sit at it. Water-filling leaves
  // the owner and members level, often at the max, and one placement takes only its owner off the
  // max; so fewer GPUs at an unchanged max is progress too, else the greedy stalls at the first tie.
  struct Peak {
    double load = 0.0;
    uint32_t gpus = 0;
  };

  // Far below one token-expert pair, far above rounding: loads this close count as equal.
  static double tolerance(double max_load) { return 1e-9 * std::max(1.0, max_load); }

  static Peak peak_of(const std::vector<double>& loads, double tolerance_now) {
    Peak peak;
    peak.load = *std::max_element(loads.begin(), loads.end());
    for (double load : loads) peak.gpus += load >= peak.load - tolerance_now ? 1 : 0;
    return peak;
  }

  // Whether `a` is better than `b`: a clearly lower max, or one no higher with fewer GPUs at it.
  // Either way the max never rises.
  static bool better(const Peak& a, const Peak& b, double tolerance_now) {
    return a.load < b.load - tolerance_now || (a.load <= b.load && a.gpus < b.gpus);
  }

  struct Choice {
    uint32_t group = 0;
    uint32_t slot = 0;
    std::vector<uint32_t> copies;      // owner, then the group's members other than the owner
    std::vector<double> copy_loads;    // the copies' GPU loads after the split
    Peak peak;                         // over all GPUs after the split
    double copies_top = 0.0;           // the highest of copy_loads
    double estimated_ns = 0.0;         // the broadcast estimate with this broadcast added
    bool resident = false;             // keeps a resident replica: nothing to broadcast
  };

  // Whether choice `a` beats `b`: a better peak; at an equal peak (the max is often another GPU's),
  // the lower load its copies end at, i.e. the expert spread as far as helps: each expert is
  // placed once, and one squeezed into a small group becomes its GPUs' bottleneck later (zipf 0.6,
  // 32 GPUs, 256 experts, 8 slots: 98-100 % of the excess removed instead of 20-50 %). Then the
  // earlier group.
  // With ReplicationInput::prefer_resident a kept replica beats any broadcast (both lower the peak:
  // only such choices are compared).
  bool beats(const Choice& a, const Choice& b, double tolerance_now) const {
    if (in_.prefer_resident && a.resident != b.resident) return a.resident;
    if (better(a.peak, b.peak, tolerance_now)) return true;
    if (better(b.peak, a.peak, tolerance_now)) return false;
    if (a.copies_top < b.copies_top - tolerance_now) return true;
    return a.resident && !b.resident && a.copies_top <= b.copies_top + tolerance_now;
  }

  // What one scan over the experts found besides its placement: why better choices were refused.
  struct Scan {
    bool placed = false;
    bool slot_bound = false;    // a choice would improve the peak but its members share no free slot
    bool budget_bound = false;  // a choice would improve the peak but does not fit the budget
  };

  // The GPUs whose replica slot a placement takes: the replicas, and the owner when the broadcast
  // writes it too (ReplicationInput::owner_slot_in_group).
  std::vector<uint32_t> slot_holders(uint32_t owner, uint32_t group, const std::vector<uint32_t>& copies) const {
    std::vector<uint32_t> holders(copies.begin() + 1, copies.end());
    if (in_.owner_slot_in_group && in_.groups[group].contains(owner)) holders.push_back(owner);
    return holders;
  }

  // The same for a group, before the copies are known: its members, and the owner only as the
  // broadcast writes it.
  std::vector<uint32_t> group_slot_holders(uint32_t owner, uint32_t group) const {
    const FixedGroup& g = in_.groups[group];
    std::vector<uint32_t> holders;
    for (uint32_t gpu = g.first_gpu; gpu < g.first_gpu + g.size; ++gpu) {
      if (gpu != owner || in_.owner_slot_in_group) holders.push_back(gpu);
    }
    return holders;
  }

  // Whether a resident replica of an expert not yet placed holds `slot` on `gpu`: a new replica
  // leaves it alone while it can (that expert may be kept later in this scan).
  bool held_for_resident(uint32_t gpu, uint32_t slot) const {
    const uint32_t expert = resident_holder_[gpu][slot];
    return expert != kNotResident && !placed_[expert];
  }

  // The lowest replica slot free on every one of `members`, if any: first one that no resident
  // replica holds, then any (evicting one).
  std::optional<uint32_t> common_free_slot(const std::vector<uint32_t>& members) const {
    for (const bool evict : {false, true}) {
      for (uint32_t slot = 0; slot < in_.slots_per_gpu; ++slot) {
        const bool free_everywhere = std::all_of(members.begin(), members.end(), [&](uint32_t gpu) {
          return !slot_taken_[gpu][slot] && (evict || !held_for_resident(gpu, slot));
        });
        if (free_everywhere) return slot;
      }
    }
    return std::nullopt;
  }

  // The resident replica's slot if `expert` is resident on `group` and its slot is still free on
  // every holder.
  std::optional<uint32_t> resident_slot(uint32_t expert, uint32_t group, const std::vector<uint32_t>& holders) const {
    if (resident_of_[expert] == kNotResident) return std::nullopt;
    const ReplicaPlacement& kept = in_.resident[resident_of_[expert]];
    if (kept.group != group) return std::nullopt;
    const bool free_everywhere =
        std::all_of(holders.begin(), holders.end(), [&](uint32_t gpu) { return !slot_taken_[gpu][kept.slot]; });
    return free_everywhere ? std::optional<uint32_t>(kept.slot) : std::nullopt;
  }

  // The group that best spreads `expert` if it improves the peak and fits slots and budget;
  // otherwise nothing, noting in `scan` what refused a choice that would have improved it.
  std::optional<Choice> best_choice(uint32_t expert, Scan& scan) const {
    const uint32_t owner = expert / per_gpu_;
    const double tolerance_now = tolerance(*std::max_element(load_.begin(), load_.end()));
    const Peak current = peak_of(load_, tolerance_now);
    // Replicas only take load off the owner, so only an expert on a GPU at the max can improve
    // the peak.
    if (load_[owner] < current.load - tolerance_now) return std::nullopt;
    const double expert_load = in_.expert_loads[expert];

    std::optional<Choice> best;
    std::vector<double> loads_after;
    for (uint32_t g = 0; g < in_.groups.size(); ++g) {
      const FixedGroup& group = in_.groups[g];
      Choice choice;
      choice.group = g;
      choice.copies.push_back(owner);
      for (uint32_t gpu = group.first_gpu; gpu < group.first_gpu + group.size; ++gpu) {
        if (gpu != owner) choice.copies.push_back(gpu);
      }
      if (choice.copies.size() < 2) continue;

      std::vector<double> bases(choice.copies.size());
      for (size_t c = 0; c < bases.size(); ++c) bases[c] = load_[choice.copies[c]];
      bases[0] = std::max(0.0, bases[0] - expert_load);
      const std::vector<double> shares = detail::water_fill(bases, expert_load);
      choice.copy_loads.resize(bases.size());
      loads_after = load_;
      for (size_t c = 0; c < bases.size(); ++c) {
        choice.copy_loads[c] = bases[c] + shares[c];
        loads_after[choice.copies[c]] = choice.copy_loads[c];
      }
      choice.peak = peak_of(loads_after, tolerance_now);
      if (!better(choice.peak, current, tolerance_now)) continue;
      choice.copies_top = *std::max_element(choice.copy_loads.begin(), choice.copy_loads.end());
      const std::vector<uint32_t> holders = slot_holders(owner, choice.group, choice.copies);
      const std::optional<uint32_t> kept_slot = resident_slot(expert, choice.group, holders);
      choice.resident = kept_slot.has_value();
      if (best && !beats(choice, *best, tolerance_now)) continue;

      const std::optional<uint32_t> slot = kept_slot ? kept_slot : common_free_slot(holders);
      if (!slot) {
        scan.slot_bound = true;
        continue;
      }
      choice.slot = *slot;
      const double cost = choice.resident ? 0.0 : broadcast_cost(owner, group);
      choice.estimated_ns = estimated_ns_;
      for (uint32_t gpu : choice.copies) choice.estimated_ns = std::max(choice.estimated_ns, busy_ns_[gpu] + cost);
      if (choice.estimated_ns > in_.time_budget_ns) {
        scan.budget_bound = true;
        continue;
      }
      best = std::move(choice);
    }
    return best;
  }

  void place(uint32_t expert, const Choice& choice, ReplicationSchedule& schedule) {
    ReplicaPlacement placement;
    placement.expert = expert;
    placement.owner = choice.copies.front();
    placement.group = choice.group;
    placement.slot = choice.slot;
    placement.replica_gpus.assign(choice.copies.begin() + 1, choice.copies.end());
    placement.resident = choice.resident;
    const double cost = choice.resident ? 0.0 : broadcast_cost(placement.owner, in_.groups[choice.group]);
    for (size_t c = 0; c < choice.copies.size(); ++c) {
      load_[choice.copies[c]] = choice.copy_loads[c];
      busy_ns_[choice.copies[c]] += cost;
    }
    for (uint32_t gpu : slot_holders(placement.owner, choice.group, choice.copies)) slot_taken_[gpu][choice.slot] = true;
    estimated_ns_ = choice.estimated_ns;
    placed_[expert] = true;
    schedule.replicas.push_back(std::move(placement));
  }

  double broadcast_cost(uint32_t owner, const FixedGroup& group) const {
    return in_.broadcast_ns ? in_.broadcast_ns(owner, group) : 0.0;
  }

  std::string stop_reason(const Scan& scan) const {
    const bool any_slot_free = std::any_of(slot_taken_.begin(), slot_taken_.end(), [](const std::vector<bool>& slots) {
      return std::find(slots.begin(), slots.end(), false) != slots.end();
    });
    if (!any_slot_free) return "replica slots ran out";
    if (scan.budget_bound) return "broadcast budget reached";
    if (scan.slot_bound) return "no common free replica slot";
    return "no choice lowers the max load";
  }

  const ReplicationInput& in_;
  const uint32_t per_gpu_;
  std::vector<double> load_;
  std::vector<std::vector<bool>> slot_taken_;
  std::vector<double> busy_ns_;
  double estimated_ns_ = 0.0;
  std::vector<bool> placed_;
  static constexpr uint32_t kNotResident = 0xFFFFFFFFu;
  std::vector<uint32_t> resident_of_;                   // per expert: its index in in_.resident
  std::vector<std::vector<uint32_t>> resident_holder_;  // [gpu][slot]: the resident expert there
};

}  // namespace

ReplicationSchedule schedule_replicas(const ReplicationInput& input) {
  check_schedule_input(input);
  return GreedyScheduler(input).run();
}

double excess_load(const std::vector<double>& gpu_loads) {
  if (gpu_loads.empty()) return 0.0;
  const double mean = std::accumulate(gpu_loads.begin(), gpu_loads.end(), 0.0) / static_cast<double>(gpu_loads.size());
  double excess = 0.0;
  for (double load : gpu_loads) excess += std::max(0.0, load - mean);
  return excess;
}

double max_over_mean(const std::vector<double>& loads) {
  const double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  if (loads.empty() || total <= 0.0) return 0.0;
  return *std::max_element(loads.begin(), loads.end()) * static_cast<double>(loads.size()) / total;
}

}  // namespace nvsvp::fw
