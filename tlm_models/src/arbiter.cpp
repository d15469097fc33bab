#include "nvsvp/model/arbiter.hpp"

#include <stdexcept>

namespace nvsvp::model {
namespace {

class RoundRobinArbiter : public Arbiter {
 public:
  explicit RoundRobinArbiter(uint32_t group) : Arbiter(true, true, group) {}
  size_t pick(const std::vector<ArbiterRequest>& requests) override {
    size_t chosen = 0;  // wrap around to the lowest id when nobody is after the last winner
    const int64_t after = rotation_after();
    for (size_t i = 0; i < requests.size(); ++i) {
      if (static_cast<int64_t>(requests[i].requester) > after) {
        chosen = i;
        break;
      }
    }
    granted(requests[chosen].requester);
    return chosen;
  }
};

class FixedPriorityArbiter : public Arbiter {
 public:
  FixedPriorityArbiter() : Arbiter(true, false, 1) {}
  size_t pick(const std::vector<ArbiterRequest>&) override { return 0; }
};

class OldestFirstArbiter : public Arbiter {
 public:
  explicit OldestFirstArbiter(uint32_t group) : Arbiter(false, false, 1), tie_break_(group) {}
  size_t pick(const std::vector<ArbiterRequest>& requests) override {
    uint64_t oldest = requests[0].ready_ps;
    for (const ArbiterRequest& r : requests) oldest = r.ready_ps < oldest ? r.ready_ps : oldest;
    std::vector<ArbiterRequest> tied;
    std::vector<size_t> index;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].ready_ps == oldest) {
        tied.push_back(requests[i]);
        index.push_back(i);
      }
    }
    return index[tie_break_.pick(tied)];
  }

 private:
  RoundRobinArbiter tie_break_;
};

}  // namespace

const std::vector<std::string>& arbiter_names() {
  static const std::vector<std::string> names{"round_robin", "fixed_priority", "oldest_first"};
  return names;
}

std::unique_ptr<Arbiter> make_arbiter(const std::string& name, uint32_t requesters_per_input) {
  if (name == "round_robin") return std::make_unique<RoundRobinArbiter>(requesters_per_input);
  if (name == "fixed_priority") return std::make_unique<FixedPriorityArbiter>();
  if (name == "oldest_first") return std::make_unique<OldestFirstArbiter>(requesters_per_input);
  std::string known;
  for (const std::string& n : arbiter_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown arbiter '" + name + "' (known: " + known + ")");
}

}  // namespace nvsvp::model
