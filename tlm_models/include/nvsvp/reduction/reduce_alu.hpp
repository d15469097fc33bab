// Arithmetic of the multimem reduction unit, bit-exact with rtl/reduce_alu.sv (package
// reduce_alu: widen, combine, finish). Floats are computed with integer bit manipulation that
// mirrors the RTL, so the results do not depend on the compiler or its flags. The one exception
// is f32_add's fast path, which returns the host's binary32 sum when both operands are normal or
// zero and the sum is normal, or exactly zero (two zeros, or x and -x). The host's add and the
// integer path are then both the exact sum rounded to nearest even (a zero sum is +0 unless both
// operands are -0), so they are the same bits. Flush-to-zero and denormals-are-zero cannot act on
// such operands and sums; a zero sum from other operands, which could be a flushed subnormal, is
// left to the integer path. The fast path relies on the host add being IEEE 754 binary32 in
// round-to-nearest-even mode: it is compiled out under -ffast-math or excess precision
// (FLT_EVAL_METHOD != 0), and nothing in the process changes the rounding mode.
// test_reduce_alu.cpp compares it with the integer path.
//
// Accumulator layout (256 bits per buffer slot): f16/bf16 keep lane i as an f32 at bits
// [32i+31:32i] (8 lanes); f32 and the integer types keep the 128-bit value at bits [127:0] and
// bits [255:128] are zero. IEEE 754 round-to-nearest-even, no flush-to-zero; min/max are IEEE
// 754-2019 minimumNumber/maximumNumber; every NaN produced is the canonical quiet NaN.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::reduction {

// 256 bits: word i is bits [32i+31:32i].
using Accumulator = std::array<std::uint32_t, 8>;

inline constexpr std::uint32_t kCanonicalNanF32 = 0x7FC00000u;
inline constexpr std::uint16_t kCanonicalNanF16 = 0x7E00u;
inline constexpr std::uint16_t kCanonicalNanBf16 = 0x7FC0u;

// The first contribution of a beat: f16/bf16 lanes widened to f32 (exact), f32 NaNs made
// canonical, integers copied.
Accumulator widen(ReduceType type, const Beat& operand);

// A later contribution folded into the accumulator. A bitwise op on a float type is invalid (the
// unit rejects such contexts); it computes an add, as the RTL does.
Accumulator combine(ReduceOp op, ReduceType type, const Accumulator& acc, const Beat& operand);

// The result beat of an accumulator: f16/bf16 lanes rounded once from f32 (RNE); the other
// types pass bits [127:0] through.
Beat finish(ReduceType type, const Accumulator& acc);

// and/or/xor need an integer type.
bool op_valid_for_type(ReduceOp op, ReduceType type);

const char* to_string(ReduceOp op);      // "add", "min", "max", "and", "or", "xor"
const char* to_string(ReduceType type);  // "f32", "f16", "bf16", "s32", "u32", "s64", "u64"
// Exact, lower-case names as printed by to_string; false (and `out` untouched) otherwise.
bool parse_reduce_op(const std::string& text, ReduceOp& out);
bool parse_reduce_type(const std::string& text, ReduceType& out);

// Lanes in a 16-byte beat: 4 for f32/s32/u32, 8 for f16/bf16, 2 for s64/u64.
int lanes_per_beat(ReduceType type);

// Lane arithmetic on raw encodings (the building blocks of the above, exposed for tests and
// the vector-file checker).
std::uint32_t f32_add(std::uint32_t a, std::uint32_t b);
std::uint32_t f32_add_integer(std::uint32_t a, std::uint32_t b);  // the RTL's steps, no fast path
std::uint32_t f32_min(std::uint32_t a, std::uint32_t b);  // minimumNumber
std::uint32_t f32_max(std::uint32_t a, std::uint32_t b);  // maximumNumber
std::uint32_t f16_to_f32(std::uint16_t half);             // exact; NaN -> canonical
std::uint32_t bf16_to_f32(std::uint16_t brain);           // exact; NaN -> canonical
std::uint16_t f32_to_f16(std::uint32_t single);           // RNE
std::uint16_t f32_to_bf16(std::uint32_t single);          // RNE

}  // namespace nvsvp::reduction
