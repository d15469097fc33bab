// When something was active, as disjoint intervals: a GPU's links (both directions) record each
// message's serialization interval, and the report intersects them with the GPU's compute spans
// (the time breakdown: communication alone, compute alone, both). Intervals may come out of order
// (each link serializes from now or later), but none starts before the time it is added at, so an
// interval ending before that time is final: only the few that end later stay open to merging.
// SystemC-free; times in picoseconds.
#pragma once

#include <cstdint>
#include <vector>

namespace nvsvp::model {

struct ActiveInterval {
  uint64_t start_ps;
  uint64_t end_ps;
};

class ActivityIntervals {
 public:
  // [start_ps, end_ps) was active, added at `now_ps` <= start_ps.
  void add(uint64_t now_ps, uint64_t start_ps, uint64_t end_ps) {
    if (end_ps <= start_ps) return;
    // Open intervals are disjoint and sorted, so those ending before now are a prefix.
    size_t closed = 0;
    while (closed < open_.size() && open_[closed].end_ps < now_ps) ++closed;
    if (closed > 0) {
      final_.insert(final_.end(), open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(closed));
      open_.erase(open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(closed));
    }
    // Usually the new interval extends the last open one (a link busy back to back).
    size_t i = open_.size();
    while (i > 0 && open_[i - 1].start_ps > end_ps) --i;  // open_[i..] start after it
    ActiveInterval merged{start_ps, end_ps};
    size_t first = i;
    while (first > 0 && open_[first - 1].end_ps >= start_ps) {
      --first;
      if (open_[first].start_ps < merged.start_ps) merged.start_ps = open_[first].start_ps;
      if (open_[first].end_ps > merged.end_ps) merged.end_ps = open_[first].end_ps;
    }
    if (first == i) {
      open_.insert(open_.begin() + static_cast<std::ptrdiff_t>(i), merged);
    } else {
      open_[first] = merged;
      open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(first + 1), open_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  // Every active interval, disjoint and in time order.
  std::vector<ActiveInterval> intervals() const {
    std::vector<ActiveInterval> all = final_;
    all.insert(all.end(), open_.begin(), open_.end());
    return all;
  }

 private:
  std::vector<ActiveInterval> final_;  // end before any interval still to come starts
  std::vector<ActiveInterval> open_;
};

}  // namespace nvsvp::model
