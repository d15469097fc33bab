// Vector-file mode: parsing, malformed files, the NaN rule, and a wrong unit caught.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "../common/source_paths.hpp"
#include "nvsvp/reduction/rtl_reduction_unit.hpp"
#include "nvsvp/testbench/lanes.hpp"
#include "nvsvp/testbench/vector_file.hpp"
#include "test_testbench_support.hpp"

namespace nvsvp::testbench {
namespace {

class VectorFileTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = ::testing::TempDir() + "vectors_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  std::string error_of(const std::string& text, ReduceType type) {
    try {
      read_vector_file(write(text), type);
    } catch (const VectorFileError& e) {
      return e.what();
    }
    return "no error";
  }
  std::string path_;
};

TEST_F(VectorFileTest, ReadsCommentsBlankLinesAndOptionalFlags) {
  const auto vectors = read_vector_file(write("# header\n# dtype: f16\n3C00 3C00 4000 00\n  0x3c00\t0x0000 3C00\r\n# end\n"),
                                        ReduceType::f16);
  ASSERT_EQ(vectors.size(), 2u);
  EXPECT_EQ(vectors[0].line, 3u);
  EXPECT_EQ(vectors[1].line, 4u);
  EXPECT_EQ(vectors[1].a, 0x3C00u);
  EXPECT_EQ(vectors[1].b, 0u);
  EXPECT_EQ(vectors[1].result, 0x3C00u);
}

TEST_F(VectorFileTest, MalformedLinesNameFileLineAndWhatWasExpected) {
  const std::string bad_token = error_of("3C00 3C00 4000 00\nZZ 3C00 4000 00\n# dtype: f16\n", ReduceType::f16);
  EXPECT_NE(bad_token.find(path_ + ":2: field 1 (A) 'ZZ': expected a hexadecimal f16 encoding of at most 4 digits"),
            std::string::npos) << bad_token;
  const std::string too_wide = error_of("3C000 3C00 4000\n", ReduceType::bf16);
  EXPECT_NE(too_wide.find(":1: field 1 (A) '3C000': expected a hexadecimal bf16"), std::string::npos) << too_wide;
  const std::string few = error_of("# c\n3F800000 3F800000\n", ReduceType::f32);
  EXPECT_NE(few.find(":2: expected 3 or 4 fields 'A B RESULT [FLAGS]', found 2"), std::string::npos) << few;
  const std::string many = error_of("1 2 3 4 5\n", ReduceType::f32);
  EXPECT_NE(many.find(":1: expected 3 or 4 fields"), std::string::npos) << many;
  const std::string flags = error_of("1 2 3 xyz\n", ReduceType::f32);
  EXPECT_NE(flags.find(":1: field 4 (FLAGS) 'xyz': expected hexadecimal flags"), std::string::npos) << flags;
  EXPECT_NE(error_of("# nothing\n\n", ReduceType::f32).find("expected at least one vector"), std::string::npos);
}

TEST_F(VectorFileTest, ShippedMalformedFileFailsAtLineFive) {
  try {
    read_vector_file(std::string(NVSVP_SOURCE_DIR) + "/tests/data/vectors/malformed.txt", ReduceType::f16);
    FAIL() << "no error";
  } catch (const VectorFileError& e) {
    EXPECT_NE(std::string(e.what()).find("malformed.txt:5: field 2 (B) 'ZZ00'"), std::string::npos) << e.what();
  }
}

TEST_F(VectorFileTest, AFileOfAnotherTypeIsRefused) {
  // Declared: the dtype line must name the type checked; its line is named.
  const std::string bf16_as_f16 = error_of("# bf16 vectors\n# dtype: bf16\n3F80 3F80 4000\n", ReduceType::f16);
  EXPECT_NE(bf16_as_f16.find(path_ + ":2: expected f16 vectors (--dtype f16), the file declares dtype bf16"),
            std::string::npos) << bf16_as_f16;
  const std::string f16_as_f32 = error_of("#dtype:f16\n3C00 3C00 4000\n", ReduceType::f32);
  EXPECT_NE(f16_as_f32.find(":1: expected f32 vectors (--dtype f32), the file declares dtype f16"), std::string::npos)
      << f16_as_f32;
  // Implied by the widths: 8-digit encodings are f32, 16-bit ones are not.
  const std::string f32_as_bf16 = error_of("3F800000 3F800000 40000000\n", ReduceType::bf16);
  EXPECT_NE(f32_as_bf16.find(":1: field 1 (A) '3F800000': expected a hexadecimal bf16 encoding of at most 4 digits"),
            std::string::npos) << f32_as_bf16;
  const std::string sixteen_as_f32 = error_of("# no dtype\n3C00 3C00 4000 00\n", ReduceType::f32);
  EXPECT_NE(sixteen_as_f32.find(":2: expected f32 vectors (--dtype f32), the file's encodings are 16-bit"),
            std::string::npos) << sixteen_as_f32;
  // 16-bit encodings without a dtype line could be f16 or bf16: refused either way.
  for (const ReduceType type : {ReduceType::f16, ReduceType::bf16}) {
    const std::string undeclared = error_of("3C00 3C00 4000 00\n", type);
    EXPECT_NE(undeclared.find("declares no dtype and its 16-bit encodings fit f16 and bf16 alike: expected a line "
                              "'# dtype: " + std::string(type_name(type)) + "'"),
              std::string::npos) << undeclared;
  }
  // A dtype line twice, or an unknown type.
  EXPECT_NE(error_of("# dtype: f16\n3C00 3C00 4000\n# dtype: f16\n", ReduceType::f16)
                .find(":3: expected one '# dtype:' line, found a second (the first is line 1)"),
            std::string::npos);
  EXPECT_NE(error_of("# dtype: f64\n1 2 3\n", ReduceType::f32).find(":1: dtype 'f64': expected f16, bf16 or f32"),
            std::string::npos);
}

TEST_F(VectorFileTest, AMatchingTypeIsAccepted) {
  // Declared, or implied by 8-digit encodings (a file without a dtype line, as TestFloat writes).
  EXPECT_EQ(read_vector_file(write("# dtype: bf16\n3F80 3F80 4000\n"), ReduceType::bf16).size(), 1u);
  const auto f32 = read_vector_file(write("3F800000 3F800000 40000000 00\n0 0 0\n"), ReduceType::f32);
  ASSERT_EQ(f32.size(), 2u);
  EXPECT_EQ(f32[0].result, 0x40000000u);
}

TEST(VectorCheck, RtlPassesRightVectorsAndFailsWrongOnes) {
  reduction::RtlReductionUnit unit;
  // 1 + 1 = 2; inf - inf with a non-canonical NaN expected (matches the canonical NaN); a wrong
  // expectation on line 12.
  const std::vector<TestVector> vectors = {
      {10, 0x3C00, 0x3C00, 0x4000}, {11, 0x7C00, 0xFC00, 0xFFFF}, {12, 0x3C00, 0x1000, 0x3C01}};
  const VectorCheckReport report = check_vectors(vectors, ReduceOp::add, ReduceType::f16, unit);
  EXPECT_EQ(report.passed, 2u);
  ASSERT_EQ(report.failed, 1u);
  ASSERT_EQ(report.first_failures.size(), 1u);
  EXPECT_EQ(describe(report.first_failures[0], ReduceType::f16), "line 12: 3c00 1000: expected 3c01, actual 3c00 (lane 0)");
  EXPECT_EQ(report.final_sticky, 0u);
}

TEST(VectorCheck, NanExpectedNeedsTheCanonicalNan) {
  // A unit answering with a quiet NaN of another payload fails a NaN expectation.
  test::CorruptingUnit unit(std::make_unique<reduction::RtlReductionUnit>(), test::CorruptingUnit::Fault::replace_data);
  unit.data = splat(ReduceType::f32, 0x7FC00001);
  const std::vector<TestVector> vectors = {{1, 0x7F800000, 0xFF800000, 0x7FC00000}};
  const VectorCheckReport report = check_vectors(vectors, ReduceOp::add, ReduceType::f32, unit);
  EXPECT_EQ(report.failed, 1u);
  // ...and one lane out of line is enough to fail.
  test::CorruptingUnit one_lane(std::make_unique<reduction::RtlReductionUnit>(), test::CorruptingUnit::Fault::replace_data);
  one_lane.data = splat(ReduceType::bf16, 0x4000);
  set_lane(one_lane.data, ReduceType::bf16, 7, 0x4001);
  const VectorCheckReport lane_report =
      check_vectors({{3, 0x3F80, 0x3F80, 0x4000}}, ReduceOp::add, ReduceType::bf16, one_lane);
  ASSERT_EQ(lane_report.failed, 1u);
  EXPECT_EQ(lane_report.first_failures[0].lane, 7);
}

TEST(VectorCheck, ManyVectorsReuseContexts) {
  // More vectors than contexts and than one chunk: contexts are reopened after completing.
  reduction::RtlReductionUnit unit;
  std::vector<TestVector> vectors;
  for (std::uint32_t i = 0; i < 3000; ++i) vectors.push_back({i + 1, 0x3F800000, 0x3F800000, 0x40000000});
  const VectorCheckReport report = check_vectors(vectors, ReduceOp::add, ReduceType::f32, unit);
  EXPECT_EQ(report.passed, 3000u);
  EXPECT_EQ(report.failed, 0u);
  EXPECT_EQ(unit.status().counters.contexts_completed, 3000u);
}

}  // namespace
}  // namespace nvsvp::testbench
