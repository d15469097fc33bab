#include "nvsvp/model/switch_crossbar.hpp"

namespace nvsvp::model {

SwitchCrossbar::SwitchCrossbar(uint32_t outputs, uint32_t inputs, uint32_t requesters_per_input,
                               const std::string& arbiter, double speedup, bool turns_by_input,
                               uint32_t allocator_iterations)
    : outputs_(outputs), input_free_(inputs), requesters_per_input_(requesters_per_input), speedup_(speedup) {
  const bool matching = is_matching_allocator(arbiter);
  if (matching) {
    allocator_ = std::make_unique<MatchingAllocator>(matching_allocator_kind(arbiter), outputs, inputs,
                                                     requesters_per_input, allocator_iterations);
  }
  // A matching allocator's outputs keep a round robin for grant() (tests), which the chip does not call.
  for (Output& o : outputs_) {
    o.arbiter = make_arbiter(matching ? "round_robin" : arbiter, turns_by_input ? requesters_per_input : 1);
  }
}

}  // namespace nvsvp::model
