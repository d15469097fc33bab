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
  // requester and report it with granted(); pick() would have chosen the same one
  // (SwitchCrossbar::grant does; tests/unit/test_switch_crossbar_arbitration.cpp compares them).
  static constexpr int64_t kFromLowest = -1;
  // Not virtual (asked on every arbitration of every output): answered from state the policy
  // sets up through the constructor and that granted() moves.
  bool rotation_start(int64_t& after) const {
    after = rotation_after_;
    return rotates_;
  }
  // A rotation over groups of `group` consecutive ids (an input's VCs) restarts after the winner's
  // group: the inputs take turns, whatever VCs their packets hold.
  void granted(uint32_t requester) {
    if (rotation_follows_winner_) rotation_after_ = group_ <= 1 ? requester : (requester / group_ + 1) * group_ - 1;
  }

 protected:
  // `rotates`: the choice is the first eligible requester in a rotation; `follows_winner`: the
  // rotation restarts after each winner (round robin) rather than from the lowest id; `group`:
  // ids per rotation step (1: every requester its own turn).
  Arbiter(bool rotates, bool follows_winner, uint32_t group)
      : rotates_(rotates), rotation_follows_winner_(follows_winner), group_(group) {}
  int64_t rotation_after() const { return rotation_after_; }

 private:
  int64_t rotation_after_ = kFromLowest;
  bool rotates_;
  bool rotation_follows_winner_;
  uint32_t group_;
};

// "round_robin" (the winner gets lowest priority next), "fixed_priority" (lowest id wins),
// "oldest_first" (earliest ready wins, ties by round robin). `requesters_per_input` > 1: a round
// robin takes turns by input (groups of that many ids), not by requester.
std::unique_ptr<Arbiter> make_arbiter(const std::string& name, uint32_t requesters_per_input = 1);
const std::vector<std::string>& arbiter_names();

}  // namespace nvsvp::model
