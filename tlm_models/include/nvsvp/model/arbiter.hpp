// Output arbiters, interchangeable and chosen by name (BookSim style). SystemC-free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nvsvp::model {

// One requester competing for an output: its id (input port * VCs + VC) and when its message
// became ready (for age-based policies).
struct ArbiterRequest {
  uint32_t requester;
  uint64_t ready_ps;
};

class Arbiter {
 public:
  virtual ~Arbiter() = default;
  // Picks one of `requests` (non-empty, sorted by requester id) and returns its index.
  virtual size_t pick(const std::vector<ArbiterRequest>& requests) = 0;

  // Arbiters whose choice is "the first eligible requester in a rotation" say where the rotation
  // starts: the first eligible id greater than `after` wins, wrapping to the lowest (every id is
  // greater than kFromLowest). A caller that scans in that order may stop at the first eligible
  // requester and report it with granted(); pick() would have chosen the same one.
  static constexpr int64_t kFromLowest = -1;
  virtual bool rotation_start(int64_t& after) const {
    (void)after;
    return false;
  }
  virtual void granted(uint32_t requester) { (void)requester; }
};

// "round_robin" (the winner gets lowest priority next), "fixed_priority" (lowest id wins),
// "oldest_first" (earliest ready wins, ties by round robin).
std::unique_ptr<Arbiter> make_arbiter(const std::string& name);
const std::vector<std::string>& arbiter_names();

}  // namespace nvsvp::model
