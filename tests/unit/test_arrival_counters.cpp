// ArrivalCounters without a simulation: the n-th arrival in time order when arrivals come out of
// order, counting by landing address, table entries that spill and are given back, and take_ready
// items that are ready at once.
#include <gtest/gtest.h>

#include <cstdint>

#include "nvsvp/model/arrival_counters.hpp"
#include "nvsvp/model/sim_time.hpp"

namespace {

using nvsvp::hw::CounterMap;
using nvsvp::hw::CounterTable;
using nvsvp::hw::CounterTableRange;
using nvsvp::hw::WorkSequence;
using nvsvp::model::ArrivalCounters;
using nvsvp::model::GpuParams;
using nvsvp::model::picoseconds;

TEST(ArrivalCounters, NthArrivalIsInTimeOrderWhateverOrderTheyCameIn) {
  ArrivalCounters counters("gpu", GpuParams{});
  counters.record_arrival(3, picoseconds(500));
  counters.record_arrival(3, picoseconds(100), 2);  // a chunk of two, earlier than the first
  counters.record_arrival(3, picoseconds(300));
  EXPECT_EQ(counters.arrivals(3), 4u);
  EXPECT_EQ(counters.reached_ps(3, 1), 100u);
  EXPECT_EQ(counters.reached_ps(3, 2), 100u);
  EXPECT_EQ(counters.reached_ps(3, 3), 300u);
  EXPECT_EQ(counters.reached_ps(3, 4), 500u);
  EXPECT_EQ(counters.arrivals(7), 0u) << "a counter never used counts nothing";
}

TEST(ArrivalCounters, MapsCountAWriteByWhereItLands) {
  ArrivalCounters counters("gpu", GpuParams{});
  WorkSequence sequence;
  sequence.counters = 16;
  CounterMap dense;  // entry e counts on counter 4 + e
  dense.base = 0x1000;
  dense.entries = 2;
  dense.first_counter = 4;
  CounterMap listed;  // entry 0 counts on counters 8 and 9, entry 1 on none
  listed.base = 0x2000;
  listed.entries = 2;
  listed.first = {0, 2, 2};
  listed.counters = {8, 9};
  sequence.counter_maps = {dense, listed};
  counters.declare(sequence);
  EXPECT_TRUE(sequence.counter_maps.empty()) << "the counters keep the maps";
  counters.count_landing(0x1010, picoseconds(10));  // dense entry 1
  counters.count_landing(0x2008, picoseconds(20));  // listed entry 0
  counters.count_landing(0x2010, picoseconds(30));  // listed entry 1: no counter
  counters.count_landing(0x3000, picoseconds(40));  // in no map
  EXPECT_EQ(counters.arrivals(4), 0u);
  EXPECT_EQ(counters.arrivals(5), 1u);
  EXPECT_EQ(counters.arrivals(8), 1u);
  EXPECT_EQ(counters.arrivals(9), 1u);
  EXPECT_EQ(counters.reached_ps(9, 1), 20u);
}

TEST(ArrivalCounters, AnEntryBeyondTheTableSpillsUntilOneIsGivenBack) {
  GpuParams params;
  params.tile_status_entries = 1;
  params.table_spill_ns = 0.5;
  ArrivalCounters counters("gpu", params);
  WorkSequence sequence;
  sequence.counter_tables = {CounterTableRange{CounterTable::tile_status, 0, 3}};
  counters.declare(sequence);
  counters.record_arrival(0, picoseconds(1000));  // takes the one entry
  counters.record_arrival(1, picoseconds(1000));  // finds the table full: lands 500 ps later
  counters.record_arrival(1, picoseconds(2000));
  EXPECT_EQ(counters.reached_ps(0, 1), 1000u);
  EXPECT_EQ(counters.reached_ps(1, 1), 1500u);
  EXPECT_EQ(counters.reached_ps(1, 2), 2500u);
  counters.release_entry(0);
  counters.record_arrival(2, picoseconds(3000));  // the entry counter 0 gave back
  EXPECT_EQ(counters.reached_ps(2, 1), 3000u);
  const auto& table = counters.table_stats(CounterTable::tile_status);
  EXPECT_EQ(table.taken, 3u);
  EXPECT_EQ(table.spilled, 1u);
  EXPECT_EQ(table.spilled_updates, 2u);
  EXPECT_EQ(table.peak_live, 2u);
  EXPECT_EQ(table.live, 2u);
  EXPECT_EQ(table.held, 1u);
}

TEST(ArrivalCounters, SatisfiedItemsAreReadyAtTheirNthArrivalEarliestFirst) {
  ArrivalCounters counters("gpu", GpuParams{});
  counters.record_arrival(0, picoseconds(700));
  counters.record_arrival(1, picoseconds(200));
  counters.record_arrival(1, picoseconds(400));
  counters.register_item(2, 0, 0, 1, picoseconds(900));
  counters.register_item(2, 1, 1, 2, picoseconds(900));
  counters.register_item(2, 2, 5, 0, picoseconds(900));  // waits for nothing: ready now
  auto& ready = counters.ready_items(2);
  ASSERT_EQ(ready.size(), 3u);
  EXPECT_EQ(ready.top().item, 1u);
  EXPECT_EQ(ready.top().at_ps, 400u);
  ready.pop();
  EXPECT_EQ(ready.top().item, 0u);
  ready.pop();
  EXPECT_EQ(ready.top().item, 2u);
  EXPECT_EQ(ready.top().at_ps, 900u);
  EXPECT_TRUE(counters.ready_items(0).empty()) << "another stream's list";
}

}  // namespace
