#include "nvsvp/model/gpu_executor.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "nvsvp/model/arrival_counters.hpp"
#include "nvsvp/model/dynamic_multimem_client.hpp"
#include "nvsvp/model/gpu_link_engines.hpp"
#include "nvsvp/model/gpu_memory.hpp"
#include "nvsvp/model/sim_time.hpp"
#include "nvsvp/model/task_timing.hpp"

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

bool is_compute(hw::TaskKind kind) { return kind == hw::TaskKind::compute || kind == hw::TaskKind::gemm; }

}  // namespace

GpuExecutor::GpuExecutor(const char* owner, const GpuParams& params, GpuMemory& memory, ArrivalCounters& counters,
                         GpuLinkEngines& links, DynamicMultimemClient& dynamic, GpuStats& stats,
                         const ComponentLog& log)
    : owner_(owner),
      params_(params),
      memory_(memory),
      counters_(counters),
      links_(links),
      dynamic_(dynamic),
      stats_(stats),
      log_(log) {
  for (uint32_t i = 0; i < kExecutorStreams; ++i) streams_[i].index = i;
}

GpuExecutor::Stream& GpuExecutor::stream(uint32_t index) {
  if (index >= streams_.size()) {
    const std::string message = "executor stream " + std::to_string(index) + " of a GPU with " +
                                std::to_string(streams_.size()) + " streams (SM groups)";
    SC_REPORT_FATAL(owner_, message.c_str());
  }
  return streams_[index];
}

void GpuExecutor::submit(hw::WorkSequence sequence) {
  total_tasks_ += sequence.tasks.size();
  if (sequence.phase_names.size() > phase_names_.size()) {
    phase_names_ = sequence.phase_names;
    phase_times_.resize(phase_names_.size());
  }
  if (sequence.sm_pool != 0 && sequence.sms == 0) {
    SC_REPORT_FATAL(owner_, "a sequence of an SM pool must name its group's SMs (sms > 0)");
  }
  counters_.declare(sequence);
  Stream& s = stream(sequence.stream);
  s.sequences.push_back(std::move(sequence));
  s.work_event.notify(SC_ZERO_TIME);
}

void GpuExecutor::mark_phase(hw::PhaseId phase, bool start) {
  if (phase >= phase_times_.size()) phase_times_.resize(phase + 1);
  PhaseTime& p = phase_times_[phase];
  const sc_time now = current_time();
  if (start && !p.seen) {
    p.seen = true;
    p.first_start = now;
  }
  if (!start) p.last_end = std::max(p.last_end, now);
}

sc_time GpuExecutor::compute_time(const hw::Task& task, uint32_t group_sms) const {
  const uint32_t wanted = task.sms != 0 ? task.sms : group_sms;
  const uint64_t sms = wanted == 0 ? params_.sms : std::min<uint64_t>(wanted, params_.sms);
  return task_time(task, static_cast<double>(sms));
}

sc_time GpuExecutor::task_time(const hw::Task& task, double sms) const {
  return picoseconds(static_cast<uint64_t>(std::llround(task_seconds(params_, task, sms) * 1e12)));
}

void GpuExecutor::execute(uint32_t index) {
  Stream& stream = streams_[index];
  const sc_time now = current_time();
  const bool was_computing = stream.compute.task != nullptr;
  run_stream(stream, now);
  if ((stream.compute.task != nullptr) == was_computing) return;
  const uint16_t pool = pool_of(stream);
  if (pool != 0) lend_sms(pool, now);  // its SMs are now lent, or taken back
}

void GpuExecutor::run_stream(Stream& stream, const sc_time& now) {
  while (stream.sequence_index < stream.sequences.size()) {
    hw::WorkSequence& sequence = stream.sequences[stream.sequence_index];
    if (stream.task_index >= sequence.tasks.size()) {
      ++stream.sequence_index;
      stream.task_index = 0;
      continue;
    }
    if (!advance(stream, sequence, now)) return;
  }
  if (finished() && reported_finish_tasks_ != total_tasks_) {
    reported_finish_tasks_ = total_tasks_;
    finish_time_ = now;
    finished_event_.notify(SC_ZERO_TIME);
  }
  sc_core::next_trigger(stream.work_event);
}

bool GpuExecutor::advance(Stream& stream, hw::WorkSequence& sequence, const sc_time& now) {
  const hw::Task& task = sequence.tasks[stream.task_index];
  switch (task.kind) {
    case hw::TaskKind::take_ready:
      return take_ready(stream, sequence, task, now);  // it moves the stream past its items
    case hw::TaskKind::wait_counter:
      if (!wait_counter(stream, task, now)) return false;
      break;
    case hw::TaskKind::send:
    case hw::TaskKind::read:
    case hw::TaskKind::multimem_ld_reduce:
    case hw::TaskKind::multimem_store:
    case hw::TaskKind::multimem_red:
    case hw::TaskKind::dynamic_store:
    case hw::TaskKind::dynamic_ld_reduce:
    case hw::TaskKind::notify_tokens:
    case hw::TaskKind::local_copy:
    case hw::TaskKind::compute:
    case hw::TaskKind::gemm:
      if (!run_action(stream, stream.state, sequence, task, now)) return false;
      break;
  }
  mark_phase(task.phase, false);
  NVSVP_LOG(log_, debug, "stream " << stream.index << ": " << to_string(task.kind) << " done (task "
                                   << stream.task_index << " of sequence " << stream.sequence_index << ")");
  stream.state = State::idle;
  ++stream.task_index;
  ++tasks_finished_;
  stats_.tasks_done++;
  return true;
}

bool GpuExecutor::run_action(Stream& stream, State& state, hw::WorkSequence& sequence, const hw::Task& task,
                             const sc_time& now) {
  switch (state) {
    case State::idle:
      break;
    case State::computing:
      if (now < stream.compute.end) {  // re-timed by SM lending since it began
        sc_core::next_trigger(stream.compute.end - now, stream.speed_event);
        return false;
      }
      state = State::idle;  // its time is over: its kernel takes effect
      finish_compute(stream, sequence, task, now);
      return true;
    case State::issuing_store:  // the SMs have issued the store
      state = State::idle;
      return true;
    case State::waiting_on_counter:
    case State::taking_ready:
      SC_REPORT_FATAL(owner_, "a task that issues or computes found its stream waiting");
      return false;
  }
  mark_phase(task.phase, true);
  NVSVP_LOG(log_, debug, "stream " << stream.index << ": " << to_string(task.kind) << " starts (task "
                                   << stream.task_index << " of sequence " << stream.sequence_index << ")");
  if (is_compute(task.kind)) {
    start_compute(stream, sequence, task, now);
    state = State::computing;
    return false;
  }
  issue(sequence, task, now);
  const sc_time hold = store_issue_time(sequence, task);
  if (hold == SC_ZERO_TIME) return true;
  state = State::issuing_store;
  sc_core::next_trigger(hold);
  return false;
}

void GpuExecutor::start_compute(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task,
                                const sc_time& now) {
  Stream::Compute& c = stream.compute;
  c.task = &task;
  c.start = c.since = now;
  c.left = 1.0;
  const uint16_t pool = pool_of(stream);
  const bool lending = pool != 0 && borrows(stream, pool);
  c.sms = lending ? pool_sms(stream, pool) : 0.0;
  c.full = lending ? task_time(task, c.sms) : compute_time(task, sequence.sms);
  c.end = now + c.full;
  c.span = Stream::kNoSpan;
  if (c.full != SC_ZERO_TIME) {
    c.span = compute_spans_.size();
    const bool delay_only = task.kind == hw::TaskKind::compute && task.flops == 0.0 && task.memory_bytes == 0;
    compute_spans_.push_back(ComputeSpan{task.phase, sequence.stream, now, c.end, delay_only});
  }
  if (lending) {
    sc_core::next_trigger(c.full, stream.speed_event);
  } else {
    sc_core::next_trigger(c.full);
  }
}

void GpuExecutor::finish_compute(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task, const sc_time& now) {
  stats_.compute_time += now - stream.compute.start;
  stream.compute.task = nullptr;
  if (task.kernel != hw::Task::kNoKernel) sequence.kernels.at(task.kernel)(memory_);
}

uint16_t GpuExecutor::pool_of(const Stream& stream) const {
  if (stream.sequences.empty()) return 0;
  return stream.sequences[std::min(stream.sequence_index, stream.sequences.size() - 1)].sm_pool;
}

bool GpuExecutor::borrows(const Stream& stream, uint16_t pool) const {
  const hw::Task* task = stream.compute.task;
  return task != nullptr && task->kind == hw::TaskKind::gemm && task->persistent && task->sms == 0 &&
         pool_of(stream) == pool;
}

double GpuExecutor::pool_sms(const Stream& stream, uint16_t pool) const {
  auto group = [](const Stream& s) {
    return static_cast<double>(s.sequences[std::min(s.sequence_index, s.sequences.size() - 1)].sms);
  };
  double idle = 0.0;
  double borrowing = 0.0;
  for (const Stream& s : streams_) {
    if (pool_of(s) != pool) continue;
    if (s.compute.task == nullptr) idle += group(s);
    if (borrows(s, pool)) borrowing += group(s);
  }
  const double own = group(stream);
  return std::min(own + idle * own / borrowing, static_cast<double>(params_.sms));
}

// A borrowing GEMM has done the fraction of its work its time at the old SMs says; the rest takes
// its share of its time at the new ones.
void GpuExecutor::lend_sms(uint16_t pool, const sc_time& now) {
  for (Stream& s : streams_) {
    if (!borrows(s, pool)) continue;
    Stream::Compute& c = s.compute;
    const double sms = pool_sms(s, pool);
    if (sms == c.sms) continue;
    if (c.full != SC_ZERO_TIME) {
      const double done = static_cast<double>((now - c.since).value()) / static_cast<double>(c.full.value());
      c.left = std::max(0.0, c.left - done);
    }
    c.sms = sms;
    c.since = now;
    c.full = task_time(*c.task, sms);
    c.end = now + picoseconds(static_cast<uint64_t>(std::llround(c.left * static_cast<double>(c.full.value()))));
    if (c.span != Stream::kNoSpan) compute_spans_[c.span].end = c.end;
    s.speed_event.notify(SC_ZERO_TIME);
  }
}

sc_time GpuExecutor::store_issue_time(const hw::WorkSequence& sequence, const hw::Task& task) const {
  if (sequence.issue_sms == 0) return SC_ZERO_TIME;
  uint64_t bytes = 0;
  switch (task.kind) {
    case hw::TaskKind::send:
    case hw::TaskKind::local_copy:  // the same SMs store into local memory (a DeepEP sender's own rank)
      bytes = task.chunk_writes > 0 ? task.bytes * task.chunk_writes : task.bytes;  // a chunk: all its writes
      break;
    case hw::TaskKind::multimem_store:
    case hw::TaskKind::multimem_red:
    case hw::TaskKind::dynamic_store:  // one token, whatever its targets: the switch replicates it
      bytes = task.bytes;
      break;
    default:
      return SC_ZERO_TIME;
  }
  // GB/s = bytes/ns.
  const double ns = static_cast<double>(bytes) / (static_cast<double>(sequence.issue_sms) * params_.sm_store_gbps);
  return picoseconds(static_cast<uint64_t>(std::llround(ns * 1000.0)));
}

void GpuExecutor::issue(const hw::WorkSequence& sequence, const hw::Task& task, const sc_time& now) {
  switch (task.kind) {
    case hw::TaskKind::send: {
      if (task.chunk_writes > 0) check_chunk(sequence, task);
      NVSVP_LOG(log_, debug, "send to GPU " << task.peer << ": " << std::max<uint32_t>(task.chunk_writes, 1u)
                                            << " write(s) of " << task.bytes << " bytes, counter " << task.counter);
      links_.enqueue_send(sequence, task);
      break;
    }
    case hw::TaskKind::read:
      links_.enqueue_read(sequence, task);
      break;
    case hw::TaskKind::multimem_ld_reduce:
    case hw::TaskKind::multimem_store:
    case hw::TaskKind::multimem_red: links_.enqueue_multimem(sequence, task); break;
    case hw::TaskKind::dynamic_store:
    case hw::TaskKind::dynamic_ld_reduce:
      dynamic_.run_dynamic(sequence, task);
      break;
    case hw::TaskKind::notify_tokens:
      dynamic_.run_notify(sequence, task);
      break;
    case hw::TaskKind::local_copy: {
      if (task.chunk_writes == 0) {
        local_copy(task.source_address, task.target_address, task.bytes, task.counter, now);
        break;
      }
      check_chunk(sequence, task);
      for (uint32_t i = task.first_write; i < task.first_write + task.chunk_writes; ++i) {
        local_copy(sequence.elements[i].source_address, sequence.elements[i].target_address, task.bytes, task.counter, now);
      }
      break;
    }
    default:
      SC_REPORT_FATAL(owner_,
                      (std::string("task kind ") + to_string(task.kind) + " is not one that issues at once").c_str());
  }
}

void GpuExecutor::local_copy(uint64_t source, uint64_t target, uint64_t bytes, uint32_t counter, const sc_time& now) {
  uint8_t data[PayloadPool::kMaxFunctionalBytes];
  const size_t n = static_cast<size_t>(std::min<uint64_t>(bytes, params_.functional_bytes));
  memory_.read(source, data, n);
  memory_.write(target, data, n);
  counters_.count_landing(target, now);
  counters_.record_arrival(counter, now);
  if (bytes > 0) stats_.local_copies++;  // 0 bytes: a signal between streams
}

// A chunk's writes must lie in the sequence's element list and their functional bytes fit one
// payload. Firmware builds chunks, so a malformed one is a firmware bug.
void GpuExecutor::check_chunk(const hw::WorkSequence& sequence, const hw::Task& task) const {
  const uint64_t end = static_cast<uint64_t>(task.first_write) + task.chunk_writes;
  if (end <= sequence.elements.size() &&
      static_cast<uint64_t>(task.chunk_writes) * params_.functional_bytes <= PayloadPool::kMaxFunctionalBytes) {
    return;
  }
  std::ostringstream msg;
  msg << "malformed chunk: elements " << task.first_write << " to " << end << " of a list of "
      << sequence.elements.size() << ", at most " << PayloadPool::kMaxFunctionalBytes
      << " functional bytes in one message";
  SC_REPORT_FATAL(owner_, msg.str().c_str());
}

bool GpuExecutor::wait_counter(Stream& stream, const hw::Task& task, const sc_time& now) {
  stream.state = State::waiting_on_counter;
  ArrivalCounter& c = counters_.counter(task.counter);
  if (c.arrivals < task.arrivals) {
    counters_.wait(stream.index, task.counter, task.arrivals);
    sc_core::next_trigger(stream.work_event);
    return false;
  }
  counters_.stop_waiting(stream.index);
  // The N-th arrival in time order completes the wait.
  if (task.arrivals > 0) {
    const sc_time at = picoseconds(c.nth_arrival_ps(task.arrivals));
    if (at > now) {
      sc_core::next_trigger(at - now);
      return false;
    }
  }
  counters_.release_entry(task.counter);
  return true;
}

bool GpuExecutor::take_ready(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task, const sc_time& now) {
  if (stream.state == State::idle) register_items(stream, sequence, task, now);
  if (!run_ready_items(stream, sequence, task, now)) return false;
  stream.state = State::idle;
  stream.task_index += 1 + task.items * (1 + static_cast<size_t>(task.tasks_per_item));
  ++tasks_finished_;
  stats_.tasks_done++;
  return true;
}

// Every item's wait registers: a satisfied one is ready now, the others when their counter gets
// there (ArrivalCounters::record_arrival).
void GpuExecutor::register_items(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task,
                                 const sc_time& now) {
  const size_t per_item = 1 + static_cast<size_t>(task.tasks_per_item);
  const size_t first = stream.task_index + 1;
  if (first + task.items * per_item > sequence.tasks.size()) {
    SC_REPORT_FATAL(owner_, "take_ready: its items run past the end of the sequence");
  }
  for (uint64_t k = 0; k < task.items; ++k) {
    const hw::Task& wait = sequence.tasks[first + k * per_item];
    bool well_formed = wait.kind == hw::TaskKind::wait_counter;
    for (size_t a = 1; a < per_item && well_formed; ++a) {
      const hw::TaskKind kind = sequence.tasks[first + k * per_item + a].kind;
      well_formed = kind != hw::TaskKind::wait_counter && kind != hw::TaskKind::take_ready;
    }
    if (!well_formed) {
      SC_REPORT_FATAL(owner_, "take_ready: an item must be a wait_counter and tasks that issue or compute");
    }
    counters_.register_item(stream.index, k, wait.counter, wait.arrivals, now);
  }
  stream.state = State::taking_ready;
  stream.take.items_done = 0;
}

// One item at a time: its tasks in order (a compute task holds the stream for its time), then the
// earliest ready one.
bool GpuExecutor::run_ready_items(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task,
                                  const sc_time& now) {
  const size_t per_item = 1 + static_cast<size_t>(task.tasks_per_item);
  const size_t first = stream.task_index + 1;
  Stream::TakeReady& take = stream.take;
  ReadyItems& ready = counters_.ready_items(stream.index);
  while (take.items_done < task.items) {
    if (take.current_item == kNoItem) {
      if (ready.empty() || ready.top().at_ps > now.value()) break;
      take.current_item = ready.top().item;
      take.current_action = 1;
      ready.pop();
      const hw::Task& wait = sequence.tasks[first + take.current_item * per_item];
      taken_items_.push_back(TakenItem{wait.counter, now.value()});
      counters_.release_entry(wait.counter);
      mark_phase(wait.phase, false);
    }
    while (take.current_action < per_item) {
      const hw::Task& action = sequence.tasks[first + take.current_item * per_item + take.current_action];
      if (!run_action(stream, take.action_state, sequence, action, now)) return false;
      mark_phase(action.phase, false);
      ++take.current_action;
    }
    tasks_finished_ += per_item;
    stats_.tasks_done += per_item;
    ++take.items_done;
    take.current_item = kNoItem;
  }
  if (take.items_done == task.items) return true;
  if (ready.empty()) {
    sc_core::next_trigger(stream.work_event);
  } else {
    sc_core::next_trigger(picoseconds(ready.top().at_ps) - now, stream.work_event);
  }
  return false;
}

void GpuExecutor::describe_streams(std::ostream& os) const {
  for (const Stream& s : streams_) describe_stream(os, s);
}

void GpuExecutor::describe_stream(std::ostream& os, const Stream& stream) const {
  if (stream.sequence_index >= stream.sequences.size() ||
      stream.task_index >= stream.sequences[stream.sequence_index].tasks.size()) {
    return;
  }
  const hw::WorkSequence& sequence = stream.sequences[stream.sequence_index];
  const hw::Task& task = sequence.tasks[stream.task_index];
  os << ";" << (kExecutorStreams > 1 ? " stream " + std::to_string(stream.index) : std::string()) << " at task "
     << stream.task_index << " (" << to_string(task.kind);
  if (task.phase < sequence.phase_names.size()) os << ", phase " << sequence.phase_names[task.phase];
  os << ")";
  if (stream.state == State::issuing_store ||
      (stream.state == State::taking_ready && stream.take.action_state == State::issuing_store)) {
    os << " its " << sequence.issue_sms << " SMs issuing a store";
  }
  if (task.kind == hw::TaskKind::wait_counter) {
    os << " waiting for counter " << task.counter << ": " << counters_.arrivals(task.counter) << " of " << task.arrivals
       << " arrivals";
  }
  if (task.kind == hw::TaskKind::take_ready) {
    os << " " << stream.take.items_done << " of " << task.items << " items taken";
    for (uint64_t k = 0, shown = 0; k < task.items && shown < 3; ++k) {
      const hw::Task& wait = sequence.tasks[stream.task_index + 1 + k * (1 + static_cast<size_t>(task.tasks_per_item))];
      const uint64_t have = counters_.arrivals(wait.counter);
      if (have >= wait.arrivals) continue;
      os << (shown++ == 0 ? ", waiting: " : ", ") << "counter " << wait.counter << " " << have << " of " << wait.arrivals;
    }
  }
}

}  // namespace nvsvp::model
