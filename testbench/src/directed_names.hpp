// Internal to the testbench: short names of the operations and element types, for the directed
// cases and their lane facts (directed.cpp, lane_facts.cpp), which list many of them per line.
#pragma once

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::testbench::directed_names {

using reduction::ReduceOp;
using reduction::ReduceType;

constexpr ReduceOp kAdd = ReduceOp::add;
constexpr ReduceOp kMin = ReduceOp::min;
constexpr ReduceOp kMax = ReduceOp::max;
constexpr ReduceOp kAnd = ReduceOp::bit_and;
constexpr ReduceOp kOr = ReduceOp::bit_or;
constexpr ReduceOp kXor = ReduceOp::bit_xor;
constexpr ReduceType kF32 = ReduceType::f32;
constexpr ReduceType kF16 = ReduceType::f16;
constexpr ReduceType kBf16 = ReduceType::bf16;
constexpr ReduceType kS32 = ReduceType::s32;
constexpr ReduceType kU32 = ReduceType::u32;
constexpr ReduceType kS64 = ReduceType::s64;
constexpr ReduceType kU64 = ReduceType::u64;

}  // namespace nvsvp::testbench::directed_names
