// The lane facts (directed.hpp): hand-worked results of one lane of each operation and type.
#include <vector>

#include "directed_names.hpp"
#include "nvsvp/testbench/directed.hpp"

namespace nvsvp::testbench {

using namespace directed_names;

namespace {

// Hand-worked lane results. f32: 1.0 = 3F800000, 2^-24 = 33800000 (half an ulp of 1.0), largest
// finite 7F7FFFFF whose half ulp is 2^103 = 73000000. f16: 1.0 = 3C00, 2^-11 = 1000 (half an ulp
// of 1.0), 65504 = 7BFF, 16 = 4C00, 15 = 4B80. bf16: 1.0 = 3F80, 2^-8 = 3B80, largest finite 7F7F
// with half ulp 2^119 = 7B00. Canonical NaNs 7FC00000 / 7E00 / 7FC0.
const std::vector<LaneFact> kLaneFacts = {
    // f32 add, two contributions.
    {kAdd, kF32, {0x00000000, 0x00000000}, 0x00000000, "+0 + +0 = +0"},
    {kAdd, kF32, {0x80000000, 0x80000000}, 0x80000000, "-0 + -0 = -0"},
    {kAdd, kF32, {0x00000000, 0x80000000}, 0x00000000, "+0 + -0 = +0"},
    {kAdd, kF32, {0x80000000, 0x00000000}, 0x00000000, "-0 + +0 = +0"},
    {kAdd, kF32, {0x3FC00000, 0xBFC00000}, 0x00000000, "1.5 - 1.5 = +0"},
    {kAdd, kF32, {0x00000001, 0x00000001}, 0x00000002, "subnormal + subnormal"},
    {kAdd, kF32, {0x00000001, 0x007FFFFF}, 0x00800000, "subnormals carry into the smallest normal"},
    {kAdd, kF32, {0x00800000, 0x80000001}, 0x007FFFFF, "normal - subnormal = subnormal result"},
    {kAdd, kF32, {0x80000003, 0x00000001}, 0x80000002, "negative subnormal result"},
    {kAdd, kF32, {0x7F7FFFFF, 0x7F7FFFFF}, 0x7F800000, "max + max overflows to +inf"},
    {kAdd, kF32, {0xFF7FFFFF, 0xFF7FFFFF}, 0xFF800000, "-max - max overflows to -inf"},
    {kAdd, kF32, {0x7F7FFFFF, 0x73000000}, 0x7F800000, "max + half ulp: tie to even overflows"},
    {kAdd, kF32, {0x7F7FFFFF, 0x72FFFFFF}, 0x7F7FFFFF, "max + just under half ulp stays max"},
    {kAdd, kF32, {0x7F800000, 0xFF800000}, 0x7FC00000, "inf - inf = NaN"},
    {kAdd, kF32, {0x7F800000, 0x3F800000}, 0x7F800000, "inf + 1 = inf"},
    {kAdd, kF32, {0xFF800000, 0xFF800000}, 0xFF800000, "-inf + -inf = -inf"},
    {kAdd, kF32, {0x7F800001, 0x3F800000}, 0x7FC00000, "signaling NaN + 1 = canonical NaN"},
    {kAdd, kF32, {0xFFC12345, 0x40000000}, 0x7FC00000, "negative NaN with payload + 2 = canonical NaN"},
    {kAdd, kF32, {0x7FC00000, 0x7F800000}, 0x7FC00000, "NaN + inf = NaN"},
    {kAdd, kF32, {0x3F800000, 0x33800000}, 0x3F800000, "1 + 2^-24: tie rounds down to even"},
    {kAdd, kF32, {0x3F800001, 0x33800000}, 0x3F800002, "(1 + ulp) + 2^-24: tie rounds up to even"},
    {kAdd, kF32, {0x3F800000, 0x33800001}, 0x3F800001, "just above the tie rounds up"},
    {kAdd, kF32, {0x3F800000, 0xB3800000}, 0x3F7FFFFF, "1 - 2^-24 is exact"},
    {kAdd, kF32, {0x3F800000, 0x3F800000}, 0x40000000, "1 + 1 = 2"},
    // f32 add, three contributions: rounded after every add, in arrival order.
    {kAdd, kF32, {0x3F800000, 0x33800000, 0x33800000}, 0x3F800000, "1 + 2^-24 + 2^-24: two ties down"},
    {kAdd, kF32, {0x33800000, 0x33800000, 0x3F800000}, 0x3F800001, "2^-24 + 2^-24 + 1: exact"},
    {kAdd, kF32, {0x7F7FFFFF, 0x7F7FFFFF, 0xFF800000}, 0x7FC00000, "overflow, then inf - inf"},
    {kAdd, kF32, {0x00000000, 0x80000000, 0x80000000}, 0x00000000, "+0 - 0 - 0 = +0"},
    {kAdd, kF32, {0x80000000, 0x80000000, 0x80000000}, 0x80000000, "-0 - 0 - 0 = -0"},
    {kAdd, kF32, {0x40400000, 0xC0000000, 0xBF800000}, 0x00000000, "3 - 2 - 1 = +0"},
    // f32 min/max: IEEE 754-2019 minimumNumber / maximumNumber.
    {kMin, kF32, {0x00000000, 0x80000000}, 0x80000000, "min(+0, -0) = -0"},
    {kMin, kF32, {0x80000000, 0x00000000}, 0x80000000, "min(-0, +0) = -0"},
    {kMin, kF32, {0x7FC00000, 0x40400000}, 0x40400000, "min(NaN, 3) = 3"},
    {kMin, kF32, {0x40400000, 0xFF800001}, 0x40400000, "min(3, sNaN) = 3"},
    {kMin, kF32, {0x7FC00001, 0xFFFFFFFF}, 0x7FC00000, "min(NaN, NaN) = canonical NaN"},
    {kMin, kF32, {0x00000001, 0x80000001}, 0x80000001, "min of subnormals of opposite sign"},
    {kMin, kF32, {0xFF800000, 0x7FC00000}, 0xFF800000, "min(-inf, NaN) = -inf"},
    {kMin, kF32, {0x3F800000, 0x3F800001}, 0x3F800000, "min(1, 1 + ulp) = 1"},
    {kMax, kF32, {0x00000000, 0x80000000}, 0x00000000, "max(+0, -0) = +0"},
    {kMax, kF32, {0x80000000, 0x00000000}, 0x00000000, "max(-0, +0) = +0"},
    {kMax, kF32, {0x7FC00000, 0xC0A00000}, 0xC0A00000, "max(NaN, -5) = -5"},
    {kMax, kF32, {0x7F800000, 0x7FC00000}, 0x7F800000, "max(inf, NaN) = inf"},
    {kMax, kF32, {0x00000002, 0x00000001}, 0x00000002, "max of subnormals"},
    {kMax, kF32, {0xFFC00000, 0x7F800001}, 0x7FC00000, "max(NaN, sNaN) = canonical NaN"},
    {kMax, kF32, {0xBF800000, 0xC0000000}, 0xBF800000, "max(-1, -2) = -1"},
    {kMax, kF32, {0xFF800000, 0xFF7FFFFF}, 0xFF7FFFFF, "max(-inf, -max) = -max"},
    // f16 add (accumulated in f32, rounded once at the end).
    {kAdd, kF16, {0x0000, 0x8000}, 0x0000, "+0 + -0 = +0"},
    {kAdd, kF16, {0x8000, 0x8000}, 0x8000, "-0 + -0 = -0"},
    {kAdd, kF16, {0x3E00, 0xBE00}, 0x0000, "1.5 - 1.5 = +0"},
    {kAdd, kF16, {0x0001, 0x0001}, 0x0002, "subnormal + subnormal"},
    {kAdd, kF16, {0x0400, 0x8001}, 0x03FF, "smallest normal - smallest subnormal = subnormal"},
    {kAdd, kF16, {0x03FF, 0x0001}, 0x0400, "largest subnormal + smallest carries into normal"},
    {kAdd, kF16, {0x7BFF, 0x7BFF}, 0x7C00, "65504 + 65504 overflows to inf"},
    {kAdd, kF16, {0x7BFF, 0x4C00}, 0x7C00, "65504 + 16 = 65520: tie to even overflows"},
    {kAdd, kF16, {0x7BFF, 0x4B80}, 0x7BFF, "65504 + 15 = 65519 rounds to 65504"},
    {kAdd, kF16, {0xFBFF, 0xFBFF}, 0xFC00, "-65504 - 65504 = -inf"},
    {kAdd, kF16, {0x7C00, 0xFC00}, 0x7E00, "inf - inf = NaN"},
    {kAdd, kF16, {0x7D01, 0x3C00}, 0x7E00, "signaling NaN + 1 = canonical NaN"},
    {kAdd, kF16, {0xFE55, 0x7C00}, 0x7E00, "negative NaN + inf = canonical NaN"},
    {kAdd, kF16, {0x3C00, 0x1000}, 0x3C00, "1 + 2^-11: tie rounds down to even"},
    {kAdd, kF16, {0x3C01, 0x1000}, 0x3C02, "(1 + ulp) + 2^-11: tie rounds up to even"},
    {kAdd, kF16, {0x3C00, 0x1001}, 0x3C01, "just above the tie rounds up"},
    {kAdd, kF16, {0x3C00, 0x0FFF}, 0x3C00, "just under the tie rounds down"},
    // f16 add, three contributions: one rounding at the end.
    {kAdd, kF16, {0x3C00, 0x1000, 0x1000}, 0x3C01, "1 + 2^-11 + 2^-11 = 1 + 2^-10 (rounded once)"},
    {kAdd, kF16, {0x7BFF, 0x7BFF, 0xFBFF}, 0x7BFF, "65504 + 65504 - 65504: no overflow in f32"},
    {kAdd, kF16, {0x0001, 0x0001, 0x8002}, 0x0000, "subnormals cancel to +0"},
    {kAdd, kF16, {0x8000, 0x8000, 0x8000}, 0x8000, "-0 - 0 - 0 = -0"},
    // f16 min/max.
    {kMin, kF16, {0x0000, 0x8000}, 0x8000, "min(+0, -0) = -0"},
    {kMax, kF16, {0x8000, 0x0000}, 0x0000, "max(-0, +0) = +0"},
    {kMin, kF16, {0x7E00, 0x4000}, 0x4000, "min(NaN, 2) = 2"},
    {kMax, kF16, {0x4000, 0xFD00}, 0x4000, "max(2, -sNaN) = 2"},
    {kMin, kF16, {0x0001, 0x8001}, 0x8001, "min of subnormals of opposite sign"},
    {kMax, kF16, {0x7C01, 0x7E00}, 0x7E00, "max(sNaN, NaN) = canonical NaN"},
    {kMin, kF16, {0xFC00, 0x7BFF}, 0xFC00, "min(-inf, 65504) = -inf"},
    {kMax, kF16, {0x3C00, 0x3C01}, 0x3C01, "max(1, 1 + ulp)"},
    // bf16 add (accumulated in f32, rounded once at the end).
    {kAdd, kBf16, {0x0000, 0x8000}, 0x0000, "+0 + -0 = +0"},
    {kAdd, kBf16, {0x8000, 0x8000}, 0x8000, "-0 + -0 = -0"},
    {kAdd, kBf16, {0x0001, 0x0001}, 0x0002, "subnormal + subnormal"},
    {kAdd, kBf16, {0x0080, 0x8001}, 0x007F, "smallest normal - smallest subnormal = subnormal"},
    {kAdd, kBf16, {0x3F80, 0x3B80}, 0x3F80, "1 + 2^-8: tie rounds down to even"},
    {kAdd, kBf16, {0x3F81, 0x3B80}, 0x3F82, "(1 + ulp) + 2^-8: tie rounds up to even"},
    {kAdd, kBf16, {0x3F80, 0x3B81}, 0x3F81, "1 + 2^-8 + 2^-15: just above the tie rounds up"},
    {kAdd, kBf16, {0x3F80, 0x3AFF}, 0x3F80, "1 + (just under 2^-8): rounds down"},
    {kAdd, kBf16, {0x7F7F, 0x7F7F}, 0x7F80, "max + max overflows to inf"},
    {kAdd, kBf16, {0x7F7F, 0x7B00}, 0x7F80, "max + half ulp: tie to even overflows"},
    {kAdd, kBf16, {0x7F7F, 0x7AFF}, 0x7F7F, "max + just under half ulp stays max"},
    {kAdd, kBf16, {0x7F80, 0xFF80}, 0x7FC0, "inf - inf = NaN"},
    {kAdd, kBf16, {0x7F81, 0x3F80}, 0x7FC0, "signaling NaN + 1 = canonical NaN"},
    {kAdd, kBf16, {0x3F80, 0xBF80}, 0x0000, "1 - 1 = +0"},
    {kAdd, kBf16, {0x3F80, 0x3B80, 0x3B80}, 0x3F81, "1 + 2^-8 + 2^-8 = 1 + 2^-7 (rounded once)"},
    {kMin, kBf16, {0x0000, 0x8000}, 0x8000, "min(+0, -0) = -0"},
    {kMax, kBf16, {0x7FC0, 0xC000}, 0xC000, "max(NaN, -2) = -2"},
    {kMin, kBf16, {0x0001, 0x0002}, 0x0001, "min of subnormals"},
    {kMax, kBf16, {0x7FC1, 0xFFC0}, 0x7FC0, "max(NaN, NaN) = canonical NaN"},
    // Integers: wrap-around add, signed/unsigned min/max, bitwise.
    {kAdd, kS32, {0x7FFFFFFF, 0x00000001}, 0x80000000, "INT32_MAX + 1 wraps to INT32_MIN"},
    {kAdd, kS32, {0x80000000, 0xFFFFFFFF}, 0x7FFFFFFF, "INT32_MIN - 1 wraps to INT32_MAX"},
    {kAdd, kS32, {0x00000005, 0xFFFFFFFD}, 0x00000002, "5 + -3 = 2"},
    {kAdd, kS32, {0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF, 0x00000003}, 0x80000000, "3 x INT32_MAX + 3 wraps"},
    {kAdd, kU32, {0xFFFFFFFF, 0x00000001}, 0x00000000, "UINT32_MAX + 1 wraps to 0"},
    {kAdd, kU32, {0xFFFFFFFF, 0xFFFFFFFF}, 0xFFFFFFFE, "UINT32_MAX + UINT32_MAX"},
    {kMin, kS32, {0xFFFFFFFF, 0x00000001}, 0xFFFFFFFF, "signed min(-1, 1) = -1"},
    {kMin, kS32, {0x80000000, 0x7FFFFFFF}, 0x80000000, "signed min(INT32_MIN, INT32_MAX)"},
    {kMin, kU32, {0xFFFFFFFF, 0x00000001}, 0x00000001, "unsigned min(UINT32_MAX, 1) = 1"},
    {kMin, kU32, {0x80000000, 0x7FFFFFFF}, 0x7FFFFFFF, "unsigned min(2^31, 2^31 - 1)"},
    {kMax, kS32, {0xFFFFFFFF, 0x00000001}, 0x00000001, "signed max(-1, 1) = 1"},
    {kMax, kS32, {0x80000000, 0x80000001}, 0x80000001, "signed max near INT32_MIN"},
    {kMax, kU32, {0xFFFFFFFF, 0x00000001}, 0xFFFFFFFF, "unsigned max(UINT32_MAX, 1)"},
    {kMax, kU32, {0x80000000, 0x7FFFFFFF}, 0x80000000, "unsigned max(2^31, 2^31 - 1)"},
    {kAnd, kU32, {0xF0F0F0F0, 0xFF00FF00}, 0xF000F000, "and"},
    {kOr, kU32, {0xF0F0F0F0, 0xFF00FF00}, 0xFFF0FFF0, "or"},
    {kXor, kU32, {0xF0F0F0F0, 0xFF00FF00}, 0x0FF00FF0, "xor"},
    {kOr, kS32, {0x80000000, 0x00000001}, 0x80000001, "or of the sign bit"},
    {kAnd, kS32, {0xFFFFFFFF, 0x80000001, 0xC0000003}, 0x80000001, "and of three"},
    {kXor, kS32, {0x12345678, 0xFFFFFFFF}, 0xEDCBA987, "xor with all ones"},
    {kAdd, kS64, {0x7FFFFFFFFFFFFFFF, 0x0000000000000001}, 0x8000000000000000, "INT64_MAX + 1 wraps"},
    {kAdd, kS64, {0x00000000FFFFFFFF, 0x0000000000000001}, 0x0000000100000000, "carry across 32 bits"},
    {kAdd, kU64, {0xFFFFFFFFFFFFFFFF, 0x0000000000000002}, 0x0000000000000001, "UINT64_MAX + 2 wraps to 1"},
    {kAdd, kU64, {0x00000000FFFFFFFF, 0x0000000000000001}, 0x0000000100000000, "carry across 32 bits"},
    {kMin, kS64, {0x8000000000000000, 0x7FFFFFFFFFFFFFFF}, 0x8000000000000000, "signed min(INT64_MIN, INT64_MAX)"},
    {kMin, kS64, {0xFFFFFFFFFFFFFFFB, 0x0000000000000003}, 0xFFFFFFFFFFFFFFFB, "signed min(-5, 3) = -5"},
    {kMin, kU64, {0x8000000000000000, 0x0000000000000005}, 0x0000000000000005, "unsigned min(2^63, 5) = 5"},
    {kMin, kU64, {0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE}, 0xFFFFFFFFFFFFFFFE, "unsigned min near the top"},
    {kMax, kS64, {0x8000000000000000, 0xFFFFFFFFFFFFFFFB}, 0xFFFFFFFFFFFFFFFB, "signed max(INT64_MIN, -5) = -5"},
    {kMax, kS64, {0x0000000100000000, 0x00000000FFFFFFFF}, 0x0000000100000000, "upper word decides"},
    {kMax, kU64, {0x8000000000000000, 0x0000000000000005}, 0x8000000000000000, "unsigned max(2^63, 5)"},
    {kMax, kU64, {0x0000000100000000, 0x00000000FFFFFFFF}, 0x0000000100000000, "upper word decides"},
    {kXor, kS64, {0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFF, 0x00000000FFFFFFFF}, 0xFEDCBA9889ABCDEF, "xor of three"},
    {kAnd, kU64, {0xFFFF0000FFFF0000, 0xFF00FF00FF00FF00, 0xF0F0F0F0F0F0F0F0}, 0xF0000000F0000000, "and of three"},
    {kOr, kU64, {0x8000000000000000, 0x0000000000000001}, 0x8000000000000001, "or of both ends"},
    {kAnd, kS64, {0xFFFFFFFF00000000, 0x0F0F0F0F0F0F0F0F}, 0x0F0F0F0F00000000, "and"},
    {kOr, kS64, {0x00000000FFFF0000, 0xFFFF000000000000}, 0xFFFF0000FFFF0000, "or"},
    {kXor, kU64, {0xAAAAAAAAAAAAAAAA, 0x5555555555555555}, 0xFFFFFFFFFFFFFFFF, "xor"},
};

}  // namespace

const std::vector<LaneFact>& lane_facts() { return kLaneFacts; }

}  // namespace nvsvp::testbench
