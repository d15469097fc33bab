// Vector-file mode: externally generated IEEE test vectors against the unit's datapath.
//
// A file holds lines `A B RESULT [FLAGS]`: hexadecimal encodings (an optional 0x prefix, at most
// 4 digits for f16/bf16, 8 for f32); FLAGS, when present, must be hexadecimal and is ignored (the
// unit raises no IEEE exception flags). Blank lines and lines starting with '#' are skipped, but
// for one "# dtype: f16" (or bf16, f32) line, the type of the file.
//
// The file's type must match the one it is checked as: declared by its dtype line, or, without
// one, implied by the widths of A, B and RESULT: a field of 5 to 8 digits makes it an f32 file;
// a file of 16-bit encodings only must declare whether it is f16 or bf16.
//
// Each vector is one context with two contributions and one beat: A in every lane of the first
// contribution, B in every lane of the second (so every lane of the datapath computes the same
// pair, lane 0 being the one named), and every lane of the result must equal RESULT. NaN rule:
// when RESULT is any NaN, the result must be the canonical quiet NaN (7E00, 7FC0, 7FC00000), the
// unit's NaN policy; a NaN with another payload or sign fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::testbench {

// Malformed file: the message is "FILE:LINE: what was expected" (or "FILE: ..." without a line).
class VectorFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TestVector {
  std::size_t line = 0;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t result = 0;
};

// Input limits (far above any real vector file): its size, and its vector lines.
inline constexpr std::uint64_t kMaxVectorFileBytes = 256ull << 20;
inline constexpr std::size_t kMaxVectors = std::size_t{1} << 24;

// Reads and checks the whole file first; throws VectorFileError (also for a file beyond the
// limits, or one that does not fit in memory).
std::vector<TestVector> read_vector_file(const std::string& path, reduction::ReduceType type);

struct VectorFailure {
  TestVector vector;
  std::uint32_t actual = 0;
  int lane = 0;            // the first lane that differs
  std::string problem;     // empty, or what else went wrong (a missing or malformed output beat)
};

struct VectorCheckReport {
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::vector<VectorFailure> first_failures;  // at most `max_listed`
  std::uint32_t final_sticky = 0;
};

// Runs the vectors through `unit` (a fresh unit with the default structure). Throws
// std::invalid_argument when the op/type pair is not add/min/max on f16, bf16 or f32.
VectorCheckReport check_vectors(const std::vector<TestVector>& vectors, reduction::ReduceOp op,
                                reduction::ReduceType type, reduction::ReductionUnit& unit,
                                std::size_t max_listed = 10);

std::string describe(const VectorFailure& failure, reduction::ReduceType type);

}  // namespace nvsvp::testbench
