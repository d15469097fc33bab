#include "nvsvp/reduction/reduction_factory.hpp"

#include <cstdio>

#include "nvsvp/reduction/rtl_reduction_unit.hpp"

namespace nvsvp::reduction {
namespace {

// Bit 127 first, as a Verilog hex literal reads.
std::string hex(const Beat& beat) {
  std::string text = "0x";
  char digits[3];
  for (int i = 15; i >= 0; --i) {
    std::snprintf(digits, sizeof digits, "%02x", beat[i]);
    text += digits;
  }
  return text;
}

std::string describe(const ResultBeat& beat) {
  return "context " + std::to_string(beat.context) + ", beat " + std::to_string(beat.beat) +
         ", data " + hex(beat.data) + ", contributions " + std::to_string(beat.contributions) +
         ", partial " + std::to_string(beat.partial ? 1 : 0);
}

struct FieldDifference {
  std::string field;
  std::string expected;
  std::string actual;
};

// The first field in which two result beats differ (field is empty when they are equal).
FieldDifference first_difference(const ResultBeat& expected, const ResultBeat& actual) {
  if (expected.context != actual.context)
    return {"context", std::to_string(expected.context), std::to_string(actual.context)};
  if (expected.beat != actual.beat)
    return {"beat", std::to_string(expected.beat), std::to_string(actual.beat)};
  if (expected.data != actual.data) return {"data", hex(expected.data), hex(actual.data)};
  if (expected.contributions != actual.contributions)
    return {"contributions", std::to_string(expected.contributions),
            std::to_string(actual.contributions)};
  if (expected.partial != actual.partial)
    return {"partial", std::to_string(expected.partial ? 1 : 0),
            std::to_string(actual.partial ? 1 : 0)};
  return {};
}

// The context and beat a command addresses.
std::string addressed(const Command& command) {
  if (command.kind == Command::Kind::open_context)
    return "OpenContext of context " + std::to_string(command.open.context);
  return "contribution to context " + std::to_string(command.contribution.context) + ", beat " +
         std::to_string(command.contribution.beat);
}

}  // namespace

const std::vector<std::string>& reduction_backend_names() {
  static const std::vector<std::string> names{"model", "rtl", "both"};
  return names;
}

std::unique_ptr<ReductionUnit> make_reduction_unit(const std::string& backend,
                                                   const ReductionUnitConfig& config) {
  if (backend == "model") return std::make_unique<ReductionModel>(config);
  if (backend == "rtl") return std::make_unique<RtlReductionUnit>(config);
  if (backend == "both") {
    auto checked = std::make_unique<RtlReductionUnit>(config);  // rejects a non-default structure
    return std::make_unique<LockstepReductionUnit>(std::make_unique<ReductionModel>(config),
                                                   std::move(checked));
  }
  std::string known;
  for (const std::string& name : reduction_backend_names())
    known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown reduction backend '" + backend + "' (known: " + known +
                              ")");
}

LockstepReductionUnit::LockstepReductionUnit(std::unique_ptr<ReductionModel> reference,
                                             std::unique_ptr<ReductionUnit> checked)
    : reference_(std::move(reference)), checked_(std::move(checked)) {
  if (!reference_ || !checked_)
    throw std::invalid_argument("LockstepReductionUnit needs two backends");
}

void LockstepReductionUnit::process(const std::vector<Command>& commands,
                                    std::vector<ResultBeat>& results) {
  std::vector<ResultBeat> expected;
  std::vector<ResultBeat> actual;
  reference_->process(commands, expected);
  checked_->process(commands, actual);
  const std::vector<std::size_t>& sources = reference_->last_result_sources();
  const std::string ref_name = reference_->backend_name();
  const std::string dut_name = checked_->backend_name();
  auto command_label = [&](std::size_t index) {
    return "command " + std::to_string(commands_before_ + index) + " (" + addressed(commands[index]) +
           ")";
  };

  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string where = command_label(sources[i]) + ", result beat " + std::to_string(i) +
                              " of the call";
    if (i >= actual.size())
      throw ReductionMismatch("reduction backends differ at " + where + ": field presence: " +
                              ref_name + " emitted {" + describe(expected[i]) + "}, " +
                              dut_name + " emitted nothing");
    const FieldDifference difference = first_difference(expected[i], actual[i]);
    if (!difference.field.empty())
      throw ReductionMismatch("reduction backends differ at " + where + " (" + ref_name +
                              ": context " + std::to_string(expected[i].context) + ", beat " +
                              std::to_string(expected[i].beat) + "): field " + difference.field +
                              ": " + ref_name + " " + difference.expected + ", " + dut_name + " " +
                              difference.actual);
  }
  if (actual.size() > expected.size()) {
    const std::string where =
        commands.empty()   ? std::string("in a call without commands")
        : expected.empty() ? "in commands " + std::to_string(commands_before_) + " to " +
                               std::to_string(commands_before_ + commands.size() - 1)
                         : "after " + command_label(sources.back());
    throw ReductionMismatch("reduction backends differ " + where + ": field presence: " +
                            dut_name + " emitted an extra result beat {" +
                            describe(actual[expected.size()]) + "}, " + ref_name +
                            " emitted nothing (" + std::to_string(actual.size()) + " beats against " +
                            std::to_string(expected.size()) + ")");
  }
  commands_before_ += commands.size();
  compare_status("after command " + std::to_string(commands_before_ - 1) + " (end of a process() call)");
  results.insert(results.end(), expected.begin(), expected.end());
}

void LockstepReductionUnit::clear_status(std::uint32_t mask) {
  reference_->clear_status(mask);
  checked_->clear_status(mask);
  compare_status("after clear_status(" + std::to_string(mask) + ")");
}

void LockstepReductionUnit::compare_status(const std::string& when) const {
  const ReductionStatus expected = reference_->status();
  const ReductionStatus actual = checked_->status();
  auto check = [&](const char* field, std::uint64_t ref_value, std::uint64_t dut_value) {
    if (ref_value == dut_value) return;
    throw ReductionMismatch("reduction backends differ in status " + when + ": field " + field +
                            ": " + reference_->backend_name() + " " + std::to_string(ref_value) +
                            ", " + checked_->backend_name() + " " + std::to_string(dut_value));
  };
  check("sticky", expected.sticky, actual.sticky);
  const ReductionCounters& e = expected.counters;
  const ReductionCounters& a = actual.counters;
  check("counters.contributions", e.contributions, a.contributions);
  check("counters.completed_beats", e.completed_beats, a.completed_beats);
  check("counters.evicted_beats", e.evicted_beats, a.evicted_beats);
  check("counters.passthrough_beats", e.passthrough_beats, a.passthrough_beats);
  check("counters.errors", e.errors, a.errors);
  check("counters.contexts_opened", e.contexts_opened, a.contexts_opened);
  check("counters.contexts_completed", e.contexts_completed, a.contexts_completed);
}

}  // namespace nvsvp::reduction
