// SmallFifo: first in, first out across the compaction of a queue that never runs empty.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "nvsvp/model/small_fifo.hpp"

namespace {

using nvsvp::model::SmallFifo;

TEST(SmallFifo, KeepsOrderWhileNeverRunningEmpty) {
  SmallFifo<uint64_t> fifo;
  std::deque<uint64_t> reference;
  uint64_t next = 0;
  // Pushes outpace pops for a while, then pops catch up, and the queue never empties between:
  // every compaction point is crossed with live items behind it.
  for (int round = 0; round < 2000; ++round) {
    const int pushes = round < 1000 ? 3 : 1;
    for (int i = 0; i < pushes; ++i) {
      fifo.push_back(next);
      reference.push_back(next++);
    }
    for (int i = 0; i < 2 && reference.size() > 1; ++i) {
      ASSERT_EQ(fifo.front(), reference.front()) << "round " << round;
      fifo.pop_front();
      reference.pop_front();
    }
    ASSERT_EQ(fifo.size(), reference.size());
    ASSERT_EQ(std::vector<uint64_t>(fifo.begin(), fifo.end()), std::vector<uint64_t>(reference.begin(), reference.end()));
  }
  while (!reference.empty()) {
    ASSERT_EQ(fifo.front(), reference.front());
    fifo.pop_front();
    reference.pop_front();
  }
  EXPECT_TRUE(fifo.empty());
  EXPECT_EQ(fifo.size(), 0u);
}

}  // namespace
