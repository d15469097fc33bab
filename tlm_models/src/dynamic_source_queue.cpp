// The source SM's queue of pending dynamic multimem operations (dynamic_source_queue.hpp).
#include "nvsvp/model/dynamic_source_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nvsvp::model {

DynamicSourceQueue::DynamicSourceQueue(const DynamicSourceQueueParams& params) : params_(params) {
  if (params.entries == 0) throw std::invalid_argument("dynamic source queue: 0 entries");
  if (!(params.target_list_read_ns >= 0)) {
    throw std::invalid_argument("dynamic source queue: target-list read time " +
                                std::to_string(params.target_list_read_ns) + " ns");
  }
  issue_ns_.resize(params.entries);
}

QueuedOperation DynamicSourceQueue::admit(double arrival_ns, double not_before_ns) {
  if (statistics_.operations > 0 && arrival_ns < last_arrival_ns_) {
    throw std::invalid_argument("dynamic source queue: operation arrives at " +
                                std::to_string(arrival_ns) + " ns, before the previous one at " +
                                std::to_string(last_arrival_ns_) + " ns (program order)");
  }
  QueuedOperation op;
  op.arrival_ns = arrival_ns;
  // Program order: an operation cannot take an entry before the one ahead of it did.
  op.enter_ns = std::max(arrival_ns, last_enter_ns_);
  // Entries whose operation has issued by then are free again (an entry freed at t serves an
  // operation entering at t).
  const auto free_issued = [&] {
    while (count_ > 0 && issue_ns_[head_] <= op.enter_ns) {
      head_ = (head_ + 1) % params_.entries;
      --count_;
    }
  };
  free_issued();
  if (count_ == params_.entries) {
    // Full: wait for the oldest to issue (issue times are in order, so it frees first; others
    // issuing at the same time free with it).
    op.enter_ns = issue_ns_[head_];
    free_issued();
  }
  op.issue_ns = std::max({op.enter_ns + params_.target_list_read_ns, last_issue_ns_, not_before_ns});
  issue_ns_[(head_ + count_) % params_.entries] = op.issue_ns;
  ++count_;

  last_arrival_ns_ = arrival_ns;
  last_enter_ns_ = op.enter_ns;
  last_issue_ns_ = op.issue_ns;
  ++statistics_.operations;
  const double stall = op.stall_ns();
  if (stall > 0) {
    ++statistics_.stalls;
    statistics_.stall_ns += stall;
    statistics_.max_stall_ns = std::max(statistics_.max_stall_ns, stall);
  }
  statistics_.peak_occupancy = std::max(statistics_.peak_occupancy, count_);
  return op;
}

}  // namespace nvsvp::model
