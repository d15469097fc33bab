// The scoreboard: the unit under test (the RTL through its transactor, or any ReductionUnit)
// against the reference model, command stream in, every output beat and the status compared.
//
// Besides the beat-by-beat comparison with the reference it checks, independently of the
// reference, that the stream's status is what the stimulus says it must be (sticky bits, error,
// contribution and context counters) and that nothing is lost or invented: every accepted
// contribution leaves the unit in exactly one output beat (the beat ledger), non-partial beats
// hold all the contributions, and the beat counters agree with the outputs.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"
#include "nvsvp/testbench/coverage.hpp"
#include "nvsvp/testbench/stimulus.hpp"

namespace nvsvp::reduction {
class ReductionModel;
}

namespace nvsvp::testbench {

using reduction::ReductionStatus;
using reduction::ReductionUnit;
using reduction::ResultBeat;

// The first difference found. command_index counts commands from the start of the run.
struct Mismatch {
  std::uint64_t command_index = 0;
  std::int64_t output_index = -1;  // in the whole output stream; -1 for a status field
  std::int64_t context = -1;
  std::int64_t beat = -1;
  std::string field;
  std::string expected;
  std::string actual;

  // "MISMATCH seed 7 command 1234 context 5 beat 17 output 321: field data lane 2: expected 3c00,
  // actual 3c01"
  std::string describe(std::uint64_t seed) const;
};

class Scoreboard {
 public:
  Scoreboard(ReductionUnit& dut, ReductionUnit& reference, const reduction::ReductionUnitConfig& config);

  // Runs one batch through the reference and the unit under test and compares the outputs.
  // `expected_error[i]` is the status bit command i must raise (0: it must be accepted).
  std::optional<Mismatch> run(const std::vector<Command>& commands, const std::vector<std::uint32_t>& expected_error);
  // Status of the unit under test against the reference, and (when given) against the stimulus.
  std::optional<Mismatch> check_status(const ExpectedStatus* expected);
  // At the end of a drained run: every context's contributions all came out.
  std::optional<Mismatch> check_drained() const;
  void clear_status(std::uint32_t mask);

  const Coverage& coverage() const { return coverage_; }
  std::uint64_t commands() const { return commands_; }
  std::uint64_t outputs() const { return outputs_; }
  std::uint64_t complete_outputs() const { return complete_outputs_; }
  std::uint64_t partial_outputs() const { return partial_outputs_; }

 private:
  struct BeatRecord {
    std::uint16_t received = 0;   // contributions seen in output beats
    std::uint8_t class_mask = 0;  // operand classes of its lanes (bit = OperandClass)
    bool partial_seen = false;
  };
  struct Incarnation {
    OpenContext spec;
    std::uint64_t expected_total = 0;
    std::uint64_t received_total = 0;
    std::vector<BeatRecord> beats;
  };

  void reference_results(const std::vector<Command>& commands);
  std::optional<Mismatch> compare_beat(std::size_t k, const ResultBeat& expected, const ResultBeat& actual) const;
  void observe_command(const Command& command, std::uint32_t expected_error);
  std::optional<Mismatch> observe_output(const ResultBeat& result, std::uint64_t output_index);
  std::string describe_beat(const ResultBeat& beat) const;
  std::uint64_t source_of(std::size_t k) const;

  ReductionUnit& dut_;
  ReductionUnit& reference_;
  reduction::ReductionModel* reference_model_;  // set when the reference can name result sources
  reduction::ReductionUnitConfig config_;

  std::vector<Command> single_;
  std::vector<ResultBeat> expected_;
  std::vector<std::size_t> expected_source_;  // per expected beat, its command's index in the batch
  std::vector<ResultBeat> actual_;
  std::uint64_t batch_first_command_ = 0;
  std::size_t batch_size_ = 0;

  std::vector<std::deque<Incarnation>> incarnations_;  // per context id, oldest first
  std::vector<reduction::ReduceType> context_type_;    // per context id, of its latest incarnation
  Coverage coverage_;

  std::uint64_t commands_ = 0;
  std::uint64_t outputs_ = 0;
  std::uint64_t complete_outputs_ = 0;
  std::uint64_t partial_outputs_ = 0;
};

}  // namespace nvsvp::testbench
