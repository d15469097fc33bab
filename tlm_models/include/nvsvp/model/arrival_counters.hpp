// A GPU's arrival counters and the fused kernel's hardware tables. Every arrival (a message's
// tail, a local copy, a dynamic block written here) is counted at the time it lands; a wait
// completes at the time its N-th arrival landed. Counter maps count a write by where it lands (the
// tile-status and output-readiness entries a fused kernel updates); counters declared as entries
// of a table take an entry at their first arrival and give it back when a wait on them
// completes, and an entry that found its table full lives in memory, each of its updates late by
// table_spill_ns.
//
// The executor's waits register here: a stream in a wait_counter task is woken when its counter
// gets there, and a take_ready item whose counter reaches its count joins its stream's ready
// list, at the time of the arrival that did it.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include <systemc>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/gpu_params.hpp"

namespace nvsvp::model {

// One hardware table of the fused kernel (hw::CounterTable): entries in use, and spills.
struct CounterTableStats {
  uint32_t entries = 0;          // what the GPU holds (GpuParams)
  uint32_t live = 0;             // entries taken and not yet given back, spilled ones included
  uint32_t held = 0;             // of which in the table itself
  uint32_t peak_live = 0;        // the most at once, counting spilled ones
  uint64_t taken = 0;            // entries ever taken
  uint64_t spilled = 0;          // of which found the table full and lived in memory
  uint64_t spilled_updates = 0;  // arrivals counted on a spilled entry (each paid table_spill_ns)
};

// Arrivals as runs of equal time (a chunk's writes land together): a wait for the n-th arrival
// sorts the runs and counts through them. One cache line: an arrival reads only this line (the
// time of the last run is kept here) and appends to the runs without reading them.
struct alignas(64) ArrivalCounter {
  struct Run {
    uint64_t at_ps;
    uint64_t arrivals;
  };
  static constexpr size_t kInitialRuns = 8;
  std::vector<Run> runs;
  uint64_t last_at_ps = 0;  // runs.back().at_ps
  uint64_t arrivals = 0;
  // A take_ready item waiting for this counter to reach waiting_count (one at most).
  static constexpr uint64_t kNoItem = ~0ull;
  uint64_t waiting_item = kNoItem;
  uint64_t waiting_count = 0;
  uint32_t waiting_stream = 0;
  bool runs_sorted = true;  // by time: most arrivals come in order, and then need no sort
  hw::CounterTable table = hw::CounterTable::none;  // the hardware table holding it, if any
  enum class Entry : uint8_t { unused, held, spilled, released } entry = Entry::unused;
  void add(uint64_t at_ps, uint64_t count) {
    if (!runs.empty() && last_at_ps == at_ps) {
      runs.back().arrivals += count;
    } else {
      if (runs.empty()) {
        runs.reserve(kInitialRuns);  // skips the first reallocations of a counter that counts
      } else if (at_ps < last_at_ps) {
        runs_sorted = false;
      }
      runs.push_back(Run{at_ps, count});
      last_at_ps = at_ps;
    }
    arrivals += count;
  }
  uint64_t nth_arrival_ps(uint64_t n);  // 1 <= n <= arrivals
};
static_assert(sizeof(ArrivalCounter) == 64, "an arrival counter fills one cache line");

// A take_ready item whose wait is satisfied, at the time it was.
struct ReadyItem {
  uint64_t at_ps;
  uint64_t item;
  bool operator<(const ReadyItem& other) const {  // std::priority_queue: the earliest on top
    return at_ps != other.at_ps ? at_ps > other.at_ps : item > other.item;
  }
};
using ReadyItems = std::priority_queue<ReadyItem>;

class ArrivalCounters {
 public:
  static constexpr uint64_t kNoItem = ArrivalCounter::kNoItem;

  // `owner` names the GPU in reports.
  ArrivalCounters(const char* owner, const GpuParams& params);
  ArrivalCounters(const ArrivalCounters&) = delete;
  ArrivalCounters& operator=(const ArrivalCounters&) = delete;

  // The event that wakes executor stream `stream` (set once, during elaboration).
  void set_stream_event(uint32_t stream, sc_core::sc_event& event) { stream_events_[stream] = &event; }
  // A submitted sequence's counters, table ranges and counter maps; the maps are taken (they
  // count for every later sequence too).
  void declare(hw::WorkSequence& sequence);

  // Counters are looked up per arrival: the bounds check stays inline, growing does not.
  ArrivalCounter& counter(uint32_t index) {
    return index < counters_.size() ? counters_[index] : grow_counters(index);
  }
  // Arrivals counter `index` has counted so far (0 for a counter never used).
  uint64_t arrivals(uint32_t index) const { return index < counters_.size() ? counters_[index].arrivals : 0; }
  // When counter `index` counted its n-th arrival (1 <= n <= arrivals(index)), ps.
  uint64_t reached_ps(uint32_t index, uint64_t n) const {
    ArrivalCounter copy = counters_.at(index);
    return copy.nth_arrival_ps(n);
  }
  void record_arrival(uint32_t counter, const sc_core::sc_time& at, uint64_t arrivals = 1);
  // A write landed at `address` at `at`: the counters the counter maps name for it count it.
  void count_landing(uint64_t address, const sc_core::sc_time& at) {
    if (!counter_maps_.empty()) count_mapped(address, at);
  }
  // A wait on counter `index` completed: a table entry it held is given back.
  void release_entry(uint32_t index);

  // wait_counter: stream `stream` waits for `count` arrivals on `counter` (woken when they are
  // there), or no longer.
  void wait(uint32_t stream, uint32_t counter, uint64_t count) {
    waiters_ |= 1u << stream;
    waits_[stream] = Wait{counter, count};
  }
  void stop_waiting(uint32_t stream) { waiters_ &= ~(1u << stream); }
  // take_ready: item `item` of stream `stream` waits for `count` arrivals on `counter`; it joins
  // the stream's ready list now if they are there, else when they come. Two items pending on one
  // counter stop the run.
  void register_item(uint32_t stream, uint64_t item, uint32_t counter, uint64_t count, const sc_core::sc_time& now);
  ReadyItems& ready_items(uint32_t stream) { return ready_[stream]; }

  const CounterTableStats& table_stats(hw::CounterTable table) const { return tables_[static_cast<size_t>(table)]; }

 private:
  struct Wait {
    uint32_t counter = 0;
    uint64_t count = 0;
  };
  ArrivalCounter& grow_counters(uint32_t index);
  void count_mapped(uint64_t address, const sc_core::sc_time& at);
  // Counter `c` of a table counts its first arrival since it was given back: it takes an entry.
  void take_entry(ArrivalCounter& c, CounterTableStats& table);

  const char* owner_;
  std::vector<ArrivalCounter> counters_;
  // Bit i: stream i waits in a wait_counter task (waits_[i]), so that an arrival looks at the
  // waiting streams only.
  uint32_t waiters_ = 0;
  static_assert(kExecutorStreams <= 32, "waiters_ holds one bit per stream");
  Wait waits_[kExecutorStreams];
  sc_core::sc_event* stream_events_[kExecutorStreams] = {};
  ReadyItems ready_[kExecutorStreams];
  std::vector<hw::CounterMap> counter_maps_;
  CounterTableStats tables_[hw::kCounterTables];
  sc_core::sc_time table_spill_time_;
};

}  // namespace nvsvp::model
