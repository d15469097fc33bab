// Mirrors rtl/reduce_alu.sv step by step (same operand order, same guard bits, same special-case
// priority), so that the two agree bit for bit; tests/reduction/test_reduce_alu_rtl.cpp checks it.
#include "nvsvp/reduction/reduce_alu.hpp"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <limits>

namespace nvsvp::reduction {
namespace {

// The host's float add is IEEE 754 binary32 (x86-64: SSE addss, no excess precision) unless the
// compiler is told to bend the rules; then every add takes the integer path.
#if defined(__FAST_MATH__) || FLT_EVAL_METHOD != 0
constexpr bool kHostAddIsIeee = false;
#else
constexpr bool kHostAddIsIeee = std::numeric_limits<float>::is_iec559;
#endif

constexpr std::uint32_t kSignBit = 0x80000000u;
constexpr std::uint32_t kMagnitudeMask = 0x7FFFFFFFu;
constexpr std::uint32_t kFractionMask = 0x007FFFFFu;
constexpr std::uint32_t kInfinityF32 = 0x7F800000u;

std::uint32_t exponent_field(std::uint32_t single) { return (single >> 23) & 0xFFu; }

bool is_nan_f32(std::uint32_t single) { return (single & kMagnitudeMask) > kInfinityF32; }

bool is_inf_f32(std::uint32_t single) { return (single & kMagnitudeMask) == kInfinityF32; }

std::uint32_t canonical_f32(std::uint32_t single) { return is_nan_f32(single) ? kCanonicalNanF32 : single; }

// Normal and finite: exponent field 1..254.
bool is_normal_f32(std::uint32_t single) { return exponent_field(single) - 1u < 0xFEu; }

bool is_zero_f32(std::uint32_t single) { return (single << 1) == 0; }

bool is_subnormal_f32(std::uint32_t single) { return (single & kMagnitudeMask) - 1u < kFractionMask; }

std::uint32_t host_f32_add(std::uint32_t a, std::uint32_t b) {
  float x;
  float y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  const float sum = x + y;
  std::uint32_t bits;
  std::memcpy(&bits, &sum, sizeof bits);
  return bits;
}

// Whether `sum`, the host's a + b, is f32_add's result (see the header): no operand subnormal,
// and the sum normal or exactly zero. A normal or zero sum implies finite operands (infinities
// and NaNs only give infinities and NaNs), and a zero sum of operands of equal magnitude is
// exact (x + -x, or two zeros). Bitwise, not short-circuit, so that loops vectorise.
bool host_sum_is_exact(std::uint32_t a, std::uint32_t b, std::uint32_t sum) {
  const bool exactly_zero = is_zero_f32(sum) & is_zero_f32(a ^ b);
  return !is_subnormal_f32(a) & !is_subnormal_f32(b) & (is_normal_f32(sum) | exactly_zero);
}

// Leading zeros of a 27-bit value (27 when it is zero).
int leading_zeros27(std::uint32_t value) {
  for (int bit = 26; bit >= 0; --bit) {
    if ((value >> bit) & 1u) return 26 - bit;
  }
  return 27;
}

// Order key: unsigned comparison of keys is the numeric order of non-NaN floats, -0 < +0.
std::uint32_t order_key(std::uint32_t single) { return (single & kSignBit) ? ~single : (single | kSignBit); }

std::uint32_t f32_min_max(std::uint32_t x, std::uint32_t y, bool want_max) {
  const bool x_is_nan = is_nan_f32(x);
  const bool y_is_nan = is_nan_f32(y);
  if (x_is_nan && y_is_nan) return kCanonicalNanF32;
  if (x_is_nan) return y;
  if (y_is_nan) return x;
  return ((order_key(x) < order_key(y)) != want_max) ? x : y;
}

// A beat's lanes as host integers, and back. Beats are little-endian: on a little-endian host
// these are plain copies, which the compiler turns into vector loads and stores.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr bool kHostIsLittleEndian = true;
#else
constexpr bool kHostIsLittleEndian = false;
#endif

template <typename Lane, std::size_t lanes>
void load_lanes(const Beat& beat, Lane (&values)[lanes]) {
  static_assert(sizeof values == sizeof(Beat));
  if (kHostIsLittleEndian) {
    std::memcpy(values, beat.data(), sizeof values);
    return;
  }
  for (std::size_t lane = 0; lane < lanes; ++lane) {
    Lane value = 0;
    for (std::size_t byte = sizeof(Lane); byte-- > 0;) value = static_cast<Lane>((value << 8) | beat[lane * sizeof(Lane) + byte]);
    values[lane] = value;
  }
}

template <typename Lane, std::size_t lanes>
void store_lanes(const Lane (&values)[lanes], Beat& beat) {
  static_assert(sizeof values == sizeof(Beat));
  if (kHostIsLittleEndian) {
    std::memcpy(beat.data(), values, sizeof values);
    return;
  }
  for (std::size_t lane = 0; lane < lanes; ++lane) {
    for (std::size_t byte = 0; byte < sizeof(Lane); ++byte)
      beat[lane * sizeof(Lane) + byte] = static_cast<std::uint8_t>(values[lane] >> (8 * byte));
  }
}

std::uint64_t acc_dword(const Accumulator& acc, int lane) {
  return acc[2 * lane] | (static_cast<std::uint64_t>(acc[2 * lane + 1]) << 32);
}

bool is_float(ReduceType type) {
  return type == ReduceType::f32 || type == ReduceType::f16 || type == ReduceType::bf16;
}

bool is_signed(ReduceType type) { return type == ReduceType::s32 || type == ReduceType::s64; }

template <typename Unsigned, typename Signed>
Unsigned combine_int_lane(ReduceOp op, bool signed_compare, Unsigned x, Unsigned y) {
  const bool below = signed_compare ? static_cast<Signed>(x) < static_cast<Signed>(y) : x < y;
  switch (op) {
    case ReduceOp::add:
      return static_cast<Unsigned>(x + y);  // unsigned: wraps
    case ReduceOp::min:
      return below ? x : y;
    case ReduceOp::max:
      return below ? y : x;
    case ReduceOp::bit_and:
      return x & y;
    case ReduceOp::bit_or:
      return x | y;
    case ReduceOp::bit_xor:
      return x ^ y;
  }
  return 0;
}

// The float lanes of a beat as f32, as widen() accumulates them: 4 lanes for f32, 8 for f16 and
// bf16. The type is looked at once, not per lane, so each loop is straight code.
void float_operands(ReduceType type, const Beat& operand, std::uint32_t* out) {
  switch (type) {
    case ReduceType::f16: {
      std::uint16_t halves[8];
      load_lanes(operand, halves);
      for (int lane = 0; lane < 8; ++lane) out[lane] = f16_to_f32(halves[lane]);
      return;
    }
    case ReduceType::bf16: {
      std::uint16_t halves[8];
      load_lanes(operand, halves);
      for (int lane = 0; lane < 8; ++lane) out[lane] = bf16_to_f32(halves[lane]);
      return;
    }
    default: {
      std::uint32_t words[4];
      load_lanes(operand, words);
      for (int lane = 0; lane < 4; ++lane) out[lane] = canonical_f32(words[lane]);
      return;
    }
  }
}

// f32_add on every lane. The host's add is tried on the whole beat first, in branch-free loops
// that the compiler vectorises; a beat with any lane outside the fast path's range (see f32_add)
// takes f32_add lane by lane, which gives the same bits for the other lanes.
template <int lanes>
void add_float_lanes(const Accumulator& acc, const std::uint32_t* operand, Accumulator& out) {
  if (kHostAddIsIeee) {
    float x[lanes];
    float y[lanes];
    float host_sums[lanes];
    std::memcpy(x, acc.data(), sizeof x);
    std::memcpy(y, operand, sizeof y);
    for (int lane = 0; lane < lanes; ++lane) host_sums[lane] = x[lane] + y[lane];
    std::uint32_t sums[lanes];
    std::memcpy(sums, host_sums, sizeof sums);
    std::uint32_t all_exact = 1;
    for (int lane = 0; lane < lanes; ++lane) all_exact &= host_sum_is_exact(acc[lane], operand[lane], sums[lane]);
    if (all_exact) {
      std::memcpy(out.data(), sums, sizeof sums);
      return;
    }
  }
  for (int lane = 0; lane < lanes; ++lane) out[lane] = f32_add(acc[lane], operand[lane]);
}

template <int lanes>
void combine_float_lanes(ReduceOp op, const Accumulator& acc, const std::uint32_t* operand, Accumulator& out) {
  switch (op) {
    case ReduceOp::min:
      for (int lane = 0; lane < lanes; ++lane) out[lane] = f32_min_max(acc[lane], operand[lane], false);
      return;
    case ReduceOp::max:
      for (int lane = 0; lane < lanes; ++lane) out[lane] = f32_min_max(acc[lane], operand[lane], true);
      return;
    default:
      add_float_lanes<lanes>(acc, operand, out);  // add; bitwise ops on floats are rejected by the unit
      return;
  }
}

}  // namespace

std::uint32_t f32_add(std::uint32_t a, std::uint32_t b) {
  if (kHostAddIsIeee) {
    const std::uint32_t sum = host_f32_add(a, b);
    if (host_sum_is_exact(a, b, sum)) return sum;
  }
  return f32_add_integer(a, b);
}

std::uint32_t f32_add_integer(std::uint32_t a, std::uint32_t b) {
  if (is_nan_f32(a) || is_nan_f32(b) || (is_inf_f32(a) && is_inf_f32(b) && ((a ^ b) & kSignBit))) {
    return kCanonicalNanF32;
  }
  if (is_inf_f32(a)) return a;
  if (is_inf_f32(b)) return b;

  // Larger magnitude first: the difference is never negative, the sign is the larger's.
  const bool a_is_larger = (a & kMagnitudeMask) >= (b & kMagnitudeMask);
  const std::uint32_t larger = a_is_larger ? a : b;
  const std::uint32_t smaller = a_is_larger ? b : a;

  // A subnormal has no hidden bit and exponent 1. Significands carry guard, round, sticky bits.
  const std::uint32_t larger_exp = exponent_field(larger) ? exponent_field(larger) : 1u;
  const std::uint32_t smaller_exp = exponent_field(smaller) ? exponent_field(smaller) : 1u;
  const std::uint32_t larger_sig =
      (((exponent_field(larger) != 0 ? 1u : 0u) << 23) | (larger & kFractionMask)) << 3;
  const std::uint32_t smaller_sig =
      (((exponent_field(smaller) != 0 ? 1u : 0u) << 23) | (smaller & kFractionMask)) << 3;

  const std::uint32_t align_shift = std::min(larger_exp - smaller_exp, 27u);
  const std::uint32_t lost_mask = ~(0x7FFFFFFu << align_shift) & 0x7FFFFFFu;
  const std::uint32_t smaller_aligned =
      (smaller_sig >> align_shift) | ((smaller_sig & lost_mask) != 0 ? 1u : 0u);

  const bool subtract = ((a ^ b) & kSignBit) != 0;
  const std::uint32_t raw_sum = subtract ? larger_sig - smaller_aligned : larger_sig + smaller_aligned;
  if (raw_sum == 0) return a & b & kSignBit;  // x + (-x) = +0, -0 + -0 = -0

  std::uint32_t norm_sig = 0;
  std::uint32_t norm_exp = 0;
  if (raw_sum & (1u << 27)) {
    norm_sig = (raw_sum >> 1) | (raw_sum & 1u);
    norm_exp = larger_exp + 1;
  } else {
    // Stop at the minimum exponent: below it the result is subnormal.
    const std::uint32_t left_shift =
        std::min(static_cast<std::uint32_t>(leading_zeros27(raw_sum)), larger_exp - 1);
    norm_sig = (raw_sum << left_shift) & 0x7FFFFFFu;
    norm_exp = larger_exp - left_shift;
  }
  const std::uint32_t sign = larger & kSignBit;
  if (norm_exp == 0xFFu) return sign | kInfinityF32;

  // Round to nearest even; a carry out of the fraction bumps the exponent field.
  const std::uint32_t round_up = (norm_sig >> 2) & ((norm_sig >> 1) | norm_sig | (norm_sig >> 3)) & 1u;
  const std::uint32_t exp_field = (norm_sig >> 26) & 1u ? norm_exp : 0u;
  const std::uint32_t rounded = ((exp_field << 23) | ((norm_sig >> 3) & kFractionMask)) + round_up;
  return sign | rounded;
}

std::uint32_t f32_min(std::uint32_t a, std::uint32_t b) { return f32_min_max(a, b, false); }
std::uint32_t f32_max(std::uint32_t a, std::uint32_t b) { return f32_min_max(a, b, true); }

std::uint32_t f16_to_f32(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1Fu;
  const std::uint32_t fraction = half & 0x3FFu;
  if (exponent == 0x1Fu) return fraction ? kCanonicalNanF32 : (sign | kInfinityF32);
  if (exponent != 0) return sign | ((exponent + 112u) << 23) | (fraction << 13);
  if (fraction == 0) return sign;
  // Subnormal: the leading one becomes the hidden bit.
  std::uint32_t leading_zeros = 0;
  for (int bit = 0; bit < 10; ++bit) {
    if ((fraction >> bit) & 1u) leading_zeros = 9u - static_cast<std::uint32_t>(bit);
  }
  const std::uint32_t shifted = (fraction << (leading_zeros + 1)) & 0x3FFu;
  return sign | ((112u - leading_zeros) << 23) | (shifted << 13);
}

std::uint32_t bf16_to_f32(std::uint16_t brain) {
  return canonical_f32(static_cast<std::uint32_t>(brain) << 16);
}

std::uint16_t f32_to_f16(std::uint32_t single) {
  const std::uint32_t sign = (single >> 16) & 0x8000u;
  const std::uint32_t exponent = exponent_field(single);
  if (exponent == 0xFFu) {
    return (single & kFractionMask) ? kCanonicalNanF16 : static_cast<std::uint16_t>(sign | 0x7C00u);
  }
  if (exponent > 142) return static_cast<std::uint16_t>(sign | 0x7C00u);  // >= 2^16
  if (exponent < 102) return static_cast<std::uint16_t>(sign);            // < 2^-25
  const std::uint32_t significand = (1u << 23) | (single & kFractionMask);
  std::uint32_t shift = 0;
  std::uint32_t base = 0;
  if (exponent >= 113) {  // normal f16; the hidden bit of `kept` adds the last 1 to the exponent
    shift = 13;
    base = (exponent - 113) << 10;
  } else {
    shift = 126 - exponent;  // subnormal f16: 14 .. 24
  }
  const std::uint32_t kept = significand >> shift;
  const std::uint32_t guard = (significand >> (shift - 1)) & 1u;
  const bool sticky = (significand & ((1u << (shift - 1)) - 1u)) != 0;
  const std::uint32_t round_up = guard & ((sticky ? 1u : 0u) | (kept & 1u));
  return static_cast<std::uint16_t>(sign | (base + kept + round_up));
}

std::uint16_t f32_to_bf16(std::uint32_t single) {
  if (is_nan_f32(single)) return kCanonicalNanBf16;
  const std::uint32_t round_up = (single >> 15) & (((single & 0x7FFFu) != 0 ? 1u : 0u) | (single >> 16)) & 1u;
  return static_cast<std::uint16_t>((single >> 16) + round_up);
}

Accumulator widen(ReduceType type, const Beat& operand) {
  Accumulator acc{};
  if (is_float(type)) {
    float_operands(type, operand, acc.data());
  } else {
    std::uint32_t words[4];
    load_lanes(operand, words);
    std::copy_n(words, 4, acc.begin());
  }
  return acc;
}

Accumulator combine(ReduceOp op, ReduceType type, const Accumulator& acc, const Beat& operand) {
  Accumulator out{};
  if (is_float(type)) {
    std::uint32_t operands[8];
    float_operands(type, operand, operands);
    if (type == ReduceType::f32) {
      combine_float_lanes<4>(op, acc, operands, out);
    } else {
      combine_float_lanes<8>(op, acc, operands, out);
    }
  } else if (type == ReduceType::s32 || type == ReduceType::u32) {
    std::uint32_t words[4];
    load_lanes(operand, words);
    for (int lane = 0; lane < 4; ++lane) {
      out[lane] = combine_int_lane<std::uint32_t, std::int32_t>(op, is_signed(type), acc[lane], words[lane]);
    }
  } else {
    std::uint64_t dwords[2];
    load_lanes(operand, dwords);
    for (int lane = 0; lane < 2; ++lane) {
      const std::uint64_t value = combine_int_lane<std::uint64_t, std::int64_t>(
          op, is_signed(type), acc_dword(acc, lane), dwords[lane]);
      out[2 * lane] = static_cast<std::uint32_t>(value);
      out[2 * lane + 1] = static_cast<std::uint32_t>(value >> 32);
    }
  }
  return out;
}

Beat finish(ReduceType type, const Accumulator& acc) {
  Beat beat;
  if (type == ReduceType::f16 || type == ReduceType::bf16) {
    std::uint16_t halves[8];
    if (type == ReduceType::f16) {
      for (int lane = 0; lane < 8; ++lane) halves[lane] = f32_to_f16(acc[lane]);
    } else {
      for (int lane = 0; lane < 8; ++lane) halves[lane] = f32_to_bf16(acc[lane]);
    }
    store_lanes(halves, beat);
  } else {
    std::uint32_t words[4];
    std::copy_n(acc.begin(), 4, words);
    store_lanes(words, beat);
  }
  return beat;
}

bool op_valid_for_type(ReduceOp op, ReduceType type) {
  switch (op) {
    case ReduceOp::add:
    case ReduceOp::min:
    case ReduceOp::max:
      return true;
    case ReduceOp::bit_and:
    case ReduceOp::bit_or:
    case ReduceOp::bit_xor:
      return !is_float(type);
  }
  return false;
}

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::add:
      return "add";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
    case ReduceOp::bit_and:
      return "and";
    case ReduceOp::bit_or:
      return "or";
    case ReduceOp::bit_xor:
      return "xor";
  }
  return "unknown";
}

const char* to_string(ReduceType type) {
  switch (type) {
    case ReduceType::f32:
      return "f32";
    case ReduceType::f16:
      return "f16";
    case ReduceType::bf16:
      return "bf16";
    case ReduceType::s32:
      return "s32";
    case ReduceType::u32:
      return "u32";
    case ReduceType::s64:
      return "s64";
    case ReduceType::u64:
      return "u64";
  }
  return "unknown";
}

bool parse_reduce_op(const std::string& text, ReduceOp& out) {
  for (ReduceOp op : {ReduceOp::add, ReduceOp::min, ReduceOp::max, ReduceOp::bit_and, ReduceOp::bit_or,
                      ReduceOp::bit_xor}) {
    if (text == to_string(op)) {
      out = op;
      return true;
    }
  }
  return false;
}

bool parse_reduce_type(const std::string& text, ReduceType& out) {
  for (ReduceType type : {ReduceType::f32, ReduceType::f16, ReduceType::bf16, ReduceType::s32,
                          ReduceType::u32, ReduceType::s64, ReduceType::u64}) {
    if (text == to_string(type)) {
      out = type;
      return true;
    }
  }
  return false;
}

int lanes_per_beat(ReduceType type) {
  switch (type) {
    case ReduceType::f16:
    case ReduceType::bf16:
      return 8;
    case ReduceType::s64:
    case ReduceType::u64:
      return 2;
    default:
      return 4;
  }
}

}  // namespace nvsvp::reduction
