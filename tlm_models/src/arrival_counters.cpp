#include "nvsvp/model/arrival_counters.hpp"

#include <algorithm>
#include <sstream>

#include "nvsvp/hw/hex_text.hpp"
#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {
constexpr uint32_t kMaxCounters = hw::kMaxArrivalCounters;
}  // namespace

uint64_t ArrivalCounter::nth_arrival_ps(uint64_t n) {
  if (!runs_sorted) {
    std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.at_ps < b.at_ps; });
    runs_sorted = true;
    last_at_ps = runs.back().at_ps;
  }
  uint64_t seen = 0;
  for (const Run& run : runs) {
    seen += run.arrivals;
    if (seen >= n) return run.at_ps;
  }
  return runs.back().at_ps;  // n > arrivals: callers check first
}

ArrivalCounters::ArrivalCounters(const char* owner, const GpuParams& params)
    : owner_(owner), table_spill_time_(picoseconds(to_picoseconds(params.table_spill_ns))) {
  tables_[static_cast<size_t>(hw::CounterTable::tile_status)].entries = params.tile_status_entries;
  tables_[static_cast<size_t>(hw::CounterTable::output_readiness)].entries = params.readiness_entries;
}

ArrivalCounter& ArrivalCounters::grow_counters(uint32_t index) {
  if (index >= kMaxCounters) SC_REPORT_FATAL(owner_, "arrival counter index out of range");
  counters_.resize(index + 1);
  return counters_[index];
}

void ArrivalCounters::declare(hw::WorkSequence& sequence) {
  if (sequence.counters > counters_.size()) counters_.resize(sequence.counters);
  for (const hw::CounterTableRange& range : sequence.counter_tables) {
    if (range.table == hw::CounterTable::none || static_cast<size_t>(range.table) >= hw::kCounterTables ||
        static_cast<uint64_t>(range.first_counter) + range.counters > kMaxCounters) {
      SC_REPORT_FATAL(owner_, "counter table range: unknown table or counters out of range");
    }
    if (range.first_counter + range.counters > counters_.size()) counters_.resize(range.first_counter + range.counters);
    for (uint32_t i = range.first_counter; i < range.first_counter + range.counters; ++i) counters_[i].table = range.table;
  }
  for (hw::CounterMap& map : sequence.counter_maps) {
    const bool listed = !map.first.empty();
    if (map.stride == 0 || (listed && (map.first.size() != map.entries + 1 || map.first.back() != map.counters.size())) ||
        (!listed && map.first_counter + map.entries > kMaxCounters)) {
      std::ostringstream msg;
      msg << "malformed counter map at " << hw::hex_text(map.base) << ": " << map.entries << " entries of stride "
          << map.stride << ", " << map.first.size() << " list offsets, " << map.counters.size() << " counters";
      SC_REPORT_FATAL(owner_, msg.str().c_str());
    }
    counter_maps_.push_back(std::move(map));
  }
  sequence.counter_maps.clear();
}

void ArrivalCounters::take_entry(ArrivalCounter& c, CounterTableStats& table) {
  table.taken++;
  table.live++;
  table.peak_live = std::max(table.peak_live, table.live);
  if (table.held < table.entries) {
    table.held++;
    c.entry = ArrivalCounter::Entry::held;
  } else {
    table.spilled++;
    c.entry = ArrivalCounter::Entry::spilled;
  }
}

void ArrivalCounters::record_arrival(uint32_t index, const sc_time& at, uint64_t arrivals) {
  ArrivalCounter& c = counter(index);
  if (c.table == hw::CounterTable::none) {
    c.add(at.value(), arrivals);
  } else {
    // A table entry: taken at its first arrival; an entry that found the table full lives in
    // memory, and every update of it pays the spill time.
    CounterTableStats& table = tables_[static_cast<size_t>(c.table)];
    if (c.entry == ArrivalCounter::Entry::unused || c.entry == ArrivalCounter::Entry::released) take_entry(c, table);
    if (c.entry == ArrivalCounter::Entry::spilled) {
      table.spilled_updates += arrivals;
      c.add((at + table_spill_time_).value(), arrivals);
    } else {
      c.add(at.value(), arrivals);
    }
  }
  if (c.waiting_item != kNoItem && c.arrivals >= c.waiting_count) {
    ready_[c.waiting_stream].push(ReadyItem{c.nth_arrival_ps(c.waiting_count), c.waiting_item});
    c.waiting_item = kNoItem;
    stream_events_[c.waiting_stream]->notify(SC_ZERO_TIME);
  }
  // Waiting streams in index order, as a walk over all of them would find them.
  for (uint32_t waiters = waiters_; waiters != 0; waiters &= waiters - 1) {
    const auto stream = static_cast<uint32_t>(__builtin_ctz(waiters));
    if (index == waits_[stream].counter && c.arrivals >= waits_[stream].count) {
      waiters_ &= ~(1u << stream);
      stream_events_[stream]->notify(SC_ZERO_TIME);
    }
  }
}

void ArrivalCounters::release_entry(uint32_t index) {
  ArrivalCounter& c = counters_[index];
  if (c.entry != ArrivalCounter::Entry::held && c.entry != ArrivalCounter::Entry::spilled) return;
  CounterTableStats& table = tables_[static_cast<size_t>(c.table)];
  table.live--;
  if (c.entry == ArrivalCounter::Entry::held) table.held--;
  c.entry = ArrivalCounter::Entry::released;
}

void ArrivalCounters::register_item(uint32_t stream, uint64_t item, uint32_t index, uint64_t count, const sc_time& now) {
  ArrivalCounter& c = counter(index);
  if (c.arrivals >= count) {
    ready_[stream].push(ReadyItem{count == 0 ? now.value() : c.nth_arrival_ps(count), item});
  } else if (c.waiting_item != kNoItem) {
    SC_REPORT_FATAL(owner_, "take_ready: two pending items wait on one counter");
  } else {
    c.waiting_item = item;
    c.waiting_stream = stream;
    c.waiting_count = count;
  }
}

void ArrivalCounters::count_mapped(uint64_t address, const sc_time& at) {
  for (const hw::CounterMap& map : counter_maps_) {
    if (address < map.base) continue;
    const uint64_t entry = (address - map.base) / map.stride;
    if (entry >= map.entries) continue;
    // A reader that polls the entry sees the write seen_after_ps after it landed.
    const sc_time seen = map.seen_after_ps == 0 ? at : at + picoseconds(map.seen_after_ps);
    if (map.first.empty()) {
      record_arrival(static_cast<uint32_t>(map.first_counter + entry), seen);
      continue;
    }
    for (uint32_t i = map.first[entry]; i < map.first[entry + 1]; ++i) record_arrival(map.counters[i], seen);
  }
}

}  // namespace nvsvp::model
