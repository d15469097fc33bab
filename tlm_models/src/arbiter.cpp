#include "nvsvp/model/arbiter.hpp"

#include <stdexcept>

namespace nvsvp::model {
namespace {

class RoundRobinArbiter : public Arbiter {
 public:
  size_t pick(const std::vector<ArbiterRequest>& requests) override {
    size_t chosen = 0;  // wrap around to the lowest id when nobody is after the last winner
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!has_winner_ || requests[i].requester > last_winner_) {
        chosen = i;
        break;
      }
    }
    granted(requests[chosen].requester);
    return chosen;
  }
  bool rotation_start(int64_t& after) const override {
    after = has_winner_ ? static_cast<int64_t>(last_winner_) : kFromLowest;
    return true;
  }
  void granted(uint32_t requester) override {
    last_winner_ = requester;
    has_winner_ = true;
  }

 private:
  uint32_t last_winner_ = 0;
  bool has_winner_ = false;
};

class FixedPriorityArbiter : public Arbiter {
 public:
  size_t pick(const std::vector<ArbiterRequest>&) override { return 0; }
  bool rotation_start(int64_t& after) const override {
    after = kFromLowest;
    return true;
  }
};

class OldestFirstArbiter : public Arbiter {
 public:
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

std::unique_ptr<Arbiter> make_arbiter(const std::string& name) {
  if (name == "round_robin") return std::make_unique<RoundRobinArbiter>();
  if (name == "fixed_priority") return std::make_unique<FixedPriorityArbiter>();
  if (name == "oldest_first") return std::make_unique<OldestFirstArbiter>();
  std::string known;
  for (const std::string& n : arbiter_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown arbiter '" + name + "' (known: " + known + ")");
}

}  // namespace nvsvp::model
