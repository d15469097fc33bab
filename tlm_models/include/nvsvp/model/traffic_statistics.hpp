// The statistics a switch architect reads off a run, kept as counters the models bump per
// message: a latency histogram (log-linear bins), and the occupancy of a buffer over time
// (time-weighted mean, maximum, and optionally per time bin). SystemC-free; times in picoseconds.
// Nothing here allocates per sample: a histogram grows only when a sample needs a higher bin.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace nvsvp::model {

// A distribution of non-negative integer samples (picoseconds) in log-linear bins: values below
// kSubBins have a bin each (exact); above, every power of two [2^e, 2^(e+1)) is split into
// kSubBins equal bins, so a bin is at most 1/kSubBins of its lower edge wide (1.6 %). Count, sum,
// minimum and maximum are exact.
class LatencyHistogram {
 public:
  static constexpr uint32_t kSubBinBits = 6;
  static constexpr uint64_t kSubBins = 1ull << kSubBinBits;

  static size_t bin_of(uint64_t value) {
    if (value < kSubBins) return static_cast<size_t>(value);
    const uint32_t exponent = 63u - static_cast<uint32_t>(__builtin_clzll(value));  // >= kSubBinBits
    const uint32_t shift = exponent - kSubBinBits;
    const uint64_t mantissa = (value >> shift) - kSubBins;  // 0 .. kSubBins - 1
    return static_cast<size_t>((shift + 1) * kSubBins + mantissa);
  }
  // The values bin `bin` holds: [bin_start(bin), bin_end(bin)).
  static uint64_t bin_start(size_t bin) {
    if (bin < kSubBins) return bin;
    const uint64_t shift = bin / kSubBins - 1;
    return (kSubBins + bin % kSubBins) << shift;
  }
  static uint64_t bin_end(size_t bin) {
    if (bin < kSubBins) return bin + 1;
    const uint64_t shift = bin / kSubBins - 1;
    return bin_start(bin) + (1ull << shift);
  }

  void record(uint64_t value) {
    const size_t bin = bin_of(value);
    if (bin >= bins_.size()) bins_.resize(bin + 1, 0);
    ++bins_[bin];
    ++count_;
    sum_ += value;
    if (value > max_) max_ = value;
    if (value < min_) min_ = value;
  }
  void merge(const LatencyHistogram& other) {
    if (other.bins_.size() > bins_.size()) bins_.resize(other.bins_.size(), 0);
    for (size_t b = 0; b < other.bins_.size(); ++b) bins_[b] += other.bins_[b];
    count_ += other.count_;
    sum_ += other.sum_;
    max_ = std::max(max_, other.max_);
    min_ = std::min(min_, other.min_);
  }

  uint64_t count() const { return count_; }
  uint64_t sum() const { return sum_; }
  uint64_t max() const { return max_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_); }
  // Samples per bin; index with bin_start/bin_end.
  const std::vector<uint64_t>& bins() const { return bins_; }

  // The q-quantile (0 < q <= 1) by nearest rank: the last value of the bin that holds the
  // ceil(q * count)-th smallest sample, clamped to [min, max]. It is never below the true
  // quantile and at most one bin width above it; 0 without samples.
  uint64_t percentile(double q) const {
    if (count_ == 0) return 0;
    if (!(q > 0.0 && q <= 1.0)) throw std::invalid_argument("percentile: q must be in (0, 1]");
    auto rank = static_cast<uint64_t>(q * static_cast<double>(count_));
    if (static_cast<double>(rank) < q * static_cast<double>(count_)) ++rank;
    rank = std::max<uint64_t>(rank, 1);
    uint64_t seen = 0;
    for (size_t b = 0; b < bins_.size(); ++b) {
      seen += bins_[b];
      if (seen >= rank) return std::clamp(bin_end(b) - 1, min(), max_);
    }
    return max_;
  }

 private:
  std::vector<uint64_t> bins_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
  uint64_t min_ = UINT64_MAX;
};

// How much a buffer held over time: its level (flits, bytes) changes at instants; the integral of
// the level over time gives the time-weighted mean. Changes must come in time order.
class OccupancyStatistics {
 public:
  void change(uint64_t now_ps, int64_t delta) {
    area_ += level_ * (now_ps - since_ps_);
    since_ps_ = now_ps;
    level_ = static_cast<uint64_t>(static_cast<int64_t>(level_) + delta);
    if (level_ > max_) max_ = level_;
  }
  uint64_t level() const { return level_; }
  uint64_t max() const { return max_; }
  // Level x picoseconds from time 0 up to `until_ps` (not before the last change).
  uint64_t area_until(uint64_t until_ps) const {
    return area_ + (until_ps > since_ps_ ? level_ * (until_ps - since_ps_) : 0);
  }
  // The time-weighted mean over [from_ps, until_ps), when nothing was held before from_ps.
  double mean(uint64_t from_ps, uint64_t until_ps) const {
    return until_ps > from_ps ? static_cast<double>(area_until(until_ps)) / static_cast<double>(until_ps - from_ps)
                              : 0.0;
  }

 private:
  uint64_t level_ = 0;
  uint64_t max_ = 0;
  uint64_t since_ps_ = 0;
  uint64_t area_ = 0;  // level x ps
};

// A buffer's level per time bin: the time-weighted mean and the maximum of each bin, for the
// occupancy time series. Changes must come in time order. The bin being filled is kept in members,
// so that a change within it costs what an OccupancyStatistics change does (no division).
class OccupancyTimeline {
 public:
  explicit OccupancyTimeline(uint64_t bin_ps) : bin_ps_(bin_ps), bin_end_ps_(bin_ps) {
    if (bin_ps == 0) throw std::invalid_argument("occupancy timeline: bins of 0 ps");
  }
  void change(uint64_t now_ps, int64_t delta) {
    if (now_ps >= bin_end_ps_) close_bins_before(now_ps);
    area_ += level_ * (now_ps - since_ps_);
    since_ps_ = now_ps;
    level_ = static_cast<uint64_t>(static_cast<int64_t>(level_) + delta);
    if (level_ > max_) max_ = level_;
  }
  uint64_t bin_ps() const { return bin_ps_; }
  // Bin `bin`'s time-weighted mean and maximum, the level since the last change held up to
  // `until_ps` (the end of the layer; not before the last change).
  double mean(size_t bin, uint64_t until_ps) const {
    if (bin < areas_.size()) return static_cast<double>(areas_[bin]) / static_cast<double>(bin_ps_);
    const uint64_t held = held_in(bin, until_ps);
    const uint64_t area = (bin == areas_.size() ? area_ : 0) + level_ * held;
    return static_cast<double>(area) / static_cast<double>(bin_ps_);
  }
  uint64_t max(size_t bin, uint64_t until_ps) const {
    if (bin < maxima_.size()) return maxima_[bin];
    if (bin == maxima_.size()) return max_;
    return held_in(bin, until_ps) > 0 ? level_ : 0;
  }

 private:
  // Picoseconds of bin `bin` (the current one or later) in [since_ps_, until_ps).
  uint64_t held_in(size_t bin, uint64_t until_ps) const {
    const uint64_t from = std::max<uint64_t>(since_ps_, bin * bin_ps_);
    const uint64_t to = std::min<uint64_t>(until_ps, (bin + 1) * bin_ps_);
    return to > from ? to - from : 0;
  }
  // Closes the current bin and every bin before the one holding `now_ps`, which becomes current.
  void close_bins_before(uint64_t now_ps) {
    areas_.push_back(area_ + level_ * (bin_end_ps_ - since_ps_));
    maxima_.push_back(max_);
    const uint64_t current = now_ps / bin_ps_;
    while (areas_.size() < current) {  // whole bins at the level
      areas_.push_back(level_ * bin_ps_);
      maxima_.push_back(level_);
    }
    since_ps_ = current * bin_ps_;
    bin_end_ps_ = since_ps_ + bin_ps_;
    area_ = 0;
    max_ = level_;
  }

  uint64_t bin_ps_;
  uint64_t bin_end_ps_;  // of the current bin, whose index is areas_.size()
  uint64_t level_ = 0;
  uint64_t since_ps_ = 0;
  uint64_t area_ = 0;  // level x ps in the current bin so far
  uint64_t max_ = 0;   // in the current bin so far
  std::vector<uint64_t> areas_;   // closed bins
  std::vector<uint64_t> maxima_;  // closed bins
};

}  // namespace nvsvp::model
