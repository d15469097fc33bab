// The values a layer carries, chosen so that every check is exact: token elements and expert
// outputs are small integers in bf16, so sums of up to 64 of them are exact in any order.
// Only the first kLanes elements of each vector are real data (GpuParams::functional_bytes).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

namespace nvsvp::fw {

inline constexpr int kLanes = 8;  // 8 x bf16 = the 16 functional bytes of a vector
using Lanes = std::array<float, kLanes>;

inline uint16_t to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);  // exact for the small integers used here
}

inline float from_bf16(uint16_t half) {
  const uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline void pack_lanes(const Lanes& lanes, uint8_t* out) {
  for (int i = 0; i < kLanes; ++i) {
    const uint16_t h = to_bf16(lanes[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}

inline Lanes unpack_lanes(const uint8_t* in) {
  Lanes lanes;
  for (int i = 0; i < kLanes; ++i) {
    uint16_t h;
    std::memcpy(&h, in + 2 * i, 2);
    lanes[i] = from_bf16(h);
  }
  return lanes;
}

// Element `lane` of token `token`'s hidden vector: an integer in [-2, 2].
inline float token_value(uint64_t token, int lane) {
  const uint64_t h = (token * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(lane) * 0xBF58476D1CE4E5B9ull);
  return static_cast<float>(static_cast<int>((h >> 29) % 5) - 2);
}

inline Lanes token_lanes(uint64_t token) {
  Lanes lanes;
  for (int i = 0; i < kLanes; ++i) lanes[i] = token_value(token, i);
  return lanes;
}

// Expert `expert`'s output for input x, gate weight folded in: x * a + b with a in {-1, 0, 1}
// and b in {-1, 0, 1}, so |output| <= 3 and any partial sum of up to 85 outputs stays an integer
// within +-256, which bf16 holds exactly.
inline Lanes expert_output(uint32_t expert, const Lanes& x) {
  const float a = static_cast<float>(static_cast<int>(expert % 3) - 1);
  const float b = static_cast<float>(static_cast<int>((expert / 3) % 3) - 1);
  Lanes y;
  for (int i = 0; i < kLanes; ++i) y[i] = x[i] * a + b;
  return y;
}

// The sum of several experts' outputs for one input: x * sum(a) + sum(b), the same values as
// adding expert_output() over them (small integers, exact in any order) at 8 operations a lane
// pair instead of 2 per expert.
class ExpertSum {
 public:
  void add(uint32_t expert) {
    a_ += static_cast<float>(static_cast<int>(expert % 3) - 1);
    b_ += static_cast<float>(static_cast<int>((expert / 3) % 3) - 1);
  }
  Lanes of(const Lanes& x) const {
    Lanes y;
    for (int i = 0; i < kLanes; ++i) y[i] = x[i] * a_ + b_;
    return y;
  }

 private:
  float a_ = 0.0f;
  float b_ = 0.0f;
};

}  // namespace nvsvp::fw
