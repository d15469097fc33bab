// Coverage files in Verilator's coverage data format, so that verilator_coverage reads them and
// its --write merges them: a first line "# SystemC::Coverage-3", then one line per point,
// `C '<key>' <count>`, the key a run of fields "\001name\002value". The functional coverage of the
// reduction unit is written as one point per bin (every bin, hit or not; the excluded ones are no
// points): file "nvsvp_reduction_unit_functional_coverage", line = the bin's row in the table
// (1, 2, ...), page "v_user/reduction_unit", comment = the bin's name ("add f16 nan C=2 evicted").
// Points of other origin (Verilator's own line or toggle coverage, say) are kept by a merge.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/testbench/coverage.hpp"

namespace nvsvp::testbench {

// Unreadable or malformed file: the message is "FILE:LINE: what was expected" (or "FILE: ...").
class CoverageFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kFunctionalCoverageFile = "nvsvp_reduction_unit_functional_coverage";
inline constexpr std::uint64_t kMaxCoverageFileBytes = 256ull << 20;  // an input limit

// Points by key (the text between the quotes); ordered, so a file is written in a fixed order.
using CoveragePoints = std::map<std::string, std::uint64_t>;

CoveragePoints to_points(const Coverage& coverage);
// The functional bins among `points` (the other points are left out).
Coverage functional_coverage(const CoveragePoints& points);
// How many of `points` are functional bins.
std::size_t functional_point_count(const CoveragePoints& points);

// Reads a file, adding the counts of a key given twice. A point that claims to be a functional
// bin (its file field is kFunctionalCoverageFile) must name a bin of this testbench. Throws
// CoverageFileError.
CoveragePoints read_coverage_file(const std::string& path);
// Writes through a temporary file renamed into place. Throws CoverageFileError.
void write_coverage_file(const std::string& path, const CoveragePoints& points);
// Adds every point of `from` to `into`: a key in both gets the sum of the counts. Throws
// CoverageFileError naming `from_name` when a sum does not fit 64 bits.
void merge_points(CoveragePoints& into, const CoveragePoints& from, const std::string& from_name);

}  // namespace nvsvp::testbench
