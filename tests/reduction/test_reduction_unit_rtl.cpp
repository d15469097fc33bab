// The Verilated RTL through its transactor: directed cases against hand-worked results (eviction
// in a full set, forwarding between back-to-back commands, errors), then RTL against the model on
// random streams with heavy eviction and output back-pressure, the cycle estimate, and waveforms
// (VCD, FST, a time window).
#include <gtest/gtest.h>

#include <cstdio>
#include <algorithm>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_factory.hpp"
#include "nvsvp/reduction/reduction_model.hpp"
#include "nvsvp/reduction/rtl_reduction_unit.hpp"
#include "test_reduction_unit_support.hpp"

namespace nvsvp::reduction {
namespace {

using test::contribution;
using test::open_command;
using test::result_beat;
using test::u16_splat;
using test::u32_splat;

std::vector<ResultBeat> run_rtl_unit(ReductionUnit& unit, const std::vector<Command>& commands) {
  std::vector<ResultBeat> results;
  unit.process(commands, results);
  return results;
}

void expect_same_status(const ReductionStatus& expected, const ReductionStatus& actual) {
  EXPECT_EQ(actual.sticky, expected.sticky);
  EXPECT_EQ(actual.counters.contributions, expected.counters.contributions);
  EXPECT_EQ(actual.counters.completed_beats, expected.counters.completed_beats);
  EXPECT_EQ(actual.counters.evicted_beats, expected.counters.evicted_beats);
  EXPECT_EQ(actual.counters.passthrough_beats, expected.counters.passthrough_beats);
  EXPECT_EQ(actual.counters.errors, expected.counters.errors);
  EXPECT_EQ(actual.counters.contexts_opened, expected.counters.contexts_opened);
  EXPECT_EQ(actual.counters.contexts_completed, expected.counters.contexts_completed);
}

// Beat b of context c lies in set (b + 61 c) mod 256: this is the beat of context c in set `set`.
std::uint32_t beat_in_set(std::uint32_t context, std::uint32_t set) {
  return (set + 256u * 64u - 61u * context) % 256u;
}

TEST(ReductionRtl, StartsIdleWithClearStatus) {
  RtlReductionUnit rtl;
  const ReductionStatus status = rtl.status();
  EXPECT_EQ(status.sticky, 0u);
  EXPECT_EQ(status.counters.contributions, 0u);
  EXPECT_EQ(status.counters.errors, 0u);
  EXPECT_EQ(rtl.cycles(), 0u);
  EXPECT_TRUE(run_rtl_unit(rtl, {}).empty());
  EXPECT_EQ(rtl.cycles(), 0u);
}

TEST(ReductionRtl, ReducesBackToBackContributionsToOneBeat) {
  RtlReductionUnit rtl;
  // Eight contributions to one beat on consecutive clocks: every combine reads the slot its
  // predecessor writes in the same clock (forwarding), or the one before (the buffer).
  std::vector<Command> commands{open_command(0, 8, ReduceOp::add, ReduceType::u32, 1)};
  for (std::uint32_t i = 1; i <= 8; ++i) commands.push_back(contribution(0, 0, u32_splat(i << 4 | i)));
  EXPECT_EQ(run_rtl_unit(rtl, commands),
            std::vector<ResultBeat>{result_beat(0, 0, u32_splat(36 * 16 + 36), 8, false)});
  EXPECT_EQ(rtl.status().counters.contexts_completed, 1u);
}

TEST(ReductionRtl, F16ContributionsAccumulateInF32) {
  RtlReductionUnit rtl;
  // 1 + 2^-11 + 2^-11 = 1 + 2^-10 (0x3C01): rounded once, not after each step.
  EXPECT_EQ(run_rtl_unit(rtl, {open_command(3, 3, ReduceOp::add, ReduceType::f16, 1),
                      contribution(3, 0, u16_splat(0x3C00)), contribution(3, 0, u16_splat(0x1000)),
                      contribution(3, 0, u16_splat(0x1000))}),
            std::vector<ResultBeat>{result_beat(3, 0, u16_splat(0x3C01), 3, false)});
}

TEST(ReductionRtl, EvictsRoundRobinFromAFullSetAndPassesTheRestThrough) {
  RtlReductionUnit rtl;
  // Nine contexts of 512 beats, 3 contributions per beat. Beats b and b + 256 of a context share
  // a set; context c's first beat in set 17 gets c + 1, filling ways 0..7 in order.
  std::vector<Command> commands;
  for (std::uint16_t c = 0; c < 9; ++c)
    commands.push_back(open_command(c, 3, ReduceOp::add, ReduceType::u32, 512));
  for (std::uint16_t c = 0; c < 8; ++c)
    commands.push_back(contribution(c, beat_in_set(c, 17), u32_splat(c + 1u)));
  EXPECT_TRUE(run_rtl_unit(rtl, commands).empty());
  const std::uint32_t b0 = beat_in_set(0, 17);
  // Context 0's beat takes a second contribution (way 0: 1 + 0x100) and on the very next clock
  // context 8 misses in the full set: the victim is way 0, whose accumulator is being written in
  // that clock, so the victim read must see 0x101.
  EXPECT_EQ(run_rtl_unit(rtl, {contribution(0, b0, u32_splat(0x100)),
                      contribution(8, beat_in_set(8, 17), u32_splat(9))}),
            std::vector<ResultBeat>{result_beat(0, b0, u32_splat(0x101), 2, true)});
  // Context 0's beat is evicted: its third contribution passes through alone.
  EXPECT_EQ(run_rtl_unit(rtl, {contribution(0, b0, u32_splat(0x5))}),
            std::vector<ResultBeat>{result_beat(0, b0, u32_splat(0x5), 1, true)});
  // The pointer moved to way 1: the next miss evicts context 1's beat.
  const std::uint32_t b1 = beat_in_set(1, 17);
  EXPECT_EQ(run_rtl_unit(rtl, {contribution(1, b1 + 256, u32_splat(0x7))}),
            std::vector<ResultBeat>{result_beat(1, b1, u32_splat(2), 1, true)});
  // Context 2's beat (way 2) completes: 3 + 0x10 + 0x20, and frees way 2.
  const std::uint32_t b2 = beat_in_set(2, 17);
  EXPECT_EQ(run_rtl_unit(rtl, {contribution(2, b2, u32_splat(0x10)), contribution(2, b2, u32_splat(0x20))}),
            std::vector<ResultBeat>{result_beat(2, b2, u32_splat(0x33), 3, false)});
  // A miss takes the free way 2 without moving the pointer (still 2), so the next miss evicts
  // the newcomer.
  const std::uint32_t b3 = beat_in_set(3, 17);
  EXPECT_TRUE(run_rtl_unit(rtl, {contribution(3, b3 + 256, u32_splat(0x44))}).empty());
  EXPECT_EQ(run_rtl_unit(rtl, {contribution(4, beat_in_set(4, 17) + 256, u32_splat(0x55))}),
            std::vector<ResultBeat>{result_beat(3, b3 + 256, u32_splat(0x44), 1, true)});
  const ReductionStatus status = rtl.status();
  EXPECT_EQ(status.sticky, 0u);
  EXPECT_EQ(status.counters.evicted_beats, 3u);
  EXPECT_EQ(status.counters.passthrough_beats, 1u);
  EXPECT_EQ(status.counters.completed_beats, 1u);
  EXPECT_EQ(status.counters.contributions, 16u);
  EXPECT_EQ(status.counters.contexts_opened, 9u);
}

TEST(ReductionRtl, SetsEveryErrorBitAndCountsEveryError) {
  RtlReductionUnit rtl;
  const auto results =
      run_rtl_unit(rtl, {contribution(5, 0, u32_splat(1)),                          // unknown context
                contribution(64, 0, u32_splat(1)),                         // no such context
                open_command(1, 1, ReduceOp::add, ReduceType::u32, 2),
                contribution(1, 0, u32_splat(1)),                          // completes beat 0
                contribution(1, 0, u32_splat(1)),                          // too many
                contribution(1, 2, u32_splat(1)),                          // out of range
                open_command(1, 1, ReduceOp::add, ReduceType::u32, 2),     // busy
                open_command(2, 1, ReduceOp::bit_or, ReduceType::bf16, 2), // bad open
                test::open_command_raw(2, 1, 0, 200, 2),                   // bad open
                open_command(2, 1, ReduceOp::add, ReduceType::u32, 1025),  // bad open
                contribution(1, 1, u32_splat(2)),                          // completes context 1
                contribution(1, 1, u32_splat(3))});                        // after completion
  EXPECT_EQ(results, (std::vector<ResultBeat>{result_beat(1, 0, u32_splat(1), 1, false),
                                              result_beat(1, 1, u32_splat(2), 1, false)}));
  ReductionStatus status = rtl.status();
  EXPECT_EQ(status.sticky, 0x3Fu);
  EXPECT_EQ(status.counters.errors, 9u);
  EXPECT_EQ(status.counters.contributions, 2u);
  EXPECT_EQ(status.counters.contexts_opened, 1u);
  EXPECT_EQ(status.counters.contexts_completed, 1u);
  rtl.clear_status(status_too_many_contributions | status_bad_open);
  status = rtl.status();
  EXPECT_EQ(status.sticky, 0x3Fu & ~(status_too_many_contributions | status_bad_open));
  EXPECT_EQ(status.counters.errors, 9u);
}

// Runs the same commands through the RTL and the model, in chunks, comparing every beat and the
// status after each chunk.
void expect_rtl_matches_model(RtlReductionUnit& rtl, ReductionModel& model,
                              const std::vector<Command>& commands, std::size_t chunk) {
  for (std::size_t start = 0; start < commands.size(); start += chunk) {
    const std::vector<Command> part(commands.begin() + static_cast<std::ptrdiff_t>(start),
                                    commands.begin() + static_cast<std::ptrdiff_t>(
                                        std::min(commands.size(), start + chunk)));
    const std::vector<ResultBeat> expected = run_rtl_unit(model, part);
    const std::vector<ResultBeat> actual = run_rtl_unit(rtl, part);
    ASSERT_EQ(actual.size(), expected.size()) << "chunk at command " << start;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(actual[i], expected[i])
          << "result " << i << " of the chunk at command " << start << ", from command "
          << start + model.last_result_sources()[i];
    }
    expect_same_status(model.status(), rtl.status());
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(ReductionRtl, LeftoverSlotOfAClosedIncarnationLeavesLikeTheModelSays) {
  RtlReductionUnit rtl;
  ReductionModel model;
  // Context 0 (2 beats x 2): beat 0 (set 0) is evicted by contexts 1..8, takes two pass-through
  // contributions (one a surplus), and beat 1's first contribution completes the context with its
  // partial (0x40) left in set 1. Reopened, beat 1 must start afresh; the leftover leaves when set
  // 1 fills up.
  std::vector<Command> commands{open_command(0, 2, ReduceOp::add, ReduceType::u32, 2),
                                contribution(0, 0, u32_splat(0x10))};
  for (std::uint16_t c = 1; c <= 8; ++c) {
    commands.push_back(open_command(c, 2, ReduceOp::add, ReduceType::u32, 256));
    commands.push_back(contribution(c, beat_in_set(c, 0), u32_splat(c)));
  }
  for (std::uint32_t v : {0x11u, 0x12u}) commands.push_back(contribution(0, 0, u32_splat(v)));
  commands.push_back(contribution(0, 1, u32_splat(0x40)));
  commands.push_back(open_command(0, 2, ReduceOp::add, ReduceType::u32, 2));
  commands.push_back(contribution(0, 1, u32_splat(0x50)));
  commands.push_back(contribution(0, 1, u32_splat(0x60)));
  for (std::uint16_t c = 1; c <= 8; ++c)
    commands.push_back(contribution(c, beat_in_set(c, 1), u32_splat(0x100 + c)));
  // The stale eviction must not mark the new incarnation's beat 1 evicted: it is complete, so
  // this is too many (not a pass-through).
  commands.push_back(contribution(0, 1, u32_splat(0x90)));
  // Hand-worked: evicted context 0 beat 0 (0x10), two pass-throughs, then the reopened beat 1
  // completes as 0x50 + 0x60 (not with 0x40); filling set 1 (stale way 0, then contexts 1..8 from
  // way 1, freed by the completion) evicts the stale slot: context 0, beat 1, 0x40, 1 contribution.
  const std::vector<ResultBeat> results = run_rtl_unit(rtl, commands);
  EXPECT_EQ(results, (std::vector<ResultBeat>{result_beat(0, 0, u32_splat(0x10), 1, true),
                                              result_beat(0, 0, u32_splat(0x11), 1, true),
                                              result_beat(0, 0, u32_splat(0x12), 1, true),
                                              result_beat(0, 1, u32_splat(0xB0), 2, false),
                                              result_beat(0, 1, u32_splat(0x40), 1, true)}));
  EXPECT_EQ(results, run_rtl_unit(model, commands));
  expect_same_status(model.status(), rtl.status());
  EXPECT_EQ(rtl.status().counters.evicted_beats, 2u);
  EXPECT_EQ(rtl.status().counters.contexts_completed, 1u);
  EXPECT_EQ(rtl.status().sticky, status_too_many_contributions);
}

TEST(ReductionRtl, MatchesTheModelOnRandomInterleavedContexts) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RtlReductionUnit rtl;
    ReductionModel model;
    test::RandomCommandStream stream(seed, test::RandomStreamOptions{});
    expect_rtl_matches_model(rtl, model, stream.next(30000), 3000);
    if (HasFailure()) return;
    EXPECT_GT(model.status().counters.contexts_completed, 100u);
    EXPECT_GT(model.status().counters.errors, 100u);
  }
}

TEST(ReductionRtl, MatchesTheModelUnderHeavyEviction) {
  RtlReductionUnit rtl;
  ReductionModel model;
  test::RandomStreamOptions options;
  options.max_open = 24;
  options.max_length = 1024;
  options.error_rate = 0.005;
  test::RandomCommandStream stream(77, options);
  expect_rtl_matches_model(rtl, model, stream.next(100000), 10000);
  const ReductionCounters counters = model.status().counters;
  EXPECT_GT(counters.evicted_beats, 5000u);
  EXPECT_GT(counters.passthrough_beats, 5000u);
  EXPECT_GT(counters.completed_beats, 5000u);
}

// Surplus contributions to an evicted beat pass through and count, so their context completes
// early and may leave slots behind; reopening it turns them stale (the flash compare, which the
// RTL skips when the context holds no slot: this checks its per-context slot count). All 64
// contexts are open at once (some 2 300 beats buffered against 2 048 slots) and each is reopened
// as soon as it completes; one command in five is a surplus contribution to a beat that already had
// all its contributions (accepted only if that beat was evicted), sent alone to learn which.
TEST(ReductionRtl, MatchesTheModelWithSurplusContributionsAndLeftoverSlots) {
  RtlReductionUnit rtl;
  rtl.set_output_ready_probability(0.8, 3);
  ReductionModel model;
  std::mt19937_64 random(2024);
  struct Shadow {
    std::uint16_t contributions = 0;
    std::uint32_t length = 0;
    std::uint64_t accepted = 0;
    std::vector<std::uint16_t> sent;  // per beat
  };
  std::vector<Shadow> contexts(64);
  std::vector<Command> batch;
  const auto open = [&](std::uint16_t context) {
    Shadow& shadow = contexts[context];
    shadow.contributions = static_cast<std::uint16_t>(1 + random() % 4);
    shadow.length = static_cast<std::uint32_t>(8 + random() % 57);
    shadow.accepted = 0;
    shadow.sent.assign(shadow.length, 0);
    const auto type = static_cast<ReduceType>(random() % 7);
    const auto op = static_cast<ReduceOp>(random() % (type <= ReduceType::bf16 ? 3 : 6));
    batch.push_back(open_command(context, shadow.contributions, op, type, shadow.length));
  };
  const auto data = [&] {
    Beat beat{};
    for (auto& byte : beat) byte = static_cast<std::uint8_t>(random());
    return beat;
  };
  const auto flush = [&] {
    if (!batch.empty()) expect_rtl_matches_model(rtl, model, batch, batch.size());
    batch.clear();
  };
  for (std::uint16_t context = 0; context < 64; ++context) open(context);
  std::uint64_t surplus_accepted = 0;
  for (int step = 0; step < 300000 && !HasFailure(); ++step) {
    const auto context = static_cast<std::uint16_t>(random() % 64);
    Shadow& shadow = contexts[context];
    std::vector<std::uint32_t> candidates;
    const bool surplus = random() % 5 == 0;
    for (std::uint32_t beat = 0; beat < shadow.length; ++beat)
      if ((shadow.sent[beat] >= shadow.contributions) == surplus) candidates.push_back(beat);
    if (candidates.empty()) continue;
    const std::uint32_t beat = candidates[random() % candidates.size()];
    if (surplus) {
      flush();
      const std::uint64_t before = model.status().counters.contributions;
      batch.push_back(contribution(context, beat, data()));
      flush();
      if (model.status().counters.contributions == before) continue;  // too many: rejected
      ++surplus_accepted;
    } else {
      batch.push_back(contribution(context, beat, data()));
      ++shadow.sent[beat];
      if (batch.size() > random() % 256) flush();
    }
    if (++shadow.accepted == std::uint64_t{shadow.contributions} * shadow.length) open(context);
  }
  flush();
  const ReductionCounters counters = model.status().counters;
  EXPECT_GT(surplus_accepted, 300u);
  EXPECT_GT(counters.evicted_beats, 1000u);
  EXPECT_GT(counters.contexts_completed, 1500u);
  EXPECT_EQ(counters.contexts_opened, counters.contexts_completed + 64);
}

TEST(ReductionRtl, BackPressureChangesTheTimingButNotTheResults) {
  RtlReductionUnit rtl;
  rtl.set_output_ready_probability(0.3, 12345);
  ReductionModel model;
  test::RandomStreamOptions options;
  options.max_open = 24;
  options.max_length = 512;
  test::RandomCommandStream stream(5, options);
  expect_rtl_matches_model(rtl, model, stream.next(20000), 2500);
  EXPECT_GT(model.status().counters.evicted_beats, 100u);
  // Every clock a result waits for res_ready stalls the whole pipeline.
  EXPECT_GT(rtl.cycles(), model.cycles() + 1000);
}

TEST(ReductionRtl, TakesTheClocksTheModelEstimates) {
  RtlReductionUnit rtl;
  ReductionModel model;
  test::RandomCommandStream stream(9, test::RandomStreamOptions{});
  for (std::size_t count : {1u, 2u, 7u, 0u, 500u, 3u}) {
    expect_rtl_matches_model(rtl, model, stream.next(count), 1000);
    EXPECT_EQ(rtl.cycles(), model.cycles()) << "after a call of " << count << " commands";
  }
  rtl.clear_status(0x3F);
  model.clear_status(0x3F);
  EXPECT_EQ(rtl.cycles(), model.cycles());
  expect_same_status(model.status(), rtl.status());
  EXPECT_EQ(model.cycles(), (1 + 5) + (2 + 5) + (7 + 5) + (500 + 5) + (3 + 5) + 1u);
}

TEST(ReductionRtl, BothBackendRunsTheRtlAgainstTheModel) {
  auto both = make_reduction_unit("both", ReductionUnitConfig{});
  test::RandomStreamOptions options;
  options.max_length = 1024;
  test::RandomCommandStream stream(21, options);
  std::vector<ResultBeat> results;
  for (int call = 0; call < 4; ++call) both->process(stream.next(2500), results);
  EXPECT_GT(results.size(), 1000u);
  EXPECT_GT(both->cycles(), 10000u);
}

TEST(ReductionRtl, WritesAVcdOnRequest) {
  const std::string path = ::testing::TempDir() + "reduction_unit_test.vcd";
  std::remove(path.c_str());
  {
    RtlReductionUnit rtl;
    rtl.enable_wave(path);
    run_rtl_unit(rtl, {open_command(0, 2, ReduceOp::add, ReduceType::u32, 1), contribution(0, 0, u32_splat(1)),
              contribution(0, 0, u32_splat(2))});
    rtl.disable_wave();
  }
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << path;
  std::stringstream text;
  text << file.rdbuf();
  const std::string vcd = text.str();
  EXPECT_NE(vcd.find("$enddefinitions"), std::string::npos);
  EXPECT_NE(vcd.find(" cmd_valid "), std::string::npos);
  EXPECT_NE(vcd.find(" res_valid "), std::string::npos);
  // A clock is 1000 ps; after the 2 reset clocks, 3 commands and 5 clocks of drain: the first
  // dump is at 2000 ps, the last rising edge at 9500 ps.
  EXPECT_NE(vcd.find("\n#2000\n"), std::string::npos);
  EXPECT_EQ(vcd.find("\n#1500\n"), std::string::npos);
  EXPECT_NE(vcd.find("\n#9500\n"), std::string::npos);
  EXPECT_EQ(vcd.find("\n#10000\n"), std::string::npos);
  std::remove(path.c_str());
}

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The time stamps ("#2000") of a VCD's value changes.
std::vector<std::uint64_t> vcd_times(const std::string& vcd) {
  std::vector<std::uint64_t> times;
  std::istringstream lines(vcd);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 1 && line[0] == '#') times.push_back(std::stoull(line.substr(1)));
  }
  return times;
}

TEST(ReductionRtl, AWaveWindowDumpsOnlyTheClocksInsideIt) {
  const std::string path = ::testing::TempDir() + "reduction_unit_window.vcd";
  std::remove(path.c_str());
  RtlReductionUnit rtl;
  EXPECT_EQ(rtl.wave_time_ns(), 2u);  // the two reset clocks
  rtl.enable_wave(path, WaveWindow{20, 30});
  std::vector<Command> commands{open_command(0, 40, ReduceOp::add, ReduceType::u32, 1)};
  for (int i = 0; i < 40; ++i) commands.push_back(contribution(0, 0, u32_splat(1)));
  run_rtl_unit(rtl, commands);
  EXPECT_GE(rtl.wave_time_ns(), 2u + 41u);  // the run went past the window: the file is closed
  const std::string vcd = read_text(path);
  const std::vector<std::uint64_t> times = vcd_times(vcd);
  ASSERT_EQ(times.size(), 20u);  // clocks 20..29, two dumps each
  EXPECT_EQ(times.front(), 20000u);
  EXPECT_EQ(times.back(), 29500u);
  // The first dump holds every signal: as many values before the second time stamp as signal codes
  // declared ("$var wire 1 # clk $end": code '#'; a port seen at two levels shares one code).
  std::set<std::string> codes;
  std::istringstream lines(vcd);
  for (std::string word; lines >> word;) {
    if (word != "$var") continue;
    std::string kind, width, code;
    lines >> kind >> width >> code;
    codes.insert(code);
  }
  const std::size_t vars = codes.size();
  const std::size_t first = vcd.find("\n#20000\n");
  const std::size_t second = vcd.find("\n#20500\n");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  const std::string first_dump = vcd.substr(first + 8, second + 1 - (first + 8));  // its lines, each with its newline
  EXPECT_GT(vars, 20u);
  EXPECT_EQ(static_cast<std::size_t>(std::count(first_dump.begin(), first_dump.end(), '\n')), vars);
  std::remove(path.c_str());
}

TEST(ReductionRtl, WritesAnFstOnRequest) {
  const std::string path = ::testing::TempDir() + "reduction_unit_test.fst";
  std::remove(path.c_str());
  {
    RtlReductionUnit rtl(ReductionUnitConfig{}, WaveFormat::fst);
    EXPECT_EQ(rtl.wave_format(), WaveFormat::fst);
    rtl.enable_wave(path);
    EXPECT_EQ(run_rtl_unit(rtl, {open_command(0, 2, ReduceOp::add, ReduceType::u32, 1), contribution(0, 0, u32_splat(1)),
                        contribution(0, 0, u32_splat(2))}),
              std::vector<ResultBeat>{result_beat(0, 0, u32_splat(3), 2, false)});
  }
  // An FST file starts with its header block (type 0, FST_BL_HDR) and is no text.
  const std::string fst = read_text(path);
  ASSERT_GT(fst.size(), 100u) << path;
  EXPECT_EQ(fst[0], '\0');
  EXPECT_EQ(fst.find("$enddefinitions"), std::string::npos);
  std::remove(path.c_str());
}

TEST(ReductionRtl, ReopensAVcdAfterClosingIt) {
  const std::string first = ::testing::TempDir() + "reduction_unit_first.vcd";
  const std::string second = ::testing::TempDir() + "reduction_unit_second.vcd";
  RtlReductionUnit rtl;
  rtl.enable_wave(first);
  run_rtl_unit(rtl, {open_command(0, 1, ReduceOp::add, ReduceType::u32, 2), contribution(0, 0, u32_splat(1))});
  rtl.enable_wave(second);  // closes the first
  run_rtl_unit(rtl, {contribution(0, 1, u32_splat(1))});
  rtl.disable_wave();
  for (const std::string& path : {first, second}) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    EXPECT_NE(text.str().find("$enddefinitions"), std::string::npos) << path;
    std::remove(path.c_str());
  }
  EXPECT_EQ(rtl.status().counters.contexts_completed, 1u);
}

TEST(ReductionRtl, RefusesAnUnwritableVcdAndABadReadyProbability) {
  RtlReductionUnit rtl;
  EXPECT_THROW(rtl.enable_wave("/nonexistent-directory/unit.vcd"), std::runtime_error);
  for (double p : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()})
    EXPECT_THROW(rtl.set_output_ready_probability(p, 1), std::invalid_argument) << p;
  // Still usable afterwards.
  EXPECT_EQ(run_rtl_unit(rtl, {open_command(0, 1, ReduceOp::add, ReduceType::u32, 1),
                      contribution(0, 0, u32_splat(4))}),
            std::vector<ResultBeat>{result_beat(0, 0, u32_splat(4), 1, false)});
}

}  // namespace
}  // namespace nvsvp::reduction
