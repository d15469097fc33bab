// Internal to the communication library: how a load spreads over GPUs to level them, shared by
// hot-expert replication's scheduler (expert_replication.cpp) and its re-routing of tokens
// (token_rerouting.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace nvsvp::fw::detail {

// The shares of `load` that level GPUs whose loads without it are `bases`: the lowest are filled
// up to one common level, the ones already above it get nothing. Shares are >= 0 and sum to `load`.
inline std::vector<double> water_fill(const std::vector<double>& bases, double load) {
  const size_t n = bases.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bases[a] < bases[b]; });
  double filled_sum = 0.0;
  double level = 0.0;
  for (size_t filled = 0; filled < n; ++filled) {
    filled_sum += bases[order[filled]];
    level = (load + filled_sum) / static_cast<double>(filled + 1);
    if (filled + 1 == n || level <= bases[order[filled + 1]]) break;
  }
  std::vector<double> shares(n);
  for (size_t i = 0; i < n; ++i) shares[i] = std::max(0.0, level - bases[i]);
  return shares;
}

}  // namespace nvsvp::fw::detail
