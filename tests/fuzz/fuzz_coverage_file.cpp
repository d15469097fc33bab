// Fuzzes the testbench's coverage-file reader (`nvsvp rtl-coverage-merge`, Verilator's coverage
// data format), the input being the file; what it reads is merged with itself and turned into
// the functional-coverage table, as the command does. Bad input must raise CoverageFileError;
// anything else is a finding.
#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "nvsvp/testbench/coverage_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nvsvp::fuzz::ScratchDirectory scratch(NVSVP_FUZZ_CONFIG_DIR, "coverage");
  const std::string file = scratch.write("fuzz_coverage.dat", std::string(reinterpret_cast<const char*>(data), size));
  try {
    nvsvp::testbench::CoveragePoints points = nvsvp::testbench::read_coverage_file(file);
    nvsvp::testbench::merge_points(points, nvsvp::testbench::read_coverage_file(file), file);
    std::ostringstream table;
    nvsvp::testbench::functional_coverage(points).print(table);
  } catch (const nvsvp::testbench::CoverageFileError&) {
    // Refused as bad input: the documented outcome.
  }
  return 0;
}
