// Functional coverage of the reduction unit: operation x type x operand class x contribution-count
// bin x eviction. A bin is hit once per lane operand class per completed beat: a beat of a context
// with C contributions whose lanes held a class-K operand counts in (op, type, K, bin(C),
// evicted?), where "evicted" means the beat left the unit partial (evicted, or passed through).
// Excluded (not counted as bins): bitwise operations on float types (illegal), and eviction with
// one contribution (such a beat completes at once and never occupies a buffer slot).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "nvsvp/testbench/lanes.hpp"

namespace nvsvp::testbench {

inline constexpr int contribution_bin_count = 5;
int contribution_bin(std::uint32_t contributions);  // 1, 2, 3-4, 5-8, 9+
const char* contribution_bin_name(int bin);

// One counted bin: where it is, its name ("add f16 nan C=2 evicted") and its count.
struct CoverageBin {
  ReduceOp op;
  ReduceType type;
  OperandClass operand_class;
  int contribution_bin;
  bool evicted;
  std::string name;
  std::uint64_t count;
};

class Coverage {
 public:
  Coverage();

  void hit(ReduceOp op, ReduceType type, OperandClass operand_class, std::uint32_t contributions, bool evicted,
           std::uint64_t count = 1);
  void merge(const Coverage& other);
  // Adds `n` to one bin; false (and nothing added) for an excluded or illegal one.
  bool add_to_bin(ReduceOp op, ReduceType type, OperandClass operand_class, int bin, bool evicted, std::uint64_t n);

  std::uint64_t count(ReduceOp op, ReduceType type, OperandClass operand_class, int bin, bool evicted) const;
  std::size_t bins() const;      // excluding the excluded ones
  std::size_t bins_hit() const;
  std::vector<std::string> missed() const;  // "add f16 nan C=2 evicted", ...
  std::vector<CoverageBin> bin_list() const;  // every bin but the excluded ones, in table order

  // One row per (op, type, class), one column per (count bin, eviction); "." marks a bin never
  // hit and "-" an excluded one. Then the list of bins never hit.
  void print(std::ostream& out) const;

 private:
  std::size_t index(std::size_t pair, OperandClass operand_class, int bin, bool evicted) const;
  static bool excluded(int bin, bool evicted) { return bin == 0 && evicted; }

  std::vector<std::uint64_t> counts_;
};

}  // namespace nvsvp::testbench
