// Shared by the reduction arithmetic tests: deterministic operand generators that favour the
// interesting cases (near exponents for cancellation and ties, subnormals, specials, integer
// extremes), beat packing, and a tally that counts compared vectors and reports the first
// mismatches.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::reduction::test {

struct FloatFormat {
  int exponent_bits;
  int fraction_bits;
  std::uint32_t exponent_max() const { return (1u << exponent_bits) - 1u; }
  std::uint32_t fraction_mask() const { return (1u << fraction_bits) - 1u; }
  std::uint32_t sign_bit() const { return 1u << (exponent_bits + fraction_bits); }
  std::uint32_t exponent_of(std::uint32_t bits) const { return (bits >> fraction_bits) & exponent_max(); }
  std::uint32_t encode(std::uint32_t sign, std::uint32_t exponent, std::uint32_t fraction) const {
    return (sign ? sign_bit() : 0u) | (exponent << fraction_bits) | (fraction & fraction_mask());
  }
};

inline constexpr FloatFormat kF32Format{8, 23};
inline constexpr FloatFormat kF16Format{5, 10};
inline constexpr FloatFormat kBf16Format{8, 7};

inline FloatFormat format_of(ReduceType type) {
  return type == ReduceType::f16 ? kF16Format : type == ReduceType::bf16 ? kBf16Format : kF32Format;
}

inline bool is_float_type(ReduceType type) {
  return type == ReduceType::f32 || type == ReduceType::f16 || type == ReduceType::bf16;
}

// Lane width in bits of a type.
inline int lane_bits(ReduceType type) {
  switch (type) {
    case ReduceType::f16:
    case ReduceType::bf16:
      return 16;
    case ReduceType::s64:
    case ReduceType::u64:
      return 64;
    default:
      return 32;
  }
}

inline std::uint64_t get_lane(const Beat& beat, int width_bits, int lane) {
  std::uint64_t value = 0;
  const int bytes = width_bits / 8;
  for (int byte = bytes - 1; byte >= 0; --byte) value = (value << 8) | beat[lane * bytes + byte];
  return value;
}

inline void set_lane(Beat& beat, int width_bits, int lane, std::uint64_t value) {
  const int bytes = width_bits / 8;
  for (int byte = 0; byte < bytes; ++byte)
    beat[lane * bytes + byte] = static_cast<std::uint8_t>(value >> (8 * byte));
}

class OperandGenerator {
 public:
  explicit OperandGenerator(std::uint64_t seed) : rng_(seed) {}

  std::uint64_t next() { return rng_(); }
  std::uint32_t below(std::uint32_t bound) { return static_cast<std::uint32_t>(rng_() % bound); }

  // A float encoding of `format`. Half the draws sit close to `partner`'s exponent (and often
  // share or nearly share its fraction), to exercise cancellation, carries and rounding ties.
  std::uint32_t float_bits(FloatFormat format, std::uint32_t partner) {
    const std::uint32_t sign = below(2);
    const std::uint32_t fraction = static_cast<std::uint32_t>(rng_()) & format.fraction_mask();
    const std::uint32_t exponent_max = format.exponent_max();
    const std::uint32_t choice = below(32);
    if (choice < 8) {  // anything
      return static_cast<std::uint32_t>(rng_()) & (format.sign_bit() * 2u - 1u);
    }
    if (choice < 18) {  // near the partner
      std::uint32_t partner_exp = format.exponent_of(partner);
      if (partner_exp == exponent_max) partner_exp = 1u + below(exponent_max - 1u);
      const int spread = format.fraction_bits + 4;
      int exponent = static_cast<int>(partner_exp) + static_cast<int>(below(2 * spread + 1)) - spread;
      if (below(4) == 0) exponent = static_cast<int>(partner_exp);
      exponent = std::max(0, std::min(exponent, static_cast<int>(exponent_max) - 1));
      std::uint32_t near_fraction = fraction;
      const std::uint32_t how = below(4);
      if (how == 0) near_fraction = partner;
      if (how == 1) near_fraction = partner + below(5) - 2u;
      return format.encode(sign, static_cast<std::uint32_t>(exponent), near_fraction);
    }
    if (choice < 21) return format.encode(sign, 0, fraction >> below(format.fraction_bits));  // subnormal
    if (choice < 23) return format.encode(sign, 1u + below(3), fraction);  // near the subnormal edge
    if (choice < 25) return format.encode(sign, exponent_max - 1u - below(3), fraction);  // near overflow
    if (choice < 28) {  // few fraction bits: exact ties are frequent
      const std::uint32_t sparse =
          (1u << below(format.fraction_bits)) | (below(2) << below(format.fraction_bits));
      return format.encode(sign, below(exponent_max), sparse);
    }
    switch (below(10)) {  // specials
      case 0:
        return format.encode(sign, 0, 0);
      case 1:
        return format.encode(sign, exponent_max, 0);  // infinity
      case 2:
        return format.encode(sign, exponent_max, 1u << (format.fraction_bits - 1));  // quiet NaN
      case 3:
        return format.encode(sign, exponent_max, fraction | (1u << (format.fraction_bits - 1)));  // payload
      case 4:
        return format.encode(sign, exponent_max, (fraction >> 1) | 1u);  // signalling NaN
      case 5:
        return format.encode(sign, exponent_max - 1u, format.fraction_mask());  // largest finite
      case 6:
        return format.encode(sign, 1, 0);  // smallest normal
      case 7:
        return format.encode(sign, 0, 1);  // smallest subnormal
      case 8:
        return format.encode(sign, 0, format.fraction_mask());  // largest subnormal
      default:
        return format.encode(sign, exponent_max >> 1, 0);  // 1.0
    }
  }

  // A `width`-bit integer, with the signed and unsigned extremes mixed in.
  std::uint64_t int_bits(int width) {
    const std::uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1ull;
    const std::uint64_t sign = 1ull << (width - 1);
    switch (below(12)) {
      case 0:
        return 0;
      case 1:
        return mask;  // -1, unsigned maximum
      case 2:
        return sign;  // signed minimum
      case 3:
        return sign - 1;  // signed maximum
      case 4:
        return (sign + below(4)) & mask;
      case 5:
        return (sign - 1 - below(4)) & mask;
      case 6:
        return below(8);
      case 7:
        return (mask - below(8)) & mask;
      default:
        return rng_() & mask;
    }
  }

  // A beat of `type`; float lanes are steered by the same lane of `partner`.
  Beat beat(ReduceType type, const Beat& partner) {
    Beat out{};
    const int width = lane_bits(type);
    for (int lane = 0; lane < 16 * 8 / width; ++lane) {
      if (is_float_type(type)) {
        set_lane(out, width, lane,
                 float_bits(format_of(type), static_cast<std::uint32_t>(get_lane(partner, width, lane))));
      } else {
        set_lane(out, width, lane, int_bits(width));
      }
    }
    return out;
  }
  Beat beat(ReduceType type) { return beat(type, beat_of_random_bits()); }

  Beat beat_of_random_bits() {
    Beat out{};
    for (auto& byte : out) byte = static_cast<std::uint8_t>(rng_());
    return out;
  }

 private:
  std::mt19937_64 rng_;
};

// A format's special and boundary values, both signs.
inline std::vector<std::uint32_t> directed_values(FloatFormat format) {
  const std::uint32_t top = format.exponent_max();
  const std::uint32_t frac_top = format.fraction_mask();
  const std::uint32_t one_exp = top >> 1;
  const std::uint32_t quiet = 1u << (format.fraction_bits - 1);
  std::vector<std::uint32_t> magnitudes{
      format.encode(0, 0, 0),  // zero
      format.encode(0, 0, 1),  // smallest subnormal
      format.encode(0, 0, 2),
      format.encode(0, 0, quiet),     // mid subnormal
      format.encode(0, 0, frac_top),  // largest subnormal
      format.encode(0, 1, 0),         // smallest normal
      format.encode(0, 1, 1),
      format.encode(0, one_exp, 0),                             // 1
      format.encode(0, one_exp, 1),                             // 1 + ulp
      format.encode(0, one_exp, quiet),                         // 1.5
      format.encode(0, one_exp + 1, 0),                         // 2
      format.encode(0, one_exp - format.fraction_bits - 1, 0),  // half an ulp of 1
      format.encode(0, one_exp - format.fraction_bits - 1, 1),  // just above that
      format.encode(0, top - 1, frac_top),                      // largest finite
      format.encode(0, top - 1, frac_top - 1),
      format.encode(0, top - 1 - format.fraction_bits - 1, 0),  // half an ulp of the largest
      format.encode(0, top, 0),                                 // infinity
      format.encode(0, top, quiet),                             // quiet NaN
      format.encode(0, top, quiet | 5u),                        // quiet NaN with payload
      format.encode(0, top, 1),                                 // signalling NaN
  };
  std::vector<std::uint32_t> values;
  for (std::uint32_t m : magnitudes) {
    values.push_back(m);
    values.push_back(m | format.sign_bit());
  }
  return values;
}

// Integer extremes of a `width`-bit lane, for directed pairs.
inline std::vector<std::uint64_t> directed_int_values(int width) {
  const std::uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1ull;
  const std::uint64_t sign = 1ull << (width - 1);
  return {0,
          1,
          2,
          mask,
          mask - 1,
          sign,
          sign + 1,
          sign - 1,
          sign - 2,
          0x5555555555555555ull & mask,
          0xAAAAAAAAAAAAAAAAull & mask};
}

// Counts compared vectors, reports the first few mismatches in full and fails on any.
class Tally {
 public:
  explicit Tally(std::string what) : what_(std::move(what)) {}
  ~Tally() {
    EXPECT_EQ(failed_, 0u) << what_ << ": " << failed_ << " of " << compared_ << " vectors differ";
    EXPECT_GT(compared_, 0u) << what_ << ": nothing compared";
    std::cout << "[ vectors  ] " << what_ << ": " << compared_ << " compared, " << failed_ << " differ\n";
  }
  template <typename Describe>
  void record(bool equal, Describe&& describe) {
    ++compared_;
    if (!equal && ++failed_ <= 8) ADD_FAILURE() << what_ << ": " << describe();
  }
  std::uint64_t compared() const { return compared_; }

 private:
  std::string what_;
  std::uint64_t compared_ = 0;
  std::uint64_t failed_ = 0;
};

inline std::string hex(std::uint64_t value, int digits) {
  static const char* const digit_chars = "0123456789abcdef";
  std::string text(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, value >>= 4) text[static_cast<size_t>(i)] = digit_chars[value & 0xF];
  return "0x" + text;
}

inline std::string hex(const Beat& beat) {
  std::string text;
  for (int word = 3; word >= 0; --word) text += hex(get_lane(beat, 32, word), 8).substr(word == 3 ? 0 : 2);
  return text;
}

}  // namespace nvsvp::reduction::test
