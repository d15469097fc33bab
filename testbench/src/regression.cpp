#include "nvsvp/testbench/regression.hpp"

#include <algorithm>
#include <chrono>
#include <iomanip>

#include "nvsvp/reduction/rtl_reduction_unit.hpp"

namespace nvsvp::testbench {

namespace {

// Batch sizes log-uniform in 1..max: single commands as well as long streams.
std::size_t random_batch(Rng& rng, std::size_t max) {
  int top = 0;
  while ((2ull << top) <= max) ++top;
  const int k = static_cast<int>(rng.below(static_cast<std::uint64_t>(top) + 1));
  return static_cast<std::size_t>(std::min<std::uint64_t>(max, rng.between(1ull << k, (2ull << k) - 1)));
}

double random_ready_probability(Rng& rng) {
  static const double choices[] = {1.0, 0.9, 0.7, 0.5, 0.25, 0.1};
  static const std::uint32_t weights[] = {30, 20, 20, 15, 10, 5};
  return choices[rng.weighted(weights)];
}

}  // namespace

RegressionReport run_regression(reduction::ReductionUnit& dut, reduction::ReductionUnit& reference,
                                reduction::RtlReductionUnit* rtl, const RegressionOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RegressionReport report;
  report.seed = options.seed;
  report.backend = dut.backend_name();

  // Independent streams for the stimulus and for the run's own choices, both from the seed.
  StimulusGenerator stimulus(options.seed, options.stimulus);
  Rng rng(options.seed ^ 0x5EEDBA7C4u);
  Scoreboard scoreboard(dut, reference, options.stimulus.config);

  std::vector<Command> commands;
  std::vector<std::uint32_t> expected_error;
  auto fail = [&](Mismatch m) { report.mismatch = std::move(m); };
  while (!stimulus.finished()) {
    if (stimulus.stats().contributions >= options.beats) stimulus.start_draining();
    commands.clear();
    expected_error.clear();
    stimulus.generate(random_batch(rng, options.max_batch), commands, expected_error);
    if (commands.empty()) break;
    if (rtl != nullptr && options.back_pressure) rtl->set_output_ready_probability(random_ready_probability(rng), rng.next());
    ++report.batches;
    if (auto m = scoreboard.run(commands, expected_error)) {
      fail(*m);
      break;
    }
    if (auto m = scoreboard.check_status(&stimulus.expected())) {
      fail(*m);
      break;
    }
    if (rng.chance(options.clear_probability)) {
      const auto mask = static_cast<std::uint32_t>(rng.below(64));
      scoreboard.clear_status(mask);
      stimulus.clear_status(mask);
      ++report.clears;
      if (auto m = scoreboard.check_status(&stimulus.expected())) {
        m->field += " after clear_status(0x" + hex(mask, 2) + ")";
        fail(*m);
        break;
      }
    }
  }
  if (!report.mismatch) {
    if (auto m = scoreboard.check_drained()) fail(*m);
  }

  report.commands = scoreboard.commands();
  report.stimulus = stimulus.stats();
  report.outputs = scoreboard.outputs();
  report.complete_outputs = scoreboard.complete_outputs();
  report.partial_outputs = scoreboard.partial_outputs();
  report.final_status = dut.status();
  report.cycles = dut.cycles();
  report.coverage = scoreboard.coverage();
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

void print_regression(std::ostream& out, const RegressionReport& r, bool coverage_table, bool wall) {
  const StimulusStats& s = r.stimulus;
  std::uint64_t injected = 0;
  for (const std::uint64_t n : s.errors) injected += n;
  out << "random: seed " << r.seed << ", unit " << r.backend << " against the model\n";
  out << "  stimulus: " << s.contributions << " contribution beats, " << r.commands << " commands ("
      << s.opens << " context opens, " << injected << " illegal), " << r.batches << " batches, " << r.clears
      << " status clears\n";
  out << "  illegal commands:";
  for (int k = 0; k < error_kind_count; ++k) out << " " << to_string(static_cast<ErrorKind>(k)) << " " << s.errors[static_cast<std::size_t>(k)];
  out << "\n  phases:";
  for (int p = 0; p < phase_count; ++p) out << " " << to_string(static_cast<Phase>(p)) << " " << s.phases[static_cast<std::size_t>(p)];
  const auto& c = r.final_status.counters;
  out << "\n  outputs: " << r.outputs << " beats (" << r.complete_outputs << " complete, " << r.partial_outputs
      << " partial); unit counters: completed " << c.completed_beats << ", evicted " << c.evicted_beats
      << ", passthrough " << c.passthrough_beats << ", errors " << c.errors << ", contexts " << c.contexts_opened
      << " opened / " << c.contexts_completed << " completed, sticky 0x" << hex(r.final_status.sticky, 2) << "\n";
  out << "  clock cycles: " << r.cycles << "\n";
  if (r.mismatch) {
    out << "  " << r.mismatch->describe(r.seed) << "\n";
    out << "random: FAILED (rerun with --seed " << r.seed << " to reproduce)\n";
  } else {
    out << "random: passed: every output beat and status matched the model; ledger and expected status held\n";
  }
  if (coverage_table) r.coverage.print(out);
  else out << "coverage: " << r.coverage.bins_hit() << " of " << r.coverage.bins() << " bins hit\n";
  if (wall) {
    const double seconds = std::max(r.wall_seconds, 1e-9);
    out << "wall: " << std::fixed << std::setprecision(2) << seconds << " s, "
        << std::setprecision(2) << static_cast<double>(s.contributions) / seconds / 1e6 << " M contribution beats/s, "
        << static_cast<double>(r.cycles) / seconds / 1e6 << " M cycles/s (unit and model together)\n";
    out << std::defaultfloat;
  }
}

}  // namespace nvsvp::testbench
