// One crossbar of a switch chip; the chip has two, one for requests and one for responses, so
// that the two classes never block each other inside the chip. Per output: the head messages of
// the input VCs that ask for it and the arbiter that grants one of them (switch allocation,
// output-first: an output decides when its link frees). Per input: its transfer slot, since an
// input feeds one output at a time through this crossbar, at link rate x `crossbar_speedup`.
//
// A plain class the chip calls directly: requests, grants and transfers are per message, so they
// are inline and the eligibility test is a template argument, not a callback.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "nvsvp/model/arbiter.hpp"
#include "nvsvp/model/matching_allocator.hpp"
#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

// A head message asking for an output: what arbitration needs.
struct CrossbarRequest {
  uint32_t requester;  // input * vcs + vc
  uint32_t wire_flits;
  sc_core::sc_time ready_at;
};

class SwitchCrossbar {
 public:
  // `requesters_per_input`: the VCs of one class per input (a requester id is input * that + vc).
  // `turns_by_input`: a round robin takes turns by input, not by input VC (the packet fabric).
  // `arbiter` "islip" or "wavefront": the free outputs are matched together (match()), with
  // `allocator_iterations` rounds for islip.
  SwitchCrossbar(uint32_t outputs, uint32_t inputs, uint32_t requesters_per_input, const std::string& arbiter,
                 double speedup, bool turns_by_input = false, uint32_t allocator_iterations = 1);

  // Whether the outputs are matched together (a matching allocator) rather than each granting
  // on its own (grant()).
  bool matches() const { return allocator_ != nullptr; }
  // The matching allocator's decision over `requests` (eligible now), one grant per matched
  // output; the granted requests are not withdrawn (forwarding does that).
  void match(const std::vector<MatchRequest>& requests, std::vector<MatchRequest>& grants) {
    allocator_->match(requests, grants);
  }

  bool has_requests(uint16_t output) const { return !outputs_[output].requests.empty(); }
  // Sorted by requester id.
  const std::vector<CrossbarRequest>& requests(uint16_t output) const { return outputs_[output].requests; }
  void request(uint16_t output, const CrossbarRequest& request) {
    std::vector<CrossbarRequest>& requests = outputs_[output].requests;
    auto by_requester = [](const CrossbarRequest& a, const CrossbarRequest& b) { return a.requester < b.requester; };
    requests.insert(std::upper_bound(requests.begin(), requests.end(), request, by_requester), request);
  }
  // Every request goes (the chip lost what asked).
  void clear_requests() {
    for (auto& output : outputs_) output.requests.clear();
  }
  // The granted head leaves its VC: its request goes.
  void withdraw(uint16_t output, uint32_t requester) {
    std::vector<CrossbarRequest>& requests = outputs_[output].requests;
    requests.erase(std::lower_bound(requests.begin(), requests.end(), requester,
                                    [](const CrossbarRequest& r, uint32_t id) { return r.requester < id; }));
  }

  // When the request's head may cross: it has arrived and its input's transfer slot is free.
  const sc_core::sc_time& ready_at(const CrossbarRequest& request) const {
    const sc_core::sc_time& input_free = input_free_[request.requester / requesters_per_input_];
    return request.ready_at > input_free ? request.ready_at : input_free;
  }
  // `input` sends a message of `serialization` on the output link now: its slot is taken for
  // that time over the speedup.
  void transfer(uint32_t input, const sc_core::sc_time& serialization) {
    input_free_[input] = current_time() + serialization / speedup_;
  }

  // The grant decision of `output`: the requester id of the winner among the requests that
  // `eligible(const CrossbarRequest&)` accepts, or -1 if none is; the arbiter hears of the
  // winner. An arbiter whose choice is the first eligible requester of a rotation
  // (Arbiter::rotation_start) is served by scanning in that order and stopping at the first
  // eligible request (`eligible` is then asked only up to it); any other asks `eligible` of every
  // request and lets pick() choose. The two must agree (test_switch_crossbar_arbitration.cpp).
  template <class Eligible>
  int64_t grant(uint16_t output, Eligible&& eligible) {
    Output& o = outputs_[output];
    int64_t after = Arbiter::kFromLowest;
    if (o.arbiter->rotation_start(after)) return scan_rotation(o, after, eligible);
    return pick_among_eligible(o, eligible);
  }
  // The same decision by pick() over all eligible requests, whatever the arbiter (tests).
  template <class Eligible>
  int64_t grant_by_pick(uint16_t output, Eligible&& eligible) {
    return pick_among_eligible(outputs_[output], eligible);
  }
  const Arbiter& arbiter(uint16_t output) const { return *outputs_[output].arbiter; }

 private:
  struct Output {
    std::vector<CrossbarRequest> requests;  // sorted by requester
    std::unique_ptr<Arbiter> arbiter;
  };

  template <class Eligible>
  static int64_t scan_rotation(Output& o, int64_t after, Eligible& eligible) {
    const std::vector<CrossbarRequest>& requests = o.requests;
    const auto start = static_cast<size_t>(
        std::upper_bound(requests.begin(), requests.end(), after,
                         [](int64_t a, const CrossbarRequest& r) { return a < static_cast<int64_t>(r.requester); }) -
        requests.begin());
    for (size_t k = 0; k < requests.size(); ++k) {
      const CrossbarRequest& r = requests[(start + k) % requests.size()];
      if (eligible(r)) {
        o.arbiter->granted(r.requester);
        return r.requester;
      }
    }
    return -1;
  }
  template <class Eligible>
  int64_t pick_among_eligible(Output& o, Eligible& eligible) {
    eligible_.clear();
    for (const CrossbarRequest& r : o.requests) {
      if (eligible(r)) eligible_.push_back(ArbiterRequest{r.requester, r.ready_at.value()});
    }
    if (eligible_.empty()) return -1;
    return eligible_[o.arbiter->pick(eligible_)].requester;
  }

  std::vector<Output> outputs_;
  std::unique_ptr<MatchingAllocator> allocator_;  // null: each output's arbiter grants on its own
  std::vector<sc_core::sc_time> input_free_;  // [input]: when its transfer slot frees
  uint32_t requesters_per_input_;
  double speedup_;
  std::vector<ArbiterRequest> eligible_;  // scratch, reused per arbitration
};

}  // namespace nvsvp::model
