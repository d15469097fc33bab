#include "nvsvp/testbench/commands.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "nvsvp/reduction/reduction_factory.hpp"
#include "nvsvp/testbench/coverage_file.hpp"
#include "nvsvp/testbench/directed.hpp"
#include "nvsvp/testbench/lanes.hpp"
#include "nvsvp/testbench/regression.hpp"
#include "nvsvp/testbench/units.hpp"
#include "nvsvp/testbench/vector_file.hpp"

namespace nvsvp::testbench {

namespace {

bool known_backend(const std::string& name) {
  for (const std::string& known : reduction::reduction_backend_names()) {
    if (known == name) return true;
  }
  return false;
}

bool parse_float_op(const std::string& text, ReduceOp& op) {
  for (const ReduceOp candidate : {ReduceOp::add, ReduceOp::min, ReduceOp::max}) {
    if (text == op_name(candidate)) {
      op = candidate;
      return true;
    }
  }
  return false;
}

bool parse_float_type(const std::string& text, ReduceType& type) {
  for (const ReduceType candidate : {ReduceType::f16, ReduceType::bf16, ReduceType::f32}) {
    if (text == type_name(candidate)) {
      type = candidate;
      return true;
    }
  }
  return false;
}

int rtl_check(const RtlCheckArgs& args, std::ostream& out, std::ostream& err) {
  ReduceOp op{};
  ReduceType type{};
  if (!parse_float_op(args.op, op)) {
    err << "nvsvp: rtl-check: --op " << args.op << ": expected add, min or max\n";
    return exit_bad_input;
  }
  if (!parse_float_type(args.dtype, type)) {
    err << "nvsvp: rtl-check: --dtype " << args.dtype << ": expected f16, bf16 or f32\n";
    return exit_bad_input;
  }
  if (!known_backend(args.backend)) {
    err << "nvsvp: rtl-check: --backend " << args.backend << ": expected rtl, model or both\n";
    return exit_bad_input;
  }
  std::vector<TestVector> vectors;
  try {
    vectors = read_vector_file(args.vectors, type);
  } catch (const VectorFileError& e) {
    err << "nvsvp: rtl-check: " << e.what() << "\n";
    return exit_bad_input;
  }
  UnitOptions unit_options;
  unit_options.backend = args.backend;
  const auto unit = make_unit_under_test(unit_options);
  out << args.vectors << ": " << vectors.size() << " vectors, " << args.dtype << " " << args.op << ", backend "
      << args.backend << " (two contributions per vector, the pair in every lane)\n";
  VectorCheckReport report;
  try {
    report = check_vectors(vectors, op, type, *unit);
  } catch (const reduction::ReductionMismatch& e) {
    out << "FAILED: the model and the RTL disagree: " << e.what() << "\n";
    return exit_check_failed;
  }
  out << report.passed << " passed, " << report.failed << " failed\n";
  for (const VectorFailure& failure : report.first_failures) out << "  " << describe(failure, type) << "\n";
  if (report.failed > report.first_failures.size()) {
    out << "  (" << report.failed - report.first_failures.size() << " more failures not listed)\n";
  }
  if (report.final_sticky != 0) {
    out << "FAILED: the unit raised error status 0x" << hex(report.final_sticky, 2) << "\n";
    return exit_check_failed;
  }
  return report.failed == 0 ? exit_ok : exit_check_failed;
}

// The waveform asked for, if any: its file, the option that named it, its format and window.
struct WaveRequest {
  std::string path;
  std::string option;
  reduction::WaveFormat format = reduction::WaveFormat::vcd;
  reduction::WaveWindow window;
};

// False (the error on `err`) for bad wave options.
bool wave_request(const RtlVerifyArgs& args, WaveRequest& wave, std::ostream& err) {
  if (!args.wave.empty() && !args.vcd.empty()) {
    err << "nvsvp: rtl-verify: --wave and --vcd exclude each other (--vcd FILE is --wave for a VCD)\n";
    return false;
  }
  if (!args.wave.empty()) {
    std::string extension = std::filesystem::path(args.wave).extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (extension == ".vcd") {
      wave.format = reduction::WaveFormat::vcd;
    } else if (extension == ".fst") {
      wave.format = reduction::WaveFormat::fst;
    } else {
      err << "nvsvp: rtl-verify: --wave " << args.wave
          << ": expected a file name ending in .vcd or .fst (the extension chooses the format)\n";
      return false;
    }
    wave.path = args.wave;
    wave.option = "--wave";
  } else if (!args.vcd.empty()) {
    wave.path = args.vcd;
    wave.option = "--vcd";
  }
  if (args.wave_from_ns) wave.window.from_ns = *args.wave_from_ns;
  if (args.wave_to_ns) wave.window.to_ns = *args.wave_to_ns;
  if ((args.wave_from_ns || args.wave_to_ns) && wave.path.empty()) {
    err << "nvsvp: rtl-verify: --wave-from and --wave-to bound a waveform: they need --wave (or --vcd)\n";
    return false;
  }
  if (wave.window.from_ns >= wave.window.to_ns) {
    err << "nvsvp: rtl-verify: --wave-from " << wave.window.from_ns << " ns: expected a time below --wave-to "
        << wave.window.to_ns << " ns\n";
    return false;
  }
  if (!wave.path.empty() && (args.directed_only || args.backend == "model")) {
    err << "nvsvp: rtl-verify: " << wave.option
        << " records the RTL of the random regression: it needs backend rtl or both and no --directed-only\n";
    return false;
  }
  return true;
}

void print_wave(std::ostream& out, const WaveRequest& wave, std::uint64_t end_ns) {
  out << (wave.format == reduction::WaveFormat::fst ? "fst: " : "vcd: ") << wave.path;
  const bool bounded = wave.window.from_ns > 0 || wave.window.to_ns != reduction::WaveWindow{}.to_ns;
  if (bounded) {
    out << " (clocks from " << wave.window.from_ns << " ns";
    if (wave.window.to_ns != reduction::WaveWindow{}.to_ns) out << " to " << wave.window.to_ns << " ns";
    out << ")";
  }
  out << "\n";
  if (end_ns <= wave.window.from_ns) {
    out << "  the waveform holds no clock: the run ended at " << end_ns << " ns, before --wave-from "
        << wave.window.from_ns << " ns\n";
  }
}

int rtl_verify(const RtlVerifyArgs& args, std::ostream& out, std::ostream& err) {
  if (!known_backend(args.backend)) {
    err << "nvsvp: rtl-verify: --backend " << args.backend << ": expected rtl, model or both\n";
    return exit_bad_input;
  }
  if (args.directed_only && args.random_only) {
    err << "nvsvp: rtl-verify: --directed-only and --random-only exclude each other\n";
    return exit_bad_input;
  }
  WaveRequest wave;
  if (!wave_request(args, wave, err)) return exit_bad_input;
  if (!args.coverage_file.empty() && args.directed_only) {
    err << "nvsvp: rtl-verify: --coverage-file records the coverage of the random regression: it needs no "
           "--directed-only\n";
    return exit_bad_input;
  }
  if (!args.coverage_file.empty()) {
    // Refused before the run rather than after it; the probe leaves no empty file behind.
    std::error_code ignored;
    const bool existed = std::filesystem::exists(args.coverage_file, ignored);
    const bool writable = static_cast<bool>(std::ofstream(args.coverage_file, std::ios::app));
    if (writable && !existed) std::filesystem::remove(args.coverage_file, ignored);
    if (!writable) {
      err << "nvsvp: rtl-verify: --coverage-file " << args.coverage_file << ": cannot open it for writing\n";
      return exit_bad_input;
    }
  }
  const std::uint64_t seed = args.seed ? *args.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
  out << "rtl-verify: seed " << seed << ", backend " << args.backend << " (reproduce: nvsvp rtl-verify --seed " << seed
      << " --beats " << args.beats << " --backend " << args.backend << ")\n";

  bool passed = true;
  if (!args.random_only) {
    // Directed cases on fresh units, the RTL's output ready half the time.
    std::uint64_t unit_number = 0;
    auto make_unit = [&] {
      UnitOptions options;
      options.backend = args.backend;
      options.ready_probability = 0.5;
      options.ready_seed = seed + unit_number++;
      return make_unit_under_test(options);
    };
    out << "directed: " << directed_cases().size() << " cases, each in one call per step and one command per call\n";
    const DirectedReport directed = run_directed(make_unit, &out);
    out << "directed: " << directed.passed << " passed, " << directed.failed << " failed\n";
    for (const std::string& failure : directed.failures) out << "  FAILED " << failure << "\n";
    passed = passed && directed.failed == 0;
  }
  if (!args.directed_only) {
    UnitOptions options;
    options.backend = args.backend;
    options.wave_path = wave.path;
    options.wave_format = wave.format;
    options.wave_window = wave.window;
    std::unique_ptr<reduction::ReductionUnit> dut;
    try {
      dut = make_unit_under_test(options);
    } catch (const std::runtime_error& e) {
      err << "nvsvp: rtl-verify: " << wave.option << " " << wave.path << ": " << e.what() << "\n";
      return exit_bad_input;
    }
    const auto reference = make_reference(options.config);
    RegressionOptions regression;
    regression.seed = seed;
    regression.beats = args.beats;
    const RegressionReport report = run_regression(*dut, *reference, rtl_of(*dut), regression);
    print_regression(out, report, args.coverage, true);
    if (!wave.path.empty()) print_wave(out, wave, rtl_of(*dut)->wave_time_ns());
    if (!args.coverage_file.empty()) {
      try {
        write_coverage_file(args.coverage_file, to_points(report.coverage));
      } catch (const CoverageFileError& e) {
        err << "nvsvp: rtl-verify: --coverage-file " << e.what() << "\n";
        return exit_bad_input;
      }
      out << "coverage file: " << args.coverage_file << " (Verilator's coverage format; merge with nvsvp "
          << "rtl-coverage-merge)\n";
    }
    passed = passed && report.passed();
  }
  out << "rtl-verify: " << (passed ? "passed" : "FAILED") << "\n";
  return passed ? exit_ok : exit_check_failed;
}

int rtl_coverage_merge(const CoverageMergeArgs& args, std::ostream& out, std::ostream& err) {
  if (args.inputs.empty()) {
    err << "nvsvp: rtl-coverage-merge: expected at least one coverage file\n";
    return exit_bad_input;
  }
  CoveragePoints merged;
  try {
    for (const std::string& input : args.inputs) merge_points(merged, read_coverage_file(input), input);
    if (!args.out.empty()) write_coverage_file(args.out, merged);
  } catch (const CoverageFileError& e) {
    err << "nvsvp: rtl-coverage-merge: " << e.what() << "\n";
    return exit_bad_input;
  }
  const std::size_t functional = functional_point_count(merged);
  out << "rtl-coverage-merge: " << args.inputs.size() << " file" << (args.inputs.size() == 1 ? "" : "s") << ", "
      << merged.size() << " points (" << functional << " functional bins of the reduction unit, "
      << merged.size() - functional << " others)\n";
  const Coverage coverage = functional_coverage(merged);
  if (functional == 0) {
    out << "coverage: the files hold no functional bin of the reduction unit\n";
  } else if (args.table) {
    coverage.print(out);
  } else {
    out << "coverage: " << coverage.bins_hit() << " of " << coverage.bins() << " bins hit\n";
  }
  if (!args.out.empty()) out << "merged: " << args.out << "\n";
  return exit_ok;
}

}  // namespace

int rtl_coverage_merge_command(const CoverageMergeArgs& args, std::ostream& out, std::ostream& err) {
  try {
    return rtl_coverage_merge(args, out, err);
  } catch (const std::exception& e) {
    err << "nvsvp: rtl-coverage-merge: error: " << e.what() << "\n";
    return exit_check_failed;
  }
}

// A failure nobody anticipated (the unit threw) is a failed check, reported, never a crash.
int rtl_check_command(const RtlCheckArgs& args, std::ostream& out, std::ostream& err) {
  try {
    return rtl_check(args, out, err);
  } catch (const std::exception& e) {
    err << "nvsvp: rtl-check: error: " << e.what() << "\n";
    return exit_check_failed;
  }
}

int rtl_verify_command(const RtlVerifyArgs& args, std::ostream& out, std::ostream& err) {
  try {
    return rtl_verify(args, out, err);
  } catch (const std::exception& e) {
    err << "nvsvp: rtl-verify: error: " << e.what() << "\n";
    return exit_check_failed;
  }
}

}  // namespace nvsvp::testbench
