// The constrained-random regression through the Verilated RTL against the model (4 x 1.2 million
// contribution beats, more than a million output beats, over the RtlRegression entries), its
// reproducibility, and the proof that the scoreboard catches a wrong unit.
#include <gtest/gtest.h>

#include <sstream>

#include "nvsvp/reduction/reduction_model.hpp"
#include "nvsvp/reduction/rtl_reduction_unit.hpp"
#include "nvsvp/testbench/regression.hpp"
#include "nvsvp/testbench/units.hpp"
#include "test_testbench_support.hpp"

namespace nvsvp::testbench {
namespace {

using test::CorruptingUnit;

RegressionReport run_rtl(std::uint64_t seed, std::uint64_t beats) {
  UnitOptions options;
  const auto dut = make_unit_under_test(options);
  const auto reference = make_reference(options.config);
  RegressionOptions regression;
  regression.seed = seed;
  regression.beats = beats;
  return run_regression(*dut, *reference, rtl_of(*dut), regression);
}

std::string report_text(const RegressionReport& report) {
  std::ostringstream os;
  print_regression(os, report, true, false);
  return os.str();
}

// One quarter of the regression: every operation and type, interleaved contexts, evictions,
// passthrough, every kind of illegal command, random back-pressure. About a second on the RTL.
void expect_clean_regression(std::uint64_t seed) {
  constexpr std::uint64_t beats = 1200000;
  const RegressionReport report = run_rtl(seed, beats);
  ASSERT_TRUE(report.passed()) << report.mismatch->describe(seed);
  EXPECT_GE(report.stimulus.contributions, beats);
  EXPECT_EQ(report.final_status.counters.contributions, report.stimulus.contributions);
  EXPECT_GT(report.final_status.counters.evicted_beats, 0u);
  EXPECT_GT(report.final_status.counters.passthrough_beats, 0u);
  EXPECT_GT(report.complete_outputs, beats / 20);
  for (int kind = 0; kind < error_kind_count; ++kind) {
    EXPECT_GT(report.stimulus.errors[static_cast<std::size_t>(kind)], 0u) << to_string(static_cast<ErrorKind>(kind));
  }
  // Every legal operation and type produced complete beats.
  for (const OpType& pair : legal_op_types()) {
    std::uint64_t beats_of_pair = 0;
    for (const OperandClass c : classes_of(pair.type)) {
      for (int bin = 0; bin < contribution_bin_count; ++bin) beats_of_pair += report.coverage.count(pair.op, pair.type, c, bin, false);
    }
    EXPECT_GT(beats_of_pair, 0u) << op_name(pair.op) << " " << type_name(pair.type);
  }
  EXPECT_GE(report.coverage.bins_hit(), report.coverage.bins() * 95 / 100);
  std::cout << "[ seed " << seed << " ] " << report.stimulus.contributions << " contribution beats, " << report.outputs
            << " output beats, " << report.cycles << " cycles, coverage " << report.coverage.bins_hit() << "/"
            << report.coverage.bins() << ", " << report.wall_seconds << " s\n";
}

TEST(TestbenchRtlRegression, Seed1) { expect_clean_regression(1); }
TEST(TestbenchRtlRegression, Seed2) { expect_clean_regression(2); }
TEST(TestbenchRtlRegression, Seed3) { expect_clean_regression(3); }
TEST(TestbenchRtlRegression, Seed4) { expect_clean_regression(4); }

TEST(TestbenchRegression, BothBackendPasses) {
  UnitOptions options;
  options.backend = "both";
  const auto dut = make_unit_under_test(options);
  const auto reference = make_reference(options.config);
  RegressionOptions regression;
  regression.seed = 99;
  regression.beats = 40000;
  const RegressionReport report = run_regression(*dut, *reference, rtl_of(*dut), regression);
  EXPECT_TRUE(report.passed()) << report.mismatch->describe(99);
  EXPECT_NE(rtl_of(*dut), nullptr);
}

TEST(TestbenchRegression, SameSeedGivesTheIdenticalReport) {
  const std::string first = report_text(run_rtl(77, 30000));
  const std::string second = report_text(run_rtl(77, 30000));
  EXPECT_EQ(first, second);
  EXPECT_NE(first, report_text(run_rtl(78, 30000)));  // and the seed matters
  EXPECT_NE(first.find("seed 77"), std::string::npos);
}

// ---- A wrong unit is caught -----------------------------------------------------------------

RegressionReport run_corrupted(CorruptingUnit::Fault fault, std::uint64_t at, std::uint64_t seed = 5,
                               std::size_t byte = 0) {
  auto dut = std::make_unique<CorruptingUnit>(std::make_unique<reduction::RtlReductionUnit>(), fault, at);
  dut->byte = byte;
  reduction::ReductionModel reference;
  RegressionOptions regression;
  regression.seed = seed;
  regression.beats = 20000;
  return run_regression(*dut, reference, nullptr, regression);
}

TEST(TestbenchScoreboard, CatchesOneFlippedDataBit) {
  const RegressionReport report = run_corrupted(CorruptingUnit::Fault::flip_data_bit, 500, 5, 9);
  ASSERT_FALSE(report.passed());
  const Mismatch& m = *report.mismatch;
  EXPECT_EQ(m.output_index, 500);
  EXPECT_EQ(m.field.rfind("data lane", 0), 0u) << m.field;
  EXPECT_NE(m.expected, m.actual);
  EXPECT_GE(m.context, 0);
  EXPECT_GE(m.beat, 0);
  const std::string text = m.describe(5);
  std::cout << text << "\n";
  EXPECT_NE(text.find("seed 5 command "), std::string::npos) << text;
  EXPECT_NE(text.find(" output 500: field data lane"), std::string::npos) << text;
  // The command named is the one that emitted output 500: re-running the same seed on the real
  // RTL passes, and the corrupted run names the same point every time.
  EXPECT_EQ(run_corrupted(CorruptingUnit::Fault::flip_data_bit, 500, 5, 9).mismatch->command_index, m.command_index);
}

TEST(TestbenchScoreboard, CatchesAFlippedPartialFlag) {
  const RegressionReport report = run_corrupted(CorruptingUnit::Fault::flip_partial, 321);
  ASSERT_FALSE(report.passed());
  EXPECT_EQ(report.mismatch->field, "partial");
  EXPECT_EQ(report.mismatch->output_index, 321);
}

TEST(TestbenchScoreboard, CatchesADroppedAndAnExtraBeat) {
  const RegressionReport dropped = run_corrupted(CorruptingUnit::Fault::drop_output, 1000);
  ASSERT_FALSE(dropped.passed());
  EXPECT_EQ(dropped.mismatch->output_index, 1000);
  const RegressionReport extra = run_corrupted(CorruptingUnit::Fault::extra_output, 1000);
  ASSERT_FALSE(extra.passed());
  EXPECT_EQ(extra.mismatch->output_index, 1001);
}

TEST(TestbenchScoreboard, CatchesAWrongCounterAndAnIgnoredClear) {
  const RegressionReport counter = run_corrupted(CorruptingUnit::Fault::count_extra_error, 10);
  ASSERT_FALSE(counter.passed());
  EXPECT_EQ(counter.mismatch->field, "counters.errors");
  EXPECT_EQ(std::stoull(counter.mismatch->actual), std::stoull(counter.mismatch->expected) + 1);

  // Status clears are random per batch: some seed among the first few clears a set bit.
  bool caught = false;
  for (std::uint64_t seed = 1; seed <= 20 && !caught; ++seed) {
    const RegressionReport r = run_corrupted(CorruptingUnit::Fault::ignore_clear, 0, seed);
    if (!r.passed()) {
      EXPECT_EQ(r.mismatch->field.rfind("status.sticky", 0), 0u) << r.mismatch->field;
      caught = true;
    }
  }
  EXPECT_TRUE(caught);
}

TEST(TestbenchScoreboard, LedgerCatchesWhatTheReferenceShares) {
  // Unit and reference drop the same beat: the beat-by-beat comparison agrees, but the ledger and
  // the counters see a contribution vanish.
  auto dut = std::make_unique<CorruptingUnit>(std::make_unique<reduction::ReductionModel>(),
                                              CorruptingUnit::Fault::drop_output, 700);
  CorruptingUnit reference(std::make_unique<reduction::ReductionModel>(), CorruptingUnit::Fault::drop_output, 700);
  RegressionOptions regression;
  regression.seed = 8;
  regression.beats = 20000;
  const RegressionReport report = run_regression(*dut, reference, nullptr, regression);
  ASSERT_FALSE(report.passed());
  EXPECT_NE(report.mismatch->field.find("beats out"), std::string::npos) << report.mismatch->field;
}

TEST(TestbenchCoverage, BinsTableAndMissedList) {
  Coverage coverage;
  // 9 float (op, type) pairs x 5 classes + 24 integer pairs x 4 classes, each x 9 (count bin x
  // eviction, without evicted single contributions).
  EXPECT_EQ(coverage.bins(), (9u * 5 + 24u * 4) * 9);
  EXPECT_EQ(coverage.bins_hit(), 0u);
  coverage.hit(ReduceOp::add, ReduceType::f16, OperandClass::nan, 2, true);
  coverage.hit(ReduceOp::bit_xor, ReduceType::u64, OperandClass::extreme, 40, false, 5);
  coverage.hit(ReduceOp::bit_xor, ReduceType::f32, OperandClass::zero, 2, false);  // illegal: ignored
  EXPECT_EQ(coverage.bins_hit(), 2u);
  EXPECT_EQ(coverage.count(ReduceOp::bit_xor, ReduceType::u64, OperandClass::extreme, 4, false), 5u);
  std::ostringstream os;
  coverage.print(os);
  const std::string table = os.str();
  EXPECT_NE(table.find("coverage: 2 of 1269 bins hit"), std::string::npos);
  EXPECT_NE(table.find("bins never hit: 1267:"), std::string::npos);
  EXPECT_NE(table.find("  add f16 nan C=2 kept\n"), std::string::npos);
  EXPECT_EQ(table.find("  add f16 nan C=2 evicted\n"), std::string::npos);
  EXPECT_EQ(table.find("and f32"), std::string::npos);
}

TEST(TestbenchCoverage, IntegerClasses) {
  EXPECT_EQ(classify(ReduceType::s32, 0), OperandClass::zero);
  EXPECT_EQ(classify(ReduceType::s32, 0xFFFFFF01), OperandClass::small);    // -255
  EXPECT_EQ(classify(ReduceType::s32, 0xFFFFFF00), OperandClass::large);    // -256
  EXPECT_EQ(classify(ReduceType::s32, 0x80000000), OperandClass::extreme);  // INT32_MIN
  EXPECT_EQ(classify(ReduceType::s32, 0x7FFFFF00), OperandClass::extreme);  // INT32_MAX - 255
  EXPECT_EQ(classify(ReduceType::u32, 0xFFFFFF00), OperandClass::extreme);
  EXPECT_EQ(classify(ReduceType::u64, 0x8000000000000000), OperandClass::large);
  EXPECT_EQ(classify(ReduceType::s64, 0x8000000000000000), OperandClass::extreme);
  EXPECT_EQ(classify(ReduceType::f16, 0x8000), OperandClass::zero);
  EXPECT_EQ(classify(ReduceType::bf16, 0x0001), OperandClass::subnormal);
  EXPECT_EQ(classify(ReduceType::f32, 0xFF800000), OperandClass::inf);
  EXPECT_EQ(classify(ReduceType::f32, 0x7F800001), OperandClass::nan);
}

}  // namespace
}  // namespace nvsvp::testbench
