#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "nvsvp/model/wake_scheduler.hpp"

#include <algorithm>

#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

WakeScheduler::WakeScheduler(const char* name, uint32_t clients, Serve serve, std::function<void()> after_serving)
    : serve_(std::move(serve)), after_serving_(std::move(after_serving)), wake_ps_(clients, kNever), block_min_ps_((clients + kBlock - 1) / kBlock, kNever) {
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
  uint64_t& block_min = block_min_ps_[client / kBlock];
  if (t < block_min) block_min = t;
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
  // The arrays never change size, so their data pointers hold across the serve calls (the
  // compiler would otherwise reload them after every one).
  uint64_t* const wake_ps = wake_ps_.data();
  uint64_t* const block_min_ps = block_min_ps_.data();
  const auto clients = static_cast<uint32_t>(wake_ps_.size());
  const auto blocks = static_cast<uint32_t>(block_min_ps_.size());
  for (uint32_t block = 0; block < blocks; ++block) {
    if (block_min_ps[block] > now) {
      next = std::min(next, block_min_ps[block]);
      continue;
    }
    const uint32_t first = block * kBlock;
    const uint32_t last = std::min(first + kBlock, clients);
    // The block's minimum is taken afresh in the same pass: the clients not due give their wakes
    // here, and wake_at lowers it for every client re-armed while serving. It stays too low only
    // for a client re-armed to now or earlier and then served later in this pass; that request
    // made requested_while_serving_ at most as low, so `next` is exact, and the stale minimum
    // costs at most one extra scan of the block.
    block_min_ps[block] = kNever;
    uint64_t not_due_min = kNever;
    for (uint32_t client = first; client < last; ++client) {
      const uint64_t wake = wake_ps[client];
      if (wake > now) {
        not_due_min = std::min(not_due_min, wake);
        continue;
      }
      wake_ps[client] = kNever;
      serve_(client);
    }
    block_min_ps[block] = std::min(block_min_ps[block], not_due_min);
    next = std::min(next, block_min_ps[block]);
  }
  if (after_serving_) after_serving_();
  serving_ = false;
  next = std::min(next, requested_while_serving_);
  next_ps_ = next;
  if (next == kNever) return;
  event_.notify(next > now ? picoseconds(next - now) : sc_core::SC_ZERO_TIME);
}

}  // namespace nvsvp::model
