#include "nvsvp/testbench/commands.hpp"

#include <random>
#include <stdexcept>

#include "nvsvp/reduction/reduction_factory.hpp"
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

int rtl_verify(const RtlVerifyArgs& args, std::ostream& out, std::ostream& err) {
  if (!known_backend(args.backend)) {
    err << "nvsvp: rtl-verify: --backend " << args.backend << ": expected rtl, model or both\n";
    return exit_bad_input;
  }
  if (args.directed_only && args.random_only) {
    err << "nvsvp: rtl-verify: --directed-only and --random-only exclude each other\n";
    return exit_bad_input;
  }
  if (!args.vcd.empty() && (args.directed_only || args.backend == "model")) {
    err << "nvsvp: rtl-verify: --vcd records the RTL of the random regression: it needs backend rtl or both "
           "and no --directed-only\n";
    return exit_bad_input;
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
    options.vcd_path = args.vcd;
    std::unique_ptr<reduction::ReductionUnit> dut;
    try {
      dut = make_unit_under_test(options);
    } catch (const std::runtime_error& e) {
      err << "nvsvp: rtl-verify: --vcd " << args.vcd << ": " << e.what() << "\n";
      return exit_bad_input;
    }
    const auto reference = make_reference(options.config);
    RegressionOptions regression;
    regression.seed = seed;
    regression.beats = args.beats;
    const RegressionReport report = run_regression(*dut, *reference, rtl_of(*dut), regression);
    print_regression(out, report, args.coverage, true);
    if (!args.vcd.empty()) out << "vcd: " << args.vcd << "\n";
    passed = passed && report.passed();
  }
  out << "rtl-verify: " << (passed ? "passed" : "FAILED") << "\n";
  return passed ? exit_ok : exit_check_failed;
}

}  // namespace

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
