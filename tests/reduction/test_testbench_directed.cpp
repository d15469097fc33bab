// The directed suite of the testbench on every backend, and its hand-worked lane results checked
// once more with the host's own arithmetic (IEEE float, _Float16, integer wrap-around).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "nvsvp/testbench/directed.hpp"
#include "nvsvp/testbench/lanes.hpp"
#include "nvsvp/testbench/units.hpp"

namespace nvsvp::testbench {
namespace {

std::function<std::unique_ptr<ReductionUnit>()> factory(const std::string& backend, double ready_probability) {
  return [backend, ready_probability, n = std::uint64_t{0}]() mutable {
    UnitOptions options;
    options.backend = backend;
    options.ready_probability = ready_probability;
    options.ready_seed = ++n;
    return make_unit_under_test(options);
  };
}

void expect_suite_passes(const std::string& backend, double ready_probability) {
  const DirectedReport report = run_directed(factory(backend, ready_probability), nullptr);
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(report.passed, directed_cases().size());
  for (const std::string& failure : report.failures) ADD_FAILURE() << failure;
}

TEST(TestbenchDirected, SuitePassesOnRtl) { expect_suite_passes("rtl", 1.0); }
TEST(TestbenchDirected, SuitePassesOnRtlWithBackPressure) { expect_suite_passes("rtl", 0.3); }
TEST(TestbenchDirected, SuitePassesOnModel) { expect_suite_passes("model", 1.0); }
TEST(TestbenchDirected, SuitePassesOnBoth) { expect_suite_passes("both", 0.5); }

TEST(TestbenchDirected, SuiteCoversEveryErrorAndTheBuffer) {
  // Between them the cases raise every status bit and evict, pass through and complete beats.
  std::uint32_t sticky = 0;
  std::uint64_t evicted = 0, passthrough = 0, completed = 0;
  std::size_t lane_facts_of_type[7] = {};
  for (const DirectedCase& c : directed_cases()) {
    std::uint32_t raised = c.expected_status.sticky;
    for (const DirectedStep& step : c.steps) raised |= step.clear_after;  // cleared bits were raised first
    sticky |= raised;
    evicted += c.expected_status.counters.evicted_beats;
    passthrough += c.expected_status.counters.passthrough_beats;
    completed += c.expected_status.counters.completed_beats;
  }
  for (const LaneFact& fact : lane_facts()) ++lane_facts_of_type[static_cast<int>(fact.type)];
  EXPECT_EQ(sticky, 0x3Fu);
  EXPECT_GE(evicted, 3u);
  EXPECT_GE(passthrough, 2u);
  EXPECT_GE(completed, 40u);
  for (int type = 0; type < 7; ++type) EXPECT_GE(lane_facts_of_type[type], 4u) << type_name(static_cast<ReduceType>(type));
}

// A failing case is reported as failing: the suite is not blind. A unit that answers every
// command with nothing fails every case that expects output.
class SilentUnit : public ReductionUnit {
 public:
  void process(const std::vector<Command>&, std::vector<ResultBeat>&) override {}
  ReductionStatus status() const override { return {}; }
  void clear_status(std::uint32_t) override {}
  std::uint64_t cycles() const override { return 0; }
  std::string backend_name() const override { return "silent"; }
};

TEST(TestbenchDirected, SilentUnitFailsTheSuite) {
  const DirectedReport report = run_directed([] { return std::make_unique<SilentUnit>(); }, nullptr);
  EXPECT_EQ(report.passed, 0u);
  EXPECT_EQ(report.failed, directed_cases().size());
  ASSERT_FALSE(report.failures.empty());
  EXPECT_NE(report.failures.front().find("expected"), std::string::npos) << report.failures.front();
}

// ---- The lane facts against the host's arithmetic -------------------------------------------

float directed_float_of(std::uint64_t bits) {
  const auto word = static_cast<std::uint32_t>(bits);
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}
std::uint32_t directed_bits_of(float f) {
  std::uint32_t word;
  std::memcpy(&word, &f, sizeof word);
  return word;
}
float widen_half(std::uint64_t bits) {
  const auto word = static_cast<std::uint16_t>(bits);
  _Float16 h;
  std::memcpy(&h, &word, sizeof h);
  return static_cast<float>(h);
}
std::uint16_t half_bits(float f) {
  const _Float16 h = static_cast<_Float16>(f);  // the host's IEEE conversion, round to nearest even
  std::uint16_t word;
  std::memcpy(&word, &h, sizeof word);
  return word;
}
float widen_brain(std::uint64_t bits) { return directed_float_of(bits << 16); }  // bf16 is the top half of f32
// Round to bf16 with the host's double arithmetic: 8 significant bits (fixed quantum 2^-133
// below the normal range), ties to even by nearbyint in the default rounding mode.
std::uint16_t brain_bits(float f) {
  if (std::isnan(f)) return 0x7FC0;
  if (std::isinf(f) || f == 0) return static_cast<std::uint16_t>(directed_bits_of(f) >> 16);
  int exponent = 0;
  std::frexp(static_cast<double>(f), &exponent);  // |f| in [2^(exponent-1), 2^exponent)
  const int quantum = std::max(exponent - 8, -133);
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(static_cast<double>(f), -quantum)), quantum);
  const double largest = std::ldexp(255.0, 120);  // 0x7F7F
  if (std::fabs(rounded) > largest) return f > 0 ? 0x7F80 : 0xFF80;
  return static_cast<std::uint16_t>(directed_bits_of(static_cast<float>(rounded)) >> 16);
}

// IEEE 754-2019 minimumNumber / maximumNumber on host floats; returns the index of the operand
// chosen, or -1 for NaN.
int pick_min_max(float a, float b, bool want_max) {
  if (std::isnan(a) && std::isnan(b)) return -1;
  if (std::isnan(a)) return 1;
  if (std::isnan(b)) return 0;
  if (a == b) {
    if (a == 0 && std::signbit(a) != std::signbit(b)) return (std::signbit(a) != want_max) ? 0 : 1;
    return 0;
  }
  return ((a < b) != want_max) ? 0 : 1;
}

std::uint64_t host_float_result(const LaneFact& fact) {
  const ReduceType type = fact.type;
  auto widen = [&](std::uint64_t bits) {
    return type == ReduceType::f32 ? directed_float_of(bits) : type == ReduceType::f16 ? widen_half(bits) : widen_brain(bits);
  };
  if (fact.op == ReduceOp::add) {
    float acc = widen(fact.operands[0]);
    for (std::size_t i = 1; i < fact.operands.size(); ++i) acc = acc + widen(fact.operands[i]);
    if (std::isnan(acc)) return canonical_nan(type);
    if (type == ReduceType::f32) return directed_bits_of(acc);
    return type == ReduceType::f16 ? half_bits(acc) : brain_bits(acc);
  }
  std::uint64_t chosen = fact.operands[0];
  for (std::size_t i = 1; i < fact.operands.size(); ++i) {
    const int pick = pick_min_max(widen(chosen), widen(fact.operands[i]), fact.op == ReduceOp::max);
    chosen = pick < 0 ? canonical_nan(type) : pick == 0 ? chosen : fact.operands[i];
  }
  return is_nan(type, chosen) ? canonical_nan(type) : chosen;
}

std::uint64_t host_integer_result(const LaneFact& fact) {
  const bool wide = fact.type == ReduceType::s64 || fact.type == ReduceType::u64;
  const bool is_signed = fact.type == ReduceType::s32 || fact.type == ReduceType::s64;
  const std::uint64_t mask = wide ? ~0ull : 0xFFFFFFFFull;
  auto as_signed = [&](std::uint64_t v) {
    return wide ? static_cast<std::int64_t>(v) : static_cast<std::int64_t>(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
  };
  std::uint64_t acc = fact.operands[0];
  for (std::size_t i = 1; i < fact.operands.size(); ++i) {
    const std::uint64_t x = fact.operands[i];
    switch (fact.op) {
      case ReduceOp::add: acc = (acc + x) & mask; break;
      case ReduceOp::bit_and: acc &= x; break;
      case ReduceOp::bit_or: acc |= x; break;
      case ReduceOp::bit_xor: acc ^= x; break;
      case ReduceOp::min: acc = is_signed ? (as_signed(x) < as_signed(acc) ? x : acc) : std::min(acc, x); break;
      case ReduceOp::max: acc = is_signed ? (as_signed(x) > as_signed(acc) ? x : acc) : std::max(acc, x); break;
    }
  }
  return acc;
}

TEST(TestbenchDirected, HandWorkedLaneResultsAgreeWithHostArithmetic) {
  ASSERT_GE(lane_facts().size(), 100u);
  for (const LaneFact& fact : lane_facts()) {
    const std::uint64_t host = is_float(fact.type) ? host_float_result(fact) : host_integer_result(fact);
    EXPECT_EQ(host, fact.expected) << type_name(fact.type) << " " << op_name(fact.op) << ": " << fact.what;
  }
}

TEST(TestbenchDirected, HostBrainRoundingIsRoundToNearestEven) {
  // The bf16 helper itself, on hand-worked values: ties both ways, overflow, subnormals.
  EXPECT_EQ(brain_bits(directed_float_of(0x3F808000)), 0x3F80);  // 1 + 2^-8: tie, even is down
  EXPECT_EQ(brain_bits(directed_float_of(0x3F818000)), 0x3F82);  // tie, even is up
  EXPECT_EQ(brain_bits(directed_float_of(0x3F808001)), 0x3F81);  // above the tie
  EXPECT_EQ(brain_bits(directed_float_of(0x7F7F8000)), 0x7F80);  // max + half ulp: overflow
  EXPECT_EQ(brain_bits(directed_float_of(0x00018000)), 0x0002);  // subnormal tie, up to even
  EXPECT_EQ(brain_bits(directed_float_of(0x80008000)), 0x8000);  // subnormal tie, down to -0
}

}  // namespace
}  // namespace nvsvp::testbench
