// Directed cases of the reduction unit, each with its expected output beats and status written
// out by hand (bit patterns worked out on paper; tests/reduction/test_testbench_directed.cpp
// re-derives the float ones with the host's IEEE float and _Float16 arithmetic). Never computed
// with the unit's own code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::testbench {

using reduction::Command;
using reduction::ReduceOp;
using reduction::ReduceType;
using reduction::ReductionStatus;
using reduction::ReductionUnit;
using reduction::ResultBeat;

// One lane of arithmetic: the operands, in arrival order, and the expected result.
struct LaneFact {
  ReduceOp op;
  ReduceType type;
  std::vector<std::uint64_t> operands;
  std::uint64_t expected;
  const char* what;
};
// Every lane fact the arithmetic cases are built from.
const std::vector<LaneFact>& lane_facts();

struct DirectedStep {
  std::vector<Command> commands;
  std::uint32_t clear_after = 0;  // clear_status(mask) after the step's commands, when non-zero
};

struct DirectedCase {
  std::string name;
  std::vector<DirectedStep> steps;
  std::vector<ResultBeat> expected;  // every output beat, in order
  ReductionStatus expected_status;   // sticky bits and every counter at the end
  std::vector<std::pair<std::uint16_t, ReduceType>> context_types;  // for printing lanes
};

const std::vector<DirectedCase>& directed_cases();

struct DirectedReport {
  std::size_t passed = 0;
  std::size_t failed = 0;
  std::vector<std::string> failures;  // one line per failed case: case, call pattern, field, values
};

// Runs every case twice on fresh units from `make_unit`: each step in one process() call, then
// one command per call. Prints one line per case to `log` when it is not null.
DirectedReport run_directed(const std::function<std::unique_ptr<ReductionUnit>()>& make_unit, std::ostream* log);

// One case on one unit; returns an empty string when it passes, else what differed.
std::string run_directed_case(const DirectedCase& c, ReductionUnit& unit, bool one_command_per_call);

}  // namespace nvsvp::testbench
