// The reductions a GPU forms itself (a load's partials added to its result, a reduce_write
// combined into memory), with the reduction unit's arithmetic (reduce_alu.hpp: widen, combine,
// finish), bit-exact with the switch's, so that every place a sum is formed rounds alike.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/reduction/reduce_alu.hpp"

namespace nvsvp::model {

// Firmware names reductions with hw::Multimem{Op,Type}; the values are the reduction unit's.
static_assert(static_cast<int>(hw::MultimemOp::bit_xor) == static_cast<int>(reduction::ReduceOp::bit_xor));
static_assert(static_cast<int>(hw::MultimemOp::max) == static_cast<int>(reduction::ReduceOp::max));
static_assert(static_cast<int>(hw::MultimemType::bf16) == static_cast<int>(reduction::ReduceType::bf16));
static_assert(static_cast<int>(hw::MultimemType::u64) == static_cast<int>(reduction::ReduceType::u64));

// `into` = reduce(`into`, `operand`) over `bytes`, 16-byte beat by beat.
void accumulate(uint8_t* into, const uint8_t* operand, size_t bytes, reduction::ReduceOp op,
                reduction::ReduceType type);

}  // namespace nvsvp::model
