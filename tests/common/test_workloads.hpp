// Workloads the unit tests generate routings from, built one way: a model named "test" with
// `experts` experts at `top_k`, `tokens_per_gpu` tokens whose home is each GPU, and a routing of
// `kind` with `seed` (its other keys at their defaults, for the test to set).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::test {

inline platform::WorkloadSpec generated_workload(uint32_t experts, uint32_t top_k, uint32_t tokens_per_gpu,
                                                 const std::string& kind, uint64_t seed = 1) {
  platform::WorkloadSpec w;
  w.model.name = "test";
  w.model.experts = experts;
  w.model.top_k = top_k;
  w.top_k = top_k;
  w.tokens_per_gpu = tokens_per_gpu;
  w.routing.kind = kind;
  w.routing.seed = seed;
  w.routing.origin = "test:1";
  return w;
}

// The largest of `load` over its mean: 1 is perfectly balanced.
inline double max_over_mean(const std::vector<double>& load) {
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  return *std::max_element(load.begin(), load.end()) * static_cast<double>(load.size()) / total;
}

}  // namespace nvsvp::test
