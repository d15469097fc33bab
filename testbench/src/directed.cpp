#include "nvsvp/testbench/directed.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "directed_names.hpp"
#include "nvsvp/testbench/lanes.hpp"

namespace nvsvp::testbench {

using reduction::Beat;
using reduction::OpenContext;

using namespace directed_names;

namespace {

Command open_command(std::uint16_t context, std::uint16_t contributions, ReduceOp op, ReduceType type,
                     std::uint32_t length) {
  Command command;
  command.kind = Command::Kind::open_context;
  command.open.context = context;
  command.open.contributions = contributions;
  command.open.op = op;
  command.open.type = type;
  command.open.length_beats = length;
  return command;
}

Command contribution_command(std::uint16_t context, std::uint32_t beat, const Beat& data) {
  Command command;
  command.kind = Command::Kind::contribution;
  command.contribution.context = context;
  command.contribution.beat = beat;
  command.contribution.data = data;
  return command;
}

// Builds a case: every command is declared with the outcome it must have, every output beat with
// its kind; the expected status is tallied from these declarations.
class CaseBuilder {
 public:
  explicit CaseBuilder(std::string name) { case_.name = std::move(name); case_.steps.emplace_back(); }

  CaseBuilder& open(std::uint16_t context, std::uint16_t contributions, ReduceOp op, ReduceType type,
                    std::uint32_t length) {
    step().commands.push_back(open_command(context, contributions, op, type, length));
    ++counters().contexts_opened;
    case_.context_types.emplace_back(context, type);
    return *this;
  }
  CaseBuilder& open_rejected(const Command& command, std::uint32_t status_bit) {
    step().commands.push_back(command);
    return rejected(status_bit);
  }
  CaseBuilder& add(std::uint16_t context, std::uint32_t beat, const Beat& data) {
    step().commands.push_back(contribution_command(context, beat, data));
    ++counters().contributions;
    return *this;
  }
  CaseBuilder& add_rejected(std::uint16_t context, std::uint32_t beat, const Beat& data, std::uint32_t status_bit) {
    step().commands.push_back(contribution_command(context, beat, data));
    return rejected(status_bit);
  }
  CaseBuilder& complete(std::uint16_t context, std::uint32_t beat, std::uint16_t contributions, const Beat& data) {
    ++counters().completed_beats;
    return output(context, beat, contributions, false, data);
  }
  CaseBuilder& evicted(std::uint16_t context, std::uint32_t beat, std::uint16_t contributions, const Beat& data) {
    ++counters().evicted_beats;
    return output(context, beat, contributions, true, data);
  }
  CaseBuilder& passthrough(std::uint16_t context, std::uint32_t beat, const Beat& data) {
    ++counters().passthrough_beats;
    return output(context, beat, 1, true, data);
  }
  CaseBuilder& context_completed() {
    ++counters().contexts_completed;
    return *this;
  }
  CaseBuilder& clear(std::uint32_t mask) {
    step().clear_after = mask;
    case_.expected_status.sticky &= ~mask;
    case_.steps.emplace_back();
    return *this;
  }
  DirectedCase build() {
    if (case_.steps.back().commands.empty() && case_.steps.size() > 1) case_.steps.pop_back();
    return case_;
  }

 private:
  DirectedStep& step() { return case_.steps.back(); }
  reduction::ReductionCounters& counters() { return case_.expected_status.counters; }
  CaseBuilder& rejected(std::uint32_t status_bit) {
    case_.expected_status.sticky |= status_bit;
    ++counters().errors;
    return *this;
  }
  CaseBuilder& output(std::uint16_t context, std::uint32_t beat, std::uint16_t contributions, bool partial,
                      const Beat& data) {
    ResultBeat r;
    r.context = context;
    r.beat = beat;
    r.contributions = contributions;
    r.partial = partial;
    r.data = data;
    case_.expected.push_back(r);
    return *this;
  }

  DirectedCase case_;
};

// The arithmetic cases: the lane facts grouped by (op, type, contribution count), one context per
// group, lane i of beat b holding fact (b * lanes + i); a short last beat repeats its first fact.
// Each beat's contributions arrive back to back (the pipeline's forwarding path), beat after beat.
std::vector<DirectedCase> arithmetic_cases() {
  std::map<std::tuple<int, int, std::size_t>, std::vector<const LaneFact*>> groups;
  for (const LaneFact& fact : lane_facts()) {
    groups[{static_cast<int>(fact.type), static_cast<int>(fact.op), fact.operands.size()}].push_back(&fact);
  }
  std::vector<DirectedCase> cases;
  for (const auto& group : groups) {
    // A named reference, not a structured binding: lambdas may capture bindings only from C++20
    // (g++ accepts it in C++17, clang does not).
    const std::vector<const LaneFact*>& facts = group.second;
    const ReduceType type = facts.front()->type;
    const ReduceOp op = facts.front()->op;
    const auto contributions = static_cast<std::uint16_t>(facts.front()->operands.size());
    const int lanes = lane_count(type);
    const auto beats = static_cast<std::uint32_t>((facts.size() + static_cast<std::size_t>(lanes) - 1) /
                                                  static_cast<std::size_t>(lanes));
    CaseBuilder b(std::string(type_name(type)) + " " + op_name(op) + ", " + std::to_string(contributions) +
                  " contributions: " + std::to_string(facts.size()) +
                  (facts.size() == 1 ? " lane fact" : " lane facts"));
    const std::uint16_t context = 11;
    b.open(context, contributions, op, type, beats);
    for (std::uint32_t beat = 0; beat < beats; ++beat) {
      auto fact_at = [&](int lane) {
        const std::size_t i = beat * static_cast<std::size_t>(lanes) + static_cast<std::size_t>(lane);
        return facts[i < facts.size() ? i : beat * static_cast<std::size_t>(lanes)];
      };
      for (std::uint16_t j = 0; j < contributions; ++j) {
        Beat data{};
        for (int lane = 0; lane < lanes; ++lane) set_lane(data, type, lane, fact_at(lane)->operands[j]);
        b.add(context, beat, data);
      }
      Beat result{};
      for (int lane = 0; lane < lanes; ++lane) set_lane(result, type, lane, fact_at(lane)->expected);
      b.complete(context, beat, contributions, result);
    }
    b.context_completed();
    cases.push_back(b.build());
  }
  return cases;
}

Beat u32s(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return make_beat<std::uint32_t>(ReduceType::u32, {a, b, c, d});
}
Beat f16s(std::initializer_list<std::uint16_t> lanes) {
  return make_beat<std::uint16_t>(ReduceType::f16, std::vector<std::uint16_t>(lanes));
}
// Distinct, recognisable u32 data for the buffer cases: context, beat and contribution number,
// with a lane that wraps when summed.
Beat tagged(std::uint16_t context, std::uint32_t beat, std::uint32_t j) {
  return u32s((static_cast<std::uint32_t>(context) << 24) | (beat << 8) | j, j * 7, beat, 0xFFFFFFF0u + j);
}
// tagged(c, b, 1) + tagged(c, b, 2), lane by lane (u32 wrap-around).
Beat tagged_sum(std::uint16_t context, std::uint32_t beat) {
  const std::uint32_t tag = (static_cast<std::uint32_t>(context) << 24) | (beat << 8);
  return u32s(2 * tag + 3, 21, 2 * beat, 0xFFFFFFE3u);
}

// Set 0 of the default buffer (256 sets of 8 ways; set = (beat + 61 * context) mod 256) holds,
// for context 0, beats 0, 256, 512, 768; for context 1, 195, 451, 707, 963; for context 2, 134,
// 390, 646, 902; for context 4, 12.
DirectedCase eviction_case() {
  CaseBuilder b("buffer full: round-robin victim, partial flag, passthrough, freed way reused");
  for (const std::uint16_t context : {0, 1, 2}) b.open(context, 2, kAdd, kU32, 1024);
  b.open(4, 2, kAdd, kU32, 16);
  for (const std::uint32_t beat : {0u, 256u, 512u, 768u}) b.add(0, beat, tagged(0, beat, 1));  // ways 0-3
  for (const std::uint32_t beat : {195u, 451u, 707u, 963u}) b.add(1, beat, tagged(1, beat, 1));  // ways 4-7
  b.add(2, 134, tagged(2, 134, 1)).evicted(0, 0, 1, tagged(0, 0, 1));      // pointer 0 -> way 0
  b.add(2, 390, tagged(2, 390, 1)).evicted(0, 256, 1, tagged(0, 256, 1));  // pointer 1 -> way 1
  b.add(0, 0, tagged(0, 0, 2)).passthrough(0, 0, tagged(0, 0, 2));         // beat 0 was evicted
  b.add(0, 512, tagged(0, 512, 2)).complete(0, 512, 2, tagged_sum(0, 512)); // frees way 2
  b.add(2, 646, tagged(2, 646, 1));                                        // takes way 2: no eviction
  b.add(1, 195, tagged(1, 195, 2)).complete(1, 195, 2, tagged_sum(1, 195)); // frees way 4
  b.add(2, 902, tagged(2, 902, 1));                                        // takes way 4
  b.add(4, 12, tagged(4, 12, 1)).evicted(2, 646, 1, tagged(2, 646, 1));    // pointer 2 -> way 2
  b.add(4, 12, tagged(4, 12, 2)).complete(4, 12, 2, tagged_sum(4, 12));
  return b.build();
}

DirectedCase single_contribution_case() {
  CaseBuilder b("one contribution completes at once and takes no slot of a full set");
  b.open(0, 2, kAdd, kU32, 1024).open(1, 2, kAdd, kU32, 1024);
  for (const std::uint32_t beat : {0u, 256u, 512u, 768u}) b.add(0, beat, tagged(0, beat, 1));
  for (const std::uint32_t beat : {195u, 451u, 707u, 963u}) b.add(1, beat, tagged(1, beat, 1));
  b.open(4, 1, kAdd, kU32, 16);
  b.add(4, 12, tagged(4, 12, 1)).complete(4, 12, 1, tagged(4, 12, 1));  // set 0 full: no eviction
  b.open(2, 2, kAdd, kU32, 1024);
  b.add(2, 134, tagged(2, 134, 1)).evicted(0, 0, 1, tagged(0, 0, 1));   // the pointer is still at way 0
  return b.build();
}

// A single contribution leaves as finish(widen(x)): the value itself, but every NaN canonical.
DirectedCase single_contribution_nan_case() {
  CaseBuilder b("one contribution: value unchanged, NaN made canonical");
  b.open(5, 1, kAdd, kF16, 1);
  b.add(5, 0, f16s({0x3C00, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x7D01, 0xFE55, 0x7BFF}))
      .complete(5, 0, 1, f16s({0x3C00, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7E00, 0x7BFF}));
  b.context_completed();
  b.open(6, 1, kMax, kF32, 1);
  b.add(6, 0, make_beat<std::uint32_t>(kF32, {0x7F800001, 0xFFC12345, 0x00000001, 0x80000000}))
      .complete(6, 0, 1, make_beat<std::uint32_t>(kF32, {0x7FC00000, 0x7FC00000, 0x00000001, 0x80000000}));
  b.context_completed();
  b.open(7, 1, kMin, kBf16, 1);
  b.add(7, 0, make_beat<std::uint16_t>(kBf16, {0x7F81, 0xFFC1, 0x0001, 0x8000, 0x7F7F, 0xFF80, 0x3F80, 0x0080}))
      .complete(7, 0, 1, make_beat<std::uint16_t>(kBf16, {0x7FC0, 0x7FC0, 0x0001, 0x8000, 0x7F7F, 0xFF80, 0x3F80, 0x0080}));
  b.context_completed();
  return b.build();
}

// An evicted f16 beat leaves rounded from its f32 accumulator; later contributions pass through
// one by one, each rounded on its own.
DirectedCase f16_eviction_case() {
  CaseBuilder b("f16: an evicted partial is rounded once, passthrough contributions alone");
  for (const std::uint16_t context : {0, 1, 2}) b.open(context, 3, kAdd, kF16, 1024);
  b.add(0, 0, f16s({0x3C00, 0x3C01, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0x3C00, 0x4000}));
  b.add(0, 0, f16s({0x1000, 0x1000, 0x4C00, 0x0001, 0x8000, 0xFC00, 0xBC00, 0x4000}));
  for (const std::uint32_t beat : {256u, 512u, 768u}) b.add(0, beat, f16s({0x3C00, 0, 0, 0, 0, 0, 0, 0}));
  for (const std::uint32_t beat : {195u, 451u, 707u, 963u}) b.add(1, beat, f16s({0x4000, 0, 0, 0, 0, 0, 0, 0}));
  // 1 + 2^-11 -> 1 (tie, even); (1 + ulp) + 2^-11 -> 1 + 2 ulp; 65504 + 16 -> inf; 2 subnormals;
  // -0 - 0 = -0; inf - inf = NaN; 1 - 1 = +0; 2 + 2 = 4.
  b.add(2, 134, f16s({0x3C00, 0, 0, 0, 0, 0, 0, 0}))
      .evicted(0, 0, 2, f16s({0x3C00, 0x3C02, 0x7C00, 0x0002, 0x8000, 0x7E00, 0x0000, 0x4400}));
  b.add(0, 0, f16s({0x1000, 0x7D01, 0x0001, 0xFE55, 0x8001, 0x3C00, 0x0000, 0x8000}))
      .passthrough(0, 0, f16s({0x1000, 0x7E00, 0x0001, 0x7E00, 0x8001, 0x3C00, 0x0000, 0x8000}));
  return b.build();
}

DirectedCase interleaved_case() {
  CaseBuilder b("interleaved contexts and out-of-order beats complete in arrival order");
  b.open(3, 2, kAdd, kU32, 4).open(9, 3, kMax, kS64, 1).open(20, 2, kAdd, kF32, 2);
  const Beat one = make_beat<std::uint32_t>(kF32, {0x3F800000, 0x40000000, 0xBF800000, 0x00000000});
  const Beat two = make_beat<std::uint32_t>(kF32, {0x40000000, 0x40000000, 0x3F800000, 0x80000000});
  b.add(3, 3, u32s(1, 2, 3, 4));
  b.add(9, 0, make_beat<std::uint64_t>(kS64, {0xFFFFFFFFFFFFFFFF, 5}));
  b.add(20, 1, one);
  b.add(3, 1, u32s(10, 20, 30, 40));
  b.add(3, 0, u32s(100, 200, 300, 400));
  b.add(9, 0, make_beat<std::uint64_t>(kS64, {0x8000000000000000, 7}));
  b.add(3, 2, u32s(5, 5, 5, 5));
  b.add(20, 1, two).complete(20, 1, 2, make_beat<std::uint32_t>(kF32, {0x40400000, 0x40800000, 0x00000000, 0x00000000}));
  b.add(3, 2, u32s(1, 1, 1, 0xFFFFFFFF)).complete(3, 2, 2, u32s(6, 6, 6, 4));
  b.add(3, 0, u32s(1, 1, 1, 1)).complete(3, 0, 2, u32s(101, 201, 301, 401));
  b.add(9, 0, make_beat<std::uint64_t>(kS64, {0xFFFFFFFFFFFFFFFE, 0xFFFFFFFFFFFFFFFF}))
      .complete(9, 0, 3, make_beat<std::uint64_t>(kS64, {0xFFFFFFFFFFFFFFFF, 7}))
      .context_completed();
  b.add(20, 0, one);
  b.add(3, 3, u32s(4, 3, 2, 1)).complete(3, 3, 2, u32s(5, 5, 5, 5));
  b.add(3, 1, u32s(0, 0, 0, 0)).complete(3, 1, 2, u32s(10, 20, 30, 40)).context_completed();
  b.add(20, 0, one).complete(20, 0, 2, make_beat<std::uint32_t>(kF32, {0x40000000, 0x40800000, 0xC0000000, 0x00000000}))
      .context_completed();
  // Reopened with another operation and type once complete.
  b.open(9, 2, kMin, kU32, 1);
  b.add(9, 0, u32s(7, 0xFFFFFFFF, 0, 9)).add(9, 0, u32s(8, 1, 0, 9)).complete(9, 0, 2, u32s(7, 1, 0, 9)).context_completed();
  return b.build();
}

// Back-to-back contributions to one beat, and alternating between two beats of one set: the
// pipeline must forward results it has not yet written back.
DirectedCase forwarding_case() {
  CaseBuilder b("back-to-back contributions to one beat and to one set (forwarding)");
  // Beats 0 and 256 of context 1 share set 0; their contributions alternate.
  b.open(1, 4, kAdd, kU32, 512);
  for (std::uint32_t j = 1; j <= 4; ++j) {
    b.add(1, 0, u32s(j, 10 * j, 100 * j, 1000 * j));
    b.add(1, 256, u32s(2 * j, 20 * j, 200 * j, 2000 * j));
  }
  b.complete(1, 0, 4, u32s(10, 100, 1000, 10000)).complete(1, 256, 4, u32s(20, 200, 2000, 20000));
  // Eight contributions in a row to one beat, then eight to the next.
  b.open(2, 8, kAdd, kU32, 2);
  for (std::uint32_t j = 1; j <= 8; ++j) b.add(2, 1, u32s(j, j * j, 0xFFFFFFFF, 1u << j));
  b.complete(2, 1, 8, u32s(36, 204, 0xFFFFFFF8, 510));
  for (std::uint32_t j = 1; j <= 8; ++j) b.add(2, 0, u32s(1, 1, 1, 1));
  b.complete(2, 0, 8, u32s(8, 8, 8, 8)).context_completed();
  return b.build();
}

Beat bytes(std::uint8_t fill) {
  Beat beat{};
  beat.fill(fill);
  return beat;
}

std::vector<DirectedCase> error_cases() {
  using namespace reduction;
  std::vector<DirectedCase> cases;
  {
    CaseBuilder b("error: contribution to a context never opened or beyond the table");
    b.add_rejected(5, 0, bytes(1), status_unknown_context)
        .add_rejected(64, 0, bytes(2), status_unknown_context)
        .add_rejected(0xFFFF, 3, bytes(3), status_unknown_context);
    cases.push_back(b.build());
  }
  {
    CaseBuilder b("error: contribution after the context completed");
    b.open(1, 1, kAdd, kU32, 1).add(1, 0, u32s(1, 2, 3, 4)).complete(1, 0, 1, u32s(1, 2, 3, 4)).context_completed();
    b.add_rejected(1, 0, u32s(5, 6, 7, 8), status_after_completion);
    cases.push_back(b.build());
  }
  {
    CaseBuilder b("error: too many contributions to a complete beat; the extra is dropped");
    b.open(2, 2, kAdd, kU32, 2).add(2, 0, u32s(1, 1, 1, 1)).add(2, 0, u32s(2, 2, 2, 2)).complete(2, 0, 2, u32s(3, 3, 3, 3));
    b.add_rejected(2, 0, u32s(100, 100, 100, 100), status_too_many_contributions);
    b.add(2, 1, u32s(4, 4, 4, 4)).add(2, 1, u32s(5, 5, 5, 5)).complete(2, 1, 2, u32s(9, 9, 9, 9)).context_completed();
    cases.push_back(b.build());
  }
  {
    CaseBuilder b("error: beat index out of range");
    b.open(2, 1, kXor, kU64, 2);
    b.add_rejected(2, 2, bytes(7), status_beat_out_of_range).add_rejected(2, 0xFFFFFFFF, bytes(7), status_beat_out_of_range);
    b.add(2, 0, bytes(0x11)).complete(2, 0, 1, bytes(0x11));
    b.add(2, 1, bytes(0x22)).complete(2, 1, 1, bytes(0x22)).context_completed();
    cases.push_back(b.build());
  }
  {
    CaseBuilder b("error: open of a context still open; the context carries on unchanged");
    b.open(2, 2, kAdd, kU32, 1).add(2, 0, u32s(1, 2, 3, 4));
    b.open_rejected(open_command(2, 1, kMax, kS32, 5), status_context_busy);
    b.add(2, 0, u32s(10, 20, 30, 40)).complete(2, 0, 2, u32s(11, 22, 33, 44)).context_completed();
    cases.push_back(b.build());
  }
  {
    CaseBuilder b("error: bad opens (zero counts, too long, unknown codes, bitwise op on floats)");
    b.open_rejected(open_command(3, 0, kAdd, kU32, 1), status_bad_open)
        .open_rejected(open_command(3, 2, kAdd, kU32, 0), status_bad_open)
        .open_rejected(open_command(3, 2, kAdd, kU32, 1025), status_bad_open)
        .open_rejected(open_command(3, 2, kAdd, kU32, 0xFFFFFFFF), status_bad_open)
        .open_rejected(open_command(3, 2, static_cast<ReduceOp>(6), kU32, 1), status_bad_open)
        .open_rejected(open_command(3, 2, static_cast<ReduceOp>(7), kS64, 1), status_bad_open)
        .open_rejected(open_command(3, 2, kAdd, static_cast<ReduceType>(7), 1), status_bad_open)
        .open_rejected(open_command(3, 2, kAnd, kF32, 1), status_bad_open)
        .open_rejected(open_command(3, 2, kOr, kF16, 1), status_bad_open)
        .open_rejected(open_command(3, 2, kXor, kBf16, 1), status_bad_open);
    // None of them opened the context.
    b.add_rejected(3, 0, bytes(9), status_unknown_context);
    // The largest legal length is accepted.
    b.open(4, 1, kAnd, kS32, 1024).add(4, 1023, bytes(0x5A)).complete(4, 1023, 1, bytes(0x5A));
    cases.push_back(b.build());
  }
  {
    CaseBuilder b("status: sticky bits stay until cleared; clearing leaves the counters");
    b.add_rejected(5, 0, bytes(1), status_unknown_context);
    b.open(6, 1, kAdd, kU32, 1).add_rejected(6, 1, bytes(1), status_beat_out_of_range);
    b.clear(status_unknown_context);
    b.add_rejected(7, 0, bytes(1), status_unknown_context);
    b.clear(0x3F);
    b.add(6, 0, bytes(3)).complete(6, 0, 1, bytes(3)).context_completed();
    cases.push_back(b.build());
  }
  return cases;
}

std::string describe_beat(const ResultBeat& r, ReduceType type) {
  std::ostringstream os;
  os << "{context " << r.context << " beat " << r.beat << " partial " << r.partial << " contributions "
     << r.contributions << " data " << beat_lanes_hex(r.data, type) << "}";
  return os.str();
}

}  // namespace

const std::vector<DirectedCase>& directed_cases() {
  static const std::vector<DirectedCase> cases = [] {
    std::vector<DirectedCase> all = arithmetic_cases();
    for (DirectedCase& c : error_cases()) all.push_back(std::move(c));
    all.push_back(single_contribution_nan_case());
    all.push_back(interleaved_case());
    all.push_back(forwarding_case());
    all.push_back(eviction_case());
    all.push_back(f16_eviction_case());
    all.push_back(single_contribution_case());
    return all;
  }();
  return cases;
}

std::string run_directed_case(const DirectedCase& c, ReductionUnit& unit, bool one_command_per_call) {
  std::vector<ResultBeat> results;
  std::vector<Command> single(1);
  for (const DirectedStep& step : c.steps) {
    if (one_command_per_call) {
      for (const Command& command : step.commands) {
        single[0] = command;
        unit.process(single, results);
      }
    } else {
      unit.process(step.commands, results);
    }
    if (step.clear_after != 0) unit.clear_status(step.clear_after);
  }
  // The type of each output's context, for printing lanes (the latest open before it will do).
  auto type_of = [&](std::uint16_t context) {
    ReduceType type = ReduceType::u32;
    for (const auto& [id, t] : c.context_types) {
      if (id == context) type = t;
    }
    return type;
  };
  std::ostringstream os;
  const std::size_t n = std::max(results.size(), c.expected.size());
  for (std::size_t k = 0; k < n; ++k) {
    if (k < results.size() && k < c.expected.size() && results[k] == c.expected[k]) continue;
    os << "output " << k << ": expected ";
    if (k < c.expected.size()) os << describe_beat(c.expected[k], type_of(c.expected[k].context));
    else os << "no beat";
    os << ", actual ";
    if (k < results.size()) os << describe_beat(results[k], type_of(results[k].context));
    else os << "no beat";
    return os.str();
  }
  const ReductionStatus s = unit.status();
  const ReductionStatus& e = c.expected_status;
  const std::pair<const char*, std::pair<std::uint64_t, std::uint64_t>> fields[] = {
      {"status.sticky", {e.sticky, s.sticky}},
      {"counters.contributions", {e.counters.contributions, s.counters.contributions}},
      {"counters.completed_beats", {e.counters.completed_beats, s.counters.completed_beats}},
      {"counters.evicted_beats", {e.counters.evicted_beats, s.counters.evicted_beats}},
      {"counters.passthrough_beats", {e.counters.passthrough_beats, s.counters.passthrough_beats}},
      {"counters.errors", {e.counters.errors, s.counters.errors}},
      {"counters.contexts_opened", {e.counters.contexts_opened, s.counters.contexts_opened}},
      {"counters.contexts_completed", {e.counters.contexts_completed, s.counters.contexts_completed}},
  };
  for (const auto& [name, values] : fields) {
    if (values.first != values.second) {
      os << name << ": expected " << values.first << ", actual " << values.second;
      return os.str();
    }
  }
  return "";
}

DirectedReport run_directed(const std::function<std::unique_ptr<ReductionUnit>()>& make_unit, std::ostream* log) {
  DirectedReport report;
  for (const DirectedCase& c : directed_cases()) {
    std::string failure;
    for (const bool one_per_call : {false, true}) {
      const std::unique_ptr<ReductionUnit> unit = make_unit();
      failure = run_directed_case(c, *unit, one_per_call);
      if (!failure.empty()) {
        failure = c.name + (one_per_call ? " (one command per call): " : " (one call per step): ") + failure;
        break;
      }
    }
    if (failure.empty()) {
      ++report.passed;
    } else {
      ++report.failed;
      report.failures.push_back(failure);
    }
    if (log != nullptr) *log << "  " << (failure.empty() ? "ok    " : "FAILED") << " " << c.name << "\n";
  }
  return report;
}

}  // namespace nvsvp::testbench
