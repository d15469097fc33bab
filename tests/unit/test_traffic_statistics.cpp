// The statistics' building blocks: the latency histogram's bins (exact below 64 ps, then 64 per
// power of two), its percentiles against a sorted list of the same samples, and the occupancy
// integrals (time-weighted mean, maximum, per time bin).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "nvsvp/hw/xoshiro256.hpp"
#include "nvsvp/model/traffic_statistics.hpp"

namespace nvsvp::model {
namespace {

TEST(LatencyHistogram, BinsAreExactBelow64AndThen64PerPowerOfTwo) {
  using H = LatencyHistogram;
  for (uint64_t v = 0; v < 64; ++v) {
    EXPECT_EQ(H::bin_of(v), v);
    EXPECT_EQ(H::bin_start(v), v);
    EXPECT_EQ(H::bin_end(v), v + 1);
  }
  // [64, 128) keeps 1 ps bins; [128, 256) 2 ps bins; 235 ns = 235000 ps lies in [131072, 262144),
  // whose bins are 2048 ps wide.
  EXPECT_EQ(H::bin_of(64), 64u);
  EXPECT_EQ(H::bin_of(127), 127u);
  EXPECT_EQ(H::bin_of(128), 128u);
  EXPECT_EQ(H::bin_of(129), 128u);
  EXPECT_EQ(H::bin_start(H::bin_of(235000)), 233472u);
  EXPECT_EQ(H::bin_end(H::bin_of(235000)), 235520u);
  // Every value lies in its bin, bins tile the line without gaps, a bin is at most 1/64 of its
  // start wide.
  for (uint64_t v : {uint64_t{64}, uint64_t{1000}, uint64_t{65535}, uint64_t{1} << 40, (uint64_t{1} << 40) + 12345,
                     UINT64_MAX / 3}) {
    const size_t b = H::bin_of(v);
    EXPECT_LE(H::bin_start(b), v);
    EXPECT_LT(v, H::bin_end(b));
    EXPECT_EQ(H::bin_start(b + 1), H::bin_end(b));
    EXPECT_LE(H::bin_end(b) - H::bin_start(b), std::max<uint64_t>(1, H::bin_start(b) / 64));
  }
}

// Percentiles by nearest rank from the bins: never below the true one, at most one bin above it.
TEST(LatencyHistogram, PercentilesBoundTheExactOnesWithinOneBin) {
  hw::Xoshiro256 random(7);
  LatencyHistogram h;
  std::vector<uint64_t> samples;
  for (int i = 0; i < 5000; ++i) {
    // Spread over five decades, as latencies from ~100 ns to ~10 ms in picoseconds.
    const double exponent = 5.0 + 5.0 * static_cast<double>(random.next() >> 11) / 9007199254740992.0;
    const auto v = static_cast<uint64_t>(std::pow(10.0, exponent));
    samples.push_back(v);
    h.record(v);
  }
  std::sort(samples.begin(), samples.end());
  EXPECT_EQ(h.count(), samples.size());
  EXPECT_EQ(h.max(), samples.back());
  EXPECT_EQ(h.min(), samples.front());
  for (const double q : {0.01, 0.5, 0.9, 0.99, 0.999}) {
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(samples.size())));
    const uint64_t exact = samples[rank - 1];
    const uint64_t estimate = h.percentile(q);
    EXPECT_GE(estimate, exact) << "q " << q;
    EXPECT_LE(estimate, exact + exact / 64) << "q " << q;
  }
  EXPECT_EQ(h.percentile(1.0), samples.back());
  EXPECT_THROW(h.percentile(0.0), std::invalid_argument);
  EXPECT_THROW(h.percentile(1.5), std::invalid_argument);
}

TEST(LatencyHistogram, SmallCaseAndMerge) {
  LatencyHistogram a, b;
  EXPECT_EQ(a.percentile(0.5), 0u);  // no samples
  for (uint64_t v : {10, 20, 30}) a.record(v);
  for (uint64_t v : {40, 50}) b.record(v);
  EXPECT_EQ(a.percentile(0.5), 20u);  // below 64 ps every value has its own bin: exact
  a.merge(b);
  EXPECT_EQ(a.count(), 5u);
  EXPECT_EQ(a.sum(), 150u);
  EXPECT_DOUBLE_EQ(a.mean(), 30.0);
  EXPECT_EQ(a.percentile(0.5), 30u);
  EXPECT_EQ(a.percentile(0.9), 50u);
  EXPECT_EQ(a.min(), 10u);
  EXPECT_EQ(a.max(), 50u);
}

TEST(OccupancyStatistics, TimeWeightedMeanAndMaximum) {
  OccupancyStatistics o;
  o.change(100, 4);   // 4 over [100, 300)
  o.change(300, 6);   // 10 over [300, 350)
  o.change(350, -10); // 0 from 350
  EXPECT_EQ(o.level(), 0u);
  EXPECT_EQ(o.max(), 10u);
  EXPECT_EQ(o.area_until(1000), 4u * 200 + 10u * 50);
  EXPECT_DOUBLE_EQ(o.mean(0, 1000), 1.3);
  o.change(1000, 2);  // still held at the end: counted up to it
  EXPECT_EQ(o.area_until(1100), 4u * 200 + 10u * 50 + 2u * 100);
}

TEST(OccupancyTimeline, MeanAndMaximumPerBin) {
  OccupancyTimeline t(100);
  t.change(50, 8);    // bin 0: 8 over [50, 100)
  t.change(120, -8);  // bin 1: 8 over [100, 120)
  t.change(130, 3);   // 3 from 130 on, up to the end at 250
  EXPECT_DOUBLE_EQ(t.mean(0, 250), 4.0);
  EXPECT_EQ(t.max(0, 250), 8u);
  EXPECT_DOUBLE_EQ(t.mean(1, 250), (8.0 * 20 + 3 * 70) / 100);
  EXPECT_EQ(t.max(1, 250), 8u);
  EXPECT_DOUBLE_EQ(t.mean(2, 250), 3.0 * 50 / 100);
  EXPECT_EQ(t.max(2, 250), 3u);
  EXPECT_DOUBLE_EQ(t.mean(3, 250), 0.0);
  EXPECT_EQ(t.max(3, 250), 0u);
  EXPECT_THROW(OccupancyTimeline(0), std::invalid_argument);
}

}  // namespace
}  // namespace nvsvp::model
