// The switch's grant decision and Arbiter::pick() agree. For every arbiter, one crossbar decides
// as the chip does (SwitchCrossbar::grant: the rotation scan that stops at the first eligible
// request, when the arbiter allows it) and a second one by pick() over all eligible requests.
// Both get the same random request patterns, round after round: requesters join and leave, a
// granted requester often asks again at once (its VC's next message), and a random subset is
// eligible each round; the grants must be the same in every round.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "nvsvp/model/arbiter.hpp"
#include "nvsvp/model/sim_time.hpp"
#include "nvsvp/model/switch_crossbar.hpp"

namespace nvsvp::model {
namespace {

constexpr uint32_t kInputs = 7;
constexpr uint32_t kVcs = 3;
constexpr uint32_t kRequesters = kInputs * kVcs;
constexpr uint16_t kOutput = 1;

struct Outcome {
  bool agreed = true;
  uint64_t grants = 0;
  uint64_t rotation_rounds = 0;  // rounds the chip's decision took the rotation scan
};

// Runs `rounds` rounds with arbiter `name`; fails at the first round where the grants differ.
// `turns_by_input`: the packet fabric's arbiters, which take turns by input.
Outcome compare_grants(const std::string& name, uint32_t rounds, uint64_t seed, bool turns_by_input) {
  SwitchCrossbar chip(2, kInputs, kVcs, name, 1.0, turns_by_input);
  SwitchCrossbar reference(2, kInputs, kVcs, name, 1.0, turns_by_input);
  std::mt19937_64 rng(seed);
  std::vector<bool> requesting(kRequesters, false);
  std::vector<bool> eligible(kRequesters, false);
  auto ask = [&](uint32_t id) {
    // Few distinct ready times, so that oldest_first meets ties and its round robin moves.
    const CrossbarRequest request{id, 1 + static_cast<uint32_t>(rng() % 64), picoseconds(1000 * (rng() % 4))};
    chip.request(kOutput, request);
    reference.request(kOutput, request);
    requesting[id] = true;
  };
  Outcome outcome;
  for (uint32_t round = 0; round < rounds; ++round) {
    for (uint32_t id = 0; id < kRequesters; ++id) {
      if (!requesting[id] && rng() % 5 == 0) ask(id);
      eligible[id] = rng() % 3 != 0;
    }
    // Now and then nobody may go: the decision must say so on both sides.
    if (rng() % 16 == 0) eligible.assign(kRequesters, false);
    auto is_eligible = [&](const CrossbarRequest& r) { return static_cast<bool>(eligible[r.requester]); };
    int64_t after = Arbiter::kFromLowest;
    if (chip.arbiter(kOutput).rotation_start(after)) ++outcome.rotation_rounds;
    const int64_t granted = chip.grant(kOutput, is_eligible);
    const int64_t picked = reference.grant_by_pick(kOutput, is_eligible);
    EXPECT_EQ(granted, picked) << name << ", round " << round;
    if (granted != picked) {
      outcome.agreed = false;
      return outcome;
    }
    if (granted < 0) continue;
    const auto winner = static_cast<uint32_t>(granted);
    EXPECT_TRUE(eligible[winner]) << name << ", round " << round;
    ++outcome.grants;
    chip.withdraw(kOutput, winner);
    reference.withdraw(kOutput, winner);
    requesting[winner] = false;
    if (rng() % 2 == 0) ask(winner);
  }
  return outcome;
}

TEST(SwitchCrossbarArbitration, GrantsAgreeWithPickForEveryArbiter) {
  constexpr uint32_t kRounds = 20000;
  for (const std::string& name : arbiter_names()) {
    for (uint64_t seed : {1u, 17u, 4242u}) {
      for (bool turns_by_input : {false, true}) {
        const Outcome outcome = compare_grants(name, kRounds, seed, turns_by_input);
        if (!outcome.agreed) continue;
        EXPECT_GT(outcome.grants, kRounds / 2) << name << ", seed " << seed;
        // The default arbiter takes the rotation scan in the chip: that is the path compared.
        if (name == "round_robin") {
          EXPECT_EQ(outcome.rotation_rounds, kRounds) << "seed " << seed;
        }
      }
    }
  }
}

// The comparison is not vacuous: round robin really rotates (a fixed choice would not).
TEST(SwitchCrossbarArbitration, RoundRobinGrantRotatesAmongPersistentRequesters) {
  SwitchCrossbar crossbar(1, kInputs, kVcs, "round_robin", 1.0);
  for (uint32_t id : {2u, 5u, 9u}) crossbar.request(0, CrossbarRequest{id, 1, picoseconds(0)});
  auto all = [](const CrossbarRequest&) { return true; };
  std::vector<int64_t> winners;
  for (int i = 0; i < 6; ++i) winners.push_back(crossbar.grant(0, all));
  EXPECT_EQ(winners, (std::vector<int64_t>{2, 5, 9, 2, 5, 9}));
  // Only 9 may go: the rotation passes over the others.
  EXPECT_EQ(crossbar.grant(0, [](const CrossbarRequest& r) { return r.requester == 9; }), 9);
  EXPECT_EQ(crossbar.grant(0, [](const CrossbarRequest&) { return false; }), -1);
  EXPECT_EQ(crossbar.grant(0, all), 2);
}

// Taking turns by input: requesters 0 and 1 (input 0's VCs 0 and 1) and 3 (input 1's VC 0) ask for
// ever. Input 0 and input 1 alternate, whichever VCs input 0's requests sit on; by requester, input
// 0 would win two turns of three.
TEST(SwitchCrossbarArbitration, PacketFabricRoundRobinTakesTurnsByInput) {
  SwitchCrossbar crossbar(1, kInputs, kVcs, "round_robin", 1.0, true);
  for (uint32_t id : {0u, 1u, 3u}) crossbar.request(0, CrossbarRequest{id, 1, picoseconds(0)});
  auto all = [](const CrossbarRequest&) { return true; };
  std::vector<int64_t> winners;
  for (int i = 0; i < 4; ++i) winners.push_back(crossbar.grant(0, all));
  EXPECT_EQ(winners, (std::vector<int64_t>{0, 3, 0, 3}));
  SwitchCrossbar by_requester(1, kInputs, kVcs, "round_robin", 1.0);
  for (uint32_t id : {0u, 1u, 3u}) by_requester.request(0, CrossbarRequest{id, 1, picoseconds(0)});
  winners.clear();
  for (int i = 0; i < 3; ++i) winners.push_back(by_requester.grant(0, all));
  EXPECT_EQ(winners, (std::vector<int64_t>{0, 1, 3}));
}

}  // namespace
}  // namespace nvsvp::model
