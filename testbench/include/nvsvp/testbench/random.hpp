// A small, portable pseudo-random generator (xoshiro256** seeded by splitmix64). The standard
// library's distributions and std::shuffle differ between library versions; these do not, so a
// seed reproduces a run exactly wherever it is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvsvp::testbench {

// GCC's 128-bit integer, marked as an extension so that -Wpedantic accepts it.
__extension__ typedef unsigned __int128 Uint128;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& word : state_) word = splitmix64(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

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
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4];
};

}  // namespace nvsvp::testbench
