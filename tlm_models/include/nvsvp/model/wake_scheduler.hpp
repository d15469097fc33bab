// One SystemC method process that serves many clients of a component (the links of a GPU, the
// outputs of a switch chip): each client asks to be served at a time, and the process wakes at
// the earliest time any client asked for and serves every client that is due, in client order.
//
// Why not one process per client: the kernel's timed-event queue then holds one entry per busy
// link in the whole machine (and stale ones), and every event costs a heap operation through
// scattered memory. Here the kernel sees one entry per component; the per-client times sit in one
// small contiguous array.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <systemc>

namespace nvsvp::model {

class WakeScheduler {
 public:
  using Serve = std::function<void(uint32_t client)>;

  // Spawns the process (call during elaboration). `after_serving`, if set, runs once after each
  // pass over the due clients (a component that decides for its due clients together).
  WakeScheduler(const char* name, uint32_t clients, Serve serve, std::function<void()> after_serving = {});
  WakeScheduler(const WakeScheduler&) = delete;
  WakeScheduler& operator=(const WakeScheduler&) = delete;

  // Serve `client` at `at` (absolute), or earlier if it already asked for earlier.
  void wake_at(uint32_t client, const sc_core::sc_time& at);

 private:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  void run();

  // Clients in blocks of kBlock: a run skips a block whose earliest wake is later than now, so a
  // chip with 64 outputs compares 8 block minima and the clients of the due blocks, not 64 times.
  static constexpr uint32_t kBlock = 8;

  Serve serve_;
  std::function<void()> after_serving_;
  std::vector<uint64_t> wake_ps_;       // [client]
  std::vector<uint64_t> block_min_ps_;  // [client / kBlock]: at most the block's earliest wake
  uint64_t next_ps_ = kNever;      // the time the event is notified for
  bool serving_ = false;
  uint64_t requested_while_serving_ = kNever;
  sc_core::sc_event event_;
};

}  // namespace nvsvp::model
