#include "nvsvp/model/switch_crossbar.hpp"

namespace nvsvp::model {

SwitchCrossbar::SwitchCrossbar(uint32_t outputs, uint32_t inputs, uint32_t requesters_per_input,
                               const std::string& arbiter, double speedup, bool turns_by_input)
    : outputs_(outputs), input_free_(inputs), requesters_per_input_(requesters_per_input), speedup_(speedup) {
  for (Output& o : outputs_) o.arbiter = make_arbiter(arbiter, turns_by_input ? requesters_per_input : 1);
}

}  // namespace nvsvp::model
