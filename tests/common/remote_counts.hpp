// What a routing implies for a layer's traffic, counted from the routing alone (the tests'
// independent expectation): per token, D = the remote GPUs among its experts' GPUs (its home
// left out).
#pragma once

#include <cstdint>
#include <set>

#include "nvsvp/fw/moe_workload.hpp"

namespace nvsvp::test {

struct RemoteCounts {
  uint64_t sum_d = 0;               // D summed over tokens: token copies to remote GPUs
  uint64_t tokens_with_remote = 0;  // tokens with D > 0
  uint64_t remote_experts = 0;      // (token, expert) pairs whose expert is remote
};

inline RemoteCounts remote_counts(const fw::MoeRouting& routing) {
  RemoteCounts counts;
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    std::set<uint32_t> remote;
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      const uint32_t gpu = routing.gpu_of_expert(routing.experts_of(t)[k]);
      if (gpu == routing.home_of_token(t)) continue;
      remote.insert(gpu);
      ++counts.remote_experts;
    }
    counts.sum_d += remote.size();
    counts.tokens_with_remote += remote.empty() ? 0 : 1;
  }
  return counts;
}

}  // namespace nvsvp::test
