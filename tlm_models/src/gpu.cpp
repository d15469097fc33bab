#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: one process per executor stream
#include "nvsvp/model/gpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "nvsvp/hw/hex_text.hpp"
#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/sim_time.hpp"
#include "nvsvp/reduction/reduce_alu.hpp"

namespace nvsvp::model {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

const char* to_string(hw::TaskKind kind) {
  switch (kind) {
    case hw::TaskKind::send: return "send";
    case hw::TaskKind::read: return "read";
    case hw::TaskKind::local_copy: return "local_copy";
    case hw::TaskKind::wait_counter: return "wait_counter";
    case hw::TaskKind::compute: return "compute";
    case hw::TaskKind::gemm: return "gemm";
    case hw::TaskKind::multimem_store: return "multimem_store";
    case hw::TaskKind::multimem_red: return "multimem_red";
    case hw::TaskKind::multimem_ld_reduce: return "multimem_ld_reduce";
    case hw::TaskKind::dynamic_store: return "dynamic_store";
    case hw::TaskKind::dynamic_ld_reduce: return "dynamic_ld_reduce";
    case hw::TaskKind::notify_tokens: return "notify_tokens";
    case hw::TaskKind::take_ready: return "take_ready";
  }
  return "?";
}

constexpr uint32_t kMaxCounters = hw::kMaxArrivalCounters;

// Firmware names reductions with hw::Multimem{Op,Type}; the values are the reduction unit's.
static_assert(static_cast<int>(hw::MultimemOp::bit_xor) == static_cast<int>(reduction::ReduceOp::bit_xor));
static_assert(static_cast<int>(hw::MultimemOp::max) == static_cast<int>(reduction::ReduceOp::max));
static_assert(static_cast<int>(hw::MultimemType::bf16) == static_cast<int>(reduction::ReduceType::bf16));
static_assert(static_cast<int>(hw::MultimemType::u64) == static_cast<int>(reduction::ReduceType::u64));

// `into` = reduce(`into`, `operand`) over `bytes`, 16-byte beat by beat, with the reduction
// unit's arithmetic (bit-exact with the switch's), so that every place a sum is formed rounds
// alike.
void accumulate(uint8_t* into, const uint8_t* operand, size_t bytes, reduction::ReduceOp op,
                reduction::ReduceType type) {
  for (size_t offset = 0; offset < bytes; offset += 16) {
    const size_t n = std::min<size_t>(16, bytes - offset);
    reduction::Beat current{};
    reduction::Beat addend{};
    std::copy(into + offset, into + offset + n, current.begin());
    std::copy(operand + offset, operand + offset + n, addend.begin());
    const reduction::Beat result =
        reduction::finish(type, reduction::combine(op, type, reduction::widen(type, current), addend));
    std::copy(result.begin(), result.begin() + n, into + offset);
  }
}

// A multimem_red copy lands: the memory's value becomes its reduction with the operand.
void combine_into_memory(GpuMemory& memory, uint64_t address, const uint8_t* operand, size_t bytes,
                         reduction::ReduceOp op, reduction::ReduceType type) {
  uint8_t current[PayloadPool::kMaxFunctionalBytes];
  memory.read(address, current, bytes);
  accumulate(current, operand, bytes, op, type);
  memory.write(address, current, bytes);
}

}  // namespace

Gpu::Gpu(const sc_core::sc_module_name& name, const GpuParams& params, const LinkParams& link,
         uint32_t gpu_id, uint32_t links, PayloadPool& pool)
    : sc_module(name),
      tx("tx", links),
      rx("rx", links),
      params_(params),
      link_params_(link),
      id_(gpu_id),
      pool_(pool),
      lookahead_(picoseconds(to_picoseconds(params.tx_lookahead_ns))),
      links_(links),
      link_scheduler_("link_engines", links, [this](uint32_t engine) { serve_link(engine); }),
      hub_(gpu_id, params.hub),
      source_queue_(params.source_queue),
      hub_miss_time_(picoseconds(to_picoseconds(params.hub_miss_ns))),
      table_spill_time_(picoseconds(to_picoseconds(params.table_spill_ns))) {
  tables_[static_cast<size_t>(hw::CounterTable::tile_status)].entries = params.tile_status_entries;
  tables_[static_cast<size_t>(hw::CounterTable::output_readiness)].entries = params.readiness_entries;
  if (params.functional_bytes > PayloadPool::kMaxFunctionalBytes) {
    SC_REPORT_FATAL(this->name(), "functional_bytes exceeds what a payload carries");
  }
  for (uint32_t l = 0; l < links; ++l) {
    rx[l].set_receiver(this, static_cast<int>(l));
  }
  // Every stream's process is made here, during elaboration, so that it belongs to this GPU (a
  // process spawned later would belong to whichever process was running).
  for (uint32_t i = 0; i < kExecutorStreams; ++i) {
    streams_.push_back(std::make_unique<Stream>());
    Stream& added = *streams_.back();
    added.index = i;
    sc_core::sc_spawn_options options;
    options.spawn_method();
    options.dont_initialize();
    options.set_sensitivity(&added.work_event);
    const std::string process = i == 0 ? "executor" : "executor_" + std::to_string(i);
    sc_core::sc_spawn([this, &added] { execute(added); }, process.c_str(), &options);
  }
}

Gpu::Stream& Gpu::stream(uint32_t index) {
  if (index >= streams_.size()) {
    const std::string message = "executor stream " + std::to_string(index) + " of a GPU with " +
                                std::to_string(streams_.size()) + " streams (SM groups)";
    SC_REPORT_FATAL(name(), message.c_str());
  }
  return *streams_[index];
}

void Gpu::submit(hw::WorkSequence sequence) {
  total_tasks_ += sequence.tasks.size();
  if (sequence.phase_names.size() > phase_names_.size()) {
    phase_names_ = sequence.phase_names;
    phase_times_.resize(phase_names_.size());
  }
  if (sequence.counters > counters_.size()) counters_.resize(sequence.counters);
  take_counter_maps(sequence);
  Stream& s = stream(sequence.stream);
  s.sequences.push_back(std::move(sequence));
  s.work_event.notify(SC_ZERO_TIME);
}

Gpu::ArrivalCounter& Gpu::grow_counters(uint32_t index) {
  if (index >= kMaxCounters) SC_REPORT_FATAL(name(), "arrival counter index out of range");
  counters_.resize(index + 1);
  return counters_[index];
}

void Gpu::mark_phase(hw::PhaseId phase, bool start) {
  if (phase >= phase_times_.size()) phase_times_.resize(phase + 1);
  PhaseTime& p = phase_times_[phase];
  const sc_time now = current_time();
  if (start && !p.seen) {
    p.seen = true;
    p.first_start = now;
  }
  if (!start) p.last_end = std::max(p.last_end, now);
}

sc_time Gpu::compute_time(const hw::Task& task, uint32_t group_sms) const {
  const double peak =
      (task.precision == hw::Precision::fp8 ? params_.fp8_tflops : params_.bf16_tflops) * 1e12;
  double math_s = task.flops / (peak * params_.gemm_efficiency);
  if (task.kind == hw::TaskKind::gemm) {
    // Blocks run one per SM in waves: a partial last wave takes as long as a full one.
    const uint32_t wanted = task.elements != 0 ? task.elements : group_sms;
    const uint64_t sms = wanted == 0 ? params_.sms : std::min<uint64_t>(wanted, params_.sms);
    const double waves = task.persistent ? static_cast<double>(task.count) / static_cast<double>(sms)
                                         : static_cast<double>((task.count + sms - 1) / sms);
    const double block_s = task.flops / (peak * params_.gemm_efficiency / params_.sms);
    math_s = waves * block_s;
  }
  const double memory_s = static_cast<double>(task.bytes) / (params_.hbm_gbps * 1e9);
  const double seconds = std::max(math_s, memory_s) + task.duration_ns * 1e-9;
  return picoseconds(static_cast<uint64_t>(std::llround(seconds * 1e12)));
}

void Gpu::execute(Stream& stream) {
  const sc_time now = current_time();
  while (stream.sequence_index < stream.sequences.size()) {
    hw::WorkSequence& sequence = stream.sequences[stream.sequence_index];
    if (stream.task_index >= sequence.tasks.size()) {
      ++stream.sequence_index;
      stream.task_index = 0;
      continue;
    }
    const hw::Task& task = sequence.tasks[stream.task_index];
    if (!stream.task_started) {
      stream.task_started = true;
      // Waiting opens no phase (a stream may wait long before the phase's work starts); the
      // wait's end still counts as the phase's end.
      if (task.kind != hw::TaskKind::wait_counter && task.kind != hw::TaskKind::take_ready) {
        mark_phase(task.phase, true);
      }
    }
    switch (task.kind) {
      case hw::TaskKind::send:
      case hw::TaskKind::read:
      case hw::TaskKind::multimem_ld_reduce:
      case hw::TaskKind::multimem_store:
      case hw::TaskKind::multimem_red:
      case hw::TaskKind::dynamic_store:
      case hw::TaskKind::dynamic_ld_reduce:
      case hw::TaskKind::notify_tokens:
      case hw::TaskKind::local_copy:
        if (!issue_held(stream, sequence, task, now)) return;
        break;
      case hw::TaskKind::take_ready:
        if (!take_ready(stream, sequence, task, now)) return;
        continue;  // take_ready moved the stream past its items
      case hw::TaskKind::wait_counter: {
        ArrivalCounter& c = counter(task.counter);
        if (c.arrivals < task.count) {
          stream.waiting_on_counter = true;
          counter_waiters_ |= 1u << stream.index;
          stream.waited_counter = task.counter;
          stream.waited_count = task.count;
          sc_core::next_trigger(stream.work_event);
          return;
        }
        stream.waiting_on_counter = false;
        counter_waiters_ &= ~(1u << stream.index);
        // The N-th arrival in time order completes the wait.
        if (task.count > 0) {
          const sc_time at = picoseconds(c.nth_arrival_ps(task.count));
          if (at > now) {
            sc_core::next_trigger(at - now);
            return;
          }
        }
        release_entry(task.counter);
        break;
      }
      case hw::TaskKind::compute:
      case hw::TaskKind::gemm:
        // First visit: the work takes its time; second visit: its kernel takes effect.
        if (!stream.compute_running) {
          start_compute(stream, sequence, task, now);
          return;
        }
        finish_compute(stream, sequence, task);
        break;
    }
    mark_phase(task.phase, false);
    stream.task_started = false;
    ++stream.task_index;
    ++pc_;
    stats_.tasks_done++;
  }
  if (finished() && reported_finish_tasks_ != total_tasks_) {
    reported_finish_tasks_ = total_tasks_;
    finish_time_ = now;
    finished_event_.notify(SC_ZERO_TIME);
  }
  sc_core::next_trigger(stream.work_event);
}

void Gpu::start_compute(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task, const sc_time& now) {
  stream.compute_running = true;
  const sc_time duration = compute_time(task, sequence.sms);
  stats_.compute_time += duration;
  if (duration != SC_ZERO_TIME) compute_spans_.push_back(ComputeSpan{task.phase, sequence.stream, now, now + duration});
  sc_core::next_trigger(duration);
}

void Gpu::finish_compute(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task) {
  stream.compute_running = false;
  if (task.kernel != hw::Task::kNoKernel) sequence.kernels.at(task.kernel)(memory_);
}

sc_time Gpu::store_issue_time(const hw::WorkSequence& sequence, const hw::Task& task) const {
  if (sequence.issue_sms == 0) return SC_ZERO_TIME;
  uint64_t bytes = 0;
  switch (task.kind) {
    case hw::TaskKind::send:
      bytes = task.elements > 0 ? task.bytes * task.elements : task.bytes;  // a chunk: all its writes
      break;
    case hw::TaskKind::multimem_store:
    case hw::TaskKind::multimem_red:
    case hw::TaskKind::dynamic_store:  // `elements` are targets: the switch replicates the one token
      bytes = task.bytes;
      break;
    default:
      return SC_ZERO_TIME;
  }
  // GB/s = bytes/ns.
  const double ns = static_cast<double>(bytes) / (static_cast<double>(sequence.issue_sms) * params_.sm_store_gbps);
  return picoseconds(static_cast<uint64_t>(std::llround(ns * 1000.0)));
}

bool Gpu::issue_held(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task, const sc_time& now) {
  // Second visit: the SMs have issued the store; the stream moves on.
  if (stream.store_issuing) {
    stream.store_issuing = false;
    return true;
  }
  issue(sequence, task, now);
  const sc_time hold = store_issue_time(sequence, task);
  if (hold == SC_ZERO_TIME) return true;
  stream.store_issuing = true;
  sc_core::next_trigger(hold);
  return false;
}

void Gpu::issue(const hw::WorkSequence& sequence, const hw::Task& task, const sc_time& now) {
  switch (task.kind) {
    case hw::TaskKind::send: {
      if (task.elements > 0) check_chunk(sequence, task);
      const TxItem item = request_item(sequence, task);
      enqueue(link_for(item.target_address), TrafficClass::request, item);
      break;
    }
    case hw::TaskKind::read:
    case hw::TaskKind::multimem_ld_reduce:
      enqueue(link_for(task.source_address), TrafficClass::request, request_item(sequence, task));
      break;
    case hw::TaskKind::multimem_store:
    case hw::TaskKind::multimem_red:
      // Interleaved by the multimem address: the chip that link reaches replicates it.
      enqueue(link_for(task.target_address), TrafficClass::request, request_item(sequence, task));
      break;
    case hw::TaskKind::dynamic_store:
    case hw::TaskKind::dynamic_ld_reduce:
      run_dynamic(sequence, task);
      break;
    case hw::TaskKind::notify_tokens:
      run_notify(sequence, task);
      break;
    case hw::TaskKind::local_copy: {
      uint8_t data[PayloadPool::kMaxFunctionalBytes];
      const size_t n = static_cast<size_t>(std::min<uint64_t>(task.bytes, params_.functional_bytes));
      memory_.read(task.source_address, data, n);
      memory_.write(task.target_address, data, n);
      count_landing(task.target_address, now);
      record_arrival(task.counter, now);
      if (task.bytes > 0) stats_.local_copies++;  // 0 bytes: a signal between streams
      break;
    }
    default:
      SC_REPORT_FATAL(name(), (std::string("task kind ") + to_string(task.kind) + " is not one that issues at once").c_str());
  }
}

bool Gpu::take_ready(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task, const sc_time& now) {
  const size_t per_item = 1 + static_cast<size_t>(task.elements);
  const size_t first = stream.task_index + 1;
  if (!stream.taking_ready) {
    // Register every item's wait: a satisfied one is ready now, the others when their counter
    // gets there (record_arrival).
    if (first + task.count * per_item > sequence.tasks.size()) {
      SC_REPORT_FATAL(name(), "take_ready: its items run past the end of the sequence");
    }
    for (uint64_t k = 0; k < task.count; ++k) {
      const hw::Task& wait = sequence.tasks[first + k * per_item];
      bool well_formed = wait.kind == hw::TaskKind::wait_counter;
      for (size_t a = 1; a < per_item && well_formed; ++a) {
        const hw::TaskKind kind = sequence.tasks[first + k * per_item + a].kind;
        well_formed = kind != hw::TaskKind::wait_counter && kind != hw::TaskKind::take_ready;
      }
      if (!well_formed) {
        SC_REPORT_FATAL(name(), "take_ready: an item must be a wait_counter and tasks that issue or compute");
      }
      ArrivalCounter& c = counter(wait.counter);
      if (c.arrivals >= wait.count) {
        stream.ready.push(ReadyItem{wait.count == 0 ? now.value() : c.nth_arrival_ps(wait.count), k});
      } else if (c.waiting_item != ArrivalCounter::kNoItem) {
        SC_REPORT_FATAL(name(), "take_ready: two pending items wait on one counter");
      } else {
        c.waiting_item = k;
        c.waiting_stream = stream.index;
        c.waiting_count = wait.count;
      }
    }
    stream.taking_ready = true;
    stream.ready_done = 0;
  }
  // One item at a time: its tasks in order (a compute task holds the stream for its time), then
  // the earliest ready one.
  while (stream.ready_done < task.count) {
    if (stream.current_item == ArrivalCounter::kNoItem) {
      if (stream.ready.empty() || stream.ready.top().at_ps > now.value()) break;
      stream.current_item = stream.ready.top().item;
      stream.current_action = 1;
      stream.ready.pop();
      const hw::Task& wait = sequence.tasks[first + stream.current_item * per_item];
      taken_items_.push_back(TakenItem{wait.counter, now.value()});
      release_entry(wait.counter);
      mark_phase(wait.phase, false);
    }
    while (stream.current_action < per_item) {
      const hw::Task& action = sequence.tasks[first + stream.current_item * per_item + stream.current_action];
      if (action.kind == hw::TaskKind::compute || action.kind == hw::TaskKind::gemm) {
        if (!stream.compute_running) {
          mark_phase(action.phase, true);
          start_compute(stream, sequence, action, now);
          return false;
        }
        finish_compute(stream, sequence, action);
      } else {
        if (!stream.store_issuing) mark_phase(action.phase, true);
        if (!issue_held(stream, sequence, action, now)) return false;
      }
      mark_phase(action.phase, false);
      ++stream.current_action;
    }
    pc_ += per_item;
    stats_.tasks_done += per_item;
    ++stream.ready_done;
    stream.current_item = ArrivalCounter::kNoItem;
  }
  if (stream.ready_done < task.count) {
    if (stream.ready.empty()) {
      sc_core::next_trigger(stream.work_event);
    } else {
      sc_core::next_trigger(picoseconds(stream.ready.top().at_ps) - now, stream.work_event);
    }
    return false;
  }
  stream.taking_ready = false;
  stream.task_started = false;
  stream.task_index = first + task.count * per_item;
  ++pc_;
  stats_.tasks_done++;
  return true;
}

uint64_t Gpu::ArrivalCounter::nth_arrival_ps(uint64_t n) {
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

void Gpu::record_arrival(uint32_t index, const sc_time& at, uint64_t arrivals) {
  ArrivalCounter& c = counter(index);
  if (c.table == hw::CounterTable::none) {
    c.add(at.value(), arrivals);
  } else {
    // A table entry: taken at its first arrival; an entry that found the table full lives in
    // memory, and every update of it pays the spill time.
    CounterTableStats& table = tables_[static_cast<size_t>(c.table)];
    if (c.entry == ArrivalCounter::Entry::unused || c.entry == ArrivalCounter::Entry::released) {
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
    if (c.entry == ArrivalCounter::Entry::spilled) {
      table.spilled_updates += arrivals;
      c.add((at + table_spill_time_).value(), arrivals);
    } else {
      c.add(at.value(), arrivals);
    }
  }
  if (c.waiting_item != ArrivalCounter::kNoItem && c.arrivals >= c.waiting_count) {
    Stream& s = *streams_[c.waiting_stream];
    s.ready.push(ReadyItem{c.nth_arrival_ps(c.waiting_count), c.waiting_item});
    c.waiting_item = ArrivalCounter::kNoItem;
    s.work_event.notify(SC_ZERO_TIME);
  }
  // Waiting streams in index order, as a walk over all of them would find them.
  for (uint32_t waiters = counter_waiters_; waiters != 0; waiters &= waiters - 1) {
    Stream& s = *streams_[static_cast<size_t>(__builtin_ctz(waiters))];
    if (index == s.waited_counter && c.arrivals >= s.waited_count) {
      s.waiting_on_counter = false;
      counter_waiters_ &= ~(1u << s.index);
      s.work_event.notify(SC_ZERO_TIME);
    }
  }
}

void Gpu::release_entry(uint32_t index) {
  ArrivalCounter& c = counters_[index];
  if (c.entry != ArrivalCounter::Entry::held && c.entry != ArrivalCounter::Entry::spilled) return;
  CounterTableStats& table = tables_[static_cast<size_t>(c.table)];
  table.live--;
  if (c.entry == ArrivalCounter::Entry::held) table.held--;
  c.entry = ArrivalCounter::Entry::released;
}

void Gpu::take_counter_maps(hw::WorkSequence& sequence) {
  for (const hw::CounterTableRange& range : sequence.counter_tables) {
    if (range.table == hw::CounterTable::none || static_cast<size_t>(range.table) >= hw::kCounterTables ||
        static_cast<uint64_t>(range.first_counter) + range.counters > kMaxCounters) {
      SC_REPORT_FATAL(name(), "counter table range: unknown table or counters out of range");
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
      SC_REPORT_FATAL(name(), msg.str().c_str());
    }
    counter_maps_.push_back(std::move(map));
  }
  sequence.counter_maps.clear();
}

void Gpu::count_mapped(uint64_t address, const sc_time& at) {
  for (const hw::CounterMap& map : counter_maps_) {
    if (address < map.base) continue;
    const uint64_t entry = (address - map.base) / map.stride;
    if (entry >= map.entries) continue;
    if (map.first.empty()) {
      record_arrival(static_cast<uint32_t>(map.first_counter + entry), at);
      continue;
    }
    for (uint32_t i = map.first[entry]; i < map.first[entry + 1]; ++i) record_arrival(map.counters[i], at);
  }
}

void Gpu::run_notify(const hw::WorkSequence& sequence, const hw::Task& task) {
  const sc_time now = current_time();
  const bool from_hub = task.addressing == hw::DynamicAddressing::algebraic;
  uint64_t tokens_per_gpu = 0;
  if (!hub_.tokens_per_gpu(task.source_address, tokens_per_gpu) ||
      (!from_hub && task.first_element + task.count > sequence.block_tokens.size())) {
    std::ostringstream msg;
    msg << "notify_tokens: blocks " << task.first_element << " + " << task.count << " of "
        << (from_hub ? "the Hub's" : "the sequence's") << " token-ID table for the dynamic object at "
        << hw::hex_text(task.source_address) << ": no such object bound, or blocks beyond the table";
    SC_REPORT_FATAL(name(), msg.str().c_str());
    return;
  }
  // Notifications per home in block order; a home's travel in messages of what one payload holds.
  std::vector<std::vector<hw::WriteElement>>& by_home = notifications_by_home_;
  for (uint64_t b = 0; b < task.count; ++b) {
    uint64_t token = 0;
    const uint64_t block = task.first_element + b;
    if (!from_hub) {
      token = sequence.block_tokens[block];
    } else if (block > UINT32_MAX || !hub_.token_of_block(task.source_address, static_cast<uint32_t>(block), token)) {
      std::ostringstream msg;
      msg << "notify_tokens: layout block " << block << " of the dynamic object at " << hw::hex_text(task.source_address)
          << " holds no token (the Hub never allocated it)";
      SC_REPORT_FATAL(name(), msg.str().c_str());
      return;
    }
    const auto home = static_cast<uint32_t>(token / tokens_per_gpu);
    const uint64_t entry = task.target_address + hw::kCounterEntryBytes * (token % tokens_per_gpu);
    stats_.notifications_sent++;
    if (home == id_) {
      count_landing(entry, now);
      record_arrival(task.counter, now);
      continue;
    }
    if (home >= by_home.size()) by_home.resize(home + 1);
    by_home[home].push_back(hw::WriteElement{entry, entry});
  }
  const uint32_t per_message = std::max<uint32_t>(1, PayloadPool::kMaxFunctionalBytes / params_.functional_bytes);
  for (uint32_t home = 0; home < by_home.size(); ++home) {  // homes in ascending order
    std::vector<hw::WriteElement>& list = by_home[home];
    for (size_t first = 0; first < list.size(); first += per_message) {
      const auto n = static_cast<uint32_t>(std::min<size_t>(per_message, list.size() - first));
      if (notification_elements_.empty() || notification_elements_.back().size() + n > kNotificationBlock) {
        notification_elements_.emplace_back();
        notification_elements_.back().reserve(kNotificationBlock);
      }
      std::vector<hw::WriteElement>& block = notification_elements_.back();
      const size_t at = block.size();
      block.insert(block.end(), list.begin() + static_cast<ptrdiff_t>(first),
                   list.begin() + static_cast<ptrdiff_t>(first + n));
      TxItem item;
      item.opcode = Opcode::write;
      item.peer = home;
      item.counter = task.counter;
      item.chunk = &block[at];
      item.elements = n;
      item.bytes = task.bytes * n;
      item.wire_flits = link_params_.wire_flits(task.bytes * n);  // one packet of token entries
      item.source_address = block[at].source_address;
      item.target_address = block[at].target_address;
      item.notification = true;
      item.stream = static_cast<uint8_t>(sequence.stream);
      item.not_before = now;
      enqueue(link_for(item.target_address), TrafficClass::request, item);
    }
    list.clear();
  }
}

void Gpu::end_of_elaboration() {
  for (uint32_t l = 0; l < links_.size(); ++l) {
    tx_ports_.push_back(bound_port(tx[l]));
    rx_backward_.push_back(rx[l].operator->());
    tx_ports_[l]->set_sender(&link_scheduler_, l);
  }
}

void Gpu::TxQueue::grow() {
  constexpr size_t kInitialItems = 16;
  std::vector<TxItem> larger(items_.empty() ? kInitialItems : 2 * items_.size());
  for (size_t i = 0; i < size_; ++i) larger[i] = items_[(head_ + i) & (items_.size() - 1)];
  items_.swap(larger);
  head_ = 0;
}

void Gpu::enqueue(uint32_t link, TrafficClass traffic_class, const TxItem& item) {
  LinkEngine& engine = links_[link];
  engine.queues[traffic_class == TrafficClass::response ? kExecutorStreams : item.stream].push_back(item);
  engine.queued++;
  // Served when the item may leave and the link can take it (within the lookahead); the scheduler
  // keeps an earlier wake if the engine already has one.
  const sc_time busy_until = tx_ports_[link]->busy_until();
  const sc_time link_ready = busy_until > lookahead_ ? busy_until - lookahead_ : sc_core::SC_ZERO_TIME;
  link_scheduler_.wake_at(link, std::max({item.not_before, link_ready, current_time()}));
}

// A chunk's writes must lie in the sequence's element list and their functional bytes fit one
// payload. Firmware builds chunks, so a malformed one is a firmware bug.
void Gpu::check_chunk(const hw::WorkSequence& sequence, const hw::Task& task) const {
  const uint64_t end = static_cast<uint64_t>(task.first_element) + task.elements;
  if (end <= sequence.elements.size() &&
      static_cast<uint64_t>(task.elements) * params_.functional_bytes <= PayloadPool::kMaxFunctionalBytes) {
    return;
  }
  std::ostringstream msg;
  msg << "malformed chunk: elements " << task.first_element << " to " << end << " of a list of "
      << sequence.elements.size() << ", at most " << PayloadPool::kMaxFunctionalBytes
      << " functional bytes in one message";
  SC_REPORT_FATAL(name(), msg.str().c_str());
}

void Gpu::install_dynamic_multicast(const hw::DynamicMulticastBinding& binding, uint64_t local_base) {
  if (dynamic_experts_per_gpu_ != 0 && binding.experts_per_gpu != dynamic_experts_per_gpu_) {
    throw std::invalid_argument(std::string(name()) + ": dynamic multicast object " +
                                std::to_string(binding.object.id) + " spreads " +
                                std::to_string(binding.experts_per_gpu) + " experts per GPU, an earlier one " +
                                std::to_string(dynamic_experts_per_gpu_));
  }
  if (!hub_.is_bound(binding.object.id)) hub_.create(binding.object);
  hub_.bind(binding, local_base);
  dynamic_experts_per_gpu_ = binding.experts_per_gpu;
}

uint64_t Gpu::target_location(uint64_t multimem_address, hw::MultimemStage stage, const uint16_t* targets,
                              const uint64_t* target_addresses, uint32_t index, uint32_t packets, bool& miss) {
  if (target_addresses != nullptr) return target_addresses[index];
  try {
    const HubTranslation t = hub_.translate(multimem_address, stage, targets[index], packets);
    miss = miss || !t.cache_hit;
    return t.local_address;
  } catch (const HubError& e) {
    SC_REPORT_FATAL(name(), e.what());
    return 0;
  }
}

uint32_t Gpu::add_local_partials(uint64_t multimem_address, const uint16_t* targets, const uint64_t* target_addresses,
                                 uint32_t first, uint32_t count, uint64_t read_bytes, uint8_t op, uint8_t type,
                                 uint8_t* sum, size_t bytes, bool have_sum, bool& miss) {
  const auto packets = static_cast<uint32_t>(packets_of(link_params_, read_bytes));
  uint8_t partial[PayloadPool::kMaxFunctionalBytes];
  uint32_t added = 0;
  for (uint32_t i = first; i < first + count; ++i) {
    if (!is_local_expert(targets[i])) continue;
    const uint64_t address =
        target_location(multimem_address, hw::MultimemStage::combine, targets, target_addresses, i, packets, miss);
    if (!have_sum) {
      memory_.read(address, sum, bytes);
      have_sum = true;
    } else {
      memory_.read(address, partial, bytes);
      accumulate(sum, partial, bytes, static_cast<reduction::ReduceOp>(op), static_cast<reduction::ReduceType>(type));
    }
    ++added;
  }
  return added;
}

// A dynamic operation: its targets on other GPUs travel in one request to the switch; its
// targets on this GPU (the end of its list) are served by the Hub here, without a link: a store
// writes them now, a load adds their partials to the switch's result when that arrives.
void Gpu::run_dynamic(const hw::WorkSequence& sequence, const hw::Task& task) {
  const uint64_t end = static_cast<uint64_t>(task.first_element) + task.elements;
  const bool explicit_addresses = task.addressing == hw::DynamicAddressing::explicit_addresses;
  if (task.elements == 0 || end > sequence.targets.size() ||
      (explicit_addresses && end > sequence.target_addresses.size()) || dynamic_experts_per_gpu_ == 0) {
    std::ostringstream msg;
    msg << "malformed dynamic operation: targets " << task.first_element << " to " << end << " of a list of "
        << sequence.targets.size() << (explicit_addresses ? " (explicit addressing)" : "")
        << (dynamic_experts_per_gpu_ == 0 ? ", and no dynamic multicast object is bound" : "");
    SC_REPORT_FATAL(name(), msg.str().c_str());
    return;
  }
  const uint16_t* targets = &sequence.targets[task.first_element];
  const uint64_t* addresses = explicit_addresses ? &sequence.target_addresses[task.first_element] : nullptr;
  uint16_t remote = task.elements;
  while (remote > 0 && is_local_expert(targets[remote - 1])) --remote;
  for (uint16_t i = 0; i < remote; ++i) {
    if (is_local_expert(targets[i])) {
      SC_REPORT_FATAL(name(), "dynamic operation: this GPU's own targets must come last in the list");
    }
  }
  const auto local = static_cast<uint16_t>(task.elements - remote);
  stats_.dynamic_operations++;
  const sc_time now = current_time();
  // The source queue holds the operation while its target list is read.
  const QueuedOperation queued = source_queue_.admit(static_cast<double>(now.value()) / 1000.0);
  const sc_time issue = picoseconds(static_cast<uint64_t>(std::llround(queued.issue_ns * 1000.0)));
  const bool store = task.kind == hw::TaskKind::dynamic_store;
  const uint64_t multimem_address = store ? task.target_address : task.source_address;
  if (remote > 0) {
    TxItem item = request_item(sequence, task);
    item.targets = targets;
    item.target_addresses = addresses;
    item.target_count = remote;
    item.issuer_targets = store ? 0 : local;
    item.count_per_expert = store && task.count != 0;
    item.wire_flits = explicit_addresses ? explicit_wire_flits(link_params_, remote, store ? task.bytes : 0)
                                         : dynamic_wire_flits(link_params_, remote, store ? task.bytes : 0);
    item.not_before = issue;
    enqueue(link_for(multimem_address), TrafficClass::request, item);
  }
  if (local == 0 || (!store && remote > 0)) return;
  bool miss = false;
  uint8_t data[PayloadPool::kMaxFunctionalBytes];
  if (store) {
    const auto n = static_cast<size_t>(std::min<uint64_t>(task.bytes, params_.functional_bytes));
    memory_.read(task.source_address, data, n);
    const auto packets = static_cast<uint32_t>(packets_of(link_params_, task.bytes));
    for (uint32_t i = remote; i < task.elements; ++i) {
      const uint64_t address =
          target_location(multimem_address, hw::MultimemStage::dispatch, targets, addresses, i, packets, miss);
      memory_.write(address, data, n);
      count_landing(address, miss ? issue + hub_miss_time_ : issue);
    }
    stats_.local_copies += local;
    if (task.count != 0) {  // per-expert arrival counters
      for (uint32_t i = remote; i < task.elements; ++i) {
        count_dynamic_block(task.counter, true, targets[i], miss ? issue + hub_miss_time_ : issue);
      }
      return;
    }
  } else {
    // Every target is here: the load completes without the switch.
    const auto n = static_cast<size_t>(std::min<uint64_t>(task.bytes, params_.functional_bytes));
    add_local_partials(multimem_address, targets, addresses, remote, local, task.bytes,
                       static_cast<uint8_t>(task.reduce_op), static_cast<uint8_t>(task.reduce_type), data, n, false, miss);
    memory_.write(task.target_address, data, n);
  }
  record_arrival(task.counter, miss ? issue + hub_miss_time_ : issue, store ? local : 1);
}

Gpu::TxItem Gpu::request_item(const hw::WorkSequence& sequence, const hw::Task& task) const {
  TxItem item;
  switch (task.kind) {
    case hw::TaskKind::read: item.opcode = Opcode::read; break;
    case hw::TaskKind::multimem_store: item.opcode = Opcode::multimem_store; break;
    case hw::TaskKind::multimem_red: item.opcode = Opcode::multimem_red; break;
    case hw::TaskKind::multimem_ld_reduce: item.opcode = Opcode::multimem_ld_reduce; break;
    case hw::TaskKind::dynamic_store: item.opcode = Opcode::dynamic_store; break;
    case hw::TaskKind::dynamic_ld_reduce: item.opcode = Opcode::dynamic_ld_reduce; break;
    default: item.opcode = Opcode::write; break;
  }
  // A multimem request names the switch, not a GPU; the issuer puts itself as the peer.
  const bool multimem = item.opcode == Opcode::multimem_store || item.opcode == Opcode::multimem_red ||
                        item.opcode == Opcode::multimem_ld_reduce || item.opcode == Opcode::dynamic_store ||
                        item.opcode == Opcode::dynamic_ld_reduce;
  item.peer = multimem ? id_ : task.peer;
  item.stream = static_cast<uint8_t>(sequence.stream);
  item.counter = task.counter;
  item.bytes = task.bytes;
  item.reduce_op = static_cast<uint8_t>(task.reduce_op);
  item.reduce_type = static_cast<uint8_t>(task.reduce_type);
  // Wire sizes as for plain writes and reads: a load carries no payload on the way out.
  const bool load = item.opcode == Opcode::read || item.opcode == Opcode::multimem_ld_reduce ||
                    item.opcode == Opcode::dynamic_ld_reduce;
  item.wire_flits = link_params_.wire_flits(load ? 0 : task.bytes);
  if (task.elements == 0 || task.kind != hw::TaskKind::send) {  // dynamic tasks: `elements` are targets
    item.source_address = task.source_address;
    item.target_address = task.target_address;
  } else {
    // The chunk's writes keep their own packets: wire size is the sum of theirs.
    item.chunk = &sequence.elements[task.first_element];
    item.elements = task.elements;
    item.source_address = item.chunk[0].source_address;
    item.target_address = item.chunk[0].target_address;
    item.bytes *= task.elements;
    item.wire_flits *= task.elements;
  }
  item.not_before = current_time();
  return item;
}

// Serving one link engine (a client of the GPU's WakeScheduler): commit the queued messages that
// can start within the lookahead (the link takes them back to back), then ask to be served when
// more could go; credits it waits for wake it through the port.
void Gpu::serve_link(uint32_t link) {
  LinkEngine& engine = links_[link];
  NvlinkPort* port = tx_ports_[link];
  const sc_time now = current_time();
  while (engine.queued > 0) {
    const sc_time free_at = port->busy_until();
    if (free_at > now + lookahead_) {
      link_scheduler_.wake_at(link, free_at - lookahead_);
      return;
    }
    sc_time next_ready = never();
    bool launched = false;
    constexpr uint32_t kQueues = kExecutorStreams + 1;
    for (uint32_t i = 0; i < kQueues && !launched; ++i) {
      const uint32_t q = engine.next_queue + i < kQueues ? engine.next_queue + i : engine.next_queue + i - kQueues;
      TxQueue& queue = engine.queues[q];
      if (queue.empty()) continue;
      const TxItem& item = queue.front();
      if (item.not_before > now) {
        next_ready = std::min(next_ready, item.not_before);
        continue;
      }
      if (is_multimem_load(item.opcode) && engine.load_bytes_in_flight > 0 &&
          engine.load_bytes_in_flight + item.bytes > params_.load_bytes_in_flight_per_link) {
        continue;  // woken by load_returned
      }
      const TrafficClass traffic_class = q == kExecutorStreams ? TrafficClass::response : TrafficClass::request;
      const int vc = port->allocate_vc(traffic_class, item.wire_flits);
      if (vc < 0) {
        port->wait_for_credits(traffic_class);
        continue;
      }
      const TxItem committed = item;
      queue.pop_front();
      engine.queued--;
      engine.next_queue = q + 1 < kQueues ? q + 1 : 0;
      launch(link, committed, traffic_class, static_cast<uint16_t>(vc));
      launched = true;
    }
    if (!launched) {
      if (next_ready != never()) link_scheduler_.wake_at(link, next_ready);
      return;
    }
  }
}

void Gpu::launch(uint32_t link, const TxItem& item, TrafficClass traffic_class, uint16_t vc) {
  tlm::tlm_generic_payload* payload = item.payload;
  if (payload == nullptr) {
    payload = &pool_.acquire();
    NvlinkExtension& ext = extension_of(*payload);
    ext.opcode = item.opcode;
    ext.traffic_class = traffic_class;
    ext.source_gpu = id_;
    ext.target_gpu = item.peer;
    ext.counter = item.counter;
    ext.wire_flits = item.wire_flits;
    ext.reduce_op = item.reduce_op;
    ext.reduce_type = item.reduce_type;
    ext.targets = item.targets;
    ext.target_addresses = item.target_addresses;
    ext.target_count = item.target_count;
    ext.targets_here = item.issuer_targets;
    ext.count_per_expert = item.count_per_expert;
    ext.notification = item.notification;
    if (item.opcode != Opcode::read && item.opcode != Opcode::multimem_ld_reduce &&
        item.opcode != Opcode::dynamic_ld_reduce) {
      ext.target_address = item.target_address;
      ext.payload_bytes = item.bytes;
      if (item.chunk == nullptr) {
        const auto n = static_cast<unsigned>(std::min<uint64_t>(item.bytes, params_.functional_bytes));
        memory_.read(item.source_address, payload->get_data_ptr(), n);
        payload->set_data_length(n);
      } else {
        ext.elements = item.elements;
        ext.element_list = item.chunk;
        const auto n = static_cast<unsigned>(std::min<uint64_t>(item.bytes / item.elements, params_.functional_bytes));
        for (uint32_t i = 0; i < item.elements; ++i) {
          memory_.read(item.chunk[i].source_address, payload->get_data_ptr() + i * params_.functional_bytes, n);
        }
        payload->set_data_length(item.elements * params_.functional_bytes);
      }
      payload->set_command(tlm::TLM_WRITE_COMMAND);
    } else {
      ext.target_address = item.source_address;
      ext.read_bytes = item.bytes;
      ext.return_address = item.target_address;
      payload->set_command(tlm::TLM_READ_COMMAND);
    }
    payload->set_address(ext.target_address);
    if (item.opcode == Opcode::dynamic_store || item.opcode == Opcode::dynamic_ld_reduce) {
      // The first flit's address field: multimem address, stage, target count (dysharp.md §2).
      DynamicFirstFlit flit;
      flit.multimem_address = ext.target_address;
      flit.stage = item.opcode == Opcode::dynamic_store ? hw::MultimemStage::dispatch : hw::MultimemStage::combine;
      flit.target_count = item.target_count;
      try {
        payload->set_address(encode_first_flit(flit));
      } catch (const std::out_of_range& e) {
        SC_REPORT_FATAL(name(), e.what());
      }
    }
  }
  NvlinkExtension& ext = extension_of(*payload);
  if (is_multimem_load(item.opcode)) links_[link].load_bytes_in_flight += item.bytes;
  ext.vc = vc;
  ext.sequence = next_sequence_number_++;
  ext.issue_time = current_time();
  stats_.messages_sent++;
  stats_.payload_bytes_sent += ext.payload_bytes;
  tx_ports_[link]->send(*payload);
  payload->release();  // the port holds its own reference
}

tlm::tlm_sync_enum Gpu::nb_transport_fw(int link, tlm::tlm_generic_payload& payload,
                                        tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) SC_REPORT_FATAL(name(), "unexpected phase on a receive link");
  const NvlinkExtension& ext = extension_of(payload);
  if (ext.target_gpu != id_) {
    std::ostringstream msg;
    msg << "message for GPU " << ext.target_gpu << " delivered to GPU " << id_ << " (from GPU "
        << ext.source_gpu << "#" << ext.sequence << ")";
    SC_REPORT_FATAL(name(), msg.str().c_str());
  }
  const sc_time arrival = ext.tail_arrival;
  if (ext.load_bytes > 0) load_returned(ext);
  stats_.messages_received++;
  stats_.payload_bytes_received += ext.payload_bytes;
  switch (ext.opcode) {
    case Opcode::write:
      if (ext.element_list != nullptr) {
        const auto n = static_cast<size_t>(std::min<uint64_t>(ext.payload_bytes / ext.elements, params_.functional_bytes));
        for (uint32_t i = 0; i < ext.elements; ++i) {
          memory_.write(ext.element_list[i].target_address, payload.get_data_ptr() + i * params_.functional_bytes, n);
          count_landing(ext.element_list[i].target_address, arrival);
        }
        if (ext.notification) {
          stats_.notification_messages_received++;
          stats_.notifications_received += ext.elements;
        }
        record_arrival(ext.counter, arrival, ext.elements);
        break;
      }
      [[fallthrough]];
    case Opcode::read_response: {
      if (ext.evicted_parts == 0 && ext.targets_here == 0) {
        memory_.write(ext.target_address, payload.get_data_ptr(), payload.get_data_length());
        count_landing(ext.target_address, arrival);
        record_arrival(ext.counter, arrival);
        break;
      }
      // An ld_reduce result to complete here: the partials a full switch buffer passed on before
      // it, and this GPU's own experts' partials (a dynamic load keeps them out of the request).
      uint8_t sum[PayloadPool::kMaxFunctionalBytes];
      const size_t bytes = payload.get_data_length();
      std::copy(payload.get_data_ptr(), payload.get_data_ptr() + bytes, sum);
      const auto op = static_cast<reduction::ReduceOp>(ext.reduce_op);
      const auto type = static_cast<reduction::ReduceType>(ext.reduce_type);
      if (ext.evicted_parts > 0) {
        auto held = held_partials_.find(ext.target_address);
        const uint32_t parts = held == held_partials_.end() ? 0 : held->second.parts;
        if (parts != ext.evicted_parts) {
          std::ostringstream msg;
          msg << "ld_reduce result for " << hw::hex_text(ext.target_address) << " follows " << parts
              << " passed-on partials, the switch sent " << ext.evicted_parts;
          SC_REPORT_FATAL(name(), msg.str().c_str());
        }
        accumulate(sum, held->second.data, std::min(bytes, held->second.bytes), op, type);
        held_partials_.erase(held);
      }
      bool miss = false;
      if (ext.targets_here > 0) {
        add_local_partials(ext.multimem_address, ext.targets, ext.target_addresses, ext.target_count,
                           ext.targets_here, ext.payload_bytes, ext.reduce_op, ext.reduce_type, sum, bytes, true, miss);
      }
      memory_.write(ext.target_address, sum, bytes);
      record_arrival(ext.counter, miss ? arrival + hub_miss_time_ : arrival);
      break;
    }
    case Opcode::reduce_partial: {
      stats_.partials_received++;
      HeldPartial& held = held_partials_[ext.target_address];
      const size_t bytes = std::min<size_t>(payload.get_data_length(), sizeof held.data);
      if (held.parts++ == 0) {
        std::copy(payload.get_data_ptr(), payload.get_data_ptr() + bytes, held.data);
        held.bytes = bytes;
      } else {
        accumulate(held.data, payload.get_data_ptr(), std::min(bytes, held.bytes),
                   static_cast<reduction::ReduceOp>(ext.reduce_op), static_cast<reduction::ReduceType>(ext.reduce_type));
      }
      break;
    }
    case Opcode::dynamic_write: {
      const auto n = static_cast<size_t>(std::min<uint64_t>(ext.payload_bytes, params_.functional_bytes));
      const auto packets = static_cast<uint32_t>(packets_of(link_params_, ext.payload_bytes));
      bool miss = false;
      uint32_t written = 0;
      for (uint32_t i = 0; i < ext.target_count; ++i) {
        if (!is_local_expert(ext.targets[i])) continue;
        const uint64_t address = target_location(ext.target_address, hw::MultimemStage::dispatch, ext.targets,
                                                 ext.target_addresses, i, packets, miss);
        memory_.write(address, payload.get_data_ptr(), n);
        count_landing(address, miss ? arrival + hub_miss_time_ : arrival);
        ++written;
      }
      const sc_time landed = miss ? arrival + hub_miss_time_ : arrival;
      if (written != ext.targets_here || written != decode_first_flit(payload.get_address()).target_count) {
        std::ostringstream msg;
        msg << "dynamic write from GPU " << ext.source_gpu << "#" << ext.sequence << " names " << written
            << " experts of GPU " << id_ << ", the switch trimmed it to " << ext.targets_here;
        SC_REPORT_FATAL(name(), msg.str().c_str());
      }
      if (ext.count_per_expert) {
        for (uint32_t i = 0; i < ext.target_count; ++i) {
          if (is_local_expert(ext.targets[i])) count_dynamic_block(ext.counter, true, ext.targets[i], landed);
        }
      } else {
        record_arrival(ext.counter, landed, written);
      }
      break;
    }
    case Opcode::write_ack:
      record_arrival(ext.counter, arrival);
      break;
    case Opcode::reduce_write:
      combine_into_memory(memory_, ext.target_address, payload.get_data_ptr(), payload.get_data_length(),
                          static_cast<reduction::ReduceOp>(ext.reduce_op),
                          static_cast<reduction::ReduceType>(ext.reduce_type));
      record_arrival(ext.counter, arrival);
      break;
    case Opcode::multimem_error:
      // Nothing was written anywhere; the wait on the counter completes so that firmware sees the
      // error (switch ERROR_STATUS, this count) instead of a hang.
      stats_.multimem_errors++;
      record_arrival(ext.counter, arrival);
      break;
    case Opcode::member_read_response:
    case Opcode::multimem_store:
    case Opcode::multimem_red:
    case Opcode::multimem_ld_reduce:
    case Opcode::dynamic_store:
    case Opcode::dynamic_ld_reduce: {
      std::ostringstream msg;
      msg << to_string(ext.opcode) << " from GPU " << ext.source_gpu << "#" << ext.sequence
          << " reached GPU " << id_ << ": only a switch takes it";
      SC_REPORT_FATAL(name(), msg.str().c_str());
      break;
    }
    case Opcode::dynamic_member_read:
    case Opcode::member_read:
    case Opcode::read: {
      // The response leaves once the request has fully arrived.
      tlm::tlm_generic_payload& response = pool_.acquire();
      NvlinkExtension& r = extension_of(response);
      const bool for_switch = ext.opcode == Opcode::member_read || ext.opcode == Opcode::dynamic_member_read;
      r.opcode = for_switch ? Opcode::member_read_response : Opcode::read_response;
      r.reduction_tag = ext.reduction_tag;
      r.traffic_class = TrafficClass::response;
      r.source_gpu = id_;
      r.target_gpu = ext.source_gpu;
      r.counter = ext.counter;
      r.target_address = ext.return_address;
      r.payload_bytes = ext.read_bytes;
      r.wire_flits = link_params_.wire_flits(ext.read_bytes);
      const auto n = static_cast<unsigned>(std::min<uint64_t>(ext.read_bytes, params_.functional_bytes));
      bool miss = false;
      if (ext.opcode == Opcode::dynamic_member_read) {
        // One response for all of this GPU's targets: the sum of their partials.
        const uint32_t summed =
            add_local_partials(ext.target_address, ext.targets, ext.target_addresses, 0, ext.target_count,
                               ext.read_bytes, ext.reduce_op, ext.reduce_type, response.get_data_ptr(), n, false, miss);
        if (summed != ext.targets_here || summed != decode_first_flit(payload.get_address()).target_count || summed == 0) {
          std::ostringstream msg;
          msg << "dynamic load from GPU " << ext.source_gpu << "#" << ext.sequence << " names " << summed
              << " experts of GPU " << id_ << ", the switch trimmed it to " << ext.targets_here;
          SC_REPORT_FATAL(name(), msg.str().c_str());
        }
        if (ext.target_addresses != nullptr) {
          r.wire_flits = explicit_wire_flits(link_params_, ext.targets_here, ext.read_bytes);
        }
      } else {
        memory_.read(ext.target_address, response.get_data_ptr(), n);
      }
      response.set_data_length(n);
      response.set_address(r.target_address);
      response.set_command(tlm::TLM_WRITE_COMMAND);
      TxItem item;
      item.payload = &response;
      item.wire_flits = r.wire_flits;
      item.not_before = miss ? arrival + hub_miss_time_ : arrival;
      // A member read goes back on the link it came by: that link reaches the switch chip that
      // reduces it.
      enqueue(for_switch ? static_cast<uint32_t>(link) : link_for(r.target_address), TrafficClass::response, item);
      break;
    }
  }
  // The GPU drains its input at line rate: the buffer space frees as the tail arrives.
  tlm::tlm_phase end = tlm::END_REQ;
  sc_time freed = arrival - current_time();
  rx_backward_[static_cast<size_t>(link)]->nb_transport_bw(payload, end, freed);
  return tlm::TLM_ACCEPTED;
}

void Gpu::load_returned(const NvlinkExtension& ext) {
  const uint32_t link = link_for(ext.multimem_address);
  LinkEngine& engine = links_[link];
  if (engine.load_bytes_in_flight < ext.load_bytes) {
    SC_REPORT_FATAL(name(), "a multimem load result for more bytes than its link has in flight");
  }
  engine.load_bytes_in_flight -= ext.load_bytes;
  if (engine.queued > 0) link_scheduler_.wake_at(link, current_time());
}

uint64_t Gpu::queued_messages() const {
  uint64_t queued = 0;
  for (const LinkEngine& engine : links_) queued += engine.queued;
  return queued;
}

uint64_t Gpu::describe_outstanding(std::ostream& os) const {
  const uint64_t tasks_left = total_tasks_ - pc_;
  const uint64_t queued = queued_messages();
  if (tasks_left == 0 && queued == 0) return 0;
  os << "  " << name() << ": " << tasks_left << " of " << total_tasks_ << " tasks not done";
  for (uint32_t i = 0; i < streams_.size(); ++i) describe_stream(os, *streams_[i], i);
  os << "; " << queued << " messages queued on its links\n";
  return tasks_left + queued;
}

void Gpu::describe_stream(std::ostream& os, const Stream& stream, uint32_t index) const {
  if (stream.sequence_index >= stream.sequences.size() ||
      stream.task_index >= stream.sequences[stream.sequence_index].tasks.size()) {
    return;
  }
  const hw::WorkSequence& sequence = stream.sequences[stream.sequence_index];
  const hw::Task& task = sequence.tasks[stream.task_index];
  os << ";" << (streams_.size() > 1 ? " stream " + std::to_string(index) : std::string()) << " at task "
     << stream.task_index << " (" << to_string(task.kind);
  if (task.phase < sequence.phase_names.size()) os << ", phase " << sequence.phase_names[task.phase];
  os << ")";
  if (stream.store_issuing) os << " its " << sequence.issue_sms << " SMs issuing a store";
  if (task.kind == hw::TaskKind::wait_counter) {
    const uint64_t have = task.counter < counters_.size() ? counters_[task.counter].arrivals : 0;
    os << " waiting for counter " << task.counter << ": " << have << " of " << task.count << " arrivals";
  }
  if (task.kind == hw::TaskKind::take_ready) {
    os << " " << stream.ready_done << " of " << task.count << " items taken";
    for (uint64_t k = 0, shown = 0; k < task.count && shown < 3; ++k) {
      const hw::Task& wait = sequence.tasks[stream.task_index + 1 + k * (1 + static_cast<size_t>(task.elements))];
      const uint64_t have = wait.counter < counters_.size() ? counters_[wait.counter].arrivals : 0;
      if (have >= wait.count) continue;
      os << (shown++ == 0 ? ", waiting: " : ", ") << "counter " << wait.counter << " " << have << " of " << wait.count;
    }
  }
}

}  // namespace nvsvp::model
