#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "nvsvp/model/wake_scheduler.hpp"

#include <algorithm>

#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

WakeScheduler::WakeScheduler(const char* name, uint32_t clients, Serve serve)
    : serve_(std::move(serve)), wake_ps_(clients, kNever) {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.dont_initialize();
  options.set_sensitivity(&event_);
  sc_core::sc_spawn([this] { run(); }, name, &options);
}

void WakeScheduler::wake_at(uint32_t client, const sc_core::sc_time& at) {
  const uint64_t t = at.value();
  if (t >= wake_ps_[client]) return;
  wake_ps_[client] = t;
  if (serving_) {
    requested_while_serving_ = std::min(requested_while_serving_, t);
  } else if (t < next_ps_) {
    next_ps_ = t;
    const uint64_t now = current_time().value();
    event_.notify(t > now ? picoseconds(t - now) : sc_core::SC_ZERO_TIME);
  }
}

void WakeScheduler::run() {
  const uint64_t now = current_time().value();
  // One pass: serve the due clients, and find the earliest time among the others. Requests made
  // while serving (to any client, served or not) are folded in afterwards.
  serving_ = true;
  requested_while_serving_ = kNever;
  uint64_t next = kNever;
  for (uint32_t client = 0; client < wake_ps_.size(); ++client) {
    const uint64_t t = wake_ps_[client];
    if (t > now) {
      next = std::min(next, t);
      continue;
    }
    wake_ps_[client] = kNever;
    serve_(client);
  }
  serving_ = false;
  next = std::min(next, requested_while_serving_);
  next_ps_ = next;
  if (next == kNever) return;
  event_.notify(next > now ? picoseconds(next - now) : sc_core::SC_ZERO_TIME);
}

}  // namespace nvsvp::model
