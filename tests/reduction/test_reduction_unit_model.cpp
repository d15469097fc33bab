// The reduction unit's C++ model against hand-worked expectations: completion, single-contribution
// contexts, set-associative allocation with round-robin eviction, pass-through after eviction,
// every error bit and counter, reopening, interleaving, stale slots and the cycle estimate.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "nvsvp/reduction/reduction_model.hpp"
#include "test_reduction_unit_support.hpp"

namespace nvsvp::reduction {
namespace {

using test::contribution;
using test::f32_beat;
using test::open_command;
using test::open_command_raw;
using test::result_beat;
using test::u16_splat;
using test::u32_beat;
using test::u32_splat;

// 256 bytes = 8 slots = 4 sets of 2 ways; set = (beat + 61 * context) mod 4 = (beat + context) mod 4.
ReductionUnitConfig tiny_config() {
  ReductionUnitConfig config;
  config.buffer_bytes = 256;
  config.contexts = 8;
  config.ways = 2;
  config.context_max_beats = 64;
  return config;
}

std::vector<ResultBeat> run_model_unit(ReductionModel& model, const std::vector<Command>& commands) {
  std::vector<ResultBeat> results;
  model.process(commands, results);
  return results;
}

TEST(ReductionModel, CompletesABeatWhenItsLastContributionArrives) {
  ReductionModel model;
  EXPECT_TRUE(run_model_unit(model, {open_command(0, 3, ReduceOp::add, ReduceType::u32, 2),
                          contribution(0, 0, u32_beat(1, 2, 3, 4)),
                          contribution(0, 0, u32_beat(10, 20, 30, 40))})
                  .empty());
  EXPECT_EQ(run_model_unit(model, {contribution(0, 0, u32_beat(100, 200, 300, 0xFFFFFFFFu))}),
            std::vector<ResultBeat>{result_beat(0, 0, u32_beat(111, 222, 333, 43), 3, false)});
  EXPECT_EQ(model.status().counters.completed_beats, 1u);
  EXPECT_EQ(model.status().counters.contexts_completed, 0u);

  // Beat 1 completes the context: 2 beats x 3 contributions.
  const auto results = run_model_unit(model, {contribution(0, 1, u32_splat(5)), contribution(0, 1, u32_splat(6)),
                                   contribution(0, 1, u32_splat(7))});
  EXPECT_EQ(results, std::vector<ResultBeat>{result_beat(0, 1, u32_splat(18), 3, false)});
  const ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, 0u);
  EXPECT_EQ(status.counters.contributions, 6u);
  EXPECT_EQ(status.counters.completed_beats, 2u);
  EXPECT_EQ(status.counters.contexts_opened, 1u);
  EXPECT_EQ(status.counters.contexts_completed, 1u);
  EXPECT_EQ(status.counters.evicted_beats, 0u);
  EXPECT_EQ(status.counters.errors, 0u);
}

TEST(ReductionModel, AddsF32AndS64Lanes) {
  ReductionModel model;
  // Exactly representable sums, so the host's float arithmetic is the reference.
  const auto results = run_model_unit(
      model, {open_command(1, 3, ReduceOp::add, ReduceType::f32, 1),
              contribution(1, 0, f32_beat(1.5f, -2.0f, 0.25f, 1e30f)),
              contribution(1, 0, f32_beat(2.25f, 0.5f, 0.25f, 1e30f)),
              contribution(1, 0, f32_beat(-0.75f, 0.0f, -0.5f, -1e30f)),
              open_command(2, 2, ReduceOp::add, ReduceType::s64, 1),
              contribution(2, 0, test::u64_beat(0xFFFFFFFFFFFFFFFFull, 0x7FFFFFFFFFFFFFFFull)),
              contribution(2, 0, test::u64_beat(2, 1))});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], result_beat(1, 0,
                                    f32_beat(1.5f + 2.25f + -0.75f, -2.0f + 0.5f + 0.0f,
                                             0.25f + 0.25f + -0.5f, (1e30f + 1e30f) + -1e30f),
                                    3, false));
  // s64 wraps around: -1 + 2 = 1, INT64_MAX + 1 = INT64_MIN.
  EXPECT_EQ(results[1], result_beat(2, 0, test::u64_beat(1, 0x8000000000000000ull), 2, false));
}

TEST(ReductionModel, AccumulatesF16InF32AndRoundsOnce) {
  ReductionModel model;
  // 1 + 2^-11 + 2^-11 = 1 + 2^-10, one f16 ulp above 1 (0x3C01). Rounding after every step would
  // give 1 + 2^-11 -> 1 (tie to even) twice, so 0x3C00.
  const auto results = run_model_unit(model, {open_command(0, 3, ReduceOp::add, ReduceType::f16, 1),
                                   contribution(0, 0, u16_splat(0x3C00)),
                                   contribution(0, 0, u16_splat(0x1000)),
                                   contribution(0, 0, u16_splat(0x1000))});
  EXPECT_EQ(results, std::vector<ResultBeat>{result_beat(0, 0, u16_splat(0x3C01), 3, false)});
}

TEST(ReductionModel, SingleContributionContextsCompleteWithoutTakingAWay) {
  ReductionModel model(tiny_config());
  // Context 0 fills set 0 (beats 0 and 4) with partials.
  run_model_unit(model, {open_command(0, 2, ReduceOp::add, ReduceType::u32, 16),
              contribution(0, 0, u32_splat(1)), contribution(0, 4, u32_splat(2))});
  // Context 4 (set = beat + 4 mod 4 = beat mod 4) has one contribution per beat: beats 0 and 8 of
  // set 0 complete at once and evict nothing.
  const auto results = run_model_unit(model, {open_command(4, 1, ReduceOp::max, ReduceType::s32, 9),
                                   contribution(4, 0, u32_splat(7)),
                                   contribution(4, 8, u32_splat(9))});
  EXPECT_EQ(results, (std::vector<ResultBeat>{result_beat(4, 0, u32_splat(7), 1, false),
                                              result_beat(4, 8, u32_splat(9), 1, false)}));
  EXPECT_EQ(model.status().counters.evicted_beats, 0u);
  EXPECT_EQ(model.status().counters.completed_beats, 2u);
  // Context 0's partials are still there: completing beat 0 gives 1 + 10.
  EXPECT_EQ(run_model_unit(model, {contribution(0, 0, u32_splat(10))}),
            std::vector<ResultBeat>{result_beat(0, 0, u32_splat(11), 2, false)});
}

TEST(ReductionModel, EvictsTheRoundRobinVictimAndTakesTheLowestFreeWayFirst) {
  ReductionModel model(tiny_config());
  // Context 0, two contributions per beat; beats 0, 4, 8, ... all map to set 0 (2 ways).
  std::vector<ResultBeat> results =
      run_model_unit(model, {open_command(0, 2, ReduceOp::add, ReduceType::u32, 32),
                  contribution(0, 0, u32_splat(0xA)),    // way 0
                  contribution(0, 4, u32_splat(0xB))});  // way 1
  EXPECT_TRUE(results.empty());
  // Set full: the pointer (0) picks way 0, beat 0 leaves as a partial, beat 8 takes its way.
  EXPECT_EQ(run_model_unit(model, {contribution(0, 8, u32_splat(0xC))}),
            std::vector<ResultBeat>{result_beat(0, 0, u32_splat(0xA), 1, true)});
  // The pointer moved on to way 1: beat 4 leaves, beat 12 takes way 1; the pointer wraps to 0.
  EXPECT_EQ(run_model_unit(model, {contribution(0, 12, u32_splat(0xD))}),
            std::vector<ResultBeat>{result_beat(0, 4, u32_splat(0xB), 1, true)});
  // Beat 8 (way 0) completes and frees its way.
  EXPECT_EQ(run_model_unit(model, {contribution(0, 8, u32_splat(0x100))}),
            std::vector<ResultBeat>{result_beat(0, 8, u32_splat(0x10C), 2, false)});
  // A miss with a free way takes it (way 0) and does not move the pointer...
  EXPECT_TRUE(run_model_unit(model, {contribution(0, 16, u32_splat(0x1))}).empty());
  // ... so the next miss evicts way 0 (beat 16), and the one after way 1 (beat 12).
  EXPECT_EQ(run_model_unit(model, {contribution(0, 20, u32_splat(0x2))}),
            std::vector<ResultBeat>{result_beat(0, 16, u32_splat(0x1), 1, true)});
  EXPECT_EQ(run_model_unit(model, {contribution(0, 24, u32_splat(0x3))}),
            std::vector<ResultBeat>{result_beat(0, 12, u32_splat(0xD), 1, true)});
  // Other sets are untouched: beat 1 (set 1) buffers without an eviction.
  EXPECT_TRUE(run_model_unit(model, {contribution(0, 1, u32_splat(0x4))}).empty());
  const ReductionCounters counters = model.status().counters;
  EXPECT_EQ(counters.evicted_beats, 4u);
  EXPECT_EQ(counters.completed_beats, 1u);
  EXPECT_EQ(counters.passthrough_beats, 0u);
  EXPECT_EQ(counters.contributions, 9u);
  EXPECT_EQ(model.status().sticky, 0u);
}

TEST(ReductionModel, PassesContributionsToAnEvictedBeatThroughUnreduced) {
  ReductionModel model(tiny_config());
  run_model_unit(model, {open_command(0, 3, ReduceOp::add, ReduceType::f16, 16),
              contribution(0, 0, u16_splat(0x3C00)),   // 1.0, set 0 way 0
              contribution(0, 4, u16_splat(0x4000))});  // 2.0, set 0 way 1
  EXPECT_EQ(run_model_unit(model, {contribution(0, 0, u16_splat(0x3C00))}).size(), 0u);  // beat 0: 2.0
  // Beat 8 evicts way 0 (beat 0, two contributions, 1 + 1 = 2.0 = 0x4000).
  EXPECT_EQ(run_model_unit(model, {contribution(0, 8, u16_splat(0x3800))}),
            std::vector<ResultBeat>{result_beat(0, 0, u16_splat(0x4000), 2, true)});
  // Beat 0 is evicted now: its third contribution passes through on its own. A NaN with a
  // payload comes out as the canonical f16 NaN, a normal value unchanged.
  Beat mixed = u16_splat(0x3555);
  mixed[0] = 0x01;  // lane 0: 0x7E01, a quiet NaN with a payload
  mixed[1] = 0x7E;
  Beat mixed_out = u16_splat(0x3555);
  mixed_out[0] = 0x00;
  mixed_out[1] = 0x7E;
  EXPECT_EQ(run_model_unit(model, {contribution(0, 0, mixed)}),
            std::vector<ResultBeat>{result_beat(0, 0, mixed_out, 1, true)});
  const ReductionCounters counters = model.status().counters;
  EXPECT_EQ(counters.passthrough_beats, 1u);
  EXPECT_EQ(counters.evicted_beats, 1u);
  EXPECT_EQ(counters.contributions, 5u);
  EXPECT_EQ(model.status().sticky, 0u);
}

TEST(ReductionModel, UnknownContextIsAnErrorAndDropsTheCommand) {
  ReductionModel model(tiny_config());
  EXPECT_TRUE(run_model_unit(model, {contribution(3, 0, u32_splat(1)),      // never opened
                          contribution(8, 0, u32_splat(1))})      // no such context (8 of 8)
                  .empty());
  const ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, status_unknown_context);
  EXPECT_EQ(status.counters.errors, 2u);
  EXPECT_EQ(status.counters.contributions, 0u);
}

TEST(ReductionModel, ContributionAfterCompletionIsAnError) {
  ReductionModel model(tiny_config());
  EXPECT_EQ(run_model_unit(model, {open_command(2, 1, ReduceOp::add, ReduceType::u32, 1),
                        contribution(2, 0, u32_splat(5)), contribution(2, 0, u32_splat(6))})
                .size(),
            1u);
  const ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, status_after_completion);
  EXPECT_EQ(status.counters.errors, 1u);
  EXPECT_EQ(status.counters.contributions, 1u);
  EXPECT_EQ(status.counters.contexts_completed, 1u);
}

TEST(ReductionModel, ContributionToACompleteBeatOfAnOpenContextIsTooMany) {
  ReductionModel model(tiny_config());
  const auto results = run_model_unit(model, {open_command(2, 2, ReduceOp::add, ReduceType::u32, 2),
                                   contribution(2, 1, u32_splat(5)), contribution(2, 1, u32_splat(6)),
                                   contribution(2, 1, u32_splat(7)),   // too many: dropped
                                   contribution(2, 0, u32_splat(1)), contribution(2, 0, u32_splat(2))});
  EXPECT_EQ(results, (std::vector<ResultBeat>{result_beat(2, 1, u32_splat(11), 2, false),
                                              result_beat(2, 0, u32_splat(3), 2, false)}));
  const ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, status_too_many_contributions);
  EXPECT_EQ(status.counters.errors, 1u);
  EXPECT_EQ(status.counters.contributions, 4u);
  EXPECT_EQ(status.counters.contexts_completed, 1u);  // the surplus did not count
}

TEST(ReductionModel, BeatOutOfRangeIsAnError) {
  ReductionModel model(tiny_config());
  EXPECT_TRUE(run_model_unit(model, {open_command(1, 1, ReduceOp::add, ReduceType::u32, 3),
                          contribution(1, 3, u32_splat(5)), contribution(1, 0xFFFFFFFFu, u32_splat(5))})
                  .empty());
  const ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, status_beat_out_of_range);
  EXPECT_EQ(status.counters.errors, 2u);
  EXPECT_EQ(status.counters.contributions, 0u);
}

TEST(ReductionModel, OpeningAnOpenContextIsBusyAndKeepsTheFirstOpen) {
  ReductionModel model(tiny_config());
  const auto results = run_model_unit(model, {open_command(1, 2, ReduceOp::add, ReduceType::u32, 1),
                                   open_command(1, 1, ReduceOp::max, ReduceType::u32, 4),
                                   contribution(1, 0, u32_splat(5)),   // still 2 per beat, add
                                   contribution(1, 0, u32_splat(6))});
  EXPECT_EQ(results, std::vector<ResultBeat>{result_beat(1, 0, u32_splat(11), 2, false)});
  const ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, status_context_busy);
  EXPECT_EQ(status.counters.errors, 1u);
  EXPECT_EQ(status.counters.contexts_opened, 1u);
}

TEST(ReductionModel, EveryInvalidOpenIsBadOpen) {
  ReductionModel model(tiny_config());
  const std::vector<Command> bad{
      open_command(0, 0, ReduceOp::add, ReduceType::u32, 4),        // no contributions
      open_command(0, 2, ReduceOp::add, ReduceType::u32, 0),        // no beats
      open_command(0, 2, ReduceOp::add, ReduceType::u32, 65),       // > context_max_beats (64)
      open_command_raw(0, 2, 6, 3, 4),                              // op code 6
      open_command_raw(0, 2, 0, 7, 4),                              // type code 7
      open_command(0, 2, ReduceOp::bit_and, ReduceType::f32, 4),    // bitwise on a float
      open_command(0, 2, ReduceOp::bit_or, ReduceType::f16, 4),
      open_command(0, 2, ReduceOp::bit_xor, ReduceType::bf16, 4),
      open_command(8, 2, ReduceOp::add, ReduceType::u32, 4),        // no such context
  };
  EXPECT_TRUE(run_model_unit(model, bad).empty());
  ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, status_bad_open);
  EXPECT_EQ(status.counters.errors, bad.size());
  EXPECT_EQ(status.counters.contexts_opened, 0u);
  // The limits themselves are valid, and so are the bitwise ops on integers.
  run_model_unit(model, {open_command(0, 0xFFFF, ReduceOp::add, ReduceType::u32, 64),
              open_command(7, 1, ReduceOp::bit_xor, ReduceType::u64, 1)});
  EXPECT_EQ(model.status().counters.contexts_opened, 2u);
  EXPECT_EQ(model.status().counters.errors, bad.size());
  // A bad open on an open context is bad_open, not busy: the fields are checked first.
  model.clear_status(status_bad_open);
  run_model_unit(model, {open_command(7, 0, ReduceOp::add, ReduceType::u32, 1)});
  EXPECT_EQ(model.status().sticky, status_bad_open);
}

TEST(ReductionModel, StickyBitsStayUntilClearedAndClearOnlyTheMask) {
  ReductionModel model(tiny_config());
  run_model_unit(model, {contribution(0, 0, u32_splat(1)),                               // unknown
              open_command(0, 1, ReduceOp::add, ReduceType::u32, 1),
              contribution(0, 5, u32_splat(1)),                               // out of range
              contribution(0, 0, u32_splat(1)),                               // completes
              contribution(0, 0, u32_splat(1))});                             // after completion
  EXPECT_EQ(model.status().sticky,
            status_unknown_context | status_beat_out_of_range | status_after_completion);
  model.clear_status(status_beat_out_of_range | status_bad_open);
  EXPECT_EQ(model.status().sticky, status_unknown_context | status_after_completion);
  EXPECT_EQ(model.status().counters.errors, 3u);  // counters are not cleared
  // A new error sets its bit again.
  run_model_unit(model, {open_command(1, 1, ReduceOp::add, ReduceType::u32, 1), contribution(1, 5, u32_splat(1))});
  EXPECT_EQ(model.status().sticky,
            status_unknown_context | status_beat_out_of_range | status_after_completion);
  model.clear_status(0x3F);
  EXPECT_EQ(model.status().sticky, 0u);
  EXPECT_EQ(model.status().counters.errors, 4u);
}

TEST(ReductionModel, ReopensACompletedContextWithNewParameters) {
  ReductionModel model(tiny_config());
  std::vector<ResultBeat> results =
      run_model_unit(model, {open_command(3, 2, ReduceOp::add, ReduceType::u32, 1),
                  contribution(3, 0, u32_splat(4)), contribution(3, 0, u32_splat(5)),
                  open_command(3, 3, ReduceOp::min, ReduceType::s32, 2),
                  contribution(3, 0, u32_splat(0xFFFFFFFEu)),  // -2
                  contribution(3, 0, u32_splat(3)),
                  contribution(3, 0, u32_splat(0xFFFFFFF0u))});  // -16
  EXPECT_EQ(results, (std::vector<ResultBeat>{result_beat(3, 0, u32_splat(9), 2, false),
                                              result_beat(3, 0, u32_splat(0xFFFFFFF0u), 3, false)}));
  const ReductionStatus status = model.status();
  EXPECT_EQ(status.sticky, 0u);  // beat 0 is idle again after the reopen: no too_many
  EXPECT_EQ(status.counters.contexts_opened, 2u);
  EXPECT_EQ(status.counters.contexts_completed, 1u);
}

TEST(ReductionModel, InterleavedContextsReduceIndependently) {
  ReductionModel model;
  // s32 max and u32 min over the same bit patterns give different answers.
  const auto results = run_model_unit(model, {open_command(5, 2, ReduceOp::max, ReduceType::s32, 2),
                                   open_command(9, 2, ReduceOp::min, ReduceType::u32, 2),
                                   contribution(5, 1, u32_splat(0xFFFFFFFBu)),   // -5
                                   contribution(9, 1, u32_splat(0xFFFFFFFBu)),
                                   contribution(9, 0, u32_splat(0x10)),
                                   contribution(5, 0, u32_splat(0x10)),
                                   contribution(9, 1, u32_splat(0xFFFFFFF9u)),
                                   contribution(5, 1, u32_splat(0xFFFFFFF9u)),   // -7
                                   contribution(5, 0, u32_splat(0x80000000u)),
                                   contribution(9, 0, u32_splat(0x80000000u))});
  EXPECT_EQ(results, (std::vector<ResultBeat>{result_beat(9, 1, u32_splat(0xFFFFFFF9u), 2, false),
                                              result_beat(5, 1, u32_splat(0xFFFFFFFBu), 2, false),
                                              result_beat(5, 0, u32_splat(0x10), 2, false),
                                              result_beat(9, 0, u32_splat(0x10), 2, false)}));
  EXPECT_EQ(model.status().counters.contexts_completed, 2u);
}

TEST(ReductionModel, LeftoverSlotsOfAClosedIncarnationNeverCombineAndLeaveWhenEvicted) {
  ReductionModel model(tiny_config());
  // Context 0: 2 beats x 2 contributions. Beat 0 (set 0) gets evicted by context 1 (beats 3 and 7
  // map to set 0), then takes two pass-through contributions, one of them a surplus the 2-bit beat
  // state cannot see. With beat 1's first contribution the context reaches 4 accepted
  // contributions and completes, leaving beat 1's partial (0x40) in set 1.
  std::vector<ResultBeat> results =
      run_model_unit(model, {open_command(0, 2, ReduceOp::add, ReduceType::u32, 2),
                  open_command(1, 2, ReduceOp::add, ReduceType::u32, 8),
                  contribution(0, 0, u32_splat(0x10)),    // set 0 way 0
                  contribution(1, 3, u32_splat(0x20)),    // set 0 way 1
                  contribution(1, 7, u32_splat(0x30)),    // evicts context 0 beat 0
                  contribution(0, 0, u32_splat(0x11)),    // pass through
                  contribution(0, 0, u32_splat(0x12)),    // pass through (surplus)
                  contribution(0, 1, u32_splat(0x40)),    // set 1 way 0; context 0 completes
                  contribution(0, 1, u32_splat(0x41))});  // after completion
  EXPECT_EQ(results, (std::vector<ResultBeat>{result_beat(0, 0, u32_splat(0x10), 1, true),
                                              result_beat(0, 0, u32_splat(0x11), 1, true),
                                              result_beat(0, 0, u32_splat(0x12), 1, true)}));
  EXPECT_EQ(model.status().counters.contexts_completed, 1u);
  EXPECT_EQ(model.status().sticky, status_after_completion);
  // Reopened, beat 1 starts afresh: the old partial (0x40) is stale and is not combined.
  results = run_model_unit(model, {open_command(0, 2, ReduceOp::add, ReduceType::u32, 2),
                        contribution(0, 1, u32_splat(0x50)),    // set 1 way 1
                        contribution(0, 1, u32_splat(0x60))});  // completes 0x50 + 0x60
  EXPECT_EQ(results, std::vector<ResultBeat>{result_beat(0, 1, u32_splat(0xB0), 2, false)});
  // Context 1's beats 0 and 4 map to set 1: the first takes the free way 1, the second evicts the
  // pointer's way 0, the stale slot, which leaves with its old context, beat and count.
  results = run_model_unit(model, {contribution(1, 0, u32_splat(0x70)), contribution(1, 4, u32_splat(0x80))});
  EXPECT_EQ(results, std::vector<ResultBeat>{result_beat(0, 1, u32_splat(0x40), 1, true)});
  // The stale eviction did not mark the new incarnation's beat 1 evicted: it is complete, so one
  // more contribution is too many (not a pass-through).
  EXPECT_TRUE(run_model_unit(model, {contribution(0, 1, u32_splat(0x90))}).empty());
  EXPECT_EQ(model.status().sticky, status_after_completion | status_too_many_contributions);
  EXPECT_EQ(model.status().counters.evicted_beats, 2u);
  EXPECT_EQ(model.status().counters.passthrough_beats, 2u);
}

TEST(ReductionModel, EstimatesCommandsPlusPipelineDepthClocksPerCall) {
  ReductionModel model;
  EXPECT_EQ(model.cycles(), 0u);
  run_model_unit(model, {open_command(0, 1, ReduceOp::add, ReduceType::u32, 4), contribution(0, 0, u32_splat(1)),
              contribution(0, 1, u32_splat(1))});
  EXPECT_EQ(model.cycles(), 3u + 5u);
  run_model_unit(model, {});
  EXPECT_EQ(model.cycles(), 8u);  // nothing to do, no clocks
  model.clear_status(status_bad_open);
  EXPECT_EQ(model.cycles(), 9u);  // the clear pulse takes one
  run_model_unit(model, {contribution(0, 2, u32_splat(1))});
  EXPECT_EQ(model.cycles(), 9u + 1u + 5u);
}

TEST(ReductionModel, ReportsWhichCommandEmittedEachResult) {
  ReductionModel model;
  std::vector<ResultBeat> results;
  model.process({open_command(0, 1, ReduceOp::add, ReduceType::u32, 4), contribution(9, 0, {}),
                 contribution(0, 3, {}), contribution(0, 1, {})},
                results);
  EXPECT_EQ(model.last_result_sources(), (std::vector<std::size_t>{2, 3}));
}

TEST(ReductionModel, RejectsStructuresItCannotBuild) {
  ReductionUnitConfig config;
  config.ways = 0;
  EXPECT_THROW(ReductionModel{config}, std::invalid_argument);
  config = ReductionUnitConfig{};
  config.buffer_bytes = 1000;  // not a multiple of 32 x 8
  EXPECT_THROW(ReductionModel{config}, std::invalid_argument);
  config.buffer_bytes = 3 * 32 * 8;  // 3 sets
  EXPECT_THROW(ReductionModel{config}, std::invalid_argument);
  config = ReductionUnitConfig{};
  config.contexts = 0;
  EXPECT_THROW(ReductionModel{config}, std::invalid_argument);
  config = ReductionUnitConfig{};
  config.context_max_beats = 0;
  EXPECT_THROW(ReductionModel{config}, std::invalid_argument);
  config = ReductionUnitConfig{};
  config.ways = 3;  // 64 KB / 32 / 3 is not whole
  EXPECT_THROW(ReductionModel{config}, std::invalid_argument);
  EXPECT_EQ(ReductionModel(tiny_config()).sets(), 4u);
  EXPECT_EQ(ReductionModel().sets(), 256u);
}

}  // namespace
}  // namespace nvsvp::reduction
