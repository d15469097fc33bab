#include "nvsvp/model/matching_allocator.hpp"

#include <algorithm>
#include <stdexcept>

namespace nvsvp::model {

MatchingAllocator::MatchingAllocator(Kind kind, uint32_t outputs, uint32_t inputs, uint32_t group, uint32_t iterations)
    : kind_(kind),
      group_(group == 0 ? 1 : group),
      iterations_(iterations == 0 ? 1 : iterations),
      size_(std::max(outputs, inputs)),
      // Every rotation starts at the lowest: "after" the last index.
      grant_after_(outputs, inputs - 1),
      accept_after_(inputs, outputs - 1),
      output_match_(outputs, -1),
      input_match_(inputs, -1),
      granted_requester_(outputs, -1),
      grants_to_input_(inputs) {}

void MatchingAllocator::match(const std::vector<MatchRequest>& requests, std::vector<MatchRequest>& grants) {
  grants.clear();
  if (requests.empty()) return;
  if (kind_ == Kind::islip) {
    match_islip(requests, grants);
  } else {
    match_wavefront(requests, grants);
  }
}

// iSLIP (McKeown 1999): each unmatched output grants the first requesting unmatched input after
// its pointer; each input accepts the first granting output after its pointer; the pointers move
// past the accepted partner, and in the first iteration only (so that they desynchronise).
void MatchingAllocator::match_islip(const std::vector<MatchRequest>& requests, std::vector<MatchRequest>& grants) {
  const auto inputs = static_cast<uint32_t>(input_match_.size());
  const auto outputs = static_cast<uint32_t>(output_match_.size());
  for (const MatchRequest& r : requests) {
    output_match_[r.output] = -1;
    input_match_[r.requester / group_] = -1;
  }
  for (uint32_t iteration = 0; iteration < iterations_; ++iteration) {
    // Grant: per output, the requester whose input comes first after the output's pointer (the
    // lowest VC of that input).
    std::vector<uint16_t> granting;
    for (const MatchRequest& r : requests) {
      const uint32_t input = r.requester / group_;
      if (output_match_[r.output] >= 0 || input_match_[input] >= 0) continue;
      int64_t& chosen = granted_requester_[r.output];
      if (chosen < 0) {
        granting.push_back(r.output);
        chosen = r.requester;
        continue;
      }
      const uint32_t rank = (input + inputs - 1 - grant_after_[r.output]) % inputs;
      const uint32_t chosen_rank =
          (static_cast<uint32_t>(chosen) / group_ + inputs - 1 - grant_after_[r.output]) % inputs;
      if (rank < chosen_rank) chosen = r.requester;
    }
    if (granting.empty()) break;
    for (uint16_t output : granting) grants_to_input_[granted_requester_[output] / group_].push_back(output);
    // Accept: per input, the granting output first after the input's pointer.
    for (uint16_t output : granting) {
      const uint32_t input = static_cast<uint32_t>(granted_requester_[output]) / group_;
      std::vector<uint32_t>& offers = grants_to_input_[input];
      if (offers.empty()) continue;  // already decided
      uint32_t best = offers[0];
      for (uint32_t o : offers) {
        if ((o + outputs - 1 - accept_after_[input]) % outputs < (best + outputs - 1 - accept_after_[input]) % outputs) {
          best = o;
        }
      }
      offers.clear();
      input_match_[input] = best;
      output_match_[best] = granted_requester_[best];
      grants.push_back(MatchRequest{static_cast<uint16_t>(best), static_cast<uint32_t>(granted_requester_[best])});
      if (iteration == 0) {
        accept_after_[input] = best;
        grant_after_[best] = input;
      }
    }
    for (uint16_t output : granting) granted_requester_[output] = -1;
  }
}

// Wavefront (Tamir and Chi 1993): the request matrix's diagonals in turn from the priority
// diagonal, a cell granted when its row and column are still free; cells of one diagonal never
// share a row or a column, so the order within one does not matter. The priority diagonal moves
// by one per decision. The result is a maximal matching.
void MatchingAllocator::match_wavefront(const std::vector<MatchRequest>& requests, std::vector<MatchRequest>& grants) {
  ordered_ = requests;
  for (const MatchRequest& r : requests) {
    output_match_[r.output] = -1;
    input_match_[r.requester / group_] = -1;
  }
  const uint32_t size = size_;
  const uint32_t diagonal = diagonal_;
  const uint32_t group = group_;
  auto rank = [size, diagonal, group](const MatchRequest& r) {
    return ((r.requester / group + r.output) % size + size - diagonal) % size;
  };
  // By rank, then requester: the lowest VC of an input first.
  std::stable_sort(ordered_.begin(), ordered_.end(), [&rank](const MatchRequest& a, const MatchRequest& b) {
    const uint32_t ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a.requester < b.requester;
  });
  for (const MatchRequest& r : ordered_) {
    const uint32_t input = r.requester / group_;
    if (output_match_[r.output] >= 0 || input_match_[input] >= 0) continue;
    output_match_[r.output] = r.requester;
    input_match_[input] = r.output;
    grants.push_back(r);
  }
  diagonal_ = (diagonal_ + 1) % size_;
}

const std::vector<std::string>& matching_allocator_names() {
  static const std::vector<std::string> names{"islip", "wavefront"};
  return names;
}

bool is_matching_allocator(const std::string& arbiter) {
  const std::vector<std::string>& names = matching_allocator_names();
  return std::find(names.begin(), names.end(), arbiter) != names.end();
}

MatchingAllocator::Kind matching_allocator_kind(const std::string& arbiter) {
  if (arbiter == "islip") return MatchingAllocator::Kind::islip;
  if (arbiter == "wavefront") return MatchingAllocator::Kind::wavefront;
  throw std::invalid_argument("not a matching allocator: '" + arbiter + "'");
}

}  // namespace nvsvp::model
