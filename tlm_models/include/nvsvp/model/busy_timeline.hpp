// How busy something was over time, in fixed bins: a link direction records each message's
// serialization interval, and reports turn the bins into utilization time series (CSV) and trace
// counters. SystemC-free; times in picoseconds.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace nvsvp::model {

class BusyTimeline {
 public:
  explicit BusyTimeline(uint64_t bin_ps) : bin_ps_(bin_ps) {
    if (bin_ps == 0) throw std::invalid_argument("busy timeline: bins of 0 ps");
  }

  // [start_ps, end_ps) was busy; the interval is split over the bins it covers.
  void add(uint64_t start_ps, uint64_t end_ps) {
    if (end_ps <= start_ps) return;
    const uint64_t last_bin = (end_ps - 1) / bin_ps_;
    if (last_bin >= busy_ps_.size()) busy_ps_.resize(last_bin + 1, 0);
    for (uint64_t bin = start_ps / bin_ps_; bin <= last_bin; ++bin) {
      const uint64_t bin_start = bin * bin_ps_;
      const uint64_t from = start_ps > bin_start ? start_ps : bin_start;
      const uint64_t to = end_ps < bin_start + bin_ps_ ? end_ps : bin_start + bin_ps_;
      busy_ps_[bin] += to - from;
    }
  }

  uint64_t bin_ps() const { return bin_ps_; }
  // Busy picoseconds per bin, bin i covering [i * bin_ps, (i + 1) * bin_ps); as long as the last
  // busy bin.
  const std::vector<uint64_t>& busy_ps() const { return busy_ps_; }

 private:
  uint64_t bin_ps_;
  std::vector<uint64_t> busy_ps_;
};

}  // namespace nvsvp::model
