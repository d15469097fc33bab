// Coverage files (Verilator's coverage data format): a round trip keeps every bin's count, other
// points survive a merge, and bad files and overflowing sums are refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>

#include "nvsvp/testbench/coverage_file.hpp"

namespace nvsvp::testbench {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "coverage_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + name;
}

TEST(CoverageFile, ARoundTripKeepsEveryBinsCount) {
  Coverage coverage;
  coverage.hit(ReduceOp::add, ReduceType::f16, OperandClass::nan, 2, true, 7);
  coverage.hit(ReduceOp::max, ReduceType::bf16, OperandClass::subnormal, 12, false, 1);
  coverage.hit(ReduceOp::add, ReduceType::u32, OperandClass::large, 1, false, 123456789012ull);
  const std::string path = temp_path(".dat");
  write_coverage_file(path, to_points(coverage));
  const CoveragePoints points = read_coverage_file(path);
  std::remove(path.c_str());
  EXPECT_EQ(points.size(), coverage.bins());
  EXPECT_EQ(functional_point_count(points), coverage.bins());
  const Coverage back = functional_coverage(points);
  const std::vector<CoverageBin> expected = coverage.bin_list();
  const std::vector<CoverageBin> actual = back.bin_list();
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(actual[i].count, expected[i].count) << expected[i].name;
  EXPECT_EQ(back.bins_hit(), 3u);
  EXPECT_EQ(back.count(ReduceOp::add, ReduceType::f16, OperandClass::nan, contribution_bin(2), true), 7u);
}

TEST(CoverageFile, AMergeSumsCountsAndKeepsOtherPoints) {
  Coverage one;
  one.hit(ReduceOp::min, ReduceType::f32, OperandClass::zero, 3, false, 2);
  CoveragePoints merged = to_points(one);
  CoveragePoints other = to_points(one);
  const std::string rtl_line = "\001f\002reduction_unit.sv\001l\00240\001page\002v_line/reduction_unit";
  other[rtl_line] = 5;
  merge_points(merged, other, "other.dat");
  EXPECT_EQ(merged.size(), one.bins() + 1);
  EXPECT_EQ(merged[rtl_line], 5u);
  EXPECT_EQ(functional_coverage(merged).count(ReduceOp::min, ReduceType::f32, OperandClass::zero, contribution_bin(3),
                                              false),
            4u);
  CoveragePoints full{{rtl_line, std::numeric_limits<std::uint64_t>::max()}};
  EXPECT_THROW(merge_points(full, CoveragePoints{{rtl_line, 1}}, "more.dat"), CoverageFileError);
}

TEST(CoverageFile, BadFilesNameFileLineAndWhatWasExpected) {
  const std::string path = temp_path(".dat");
  auto error_of = [&](const std::string& text) -> std::string {
    std::ofstream(path) << text;
    try {
      read_coverage_file(path);
    } catch (const CoverageFileError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of("").find(": expected the header of Verilator's coverage data format"), std::string::npos);
  EXPECT_NE(error_of("# SystemC::Coverage-2\n").find(":1: expected the header"), std::string::npos);
  EXPECT_NE(error_of("# SystemC::Coverage-3\nC 'x' 12a\n").find(":2: count '12a': expected a decimal count"),
            std::string::npos);
  EXPECT_NE(error_of("# SystemC::Coverage-3\nC 'x' 99999999999999999999\n").find(":2: count"), std::string::npos);
  EXPECT_NE(error_of("# SystemC::Coverage-3\n\nC 'x' \n").find(":3: "), std::string::npos);
  // A key given twice is summed, unless the sum overflows.
  EXPECT_EQ(error_of("# SystemC::Coverage-3\nC 'x' 18446744073709551615\nC 'x' 0\n"), "no error");
  EXPECT_NE(error_of("# SystemC::Coverage-3\nC 'x' 18446744073709551615\nC 'x' 1\n").find(":3: expected counts whose sum fits"),
            std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nvsvp::testbench
