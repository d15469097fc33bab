// The source SM's queue of pending dynamic multimem operations
// (docs/background/dynamic_multimem.md#the-instructions): a dymultimem.st / ld_reduce takes an
// entry while its target list (expert IDs, usually in shared memory) is read, and leaves the queue
// when it issues to the network. With all entries taken, the SM stalls until the oldest one issues.
// SystemC-free: the GPU model asks it for times (docs/models/dynamic_multimem.md).
//
// Operations are admitted in program order (non-decreasing arrival times) and issue in order, so
// operation i needs the entry that operation i - entries frees when it issues:
//   enter_i = max(arrival_i, enter_{i-1}, issue_{i-entries})
//   issue_i = max(enter_i + target_list_read_ns, issue_{i-1}, not_before_i)
#pragma once

#include <cstdint>
#include <vector>

#include "nvsvp/hw/params.hpp"

namespace nvsvp::model {

struct DynamicSourceQueueParams {
  uint32_t entries = 32;            // the study's queue
  double target_list_read_ns = 20;  // assumed: one shared-memory read (~30 cycles at ~1.7 GHz)

};

// The times of one operation.
struct QueuedOperation {
  double arrival_ns = 0;  // the SM presents it
  double enter_ns = 0;    // it holds an entry (later than arrival when the queue was full)
  double issue_ns = 0;    // its target list is read: it leaves the queue for the network
  double stall_ns() const { return enter_ns - arrival_ns; }
};

struct DynamicSourceQueueStatistics {
  uint64_t operations = 0;
  uint64_t stalls = 0;        // operations that found every entry taken
  double stall_ns = 0;        // summed over the operations
  double max_stall_ns = 0;
  uint32_t peak_occupancy = 0;
};

class DynamicSourceQueue {
 public:
  explicit DynamicSourceQueue(const DynamicSourceQueueParams& params = {});

  // Admits the next operation, which the SM presents at `arrival_ns` (not earlier than the
  // previous one: throws std::invalid_argument otherwise) and which may not leave before
  // `not_before_ns` (e.g. when its link engine can take it; 0: as soon as its list is read).
  QueuedOperation admit(double arrival_ns, double not_before_ns = 0);

  // Entries held just after the last operation entered.
  uint32_t occupancy() const { return count_; }
  const DynamicSourceQueueStatistics& statistics() const { return statistics_; }
  const DynamicSourceQueueParams& params() const { return params_; }

 private:
  DynamicSourceQueueParams params_;
  std::vector<double> issue_ns_;  // ring of the held entries' issue times, oldest at head_
  uint32_t head_ = 0;
  uint32_t count_ = 0;
  double last_arrival_ns_ = 0;
  double last_enter_ns_ = 0;
  double last_issue_ns_ = 0;
  DynamicSourceQueueStatistics statistics_;
};

}  // namespace nvsvp::model
