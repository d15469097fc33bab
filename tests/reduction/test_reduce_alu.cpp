// The C++ reduction arithmetic (widen, combine, finish) against references that share no code
// with it: the host's IEEE binary32 arithmetic (x86-64 SSE, round to nearest even; this file is
// built with -ffp-contract=off), GCC's _Float16 (exact double sum, one libgcc rounding), a bf16
// rounding written here in double arithmetic, and plain C++ integer operations. NaN results are
// compared under the canonical-NaN policy. Hand-worked cases pin the corner cases by value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "alu_test_support.hpp"
#include "nvsvp/reduction/reduce_alu.hpp"

namespace nvsvp::reduction {
namespace {

using test::get_lane;
using test::hex;
using test::kF32Format;
using test::lane_bits;
using test::OperandGenerator;
using test::set_lane;
using test::Tally;

// ---- Host references -----------------------------------------------------------------------

float float_of(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

_Float16 half_of(std::uint16_t bits) {
  _Float16 value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::uint16_t bits_of(_Float16 value) {
  std::uint16_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

std::uint32_t canonical_bits(float value) { return std::isnan(value) ? 0x7FC00000u : bits_of(value); }
std::uint16_t canonical_bits(_Float16 value) { return value != value ? 0x7E00u : bits_of(value); }

// IEEE 754-2019 minimumNumber / maximumNumber written with the host's comparisons. When both
// are NaN a NaN comes back and the caller canonicalises it.
template <typename T>
T minimum_number(T a, T b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a < b) return a;
  if (b < a) return b;
  return std::signbit(static_cast<float>(a)) ? a : b;  // equal: only -0 and +0 differ
}

template <typename T>
T maximum_number(T a, T b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a < b) return b;
  if (b < a) return a;
  return std::signbit(static_cast<float>(a)) ? b : a;
}

template <typename T>
T host_op(ReduceOp op, T a, T b) {
  if (op == ReduceOp::min) return minimum_number(a, b);
  if (op == ReduceOp::max) return maximum_number(a, b);
  return a + b;
}

// Round a double to bf16 (8 significant bits, exponent range of f32, subnormal spacing 2^-133)
// by scaling to the quantum, rounding the integer part half to even, and scaling back. Every
// step is exact in double.
std::uint16_t bf16_from_double(double value) {
  if (std::isnan(value)) return 0x7FC0u;
  const std::uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | 0x7F80u;
  if (magnitude == 0.0) return sign;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude in [2^(exponent-1), 2^exponent)
  const int quantum = std::max(exponent - 1 - 7, -133);
  const double scaled = std::ldexp(magnitude, -quantum);
  double integer = std::floor(scaled);
  const double remainder = scaled - integer;
  if (remainder > 0.5 || (remainder == 0.5 && std::fmod(integer, 2.0) == 1.0)) integer += 1.0;
  const double rounded = std::ldexp(integer, quantum);
  if (rounded >= std::ldexp(1.0, 128)) return sign | 0x7F80u;
  // A bf16 value is an f32 whose low 16 bits are zero: the float conversion is exact.
  const std::uint32_t single = bits_of(static_cast<float>(rounded));
  if ((single & 0xFFFFu) != 0) return 0xDEADu;  // cannot happen; would fail the comparison
  return static_cast<std::uint16_t>(sign | (single >> 16));
}

double double_of_bf16(std::uint16_t bits) {
  const int exponent = (bits >> 7) & 0xFF;
  const int fraction = bits & 0x7F;
  if (exponent == 0xFF && fraction != 0) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude = exponent == 0xFF ? std::numeric_limits<double>::infinity()
                           : exponent == 0  ? std::ldexp(fraction, -133)
                                            : std::ldexp(128 + fraction, exponent - 134);
  return (bits & 0x8000u) ? -magnitude : magnitude;
}

// The expected result lane of a two-contribution reduction `a` then `b` of a float type.
std::uint32_t reference_pair(ReduceOp op, ReduceType type, std::uint32_t a, std::uint32_t b) {
  switch (type) {
    case ReduceType::f16: {
      if (op == ReduceOp::add) {
        // The sum of two f16 is exact in double; libgcc rounds it once to _Float16.
        return canonical_bits(
            static_cast<_Float16>(static_cast<double>(half_of(a)) + static_cast<double>(half_of(b))));
      }
      return canonical_bits(host_op(op, half_of(a), half_of(b)));
    }
    case ReduceType::bf16: {
      const double x = double_of_bf16(static_cast<std::uint16_t>(a));
      const double y = double_of_bf16(static_cast<std::uint16_t>(b));
      return bf16_from_double(host_op(op, x, y));
    }
    default:
      return canonical_bits(host_op(op, float_of(a), float_of(b)));
  }
}

// ---- The code under test through its beat interface ----------------------------------------

Beat splat(ReduceType type, std::uint64_t lane_value) {
  Beat beat{};
  const int width = lane_bits(type);
  for (int lane = 0; lane < 128 / width; ++lane) set_lane(beat, width, lane, lane_value);
  return beat;
}

Beat reduce_beats(ReduceOp op, ReduceType type, const std::vector<Beat>& contributions) {
  Accumulator acc = widen(type, contributions.front());
  for (size_t i = 1; i < contributions.size(); ++i) acc = combine(op, type, acc, contributions[i]);
  return finish(type, acc);
}

// a then b in every lane; every lane must agree, lane 0 is returned.
std::uint64_t reduce_pair(ReduceOp op, ReduceType type, std::uint64_t a, std::uint64_t b) {
  const Beat out = reduce_beats(op, type, {splat(type, a), splat(type, b)});
  const int width = lane_bits(type);
  for (int lane = 1; lane < 128 / width; ++lane) {
    EXPECT_EQ(get_lane(out, width, lane), get_lane(out, width, 0)) << "lane " << lane;
  }
  return get_lane(out, width, 0);
}

std::string pair_text(ReduceOp op, ReduceType type, std::uint64_t a, std::uint64_t b, std::uint64_t got,
                      std::uint64_t want) {
  const int digits = lane_bits(type) / 4;
  return std::string(to_string(op)) + "." + to_string(type) + "(" + hex(a, digits) + ", " + hex(b, digits) +
         ") = " + hex(got, digits) + ", expected " + hex(want, digits);
}

// Random pairs through widen/combine/finish, every lane against reference_pair.
void check_random_float_pairs(ReduceOp op, ReduceType type, std::uint64_t seed, int beats, Tally& tally) {
  OperandGenerator generator(seed);
  const int width = lane_bits(type);
  for (int i = 0; i < beats; ++i) {
    const Beat a = generator.beat(type);
    const Beat b = generator.beat(type, a);
    const Beat out = reduce_beats(op, type, {a, b});
    for (int lane = 0; lane < 128 / width; ++lane) {
      const auto x = static_cast<std::uint32_t>(get_lane(a, width, lane));
      const auto y = static_cast<std::uint32_t>(get_lane(b, width, lane));
      const std::uint64_t got = get_lane(out, width, lane);
      const std::uint32_t want = reference_pair(op, type, x, y);
      tally.record(got == want, [&] { return pair_text(op, type, x, y, got, want); });
    }
  }
}

void check_directed_float_pairs(ReduceOp op, ReduceType type, Tally& tally) {
  const std::vector<std::uint32_t> values = test::directed_values(test::format_of(type));
  for (std::uint32_t a : values) {
    for (std::uint32_t b : values) {
      const std::uint64_t got = reduce_pair(op, type, a, b);
      const std::uint32_t want = reference_pair(op, type, a, b);
      tally.record(got == want, [&] { return pair_text(op, type, a, b, got, want); });
    }
  }
}

constexpr ReduceOp kFloatOps[] = {ReduceOp::add, ReduceOp::min, ReduceOp::max};

// ---- The references themselves -------------------------------------------------------------

TEST(ReduceAluReference, HostArithmeticIsIeeeWithSubnormals) {
  // A flush-to-zero or denormals-are-zero host, or a wrong rounding mode, would invalidate the
  // float references below.
  EXPECT_EQ(bits_of(float_of(0x00000001u) + float_of(0x00000001u)), 0x00000002u);
  EXPECT_EQ(bits_of(float_of(0x00800000u) - float_of(0x00000001u)), 0x007FFFFFu);
  EXPECT_EQ(bits_of(float_of(0x3F800000u) + float_of(0x33800000u)), 0x3F800000u);  // tie, even below
  EXPECT_EQ(bits_of(float_of(0x3F800001u) + float_of(0x33800000u)), 0x3F800002u);  // tie, even above
  EXPECT_EQ(bits_of(static_cast<_Float16>(static_cast<double>(half_of(0x3C00u)) + 0x1p-11)), 0x3C00u);
  EXPECT_EQ(bits_of(static_cast<_Float16>(static_cast<double>(half_of(0x3C01u)) + 0x1p-11)), 0x3C02u);
  EXPECT_EQ(bits_of(static_cast<_Float16>(0x1p-25)), 0x0000u);
  EXPECT_EQ(bits_of(static_cast<_Float16>(0x1.000002p-25)), 0x0001u);
}

TEST(ReduceAluReference, Bf16RoundingFromDouble) {
  EXPECT_EQ(bf16_from_double(1.0), 0x3F80u);
  EXPECT_EQ(bf16_from_double(1.0 + 0x1p-8), 0x3F80u);            // tie, even below
  EXPECT_EQ(bf16_from_double(1.0 + 0x1p-7 + 0x1p-8), 0x3F82u);   // tie, even above
  EXPECT_EQ(bf16_from_double(1.0 + 0x1p-8 + 0x1p-30), 0x3F81u);  // above the tie
  EXPECT_EQ(bf16_from_double(-0x1p-133), 0x8001u);               // smallest subnormal
  EXPECT_EQ(bf16_from_double(0x1p-134), 0x0000u);                // tie with zero, even
  EXPECT_EQ(bf16_from_double(0x1.8p-133), 0x0002u);              // tie, even above
  EXPECT_EQ(bf16_from_double(0x1.fep127), 0x7F7Fu);              // largest finite
  EXPECT_EQ(bf16_from_double(0x1.ffp127), 0x7F80u);              // its tie rounds to infinity
  EXPECT_EQ(bf16_from_double(-0.0), 0x8000u);
}

// ---- Hand-worked values --------------------------------------------------------------------

struct HandCase {
  ReduceOp op;
  ReduceType type;
  std::uint64_t a, b, expected;
  const char* why;
};

TEST(ReduceAlu, HandWorkedFloatCases) {
  const ReduceOp add = ReduceOp::add, min = ReduceOp::min, max = ReduceOp::max;
  const ReduceType f32 = ReduceType::f32, f16 = ReduceType::f16, bf16 = ReduceType::bf16;
  const HandCase cases[] = {
      {add, f32, 0x3F800000, 0x33800000, 0x3F800000, "1 + 2^-24: tie, stays even"},
      {add, f32, 0x3F800001, 0x33800000, 0x3F800002, "(1+2^-23) + 2^-24: tie, up to even"},
      {add, f32, 0x4B000000, 0x3F000000, 0x4B000000, "2^23 + 0.5: tie, stays even"},
      {add, f32, 0x4B000001, 0x3F000000, 0x4B000002, "(2^23+1) + 0.5: tie, up to even"},
      {add, f32, 0x3F800000, 0xB3800000, 0x3F7FFFFF, "1 - 2^-24 is exact"},
      {add, f32, 0x3F800001, 0xBF800000, 0x34000000, "cancellation leaves 2^-23"},
      {add, f32, 0x3F800000, 0xBF800000, 0x00000000, "x + (-x) = +0"},
      {add, f32, 0x80000000, 0x80000000, 0x80000000, "-0 + -0 = -0"},
      {add, f32, 0x00000000, 0x80000000, 0x00000000, "+0 + -0 = +0"},
      {add, f32, 0x00000001, 0x00000001, 0x00000002, "subnormal sum"},
      {add, f32, 0x00800000, 0x80000001, 0x007FFFFF, "normal minus subnormal gives subnormal"},
      {add, f32, 0x007FFFFF, 0x00000001, 0x00800000, "subnormals carry into the smallest normal"},
      {add, f32, 0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000, "overflow to infinity"},
      {add, f32, 0x7F7FFFFF, 0x73000000, 0x7F800000, "largest + half ulp: tie rounds up to infinity"},
      {add, f32, 0x7F7FFFFF, 0x72FFFFFF, 0x7F7FFFFF, "largest + below half ulp stays"},
      {add, f32, 0xFF7FFFFF, 0xF3000000, 0xFF800000, "negative overflow"},
      {add, f32, 0x7F800000, 0xFF800000, 0x7FC00000, "inf - inf is the canonical NaN"},
      {add, f32, 0x7F800000, 0x7F7FFFFF, 0x7F800000, "inf + finite"},
      {add, f32, 0xFF800000, 0x7F7FFFFF, 0xFF800000, "-inf + finite"},
      {add, f32, 0x7F800001, 0x3F800000, 0x7FC00000, "signalling NaN gives the canonical NaN"},
      {add, f32, 0x3F800000, 0xFFC12345, 0x7FC00000, "NaN payload and sign dropped"},
      {min, f32, 0x00000000, 0x80000000, 0x80000000, "min(+0, -0) = -0"},
      {max, f32, 0x80000000, 0x00000000, 0x00000000, "max(-0, +0) = +0"},
      {min, f32, 0x7FC00000, 0x3F800000, 0x3F800000, "minimumNumber ignores one NaN"},
      {max, f32, 0x3F800000, 0x7F800001, 0x3F800000, "maximumNumber ignores a signalling NaN"},
      {min, f32, 0xFFC00001, 0x7F800001, 0x7FC00000, "two NaNs give the canonical NaN"},
      {min, f32, 0x00000001, 0x80000001, 0x80000001, "subnormals ordered by sign"},
      {min, f32, 0xFF800000, 0xFF7FFFFF, 0xFF800000, "-inf is the minimum"},
      {max, f32, 0x7F7FFFFF, 0x7F800000, 0x7F800000, "+inf is the maximum"},
      {max, f32, 0xBF800000, 0xC0000000, 0xBF800000, "max(-1, -2) = -1"},
      {add, f16, 0x3C00, 0x1000, 0x3C00, "f16 1 + 2^-11: tie, stays even"},
      {add, f16, 0x3C01, 0x1000, 0x3C02, "f16 (1+2^-10) + 2^-11: tie, up to even"},
      {add, f16, 0x7BFF, 0x4C00, 0x7C00, "f16 65504 + 16: tie rounds to infinity"},
      {add, f16, 0x7BFF, 0x4BFF, 0x7BFF, "f16 65504 + 15.99 stays"},
      {add, f16, 0x0001, 0x0001, 0x0002, "f16 subnormal sum"},
      {add, f16, 0x0400, 0x8001, 0x03FF, "f16 subnormal result"},
      {add, f16, 0x0001, 0x8001, 0x0000, "f16 x + (-x) = +0"},
      {add, f16, 0x8000, 0x8000, 0x8000, "f16 -0 + -0 = -0"},
      {add, f16, 0x7C00, 0xFC00, 0x7E00, "f16 inf - inf is the canonical NaN"},
      {add, f16, 0x7C01, 0x3C00, 0x7E00, "f16 signalling NaN"},
      {add, f16, 0xFE55, 0x3C00, 0x7E00, "f16 NaN payload dropped"},
      {min, f16, 0x0000, 0x8000, 0x8000, "f16 min(+0, -0) = -0"},
      {max, f16, 0x7E00, 0xFC00, 0xFC00, "f16 maximumNumber(NaN, -inf) = -inf"},
      {add, bf16, 0x3F80, 0x3B80, 0x3F80, "bf16 1 + 2^-8: tie, stays even"},
      {add, bf16, 0x3F81, 0x3B80, 0x3F82, "bf16 (1+2^-7) + 2^-8: tie, up to even"},
      {add, bf16, 0x7F7F, 0x7B00, 0x7F80, "bf16 largest + half ulp: tie rounds to infinity"},
      {add, bf16, 0x0001, 0x0001, 0x0002, "bf16 subnormal sum"},
      {add, bf16, 0x0080, 0x8001, 0x007F, "bf16 subnormal result"},
      {add, bf16, 0xFF80, 0x7F80, 0x7FC0, "bf16 inf - inf is the canonical NaN"},
      {max, bf16, 0x8000, 0x0000, 0x0000, "bf16 max(-0, +0) = +0"},
  };
  for (const HandCase& c : cases) {
    EXPECT_EQ(hex(reduce_pair(c.op, c.type, c.a, c.b), lane_bits(c.type) / 4),
              hex(c.expected, lane_bits(c.type) / 4))
        << to_string(c.op) << "." << to_string(c.type) << ": " << c.why;
  }
}

TEST(ReduceAlu, HandWorkedIntegerCases) {
  const ReduceOp add = ReduceOp::add, min = ReduceOp::min, max = ReduceOp::max;
  const HandCase cases[] = {
      {add, ReduceType::s32, 0x7FFFFFFF, 0x00000001, 0x80000000, "s32 max + 1 wraps to min"},
      {add, ReduceType::u32, 0xFFFFFFFF, 0x00000001, 0x00000000, "u32 max + 1 wraps to 0"},
      {min, ReduceType::s32, 0xFFFFFFFF, 0x00000000, 0xFFFFFFFF, "s32 min(-1, 0) = -1"},
      {min, ReduceType::u32, 0xFFFFFFFF, 0x00000000, 0x00000000, "u32 min(max, 0) = 0"},
      {max, ReduceType::s32, 0x80000000, 0x7FFFFFFF, 0x7FFFFFFF, "s32 max(min, max)"},
      {max, ReduceType::u32, 0x80000000, 0x7FFFFFFF, 0x80000000, "u32 max(2^31, 2^31-1)"},
      {add, ReduceType::s64, 0x7FFFFFFFFFFFFFFF, 1, 0x8000000000000000, "s64 max + 1 wraps to min"},
      {add, ReduceType::u64, 0xFFFFFFFFFFFFFFFF, 2, 1, "u64 wraps"},
      {add, ReduceType::u64, 0x00000000FFFFFFFF, 1, 0x0000000100000000, "u64 carries across words"},
      {min, ReduceType::s64, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, "s64 min"},
      {min, ReduceType::u64, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF, "u64 min"},
      {max, ReduceType::s64, 0xFFFFFFFFFFFFFFFF, 0, 0, "s64 max(-1, 0) = 0"},
      {max, ReduceType::u64, 0xFFFFFFFFFFFFFFFF, 0, 0xFFFFFFFFFFFFFFFF, "u64 max"},
      {ReduceOp::bit_and, ReduceType::u32, 0xF0F0F0F0, 0xFF00FF00, 0xF000F000, "and"},
      {ReduceOp::bit_or, ReduceType::s64, 0xF0F0F0F000000000, 0x000000000F0F0F0F, 0xF0F0F0F00F0F0F0F, "or"},
      {ReduceOp::bit_xor, ReduceType::s32, 0xFFFF0000, 0xF0F0F0F0, 0x0F0FF0F0, "xor"},
  };
  for (const HandCase& c : cases) {
    EXPECT_EQ(hex(reduce_pair(c.op, c.type, c.a, c.b), lane_bits(c.type) / 4),
              hex(c.expected, lane_bits(c.type) / 4))
        << to_string(c.op) << "." << to_string(c.type) << ": " << c.why;
  }
}

TEST(ReduceAlu, F16AccumulatesInF32AndRoundsOnce) {
  // 1 + 2^-11 + 2^-11 = 1 + 2^-10 exactly in f32, so it rounds to 0x3C01; rounding to f16 after
  // each step would have kept 1.0 twice (ties to even).
  EXPECT_EQ(get_lane(reduce_beats(ReduceOp::add, ReduceType::f16,
                                  {splat(ReduceType::f16, 0x3C00), splat(ReduceType::f16, 0x1000),
                                   splat(ReduceType::f16, 0x1000)}),
                     16, 5),
            0x3C01u);
  // 65504 + 16 - 16: the f32 accumulator does not overflow in between.
  EXPECT_EQ(get_lane(reduce_beats(ReduceOp::add, ReduceType::f16,
                                  {splat(ReduceType::f16, 0x7BFF), splat(ReduceType::f16, 0x4C00),
                                   splat(ReduceType::f16, 0xCC00)}),
                     16, 2),
            0x7BFFu);
}

TEST(ReduceAlu, AccumulatorLayout) {
  Beat halves{};
  set_lane(halves, 16, 3, 0x3C00);  // f16 1.0
  set_lane(halves, 16, 7, 0xC000);  // f16 -2.0
  const Accumulator from_f16 = widen(ReduceType::f16, halves);
  EXPECT_EQ(from_f16, (Accumulator{0, 0, 0, 0x3F800000u, 0, 0, 0, 0xC0000000u}));
  const Accumulator from_bf16 = widen(ReduceType::bf16, halves);
  EXPECT_EQ(from_bf16[3], 0x3C000000u);  // bf16 0x3C00 is f32 0x3C000000

  Beat words{};
  for (int word = 0; word < 4; ++word) set_lane(words, 32, word, 0x11111111u * (word + 1));
  set_lane(words, 32, 2, 0x7F800001u);  // a signalling NaN
  EXPECT_EQ(widen(ReduceType::f32, words), (Accumulator{0x11111111u, 0x22222222u, 0x7FC00000u, 0x44444444u}));
  EXPECT_EQ(widen(ReduceType::u64, words), (Accumulator{0x11111111u, 0x22222222u, 0x7F800001u, 0x44444444u}));

  // Non-f16/bf16 types keep bits [255:128] zero, whatever the accumulator held there.
  Accumulator dirty = widen(ReduceType::u32, words);
  dirty[6] = 0xDEADBEEFu;
  EXPECT_EQ(combine(ReduceOp::bit_or, ReduceType::u32, dirty, words)[6], 0u);
  EXPECT_EQ(finish(ReduceType::s64, widen(ReduceType::s64, words)), words);
}

// ---- Random and directed sweeps against the host -------------------------------------------

TEST(ReduceAluF32, RandomPairsAgainstHostFloat) {
  Tally add("f32 add (host float)"), min("f32 min (host float)"), max("f32 max (host float)");
  check_random_float_pairs(ReduceOp::add, ReduceType::f32, 101, 750'000, add);
  check_random_float_pairs(ReduceOp::min, ReduceType::f32, 102, 125'000, min);
  check_random_float_pairs(ReduceOp::max, ReduceType::f32, 103, 125'000, max);
}

TEST(ReduceAluF16, RandomPairsAgainstFloat16) {
  Tally add("f16 add (_Float16)"), min("f16 min (_Float16)"), max("f16 max (_Float16)");
  check_random_float_pairs(ReduceOp::add, ReduceType::f16, 201, 250'000, add);
  check_random_float_pairs(ReduceOp::min, ReduceType::f16, 202, 40'000, min);
  check_random_float_pairs(ReduceOp::max, ReduceType::f16, 203, 40'000, max);
}

TEST(ReduceAluBf16, RandomPairsAgainstDoubleRounding) {
  Tally add("bf16 add (double)"), min("bf16 min (double)"), max("bf16 max (double)");
  check_random_float_pairs(ReduceOp::add, ReduceType::bf16, 301, 250'000, add);
  check_random_float_pairs(ReduceOp::min, ReduceType::bf16, 302, 40'000, min);
  check_random_float_pairs(ReduceOp::max, ReduceType::bf16, 303, 40'000, max);
}

TEST(ReduceAlu, DirectedFloatPairs) {
  for (ReduceType type : {ReduceType::f32, ReduceType::f16, ReduceType::bf16}) {
    for (ReduceOp op : kFloatOps) {
      Tally tally(std::string("directed ") + to_string(op) + "." + to_string(type));
      check_directed_float_pairs(op, type, tally);
    }
  }
}

// The lane functions are commutative bit for bit, NaNs and signed zeros included.
TEST(ReduceAluF32, LaneFunctionsAreCommutative) {
  Tally tally("f32 lane commutativity");
  OperandGenerator generator(401);
  for (int i = 0; i < 200'000; ++i) {
    const std::uint32_t a = generator.float_bits(kF32Format, static_cast<std::uint32_t>(generator.next()));
    const std::uint32_t b = generator.float_bits(kF32Format, a);
    tally.record(
        f32_add(a, b) == f32_add(b, a) && f32_min(a, b) == f32_min(b, a) && f32_max(a, b) == f32_max(b, a),
        [&] { return "operands " + hex(a, 8) + ", " + hex(b, 8); });
  }
}

// ---- f32_add's fast path (the host's add) against its integer path -------------------------

// The fast path answers only for normal or zero operands whose sum is normal or exactly zero;
// everything else, including the sums of normal operands that leave the normal range, must come
// out of it exactly as from the integer path.
TEST(ReduceAluF32, FastPathAddMatchesIntegerPath) {
  Tally tally("f32 add, fast path against integer path");
  std::uint64_t zero_operands = 0;  // normal or zero operands, one or both zero
  // Normal operands, by their sum: normal, subnormal, zero (x and -x: the fast path answers
  // these two), infinite.
  std::uint64_t normal_sums = 0;
  std::uint64_t subnormal_sums = 0;
  std::uint64_t zero_sums = 0;
  std::uint64_t infinite_sums = 0;
  auto is_normal = [](std::uint32_t bits) { return ((bits >> 23) & 0xFFu) - 1u < 0xFEu; };
  auto is_zero = [](std::uint32_t bits) { return (bits & 0x7FFFFFFFu) == 0; };
  auto check = [&](std::uint32_t a, std::uint32_t b) {
    const std::uint32_t got = f32_add(a, b);
    const std::uint32_t want = f32_add_integer(a, b);
    tally.record(got == want, [&] { return "add(" + hex(a, 8) + ", " + hex(b, 8) + ") = " + hex(got, 8) +
                                           ", integer path " + hex(want, 8); });
    if ((is_zero(a) || is_zero(b)) && (is_zero(a) || is_normal(a)) && (is_zero(b) || is_normal(b))) ++zero_operands;
    if (!is_normal(a) || !is_normal(b)) return;
    const std::uint32_t magnitude = want & 0x7FFFFFFFu;
    ++(is_normal(want) ? normal_sums : magnitude == 0 ? zero_sums : magnitude < 0x00800000u ? subnormal_sums : infinite_sums);
  };

  // Every pair of the directed values: specials, signed zeros, subnormals, ties, the extremes.
  const std::vector<std::uint32_t> values = test::directed_values(kF32Format);
  for (std::uint32_t a : values) {
    for (std::uint32_t b : values) check(a, b);
  }
  // The generator's mix: near exponents (cancellation, carries, ties), subnormals, specials.
  OperandGenerator generator(801);
  for (int i = 0; i < 4'000'000; ++i) {
    const std::uint32_t a = generator.float_bits(kF32Format, static_cast<std::uint32_t>(generator.next()));
    check(a, generator.float_bits(kF32Format, a));
  }
  // Uniformly random encodings: mostly normal operands far apart.
  for (int i = 0; i < 4'000'000; ++i) {
    const std::uint64_t bits = generator.next();
    check(static_cast<std::uint32_t>(bits), static_cast<std::uint32_t>(bits >> 32));
  }
  // Normal operands whose sum leaves the normal range: opposite signs and near magnitudes at
  // the bottom of the range (cancellation into the subnormals, rounding up to the smallest
  // normal, exact zero with either sign of operand), and equal signs at the top (overflow,
  // rounding up to infinity).
  for (int i = 0; i < 2'000'000; ++i) {
    const std::uint32_t sign = generator.below(2);
    const std::uint32_t exponent = 1u + generator.below(26);
    const std::uint32_t fraction = static_cast<std::uint32_t>(generator.next());
    const std::uint32_t a = kF32Format.encode(sign, exponent, fraction);
    const std::uint32_t near_exponent = generator.below(2) ? exponent : std::max(1u, exponent + generator.below(3) - 1u);
    const std::uint32_t how = generator.below(3);
    const std::uint32_t near_fraction = how == 0   ? fraction
                                        : how == 1 ? fraction + generator.below(9) - 4u
                                                   : static_cast<std::uint32_t>(generator.next());
    check(a, kF32Format.encode(sign ^ 1u, near_exponent, near_fraction));
  }
  for (int i = 0; i < 1'000'000; ++i) {
    const std::uint32_t sign = generator.below(2);
    const std::uint32_t a = kF32Format.encode(sign, 254u - generator.below(2), static_cast<std::uint32_t>(generator.next()));
    const std::uint32_t b =
        kF32Format.encode(sign, 254u - generator.below(generator.below(2) ? 2 : 28), static_cast<std::uint32_t>(generator.next()));
    check(a, b);
  }
  EXPECT_GT(zero_operands, 50'000u);
  EXPECT_GT(normal_sums, 5'000'000u);
  EXPECT_GT(subnormal_sums, 100'000u);
  EXPECT_GT(zero_sums, 100'000u);
  EXPECT_GT(infinite_sums, 100'000u);
  std::cout << "[ vectors  ] " << zero_operands << " with zero operands; normal operands, sums: " << normal_sums << " normal, " << subnormal_sums
            << " subnormal, " << zero_sums << " zero, " << infinite_sums << " infinite\n";
}

// ---- Conversions ---------------------------------------------------------------------------

TEST(ReduceAluConvert, EveryF16AndBf16WidensExactlyAndRoundTrips) {
  Tally f16_widen("f16 -> f32 (every value, host)"), bf16_widen("bf16 -> f32 (every value, double)");
  Tally round_trip("f16/bf16 widen then finish (every value)");
  for (std::uint32_t bits = 0; bits <= 0xFFFFu; ++bits) {
    const auto value = static_cast<std::uint16_t>(bits);
    const std::uint32_t f16_want = canonical_bits(static_cast<float>(half_of(value)));
    f16_widen.record(f16_to_f32(value) == f16_want, [&] { return "f16 " + hex(value, 4); });
    const double bf16_value = double_of_bf16(value);
    const std::uint32_t bf16_want = canonical_bits(static_cast<float>(bf16_value));
    bf16_widen.record(bf16_to_f32(value) == bf16_want, [&] { return "bf16 " + hex(value, 4); });

    const bool f16_nan = (value & 0x7C00u) == 0x7C00u && (value & 0x3FFu) != 0;
    const bool bf16_nan = (value & 0x7F80u) == 0x7F80u && (value & 0x7Fu) != 0;
    const Beat f16_out = finish(ReduceType::f16, widen(ReduceType::f16, splat(ReduceType::f16, value)));
    const Beat bf16_out = finish(ReduceType::bf16, widen(ReduceType::bf16, splat(ReduceType::bf16, value)));
    round_trip.record(get_lane(f16_out, 16, 4) == (f16_nan ? 0x7E00u : value),
                      [&] { return "f16 " + hex(value, 4); });
    round_trip.record(get_lane(bf16_out, 16, 6) == (bf16_nan ? 0x7FC0u : value),
                      [&] { return "bf16 " + hex(value, 4); });
  }
}

TEST(ReduceAluConvert, F32RoundsToF16AndBf16) {
  Tally to_f16("f32 -> f16 (host _Float16)"), to_bf16("f32 -> bf16 (double)");
  OperandGenerator generator(501);
  for (int i = 0; i < 1'000'000; ++i) {
    std::uint32_t single = 0;
    switch (generator.below(4)) {
      case 0:  // across the f16 range, any fraction
        single = kF32Format.encode(generator.below(2), 98 + generator.below(48), generator.below(1u << 23));
        break;
      case 1: {  // exact ties and near-ties of f16 rounding (13 low bits around 0x1000)
        const std::uint32_t low = 0x1000u + generator.below(3) - 1u;
        single = kF32Format.encode(generator.below(2), 98 + generator.below(48),
                                   (generator.below(1u << 10) << 13) | low);
        break;
      }
      case 2: {  // exact ties and near-ties of bf16 rounding (16 low bits around 0x8000)
        const std::uint32_t low = 0x8000u + generator.below(3) - 1u;
        single = static_cast<std::uint32_t>(generator.next() & 0xFFFF0000u) | low;
        break;
      }
      default:
        single = generator.float_bits(kF32Format, static_cast<std::uint32_t>(generator.next()));
    }
    const std::uint16_t f16_want = canonical_bits(static_cast<_Float16>(float_of(single)));
    to_f16.record(f32_to_f16(single) == f16_want,
                  [&] { return "f32 " + hex(single, 8) + " want " + hex(f16_want, 4); });
    const std::uint16_t bf16_want = bf16_from_double(static_cast<double>(float_of(single)));
    to_bf16.record(f32_to_bf16(single) == bf16_want,
                   [&] { return "f32 " + hex(single, 8) + " want " + hex(bf16_want, 4); });
  }
}

// ---- Many contributions --------------------------------------------------------------------

// Contributions folded in a host float, then rounded once, as the unit does.
void check_many_contributions(ReduceType type, std::uint64_t seed, int beats, Tally& tally) {
  OperandGenerator generator(seed);
  const int width = lane_bits(type);
  for (int i = 0; i < beats; ++i) {
    const ReduceOp op = kFloatOps[generator.below(3)];
    const int count = 2 + static_cast<int>(generator.below(15));
    std::vector<Beat> contributions{generator.beat(type)};
    for (int k = 1; k < count; ++k) contributions.push_back(generator.beat(type, contributions.back()));
    const Beat out = reduce_beats(op, type, contributions);
    for (int lane = 0; lane < 128 / width; ++lane) {
      float acc = 0.0f;
      for (int k = 0; k < count; ++k) {
        const auto bits = static_cast<std::uint32_t>(get_lane(contributions[k], width, lane));
        const float value =
            type == ReduceType::f16    ? static_cast<float>(half_of(static_cast<std::uint16_t>(bits)))
            : type == ReduceType::bf16 ? static_cast<float>(double_of_bf16(static_cast<std::uint16_t>(bits)))
                                       : float_of(bits);
        acc = k == 0 ? value : host_op(op, acc, value);
      }
      const std::uint64_t want = type == ReduceType::f16    ? canonical_bits(static_cast<_Float16>(acc))
                                 : type == ReduceType::bf16 ? bf16_from_double(static_cast<double>(acc))
                                                            : canonical_bits(acc);
      const std::uint64_t got = get_lane(out, width, lane);
      tally.record(got == want, [&] {
        return std::string(to_string(op)) + "." + to_string(type) + " of " + std::to_string(count) +
               " contributions, lane " + std::to_string(lane) + ": " + hex(got, width / 4) + ", expected " +
               hex(want, width / 4) + " (first beat " + hex(contributions.front()) + ")";
      });
    }
  }
}

TEST(ReduceAlu, ManyContributionsMatchHostF32AccumulationRoundedOnce) {
  Tally f16("f16 2-16 contributions (host float, then _Float16)");
  Tally bf16("bf16 2-16 contributions (host float, then double rounding)");
  Tally f32("f32 2-16 contributions (host float)");
  check_many_contributions(ReduceType::f16, 601, 40'000, f16);
  check_many_contributions(ReduceType::bf16, 602, 40'000, bf16);
  check_many_contributions(ReduceType::f32, 603, 40'000, f32);
}

// ---- Integers ------------------------------------------------------------------------------

__extension__ typedef __int128 WideInt;  // holds any exact sum of two 64-bit integers

template <typename T>
T reference_int(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::add:  // the exact sum, reduced modulo 2^bits (GCC converts modulo 2^bits)
      return static_cast<T>(static_cast<WideInt>(a) + static_cast<WideInt>(b));
    case ReduceOp::min:
      return std::min(a, b);
    case ReduceOp::max:
      return std::max(a, b);
    case ReduceOp::bit_and:
      return a & b;
    case ReduceOp::bit_or:
      return a | b;
    case ReduceOp::bit_xor:
      return a ^ b;
  }
  return 0;
}

std::uint64_t reference_int_lane(ReduceOp op, ReduceType type, std::uint64_t a, std::uint64_t b) {
  switch (type) {
    case ReduceType::s32:
      return static_cast<std::uint32_t>(
          reference_int<std::int32_t>(op, static_cast<std::int32_t>(a), static_cast<std::int32_t>(b)));
    case ReduceType::u32:
      return reference_int<std::uint32_t>(op, static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b));
    case ReduceType::s64:
      return static_cast<std::uint64_t>(
          reference_int<std::int64_t>(op, static_cast<std::int64_t>(a), static_cast<std::int64_t>(b)));
    default:
      return reference_int<std::uint64_t>(op, a, b);
  }
}

constexpr ReduceType kIntTypes[] = {ReduceType::s32, ReduceType::u32, ReduceType::s64, ReduceType::u64};
constexpr ReduceOp kAllOps[] = {ReduceOp::add,     ReduceOp::min,    ReduceOp::max,
                                ReduceOp::bit_and, ReduceOp::bit_or, ReduceOp::bit_xor};

TEST(ReduceAluInt, RandomAndExtremeChainsAgainstCppIntegers) {
  OperandGenerator generator(701);
  for (ReduceType type : kIntTypes) {
    const int width = lane_bits(type);
    for (ReduceOp op : kAllOps) {
      Tally tally(std::string("int ") + to_string(op) + "." + to_string(type));
      for (int i = 0; i < 25'000; ++i) {
        const int count = 2 + static_cast<int>(generator.below(3));
        std::vector<Beat> contributions;
        for (int k = 0; k < count; ++k) contributions.push_back(generator.beat(type));
        const Beat out = reduce_beats(op, type, contributions);
        for (int lane = 0; lane < 128 / width; ++lane) {
          std::uint64_t want = get_lane(contributions[0], width, lane);
          for (int k = 1; k < count; ++k)
            want = reference_int_lane(op, type, want, get_lane(contributions[k], width, lane));
          const std::uint64_t got = get_lane(out, width, lane);
          tally.record(got == want, [&] {
            return "lane " + std::to_string(lane) + ": " + hex(got, width / 4) + ", expected " +
                   hex(want, width / 4);
          });
        }
      }
    }
  }
}

TEST(ReduceAluInt, DirectedExtremePairsAgainstCppIntegers) {
  for (ReduceType type : kIntTypes) {
    const int width = lane_bits(type);
    for (ReduceOp op : kAllOps) {
      Tally tally(std::string("directed ") + to_string(op) + "." + to_string(type));
      for (std::uint64_t a : test::directed_int_values(width)) {
        for (std::uint64_t b : test::directed_int_values(width)) {
          const std::uint64_t got = reduce_pair(op, type, a, b);
          const std::uint64_t want = reference_int_lane(op, type, a, b);
          tally.record(got == want, [&] { return pair_text(op, type, a, b, got, want); });
        }
      }
    }
  }
}

// ---- Names and validity --------------------------------------------------------------------

TEST(ReduceAluNames, ValidityNamesAndLanes) {
  for (ReduceType type : {ReduceType::f32, ReduceType::f16, ReduceType::bf16}) {
    EXPECT_TRUE(op_valid_for_type(ReduceOp::add, type));
    EXPECT_TRUE(op_valid_for_type(ReduceOp::min, type));
    EXPECT_TRUE(op_valid_for_type(ReduceOp::max, type));
    EXPECT_FALSE(op_valid_for_type(ReduceOp::bit_and, type));
    EXPECT_FALSE(op_valid_for_type(ReduceOp::bit_or, type));
    EXPECT_FALSE(op_valid_for_type(ReduceOp::bit_xor, type));
  }
  for (ReduceType type : kIntTypes) {
    for (ReduceOp op : kAllOps)
      EXPECT_TRUE(op_valid_for_type(op, type)) << to_string(op) << "." << to_string(type);
  }

  const std::pair<ReduceOp, const char*> op_names[] = {{ReduceOp::add, "add"},   {ReduceOp::min, "min"},
                                                       {ReduceOp::max, "max"},   {ReduceOp::bit_and, "and"},
                                                       {ReduceOp::bit_or, "or"}, {ReduceOp::bit_xor, "xor"}};
  for (const auto& [op, name] : op_names) {
    EXPECT_STREQ(to_string(op), name);
    ReduceOp parsed = ReduceOp::bit_xor == op ? ReduceOp::add : ReduceOp::bit_xor;
    EXPECT_TRUE(parse_reduce_op(name, parsed)) << name;
    EXPECT_EQ(parsed, op) << name;
  }
  const std::tuple<ReduceType, const char*, int> type_names[] = {
      {ReduceType::f32, "f32", 4}, {ReduceType::f16, "f16", 8}, {ReduceType::bf16, "bf16", 8},
      {ReduceType::s32, "s32", 4}, {ReduceType::u32, "u32", 4}, {ReduceType::s64, "s64", 2},
      {ReduceType::u64, "u64", 2}};
  for (const auto& [type, name, lanes] : type_names) {
    EXPECT_STREQ(to_string(type), name);
    ReduceType parsed = ReduceType::u64 == type ? ReduceType::f32 : ReduceType::u64;
    EXPECT_TRUE(parse_reduce_type(name, parsed)) << name;
    EXPECT_EQ(parsed, type) << name;
    EXPECT_EQ(lanes_per_beat(type), lanes) << name;
  }

  ReduceOp op = ReduceOp::min;
  for (const char* bad : {"", "ADD", "sum", "add ", "bit_and"}) {
    EXPECT_FALSE(parse_reduce_op(bad, op)) << '"' << bad << '"';
  }
  EXPECT_EQ(op, ReduceOp::min);  // untouched on failure
  ReduceType type = ReduceType::s64;
  for (const char* bad : {"", "F32", "f64", "fp16", "i32"}) {
    EXPECT_FALSE(parse_reduce_type(bad, type)) << '"' << bad << '"';
  }
  EXPECT_EQ(type, ReduceType::s64);
}

}  // namespace
}  // namespace nvsvp::reduction
