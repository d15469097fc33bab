// The Verilated RTL arithmetic (rtl/reduce_alu.sv through tests/reduction/alu_harness.sv)
// against the C++ ALU, bit for bit: first contributions, single combines, chains fed back through
// the RTL, and finish on arbitrary accumulators, for every op x type (the bitwise ops on
// floats too: the unit rejects them, but both sides define them as add). The RTL is purely
// combinational: set the inputs, eval(), read the outputs.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "Valu_harness.h"
#include "alu_test_support.hpp"
#include "nvsvp/reduction/reduce_alu.hpp"
#include "verilated.h"

namespace nvsvp::reduction {
namespace {

using test::get_lane;
using test::hex;
using test::kF32Format;
using test::lane_bits;
using test::OperandGenerator;
using test::set_lane;
using test::Tally;

class RtlAlu {
 public:
  RtlAlu()
      : context_(std::make_unique<VerilatedContext>()),
        top_(std::make_unique<Valu_harness>(context_.get())) {}
  ~RtlAlu() { top_->final(); }

  Accumulator combine(ReduceOp op, ReduceType type, bool first, const Accumulator& acc, const Beat& operand) {
    top_->op_code = static_cast<std::uint8_t>(op);
    top_->type_code = static_cast<std::uint8_t>(type);
    top_->first = first ? 1 : 0;
    for (int word = 0; word < 8; ++word) top_->acc_in[word] = acc[word];
    for (int word = 0; word < 4; ++word)
      top_->operand[word] = static_cast<std::uint32_t>(get_lane(operand, 32, word));
    top_->eval();
    Accumulator out{};
    for (int word = 0; word < 8; ++word) out[word] = top_->acc_out[word];
    return out;
  }

  Beat finish(ReduceType type, const Accumulator& acc) {
    top_->type_code = static_cast<std::uint8_t>(type);
    for (int word = 0; word < 8; ++word) top_->finish_acc[word] = acc[word];
    top_->eval();
    Beat out{};
    for (int word = 0; word < 4; ++word) set_lane(out, 32, word, top_->result[word]);
    return out;
  }

 private:
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Valu_harness> top_;
};

std::string hex(const Accumulator& acc) {
  std::string text;
  for (int word = 7; word >= 0; --word) text += hex(acc[word], 8).substr(word == 7 ? 0 : 2);
  return text;
}

constexpr ReduceType kAllTypes[] = {ReduceType::f32, ReduceType::f16, ReduceType::bf16, ReduceType::s32,
                                    ReduceType::u32, ReduceType::s64, ReduceType::u64};
constexpr ReduceOp kAllOps[] = {ReduceOp::add,     ReduceOp::min,    ReduceOp::max,
                                ReduceOp::bit_and, ReduceOp::bit_or, ReduceOp::bit_xor};

std::string context_text(ReduceOp op, ReduceType type, const Accumulator& acc, const Beat& operand) {
  return std::string(to_string(op)) + "." + to_string(type) + " acc " + hex(acc) + " operand " +
         test::hex(operand);
}

// An accumulator as the unit could hold it (a widened beat, possibly combined once), or, for a
// quarter of the draws, arbitrary bits (f32 lanes of any value, non-canonical NaNs included).
Accumulator random_accumulator(OperandGenerator& generator, ReduceOp op, ReduceType type) {
  if (generator.below(4) == 0) {
    Accumulator acc{};
    for (auto& word : acc) word = static_cast<std::uint32_t>(generator.next());
    return acc;
  }
  const Beat first = generator.beat(type);
  Accumulator acc = widen(type, first);
  if (generator.below(2) == 0) acc = combine(op, type, acc, generator.beat(type, first));
  return acc;
}

// Operand lanes steered towards the accumulator's values (cancellation, ties).
Beat near_accumulator(ReduceType type, const Accumulator& acc) {
  Beat partner{};
  for (int lane = 0; lane < 8; ++lane) {
    if (type == ReduceType::f16) set_lane(partner, 16, lane, f32_to_f16(acc[lane]));
    if (type == ReduceType::bf16) set_lane(partner, 16, lane, f32_to_bf16(acc[lane]));
    if (type == ReduceType::f32 && lane < 4) set_lane(partner, 32, lane, acc[lane]);
  }
  return partner;
}

TEST(ReduceAluRtl, FirstContributionWidens) {
  RtlAlu rtl;
  OperandGenerator generator(1001);
  Tally tally("RTL first contribution (widen)");
  for (ReduceType type : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      for (int i = 0; i < 6'000; ++i) {
        Accumulator ignored{};
        for (auto& word : ignored) word = static_cast<std::uint32_t>(generator.next());
        const Beat operand = generator.beat(type);
        const Accumulator got = rtl.combine(op, type, true, ignored, operand);
        const Accumulator want = widen(type, operand);
        tally.record(got == want, [&] {
          return context_text(op, type, ignored, operand) + ": RTL " + hex(got) + ", model " + hex(want);
        });
      }
    }
  }
}

TEST(ReduceAluRtl, RandomCombinesAndFinish) {
  RtlAlu rtl;
  OperandGenerator generator(1002);
  Tally combines("RTL combine (random)"), finishes("RTL finish of RTL combine (random)");
  for (ReduceType type : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      for (int i = 0; i < 30'000; ++i) {
        const Accumulator acc = random_accumulator(generator, op, type);
        const Beat operand = generator.beat(type, near_accumulator(type, acc));
        const Accumulator got = rtl.combine(op, type, false, acc, operand);
        const Accumulator want = combine(op, type, acc, operand);
        combines.record(got == want, [&] {
          return context_text(op, type, acc, operand) + ": RTL " + hex(got) + ", model " + hex(want);
        });
        const Beat got_beat = rtl.finish(type, got);
        const Beat want_beat = finish(type, got);
        finishes.record(got_beat == want_beat, [&] {
          return std::string(to_string(type)) + " finish of " + hex(got) + ": RTL " + test::hex(got_beat) +
                 ", model " + test::hex(want_beat);
        });
      }
    }
  }
}

// Contributions chained through the RTL (its own output fed back) against the model's chain.
TEST(ReduceAluRtl, ChainedContributions) {
  RtlAlu rtl;
  OperandGenerator generator(1003);
  Tally steps("RTL chained combine steps"), results("RTL chained results (finish)");
  for (ReduceType type : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      for (int i = 0; i < 1'000; ++i) {
        const int count = 2 + static_cast<int>(generator.below(15));
        Beat operand = generator.beat(type);
        Accumulator rtl_acc = rtl.combine(op, type, true, Accumulator{}, operand);
        Accumulator model_acc = widen(type, operand);
        steps.record(rtl_acc == model_acc,
                     [&] { return context_text(op, type, Accumulator{}, operand) + " (first)"; });
        for (int k = 1; k < count; ++k) {
          operand = generator.beat(type, operand);
          const Accumulator before = rtl_acc;
          rtl_acc = rtl.combine(op, type, false, rtl_acc, operand);
          model_acc = combine(op, type, model_acc, operand);
          steps.record(rtl_acc == model_acc, [&] {
            return context_text(op, type, before, operand) + " step " + std::to_string(k) + ": RTL " +
                   hex(rtl_acc) + ", model " + hex(model_acc);
          });
        }
        const Beat got = rtl.finish(type, rtl_acc);
        const Beat want = finish(type, model_acc);
        results.record(got == want, [&] {
          return std::string(to_string(type)) + ": RTL " + test::hex(got) + ", model " + test::hex(want);
        });
      }
    }
  }
}

// finish on accumulators drawn to hit f16/bf16 rounding: values across and beyond the
// f16 range, exact ties and their neighbours, and arbitrary bits.
TEST(ReduceAluRtl, FinishArbitraryAccumulators) {
  RtlAlu rtl;
  OperandGenerator generator(1004);
  Tally tally("RTL finish (arbitrary accumulators)");
  for (ReduceType type : kAllTypes) {
    for (int i = 0; i < 40'000; ++i) {
      Accumulator acc{};
      for (auto& word : acc) {
        switch (generator.below(4)) {
          case 0:
            word = kF32Format.encode(generator.below(2), 98 + generator.below(48), generator.below(1u << 23));
            break;
          case 1:
            word = (static_cast<std::uint32_t>(generator.next()) & ~0x1FFFu) |
                   (0x1000u + generator.below(3) - 1u);
            break;
          case 2:
            word = (static_cast<std::uint32_t>(generator.next()) & ~0xFFFFu) |
                   (0x8000u + generator.below(3) - 1u);
            break;
          default:
            word = generator.float_bits(kF32Format, static_cast<std::uint32_t>(generator.next()));
        }
      }
      const Beat got = rtl.finish(type, acc);
      const Beat want = finish(type, acc);
      tally.record(got == want, [&] {
        return std::string(to_string(type)) + " finish of " + hex(acc) + ": RTL " + test::hex(got) +
               ", model " + test::hex(want);
      });
    }
  }
}

// Every ordered pair of special and boundary values, in every lane, for every op x type.
TEST(ReduceAluRtl, DirectedPairs) {
  RtlAlu rtl;
  Tally tally("RTL directed pairs (widen, combine, finish)");
  for (ReduceType type : kAllTypes) {
    const int width = lane_bits(type);
    std::vector<std::uint64_t> values;
    if (test::is_float_type(type)) {
      for (std::uint32_t v : test::directed_values(test::format_of(type))) values.push_back(v);
    } else {
      values = test::directed_int_values(width);
    }
    for (ReduceOp op : kAllOps) {
      for (std::uint64_t a : values) {
        for (std::uint64_t b : values) {
          Beat beat_a{}, beat_b{};
          for (int lane = 0; lane < 128 / width; ++lane) {
            set_lane(beat_a, width, lane, a);
            set_lane(beat_b, width, lane, b);
          }
          const Accumulator rtl_first = rtl.combine(op, type, true, Accumulator{}, beat_a);
          const Accumulator rtl_acc = rtl.combine(op, type, false, rtl_first, beat_b);
          const Beat rtl_out = rtl.finish(type, rtl_acc);
          const Accumulator model_first = widen(type, beat_a);
          const Accumulator model_acc = combine(op, type, model_first, beat_b);
          const Beat model_out = finish(type, model_acc);
          tally.record(rtl_first == model_first && rtl_acc == model_acc && rtl_out == model_out, [&] {
            return std::string(to_string(op)) + "." + to_string(type) + "(" + hex(a, width / 4) + ", " +
                   hex(b, width / 4) + "): RTL " + test::hex(rtl_out) + ", model " + test::hex(model_out);
          });
        }
      }
    }
  }
}

}  // namespace
}  // namespace nvsvp::reduction
