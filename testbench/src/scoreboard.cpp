#include "nvsvp/testbench/scoreboard.hpp"

#include <algorithm>
#include <exception>
#include <sstream>

#include "nvsvp/reduction/reduction_model.hpp"

namespace nvsvp::testbench {

namespace {

Mismatch status_mismatch(std::uint64_t command_index, const std::string& field, std::uint64_t expected,
                         std::uint64_t actual, bool as_hex) {
  Mismatch m;
  m.command_index = command_index;
  m.field = field;
  m.expected = as_hex ? "0x" + hex(expected, 2) : std::to_string(expected);
  m.actual = as_hex ? "0x" + hex(actual, 2) : std::to_string(actual);
  return m;
}

}  // namespace

std::string Mismatch::describe(std::uint64_t seed) const {
  std::ostringstream os;
  os << "MISMATCH seed " << seed << " command " << command_index;
  if (context >= 0) os << " context " << context;
  if (beat >= 0) os << " beat " << beat;
  if (output_index >= 0) os << " output " << output_index;
  os << ": field " << field << ": expected " << expected << ", actual " << actual;
  return os.str();
}

Scoreboard::Scoreboard(ReductionUnit& dut, ReductionUnit& reference, const reduction::ReductionUnitConfig& config)
    : dut_(dut),
      reference_(reference),
      reference_model_(dynamic_cast<reduction::ReductionModel*>(&reference)),
      config_(config),
      single_(1),
      incarnations_(config.contexts),
      context_type_(config.contexts, reduction::ReduceType::f32) {}

void Scoreboard::reference_results(const std::vector<Command>& commands) {
  expected_.clear();
  expected_source_.clear();
  if (reference_model_ != nullptr) {
    reference_model_->process(commands, expected_);
    expected_source_ = reference_model_->last_result_sources();
    return;
  }
  // A reference that cannot name its sources runs one command at a time.
  for (std::size_t i = 0; i < commands.size(); ++i) {
    single_[0] = commands[i];
    reference_.process(single_, expected_);
    expected_source_.resize(expected_.size(), i);
  }
}

std::uint64_t Scoreboard::source_of(std::size_t k) const {
  if (k < expected_source_.size()) return batch_first_command_ + expected_source_[k];
  return batch_first_command_ + (batch_size_ == 0 ? 0 : batch_size_ - 1);
}

std::optional<Mismatch> Scoreboard::run(const std::vector<Command>& commands,
                                        const std::vector<std::uint32_t>& expected_error) {
  batch_first_command_ = commands_;
  batch_size_ = commands.size();
  commands_ += commands.size();
  for (std::size_t i = 0; i < commands.size(); ++i) observe_command(commands[i], expected_error[i]);

  reference_results(commands);
  actual_.clear();
  try {
    dut_.process(commands, actual_);
  } catch (const std::exception& e) {
    Mismatch m;
    m.command_index = batch_first_command_;
    m.field = "unit under test (" + dut_.backend_name() + ") threw during commands " +
              std::to_string(batch_first_command_) + ".." + std::to_string(commands_ - 1);
    m.expected = "no exception";
    m.actual = e.what();
    return m;
  }

  const std::size_t n = std::max(expected_.size(), actual_.size());
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint64_t output_index = outputs_ + k;
    if (k >= actual_.size() || k >= expected_.size()) {
      Mismatch m;
      m.command_index = source_of(k);
      m.output_index = static_cast<std::int64_t>(output_index);
      const ResultBeat& present = k < actual_.size() ? actual_[k] : expected_[k];
      m.context = present.context;
      m.beat = present.beat;
      m.field = k < actual_.size() ? "extra output beat" : "missing output beat";
      m.expected = k < expected_.size() ? describe_beat(expected_[k]) : "no beat";
      m.actual = k < actual_.size() ? describe_beat(actual_[k]) : "no beat";
      return m;
    }
    if (auto m = compare_beat(k, expected_[k], actual_[k])) return m;
  }
  for (std::size_t k = 0; k < actual_.size(); ++k) {
    if (auto m = observe_output(actual_[k], outputs_ + k)) {
      m->command_index = source_of(k);
      return m;
    }
  }
  outputs_ += actual_.size();
  return std::nullopt;
}

std::optional<Mismatch> Scoreboard::compare_beat(std::size_t k, const ResultBeat& expected,
                                                 const ResultBeat& actual) const {
  Mismatch m;
  m.command_index = source_of(k);
  m.output_index = static_cast<std::int64_t>(outputs_ + k);
  m.context = expected.context;
  m.beat = expected.beat;
  // The header fields in the order a reader wants the first difference named.
  const struct {
    const char* name;
    std::uint64_t expected;
    std::uint64_t actual;
  } fields[] = {{"context", expected.context, actual.context},
                {"beat", expected.beat, actual.beat},
                {"partial", expected.partial, actual.partial},
                {"contributions", expected.contributions, actual.contributions}};
  for (const auto& field : fields) {
    if (field.expected == field.actual) continue;
    m.field = field.name;
    m.expected = std::to_string(field.expected);
    m.actual = std::to_string(field.actual);
    return m;
  }
  if (expected.data != actual.data) {
    const reduction::ReduceType type =
        expected.context < context_type_.size() ? context_type_[expected.context] : reduction::ReduceType::u32;
    for (int lane = 0; lane < lane_count(type); ++lane) {
      const std::uint64_t e = get_lane(expected.data, type, lane);
      const std::uint64_t a = get_lane(actual.data, type, lane);
      if (e == a) continue;
      m.field = std::string("data lane ") + std::to_string(lane) + " (" + type_name(type) + ")";
      m.expected = hex(e, lane_bytes(type) * 2);
      m.actual = hex(a, lane_bytes(type) * 2);
      return m;
    }
  }
  return std::nullopt;
}

std::string Scoreboard::describe_beat(const ResultBeat& beat) const {
  const reduction::ReduceType type =
      beat.context < context_type_.size() ? context_type_[beat.context] : reduction::ReduceType::u32;
  std::ostringstream os;
  os << "{context " << beat.context << " beat " << beat.beat << " partial " << beat.partial << " contributions "
     << beat.contributions << " data " << beat_lanes_hex(beat.data, type) << "}";
  return os.str();
}

void Scoreboard::observe_command(const Command& command, std::uint32_t expected_error) {
  if (expected_error != 0) return;  // dropped by the unit
  if (command.kind == Command::Kind::open_context) {
    const OpenContext& open = command.open;
    if (open.context >= incarnations_.size()) return;
    Incarnation incarnation;
    incarnation.spec = open;
    incarnation.expected_total = static_cast<std::uint64_t>(open.contributions) * open.length_beats;
    incarnation.beats.resize(open.length_beats);
    incarnations_[open.context].push_back(std::move(incarnation));
    context_type_[open.context] = open.type;
    return;
  }
  const auto& c = command.contribution;
  if (c.context >= incarnations_.size() || incarnations_[c.context].empty()) return;
  Incarnation& incarnation = incarnations_[c.context].back();
  if (c.beat >= incarnation.beats.size()) return;
  const reduction::ReduceType type = incarnation.spec.type;
  std::uint8_t mask = 0;
  for (int lane = 0; lane < lane_count(type); ++lane) {
    mask |= static_cast<std::uint8_t>(1u << static_cast<unsigned>(classify(type, get_lane(c.data, type, lane))));
  }
  incarnation.beats[c.beat].class_mask |= mask;
}

std::optional<Mismatch> Scoreboard::observe_output(const ResultBeat& result, std::uint64_t output_index) {
  Mismatch m;
  m.output_index = static_cast<std::int64_t>(output_index);
  m.context = result.context;
  m.beat = result.beat;
  if (result.context >= incarnations_.size() || incarnations_[result.context].empty()) {
    m.field = "ledger: output for a context with no open reduction";
    m.expected = "no beat";
    m.actual = describe_beat(result);
    return m;
  }
  Incarnation& incarnation = incarnations_[result.context].front();
  const std::uint16_t contributions = incarnation.spec.contributions;
  if (result.beat >= incarnation.beats.size()) {
    m.field = "ledger: beat index";
    m.expected = "< " + std::to_string(incarnation.beats.size());
    m.actual = std::to_string(result.beat);
    return m;
  }
  BeatRecord& record = incarnation.beats[result.beat];
  const bool count_ok = result.partial ? (result.contributions >= 1 && result.contributions < contributions)
                                       : (result.contributions == contributions && record.received == 0);
  if (!count_ok || record.received + result.contributions > contributions) {
    m.field = "ledger: contributions of a " + std::string(result.partial ? "partial" : "complete") + " beat";
    m.expected = result.partial ? "1.." + std::to_string(contributions - 1) + " (of " + std::to_string(contributions) +
                                      ", " + std::to_string(record.received) + " already out)"
                                : std::to_string(contributions) + " with none out before";
    m.actual = std::to_string(result.contributions) + " (" + std::to_string(record.received) + " already out)";
    return m;
  }
  record.received = static_cast<std::uint16_t>(record.received + result.contributions);
  record.partial_seen = record.partial_seen || result.partial;
  if (result.partial) {
    ++partial_outputs_;
  } else {
    ++complete_outputs_;
  }
  incarnation.received_total += result.contributions;
  if (incarnation.received_total == incarnation.expected_total) {
    // Every beat now holds all its contributions (none may exceed them): sample the coverage.
    std::uint64_t hits[operand_class_count][2] = {};
    for (const BeatRecord& beat : incarnation.beats) {
      for (int c = 0; c < operand_class_count; ++c) {
        if (beat.class_mask & (1u << c)) ++hits[c][beat.partial_seen ? 1 : 0];
      }
    }
    for (int c = 0; c < operand_class_count; ++c) {
      for (int evicted = 0; evicted < 2; ++evicted) {
        if (hits[c][evicted] == 0) continue;
        coverage_.hit(incarnation.spec.op, incarnation.spec.type, static_cast<OperandClass>(c), contributions,
                      evicted != 0, hits[c][evicted]);
      }
    }
    incarnations_[result.context].pop_front();
  }
  return std::nullopt;
}

std::optional<Mismatch> Scoreboard::check_status(const ExpectedStatus* expected) {
  const ReductionStatus dut = dut_.status();
  const ReductionStatus ref = reference_.status();
  const std::uint64_t last = commands_ == 0 ? 0 : commands_ - 1;
  struct Field {
    const char* name;
    std::uint64_t dut;
    std::uint64_t ref;
    bool as_hex = false;
  };
  const Field fields[] = {
      {"status.sticky", dut.sticky, ref.sticky, true},
      {"counters.contributions", dut.counters.contributions, ref.counters.contributions},
      {"counters.completed_beats", dut.counters.completed_beats, ref.counters.completed_beats},
      {"counters.evicted_beats", dut.counters.evicted_beats, ref.counters.evicted_beats},
      {"counters.passthrough_beats", dut.counters.passthrough_beats, ref.counters.passthrough_beats},
      {"counters.errors", dut.counters.errors, ref.counters.errors},
      {"counters.contexts_opened", dut.counters.contexts_opened, ref.counters.contexts_opened},
      {"counters.contexts_completed", dut.counters.contexts_completed, ref.counters.contexts_completed},
  };
  for (const Field& f : fields) {
    if (f.dut != f.ref) return status_mismatch(last, f.name, f.ref, f.dut, f.as_hex);
  }
  if (expected != nullptr) {
    const Field stimulus[] = {
        {"status.sticky (from the stimulus)", dut.sticky, expected->sticky, true},
        {"counters.errors (from the stimulus)", dut.counters.errors, expected->errors},
        {"counters.contributions (from the stimulus)", dut.counters.contributions, expected->contributions},
        {"counters.contexts_opened (from the stimulus)", dut.counters.contexts_opened, expected->contexts_opened},
        {"counters.contexts_completed (from the stimulus)", dut.counters.contexts_completed,
         expected->contexts_completed},
    };
    for (const Field& f : stimulus) {
      if (f.dut != f.ref) return status_mismatch(last, f.name, f.ref, f.dut, f.as_hex);
    }
  }
  // The beat counters against the beats that came out.
  if (dut.counters.completed_beats != complete_outputs_) {
    return status_mismatch(last, "counters.completed_beats (complete beats out)", complete_outputs_,
                           dut.counters.completed_beats, false);
  }
  if (dut.counters.evicted_beats + dut.counters.passthrough_beats != partial_outputs_) {
    return status_mismatch(last, "counters.evicted_beats + passthrough_beats (partial beats out)", partial_outputs_,
                           dut.counters.evicted_beats + dut.counters.passthrough_beats, false);
  }
  return std::nullopt;
}

std::optional<Mismatch> Scoreboard::check_drained() const {
  for (std::size_t id = 0; id < incarnations_.size(); ++id) {
    if (incarnations_[id].empty()) continue;
    const Incarnation& incarnation = incarnations_[id].front();
    Mismatch m;
    m.command_index = commands_ == 0 ? 0 : commands_ - 1;
    m.context = static_cast<std::int64_t>(id);
    m.field = "ledger: contributions out at the end of the run";
    m.expected = std::to_string(incarnation.expected_total);
    m.actual = std::to_string(incarnation.received_total);
    return m;
  }
  return std::nullopt;
}

void Scoreboard::clear_status(std::uint32_t mask) {
  dut_.clear_status(mask);
  reference_.clear_status(mask);
}

}  // namespace nvsvp::testbench
