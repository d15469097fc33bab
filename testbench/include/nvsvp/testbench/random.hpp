// The testbench's random draws, on the project's portable generator (hw::Xoshiro256). The
// standard library's distributions and std::shuffle differ between library versions; these do
// not, so a seed reproduces a run exactly wherever it is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "nvsvp/hw/xoshiro256.hpp"

namespace nvsvp::testbench {

// GCC's 128-bit integer, marked as an extension so that -Wpedantic accepts it.
__extension__ typedef unsigned __int128 Uint128;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : core_(seed) {}

  std::uint64_t next() { return core_.next(); }

  // Uniform in [0, bound); bound > 0. The multiply-shift bias (< bound / 2^64) does not matter here.
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<Uint128>(next()) * bound) >> 64);
  }
  // Uniform in [low, high].
  std::uint64_t between(std::uint64_t low, std::uint64_t high) { return low + below(high - low + 1); }
  // True with probability p.
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
  bool coin() { return (next() >> 63) != 0; }

  // Index drawn with the given (non-negative, not all zero) weights.
  template <std::size_t N>
  std::size_t weighted(const std::uint32_t (&weights)[N]) {
    std::uint64_t total = 0;
    for (const std::uint32_t w : weights) total += w;
    std::uint64_t pick = below(total);
    for (std::size_t i = 0; i < N; ++i) {
      if (pick < weights[i]) return i;
      pick -= weights[i];
    }
    return N - 1;
  }

  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[below(i)]);
  }

 private:
  hw::Xoshiro256 core_;
};

}  // namespace nvsvp::testbench
