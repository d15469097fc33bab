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
};

// "round_robin" (the winner gets lowest priority next), "fixed_priority" (lowest id wins),
// "oldest_first" (earliest ready wins, ties by round robin).
std::unique_ptr<Arbiter> make_arbiter(const std::string& name);
const std::vector<std::string>& arbiter_names();

}  // namespace nvsvp::model
