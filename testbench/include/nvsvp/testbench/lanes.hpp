// Lanes of a 16-byte beat and the operand classes the coverage is counted in. Independent of the
// unit's own arithmetic (reduce_alu.hpp): the testbench must not judge the unit by its own code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::testbench {

using reduction::Beat;
using reduction::ReduceOp;
using reduction::ReduceType;

bool is_float(ReduceType type);
int lane_bytes(ReduceType type);  // 4 (f32, s32, u32), 2 (f16, bf16), 8 (s64, u64)
inline int lane_count(ReduceType type) { return 16 / lane_bytes(type); }
std::uint64_t get_lane(const Beat& beat, ReduceType type, int lane);
void set_lane(Beat& beat, ReduceType type, int lane, std::uint64_t value);
Beat splat(ReduceType type, std::uint64_t value);  // the same value in every lane
template <typename T>
Beat make_beat(ReduceType type, const std::vector<T>& lanes) {
  Beat beat{};
  for (int i = 0; i < lane_count(type) && i < static_cast<int>(lanes.size()); ++i) {
    set_lane(beat, type, i, static_cast<std::uint64_t>(lanes[static_cast<std::size_t>(i)]));
  }
  return beat;
}

// Field layout of the three float formats.
struct FloatFormat {
  int exp_bits;
  int frac_bits;
  int width() const { return 1 + exp_bits + frac_bits; }
  std::uint64_t exp_all_ones() const { return (1ull << exp_bits) - 1; }
  std::uint64_t sign_bit() const { return 1ull << (exp_bits + frac_bits); }
  std::uint64_t frac_mask() const { return (1ull << frac_bits) - 1; }
  std::uint64_t inf() const { return exp_all_ones() << frac_bits; }
  std::uint64_t quiet_bit() const { return 1ull << (frac_bits - 1); }
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  std::uint64_t exponent_of(std::uint64_t bits) const { return (bits >> frac_bits) & exp_all_ones(); }
  std::uint64_t encode(bool negative, std::uint64_t exponent, std::uint64_t fraction) const {
    return (negative ? sign_bit() : 0) | (exponent << frac_bits) | (fraction & frac_mask());
  }
};
FloatFormat float_format(ReduceType type);  // f32, f16 or bf16 only

// The policy of the unit: every NaN result is this quiet NaN (0x7FC00000, 0x7E00, 0x7FC0).
std::uint64_t canonical_nan(ReduceType type);
bool is_nan(ReduceType type, std::uint64_t bits);

// Coverage classes of one lane operand. Floats: zero, subnormal, normal, inf, nan. Integers
// (where these make no sense): zero; small = magnitude 1..255; extreme = within 255 of the type's
// minimum or maximum (wrap-around and signedness territory); large = everything else.
enum class OperandClass : std::uint8_t { zero, subnormal, normal, inf, nan, small, large, extreme };
inline constexpr int operand_class_count = 8;
OperandClass classify(ReduceType type, std::uint64_t lane_value);
const char* to_string(OperandClass operand_class);
const std::vector<OperandClass>& classes_of(ReduceType type);

// Every (op, type) pair the unit accepts: add/min/max on every type, and/or/xor on integers.
struct OpType {
  ReduceOp op;
  ReduceType type;
};
const std::vector<OpType>& legal_op_types();
bool is_legal(ReduceOp op, ReduceType type);
const char* op_name(ReduceOp op);      // "add", ..., or "op7" for an invalid code
const char* type_name(ReduceType type);  // "f32", ..., or "type7" for an invalid code

std::string hex(std::uint64_t value, int digits);
// Lanes of a beat in hex, most significant first within each lane, lane 0 first: "3c00 0000 ...".
std::string beat_lanes_hex(const Beat& beat, ReduceType type);
std::string beat_hex(const Beat& beat);  // 32 hex digits, byte 15 first (the RTL word)

}  // namespace nvsvp::testbench
