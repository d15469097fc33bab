#include "nvsvp/testbench/lanes.hpp"

#include <cstdio>
#include <stdexcept>

namespace nvsvp::testbench {

bool is_float(ReduceType type) {
  return type == ReduceType::f32 || type == ReduceType::f16 || type == ReduceType::bf16;
}

int lane_bytes(ReduceType type) {
  switch (type) {
    case ReduceType::f16:
    case ReduceType::bf16: return 2;
    case ReduceType::s64:
    case ReduceType::u64: return 8;
    default: return 4;
  }
}

std::uint64_t get_lane(const Beat& beat, ReduceType type, int lane) {
  const int width = lane_bytes(type);
  std::uint64_t value = 0;
  for (int byte = width - 1; byte >= 0; --byte) value = (value << 8) | beat[static_cast<std::size_t>(lane * width + byte)];
  return value;
}

void set_lane(Beat& beat, ReduceType type, int lane, std::uint64_t value) {
  const int width = lane_bytes(type);
  for (int byte = 0; byte < width; ++byte) {
    beat[static_cast<std::size_t>(lane * width + byte)] = static_cast<std::uint8_t>(value >> (8 * byte));
  }
}

Beat splat(ReduceType type, std::uint64_t value) {
  Beat beat{};
  for (int lane = 0; lane < lane_count(type); ++lane) set_lane(beat, type, lane, value);
  return beat;
}

FloatFormat float_format(ReduceType type) {
  switch (type) {
    case ReduceType::f32: return {8, 23};
    case ReduceType::f16: return {5, 10};
    case ReduceType::bf16: return {8, 7};
    default: throw std::logic_error("float_format: not a float type");
  }
}

std::uint64_t canonical_nan(ReduceType type) {
  switch (type) {
    case ReduceType::f32: return 0x7FC00000u;
    case ReduceType::f16: return 0x7E00u;
    case ReduceType::bf16: return 0x7FC0u;
    default: throw std::logic_error("canonical_nan: not a float type");
  }
}

bool is_nan(ReduceType type, std::uint64_t bits) {
  const FloatFormat f = float_format(type);
  return f.exponent_of(bits) == f.exp_all_ones() && (bits & f.frac_mask()) != 0;
}

OperandClass classify(ReduceType type, std::uint64_t v) {
  if (is_float(type)) {
    const FloatFormat f = float_format(type);
    const std::uint64_t exponent = f.exponent_of(v);
    const std::uint64_t fraction = v & f.frac_mask();
    if (exponent == 0) return fraction == 0 ? OperandClass::zero : OperandClass::subnormal;
    if (exponent == f.exp_all_ones()) return fraction == 0 ? OperandClass::inf : OperandClass::nan;
    return OperandClass::normal;
  }
  if (v == 0) return OperandClass::zero;
  const int bits = lane_bytes(type) * 8;
  const std::uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  const bool is_signed = type == ReduceType::s32 || type == ReduceType::s64;
  if (is_signed) {
    const std::uint64_t sign = 1ull << (bits - 1);
    const bool negative = (v & sign) != 0;
    const std::uint64_t magnitude = negative ? ((~v + 1) & mask) : v;  // INT_MIN stays INT_MIN
    if (magnitude <= 255) return OperandClass::small;
    // Within 255 of the maximum (sign - 1) or of the minimum (sign).
    if ((!negative && v >= sign - 256) || (negative && v <= sign + 255)) return OperandClass::extreme;
    return OperandClass::large;
  }
  if (v <= 255) return OperandClass::small;
  if (v >= mask - 255) return OperandClass::extreme;
  return OperandClass::large;
}

const char* to_string(OperandClass c) {
  switch (c) {
    case OperandClass::zero: return "zero";
    case OperandClass::subnormal: return "subnormal";
    case OperandClass::normal: return "normal";
    case OperandClass::inf: return "inf";
    case OperandClass::nan: return "nan";
    case OperandClass::small: return "small";
    case OperandClass::large: return "large";
    case OperandClass::extreme: return "extreme";
  }
  return "?";
}

const std::vector<OperandClass>& classes_of(ReduceType type) {
  static const std::vector<OperandClass> float_classes = {OperandClass::zero, OperandClass::subnormal,
                                                          OperandClass::normal, OperandClass::inf,
                                                          OperandClass::nan};
  static const std::vector<OperandClass> int_classes = {OperandClass::zero, OperandClass::small,
                                                        OperandClass::large, OperandClass::extreme};
  return is_float(type) ? float_classes : int_classes;
}

const std::vector<OpType>& legal_op_types() {
  static const std::vector<OpType> pairs = [] {
    std::vector<OpType> list;
    for (const ReduceType type : {ReduceType::f32, ReduceType::f16, ReduceType::bf16, ReduceType::s32,
                                  ReduceType::u32, ReduceType::s64, ReduceType::u64}) {
      for (const ReduceOp op : {ReduceOp::add, ReduceOp::min, ReduceOp::max, ReduceOp::bit_and,
                                ReduceOp::bit_or, ReduceOp::bit_xor}) {
        if (is_legal(op, type)) list.push_back({op, type});
      }
    }
    return list;
  }();
  return pairs;
}

bool is_legal(ReduceOp op, ReduceType type) {
  const auto op_code = static_cast<unsigned>(op);
  const auto type_code = static_cast<unsigned>(type);
  if (op_code > 5 || type_code > 6) return false;
  return op_code <= 2 || !is_float(type);
}

const char* op_name(ReduceOp op) {
  static const char* const names[] = {"add", "min", "max", "and", "or", "xor", "op6", "op7"};
  const auto code = static_cast<unsigned>(op);
  return code < 8 ? names[code] : "op?";
}

const char* type_name(ReduceType type) {
  static const char* const names[] = {"f32", "f16", "bf16", "s32", "u32", "s64", "u64", "type7"};
  const auto code = static_cast<unsigned>(type);
  return code < 8 ? names[code] : "type?";
}

std::string hex(std::uint64_t value, int digits) {
  char text[24];
  std::snprintf(text, sizeof text, "%0*llx", digits, static_cast<unsigned long long>(value));
  return text;
}

std::string beat_lanes_hex(const Beat& beat, ReduceType type) {
  std::string text;
  for (int lane = 0; lane < lane_count(type); ++lane) {
    if (lane > 0) text += ' ';
    text += hex(get_lane(beat, type, lane), lane_bytes(type) * 2);
  }
  return text;
}

std::string beat_hex(const Beat& beat) {
  std::string text;
  for (int byte = 15; byte >= 0; --byte) text += hex(beat[static_cast<std::size_t>(byte)], 2);
  return text;
}

}  // namespace nvsvp::testbench
