// The testbench's two commands, `nvsvp rtl-check` and `nvsvp rtl-verify` (platform/cli parses the
// options and calls these). Exit codes as everywhere in nvsvp: 0 ok, 1 a check failed, 2 bad input.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace nvsvp::testbench {

inline constexpr int exit_ok = 0;
inline constexpr int exit_check_failed = 1;
inline constexpr int exit_bad_input = 2;

struct RtlCheckArgs {
  std::string vectors;   // the vector file
  std::string op;        // add | min | max
  std::string dtype;     // f16 | bf16 | f32
  std::string backend = "rtl";
};

// Prints "<file>: <n> vectors, <dtype> <op>, backend <b>", "N passed, M failed" and the first
// failures. A malformed file: the error on `err`, exit 2.
int rtl_check_command(const RtlCheckArgs& args, std::ostream& out, std::ostream& err);

struct RtlVerifyArgs {
  std::optional<std::uint64_t> seed;  // none: a fresh one, printed
  std::uint64_t beats = 200000;       // contribution beats of the random regression
  std::string backend = "rtl";
  std::string wave;                   // waveform of the random regression's RTL: .vcd or .fst
  std::string vcd;                    // the same, VCD whatever the file's extension
  std::optional<std::uint64_t> wave_from_ns;  // the waveform's window (WaveWindow)
  std::optional<std::uint64_t> wave_to_ns;
  std::string coverage_file;          // the random regression's functional coverage, Verilator's format
  bool coverage = false;              // print the whole coverage table
  bool directed_only = false;
  bool random_only = false;
};

// Directed suite, then the constrained-random regression with the scoreboard.
int rtl_verify_command(const RtlVerifyArgs& args, std::ostream& out, std::ostream& err);

struct CoverageMergeArgs {
  std::vector<std::string> inputs;  // coverage files (coverage_file.hpp)
  std::string out;                  // the merge, when not empty
  bool table = false;               // print the whole coverage table
};

// `nvsvp rtl-coverage-merge`: reads the inputs, sums each point's counts, prints the functional
// coverage of the merge and writes it to `out`. A bad file: exit 2.
int rtl_coverage_merge_command(const CoverageMergeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace nvsvp::testbench
