#include "nvsvp/platform/step_parts.hpp"

namespace nvsvp::platform {

StepParts& StepParts::operator+=(const StepParts& other) {
  attention_us += other.attention_us;
  dense_us += other.dense_us;
  moe_compute_us += other.moe_compute_us;
  exposed_comm_us += other.exposed_comm_us;
  return *this;
}

StepParts StepParts::scaled(double factor) const {
  return {attention_us * factor, dense_us * factor, moe_compute_us * factor, exposed_comm_us * factor};
}

}  // namespace nvsvp::platform
