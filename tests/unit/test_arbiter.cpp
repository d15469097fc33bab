// Output arbiters: round robin is fair and rotates after the winner, fixed priority always takes
// the lowest id, oldest first takes the earliest ready (ties round robin), unknown names throw.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/model/arbiter.hpp"
#include "nvsvp/model/matching_allocator.hpp"
#include "nvsvp/model/switch_params.hpp"

namespace nvsvp::model {
namespace {

std::vector<ArbiterRequest> requests(const std::vector<uint32_t>& ids, uint64_t ready_ps = 0) {
  std::vector<ArbiterRequest> r;
  for (uint32_t id : ids) r.push_back(ArbiterRequest{id, ready_ps});
  return r;
}

uint32_t winner(Arbiter& arbiter, const std::vector<ArbiterRequest>& r) {
  const size_t i = arbiter.pick(r);
  EXPECT_LT(i, r.size());
  return r[i].requester;
}

TEST(Arbiter, RoundRobinGrantsPersistentRequestersEqually) {
  auto arbiter = make_arbiter("round_robin");
  const auto r = requests({2, 5, 7, 11, 40});
  std::map<uint32_t, int> grants;
  for (int i = 0; i < 500; ++i) grants[winner(*arbiter, r)]++;
  ASSERT_EQ(grants.size(), 5u);
  for (const auto& [id, n] : grants) EXPECT_EQ(n, 100) << "requester " << id;
}

TEST(Arbiter, RoundRobinRotatesAfterTheWinner) {
  auto arbiter = make_arbiter("round_robin");
  EXPECT_EQ(winner(*arbiter, requests({1, 3, 5})), 1u);
  EXPECT_EQ(winner(*arbiter, requests({1, 3, 5})), 3u);
  // 3 won last: 4 is the next id after it, even though 1 asked too.
  EXPECT_EQ(winner(*arbiter, requests({1, 4, 5})), 4u);
  EXPECT_EQ(winner(*arbiter, requests({1, 4, 5})), 5u);
  // Nobody after 5: wrap around to the lowest id.
  EXPECT_EQ(winner(*arbiter, requests({1, 4, 5})), 1u);
  // A newcomer between the last winner and the next requester comes first.
  EXPECT_EQ(winner(*arbiter, requests({2, 4})), 2u);
  EXPECT_EQ(winner(*arbiter, requests({2})), 2u);
}

TEST(Arbiter, FixedPriorityAlwaysGrantsTheLowestId) {
  auto arbiter = make_arbiter("fixed_priority");
  for (int i = 0; i < 10; ++i) EXPECT_EQ(winner(*arbiter, requests({3, 6, 9})), 3u);
  EXPECT_EQ(winner(*arbiter, requests({6, 9})), 6u);
}

TEST(Arbiter, OldestFirstGrantsTheEarliestReadyAndBreaksTiesRoundRobin) {
  auto arbiter = make_arbiter("oldest_first");
  std::vector<ArbiterRequest> r{{1, 500}, {2, 100}, {3, 300}};
  EXPECT_EQ(winner(*arbiter, r), 2u);
  r = {{1, 500}, {3, 300}};
  EXPECT_EQ(winner(*arbiter, r), 3u);
  // Equal ages: rotate among the tied requesters only.
  r = {{1, 100}, {2, 100}, {3, 100}, {4, 900}};
  std::map<uint32_t, int> grants;
  for (int i = 0; i < 30; ++i) grants[winner(*arbiter, r)]++;
  EXPECT_EQ(grants[1], 10);
  EXPECT_EQ(grants[2], 10);
  EXPECT_EQ(grants[3], 10);
  EXPECT_EQ(grants.count(4), 0u);
}

TEST(Arbiter, UnknownNameThrowsAndListsTheKnownOnes) {
  try {
    make_arbiter("islip");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("islip"), std::string::npos) << what;
    for (const std::string& name : arbiter_names()) EXPECT_NE(what.find(name), std::string::npos) << what;
  }
}

// Every name the configuration accepts must build an arbiter, and vice versa.
struct ChoicesOf {
  std::vector<std::string> arbiter_choices;
  template <class T, class... Rest>
  void operator()(const char* key, T&, const char*, const Rest&... rest) {
    if (std::string(key) == "arbiter") collect(rest...);
  }
  void collect(const hw::Choices& c) { arbiter_choices = c.values; }
  template <class Other>
  void collect(const Other&) {}
};

TEST(Arbiter, ConfigurationChoicesMatchTheFactory) {
  SwitchParams params;
  ChoicesOf visitor;
  params.visit(visitor);
  std::vector<std::string> names = arbiter_names();
  for (const std::string& name : arbiter_names()) EXPECT_NE(make_arbiter(name), nullptr) << name;
  for (const std::string& name : matching_allocator_names()) {
    EXPECT_TRUE(is_matching_allocator(name)) << name;
    EXPECT_NO_THROW(matching_allocator_kind(name)) << name;
    names.push_back(name);
  }
  EXPECT_EQ(visitor.arbiter_choices, names);
  EXPECT_FALSE(is_matching_allocator("round_robin"));
}

}  // namespace
}  // namespace nvsvp::model
