// A GPU's work executor: the task sequences firmware hands it (send, read, local copy, multimem and
// dynamic stores and loads, notifications, waits on arrival counters, take_ready, compute), run per
// stream. A stream is an SM group: its sequences run in order, task by task, and streams run
// concurrently, each in a method process the GPU owns, whose body is execute. Tasks that issue
// hand their messages to the link engines, or to the dynamic-multimem client; waits register with
// the arrival counters, which wake the stream.
//
// Each stream's progress through its current task is an explicit state (Stream::State): a store
// whose SMs still issue it, a compute whose time runs, a wait registered on a counter, a take_ready
// whose items run in the order they become ready. A visit of the stream's process moves the task
// on from its state.
//
// Streams of an SM pool (WorkSequence::sm_pool) lend each other their SMs: a persistent GEMM runs
// on its group's SMs plus those of the pool's members that compute nothing at that moment. Its
// work is a fraction done at the SMs it had; whenever a member starts or stops computing, the
// pool's running GEMMs are re-timed from the fraction left (no clock, no process per tile).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <ostream>
#include <string>
#include <vector>

#include <systemc>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/arrival_counters.hpp"
#include "nvsvp/model/component_log.hpp"
#include "nvsvp/model/gpu_params.hpp"
#include "nvsvp/model/gpu_stats.hpp"

namespace nvsvp::model {

class DynamicMultimemClient;
class GpuLinkEngines;
class GpuMemory;

// One compute task's busy interval (for timelines).
struct ComputeSpan {
  hw::PhaseId phase = 0;
  uint32_t stream = 0;  // the executor stream (SM group) it ran on
  sc_core::sc_time start;
  sc_core::sc_time end;
  // A delay task (Task::delay: no arithmetic, no memory traffic), a fixed software cost such as
  // a barrier or a kernel boundary rather than compute; the time breakdown leaves it out.
  bool delay_only = false;
};

struct PhaseTime {
  bool seen = false;
  sc_core::sc_time first_start;
  sc_core::sc_time last_end;
};

// A take_ready item a stream ran: the counter it waited on and when its tasks issued.
struct TakenItem {
  uint32_t counter;
  uint64_t at_ps;
};

class GpuExecutor {
 public:
  // `owner` names the GPU in reports; `log` is the GPU's.
  GpuExecutor(const char* owner, const GpuParams& params, GpuMemory& memory, ArrivalCounters& counters,
              GpuLinkEngines& links, DynamicMultimemClient& dynamic, GpuStats& stats, const ComponentLog& log);
  GpuExecutor(const GpuExecutor&) = delete;
  GpuExecutor& operator=(const GpuExecutor&) = delete;

  // What wakes stream `index`: its process is sensitive to it.
  sc_core::sc_event& work_event(uint32_t index) { return streams_[index].work_event; }
  // Runs `sequence` after whatever was submitted before to its stream (`sequence.stream`).
  void submit(hw::WorkSequence sequence);
  // Stream `index`'s process: moves its tasks on as far as they go now, then sets what resumes it.
  void execute(uint32_t index);

  bool finished() const { return tasks_finished_ == total_tasks_; }
  uint64_t total_tasks() const { return total_tasks_; }
  uint64_t tasks_left() const { return total_tasks_ - tasks_finished_; }
  const sc_core::sc_event& finished_event() const { return finished_event_; }
  sc_core::sc_time finish_time() const { return finish_time_; }
  // Time of a compute task; a GEMM without its own SM count runs on `group_sms` (0: all SMs).
  sc_core::sc_time compute_time(const hw::Task& task, uint32_t group_sms = 0) const;

  const std::vector<PhaseTime>& phase_times() const { return phase_times_; }
  const std::vector<ComputeSpan>& compute_spans() const { return compute_spans_; }
  const std::vector<std::string>& phase_names() const { return phase_names_; }
  const std::vector<TakenItem>& taken_items() const { return taken_items_; }
  // Where each stream that has not finished stands (for a stuck run's report).
  void describe_streams(std::ostream& os) const;

 private:
  struct Stream {
    // The progress of the stream's current task.
    enum class State : uint8_t {
      idle,                // the task has not begun
      issuing_store,       // a store is on its link; the stream's SMs issue it until a timed wake
      computing,           // a compute or gemm task's time runs until a timed wake, then its kernel
      waiting_on_counter,  // a wait_counter: registered with the counters until its count is there,
                           // then until the time the count-th arrival landed
      taking_ready,        // a take_ready: its items registered (`take` says how far they are)
    };
    // A take_ready task's items: the current one's tasks run in order, then the earliest ready.
    struct TakeReady {
      uint64_t items_done = 0;
      uint64_t current_item = ArrivalCounter::kNoItem;  // the item whose tasks run, or none
      size_t current_action = 0;      // of its tasks (0 is its wait)
      State action_state = State::idle;  // that task's progress: idle, issuing_store or computing
    };
    // The compute task in progress: its time, which an SM pool's lending may change while it runs.
    struct Compute {
      const hw::Task* task = nullptr;  // none: the stream computes nothing
      sc_core::sc_time start;
      sc_core::sc_time since;     // when it got its present SMs
      sc_core::sc_time full;      // its whole time at those SMs
      sc_core::sc_time end;       // when it ends at them
      double left = 1.0;          // the fraction of its work left at `since`
      double sms = 0.0;           // the SMs it runs on (persistent GEMMs of a pool; else unused)
      size_t span = kNoSpan;      // its compute_spans_ entry
    };
    static constexpr size_t kNoSpan = ~size_t{0};
    uint32_t index = 0;
    // Every sequence ever submitted stays, so queued sends can point into them.
    std::deque<hw::WorkSequence> sequences;
    size_t sequence_index = 0;
    size_t task_index = 0;
    State state = State::idle;
    TakeReady take;
    Compute compute;
    sc_core::sc_event work_event;
    sc_core::sc_event speed_event;  // its compute task was re-timed (SM lending)
  };
  using State = Stream::State;
  static constexpr uint64_t kNoItem = ArrivalCounter::kNoItem;

  Stream& stream(uint32_t index);
  // Moves the stream's current task on: true once the stream stands after it, false while the
  // task holds the stream (what resumes it is set).
  bool advance(Stream& stream, hw::WorkSequence& sequence, const sc_core::sc_time& now);
  // A task that issues or computes, from where `state` says it stands (idle, issuing_store or
  // computing): true once it is done (`state` idle again), false while it holds the stream.
  bool run_action(Stream& stream, State& state, hw::WorkSequence& sequence, const hw::Task& task,
                  const sc_core::sc_time& now);
  // Runs a task that takes no executor time (a send, load, store, notification or local copy).
  void issue(const hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  // How long issuing `task` holds its stream: a store task (multimem_store / multimem_red /
  // dynamic_store / send) of a stream with issue_sms > 0 takes its payload bytes at issue_sms x
  // sm_store_gbps; anything else, or issue_sms = 0, takes no time.
  sc_core::sc_time store_issue_time(const hw::WorkSequence& sequence, const hw::Task& task) const;
  void start_compute(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task,
                     const sc_core::sc_time& now);
  void finish_compute(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  // A compute task's time on `sms` SMs (a GEMM's; other tasks ignore it).
  sc_core::sc_time task_time(const hw::Task& task, double sms) const;
  // The SM pool the stream's current (or last) sequence belongs to, 0 for none.
  uint16_t pool_of(const Stream& stream) const;
  // Whether the stream's compute task is a persistent GEMM of pool `pool` that borrows idle SMs.
  bool borrows(const Stream& stream, uint16_t pool) const;
  // The SMs a borrowing stream of `pool` runs on now: its group's, and its share (in proportion to
  // the borrowers' groups) of the groups that compute nothing.
  double pool_sms(const Stream& stream, uint16_t pool) const;
  // A member of `pool` started or stopped computing: re-times the pool's borrowing GEMMs.
  void lend_sms(uint16_t pool, const sc_core::sc_time& now);
  // The body of execute: moves the stream's tasks on as far as they go now.
  void run_stream(Stream& stream, const sc_core::sc_time& now);
  bool wait_counter(Stream& stream, const hw::Task& task, const sc_core::sc_time& now);
  // The take_ready task at the stream's position: false while items are left, true once all ran
  // and the stream stands after them.
  bool take_ready(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  void register_items(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task,
                      const sc_core::sc_time& now);
  // Runs ready items one at a time: true once all `task.items` ran.
  bool run_ready_items(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  void check_chunk(const hw::WorkSequence& sequence, const hw::Task& task) const;
  // One copy within local memory (a local_copy task, or one write of a local chunk).
  void local_copy(uint64_t source, uint64_t target, uint64_t bytes, uint32_t counter, const sc_core::sc_time& now);
  void mark_phase(hw::PhaseId phase, bool start);
  void describe_stream(std::ostream& os, const Stream& stream) const;

  const char* owner_;
  GpuParams params_;
  GpuMemory& memory_;
  ArrivalCounters& counters_;
  GpuLinkEngines& links_;
  DynamicMultimemClient& dynamic_;
  GpuStats& stats_;
  const ComponentLog& log_;
  std::array<Stream, kExecutorStreams> streams_;
  uint64_t tasks_finished_ = 0;  // over all streams
  uint64_t total_tasks_ = 0;  // tasks submitted over all streams
  uint64_t reported_finish_tasks_ = 0;
  sc_core::sc_event finished_event_;
  sc_core::sc_time finish_time_;
  std::vector<TakenItem> taken_items_;
  std::vector<PhaseTime> phase_times_;
  std::vector<ComputeSpan> compute_spans_;
  std::vector<std::string> phase_names_;
};

}  // namespace nvsvp::model
