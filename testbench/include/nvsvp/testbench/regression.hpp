// The constrained-random regression: stimulus -> scoreboard (unit under test against the
// reference model) in batches of random size, random output back-pressure on the RTL (changed
// every batch), occasional status clears; then the contexts are drained and the ledger closed.
// The report depends only on the seed and the options (wall time is reported separately).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "nvsvp/testbench/coverage.hpp"
#include "nvsvp/testbench/scoreboard.hpp"
#include "nvsvp/testbench/stimulus.hpp"

namespace nvsvp::reduction {
class RtlReductionUnit;
}

namespace nvsvp::testbench {

struct RegressionOptions {
  std::uint64_t seed = 1;
  std::uint64_t beats = 100000;     // contributions to send before draining the open contexts
  std::size_t max_batch = 4096;     // commands per process() call, drawn log-uniformly from 1..this
  double clear_probability = 0.02;  // per batch: clear a random subset of the sticky bits
  bool back_pressure = true;        // vary the RTL's output ready probability per batch
  StimulusOptions stimulus{};
};

struct RegressionReport {
  std::uint64_t seed = 0;
  std::string backend;
  std::uint64_t commands = 0;
  std::uint64_t batches = 0;
  std::uint64_t clears = 0;
  StimulusStats stimulus{};
  std::uint64_t outputs = 0;
  std::uint64_t complete_outputs = 0;
  std::uint64_t partial_outputs = 0;
  reduction::ReductionStatus final_status{};
  std::uint64_t cycles = 0;
  std::optional<Mismatch> mismatch;
  Coverage coverage;
  double wall_seconds = 0;

  bool passed() const { return !mismatch.has_value(); }
};

// `dut` and `reference` must be fresh (reset) units. `rtl`, if not null, is the transactor inside
// `dut` that takes the back-pressure.
RegressionReport run_regression(reduction::ReductionUnit& dut, reduction::ReductionUnit& reference,
                                reduction::RtlReductionUnit* rtl, const RegressionOptions& options);

// The report, deterministic for a seed; `wall` adds the (non-deterministic) timing line.
void print_regression(std::ostream& out, const RegressionReport& report, bool coverage_table, bool wall);

}  // namespace nvsvp::testbench
