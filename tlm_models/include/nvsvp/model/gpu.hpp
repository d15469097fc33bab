// One GPU: a sparse functional memory, a work executor that runs the task sequences firmware
// hands it (send, read, local copy, wait on an arrival counter, compute), one link engine per
// NVLink that feeds the link's port, and the receive side of every link.
//
// Sends are spread over the links by address interleaving. Receives cost no simulation event:
// a message's data lands and its arrival counter records the tail-arrival time when the message
// is handed over; a wait completes at the time its N-th arrival lands.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <ostream>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/model/dynamic_source_queue.hpp"
#include "nvsvp/model/gpu_hub.hpp"
#include "nvsvp/model/gpu_memory.hpp"
#include "nvsvp/model/gpu_params.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/nvlink_target_socket.hpp"
#include "nvsvp/model/wake_scheduler.hpp"

namespace nvsvp::model {

struct GpuStats {
  uint64_t messages_sent = 0;
  uint64_t payload_bytes_sent = 0;
  uint64_t messages_received = 0;
  uint64_t payload_bytes_received = 0;
  uint64_t local_copies = 0;
  uint64_t tasks_done = 0;
  uint64_t multimem_errors = 0;  // multimem requests the switch refused (multimem_error responses)
  uint64_t dynamic_operations = 0;  // dynamic_store / dynamic_ld_reduce tasks issued
  uint64_t partials_received = 0;   // reduce_partial messages (a switch's full reduction buffer)
  uint64_t notifications_sent = 0;              // notify_tokens: tokens notified, over links or not
  uint64_t notification_messages_received = 0;  // of messages_received, those of notifications
  uint64_t notifications_received = 0;          // the notifications they carried
  sc_core::sc_time compute_time;
};

// One compute task's busy interval (for timelines).
struct ComputeSpan {
  hw::PhaseId phase = 0;
  uint32_t stream = 0;  // the executor stream (SM group) it ran on
  sc_core::sc_time start;
  sc_core::sc_time end;
};

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

struct PhaseTime {
  bool seen = false;
  sc_core::sc_time first_start;
  sc_core::sc_time last_end;
};

class Gpu : public sc_core::sc_module, private NvlinkReceiver {
 public:
  // Executor streams (SM groups) a GPU offers: the four groups of the study's persistent kernel
  // (dysharp.md §3: dispatch, GEMM-1, GEMM-2, combine).
  static constexpr uint32_t kExecutorStreams = 4;

  sc_core::sc_vector<sc_core::sc_port<NvlinkTxIf>> tx;  // one per link, towards the switch
  sc_core::sc_vector<NvlinkTargetSocket> rx;             // one per link, from the switch

  Gpu(const sc_core::sc_module_name& name, const GpuParams& params, const LinkParams& link,
      uint32_t gpu_id, uint32_t links, PayloadPool& pool);

  // Runs `sequence` after whatever was submitted before to its stream (`sequence.stream`); streams
  // run concurrently. The GPU keeps it until the end.
  void submit(hw::WorkSequence sequence);
  bool finished() const { return pc_ == total_tasks_; }
  const sc_core::sc_event& finished_event() const { return finished_event_; }
  sc_core::sc_time finish_time() const { return finish_time_; }

  uint32_t id() const { return id_; }
  uint32_t link_for(uint64_t address) const {
    return interleave_way(address, params_.interleave_bytes, static_cast<uint32_t>(tx.size()));
  }
  GpuMemory& memory() { return memory_; }
  const GpuMemory& memory() const { return memory_; }
  const GpuStats& stats() const { return stats_; }
  const std::vector<PhaseTime>& phase_times() const { return phase_times_; }
  const std::vector<ComputeSpan>& compute_spans() const { return compute_spans_; }
  const std::vector<std::string>& phase_names() const { return phase_names_; }
  uint64_t queued_messages() const;
  // Why this GPU has not finished: current task, counters, queued messages. Returns 0 if idle.
  uint64_t describe_outstanding(std::ostream& os) const;
  // Time of a compute task on this GPU; a GEMM without its own SM count runs on `group_sms`
  // (0: all the GPU's SMs).
  sc_core::sc_time compute_time(const hw::Task& task, uint32_t group_sms = 0) const;

  // Dynamic multimem: the runtime created and bound `binding`'s object; this GPU packs its blocks
  // at `local_base`. Throws HubError (or std::invalid_argument for experts per GPU that differ
  // from an earlier binding's).
  void install_dynamic_multicast(const hw::DynamicMulticastBinding& binding, uint64_t local_base);
  const GpuHub& hub() const { return hub_; }
  // Arrivals counter `index` has counted so far (0 for a counter never used).
  uint64_t counter_arrivals(uint32_t index) const { return index < counters_.size() ? counters_[index].arrivals : 0; }
  // When counter `index` counted its n-th arrival (1 <= n <= counter_arrivals(index)), ps.
  uint64_t counter_reached_ps(uint32_t index, uint64_t n) const {
    ArrivalCounter copy = counters_.at(index);
    return copy.nth_arrival_ps(n);
  }
  // The take_ready items this GPU ran: the counter each waited on and when its tasks issued.
  struct TakenItem {
    uint32_t counter;
    uint64_t at_ps;
  };
  const std::vector<TakenItem>& taken_items() const { return taken_items_; }
  const DynamicSourceQueue& source_queue() const { return source_queue_; }
  const CounterTableStats& table_stats(hw::CounterTable table) const {
    return tables_[static_cast<size_t>(table)];
  }

 private:
  // A message waiting for its link: a write or read the executor issued (everything launch
  // needs is copied here, so the task list is not touched again), or a prepared response.
  struct TxItem {
    tlm::tlm_generic_payload* payload = nullptr;  // prepared response, or nullptr
    Opcode opcode = Opcode::write;
    uint32_t peer = 0;
    uint32_t counter = 0;
    uint32_t wire_flits = 0;
    uint64_t source_address = 0;
    uint64_t target_address = 0;
    uint64_t bytes = 0;
    uint8_t reduce_op = 0;    // multimem_red / multimem_ld_reduce
    uint8_t reduce_type = 0;
    const hw::WriteElement* chunk = nullptr;  // a chunk's writes (elements of them), or nullptr
    uint32_t elements = 1;
    // Dynamic: the target list (remote targets first, then `issuer_targets` of this GPU's own).
    const uint16_t* targets = nullptr;
    const uint64_t* target_addresses = nullptr;  // explicit addressing
    uint16_t target_count = 0;
    uint16_t issuer_targets = 0;
    bool count_per_expert = false;
    bool notification = false;
    uint8_t stream = 0;  // the executor stream that issued a request
    sc_core::sc_time not_before;
  };
  // A link engine's queue: a ring buffer that doubles when full and is reused, where
  // std::deque would allocate a node per four TxItems.
  class TxQueue {
   public:
    bool empty() const { return size_ == 0; }
    const TxItem& front() const { return items_[head_]; }
    void push_back(const TxItem& item) {
      if (size_ == items_.size()) grow();
      items_[(head_ + size_) & (items_.size() - 1)] = item;
      ++size_;
    }
    void pop_front() {
      head_ = (head_ + 1) & (items_.size() - 1);
      --size_;
    }

   private:
    void grow();
    std::vector<TxItem> items_;  // a power of two of them
    size_t head_ = 0;
    size_t size_ = 0;
  };
  void check_chunk(const hw::WorkSequence& sequence, const hw::Task& task) const;
  // Dynamic multimem (docs/models/dynamic_multimem.md).
  void run_dynamic(const hw::WorkSequence& sequence, const hw::Task& task);
  bool is_local_expert(uint16_t expert) const {
    return dynamic_experts_per_gpu_ != 0 && expert / dynamic_experts_per_gpu_ == id_;
  }
  // A dynamic block for local `expert` landed at `at`: one arrival on `counter`, or on counter +
  // the expert's local index with per-expert counting.
  void count_dynamic_block(uint32_t counter, bool per_expert, uint16_t expert, const sc_core::sc_time& at) {
    record_arrival(per_expert ? counter + (expert - id_ * dynamic_experts_per_gpu_) : counter, at);
  }
  // A write landed at `address` at `at`: the counters the counter maps name for it count it.
  void count_landing(uint64_t address, const sc_core::sc_time& at) {
    if (!counter_maps_.empty()) count_mapped(address, at);
  }
  void count_mapped(uint64_t address, const sc_core::sc_time& at);
  // notify_tokens (hw/work.hpp).
  void run_notify(const hw::WorkSequence& sequence, const hw::Task& task);
  void take_counter_maps(hw::WorkSequence& sequence);
  // A wait on counter `index` completed: a table entry it held is given back.
  void release_entry(uint32_t index);
  // Where target `index` of a list lands in this GPU: the Hub's translation of `multimem_address`
  // for its expert, or its explicit address. A Hub miss sets `miss` (the access waits for memory).
  uint64_t target_location(uint64_t multimem_address, hw::MultimemStage stage, const uint16_t* targets,
                           const uint64_t* target_addresses, uint32_t index, uint32_t packets, bool& miss);
  // Adds this GPU's targets among targets[first, first + count) (their partials at the combine
  // object) into `sum` (`bytes` functional bytes); returns how many there were.
  uint32_t add_local_partials(uint64_t multimem_address, const uint16_t* targets, const uint64_t* target_addresses,
                              uint32_t first, uint32_t count, uint64_t read_bytes, uint8_t op, uint8_t type,
                              uint8_t* sum, size_t bytes, bool have_sum, bool& miss);
  TxItem request_item(const hw::WorkSequence& sequence, const hw::Task& task) const;
  struct LinkEngine {
    // Requests queue per executor stream (SM groups issue independently: one group's messages
    // stuck on credits do not hold up another's), responses in one more queue; served round
    // robin, the VC allocated at launch.
    TxQueue queues[kExecutorStreams + 1];
    uint64_t queued = 0;
    uint32_t next_queue = 0;
    uint64_t load_bytes_in_flight = 0;  // multimem loads sent whose results have not come back
  };
  static bool is_multimem_load(Opcode opcode) {
    return opcode == Opcode::multimem_ld_reduce || opcode == Opcode::dynamic_ld_reduce;
  }
  // A multimem load's result or refusal came back: its link engine may send more.
  void load_returned(const NvlinkExtension& ext);
  // Arrivals as runs of equal time (a chunk's writes land together): a wait for the n-th
  // arrival sorts the runs and counts through them. One cache line: an arrival reads only this
  // line (the time of the last run is kept here) and appends to the runs without reading them.
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

  void end_of_elaboration() override;
  void serve_link(uint32_t link);
  void enqueue(uint32_t link, TrafficClass traffic_class, const TxItem& item);
  void launch(uint32_t link, const TxItem& item, TrafficClass traffic_class, uint16_t vc);
  tlm::tlm_sync_enum nb_transport_fw(int link, tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& phase, sc_core::sc_time& delay) override;
  void record_arrival(uint32_t counter, const sc_core::sc_time& at, uint64_t arrivals = 1);
  // Counters are looked up per arrival: the bounds check stays inline, growing does not.
  ArrivalCounter& counter(uint32_t index) {
    return index < counters_.size() ? counters_[index] : grow_counters(index);
  }
  ArrivalCounter& grow_counters(uint32_t index);
  void mark_phase(hw::PhaseId phase, bool start);

  GpuParams params_;
  LinkParams link_params_;
  uint32_t id_;
  PayloadPool& pool_;
  sc_core::sc_time lookahead_;
  GpuMemory memory_;
  std::vector<LinkEngine> links_;
  // The bound interfaces, resolved once (sc_vector and sc_port indirections cost cache misses).
  std::vector<NvlinkPort*> tx_ports_;  // the ports `tx` is bound to
  std::vector<tlm::tlm_bw_transport_if<NvlinkProtocolTypes>*> rx_backward_;
  WakeScheduler link_scheduler_;  // serves the link engines (declared after them)

  // A take_ready item whose wait is satisfied, at the time it was.
  struct ReadyItem {
    uint64_t at_ps;
    uint64_t item;
    bool operator<(const ReadyItem& other) const {  // std::priority_queue: the earliest on top
      return at_ps != other.at_ps ? at_ps > other.at_ps : item > other.item;
    }
  };
  // One stream of the executor: its sequences run in order, task by task; streams run
  // concurrently (an SM group each). Every sequence ever submitted stays, so queued sends can
  // point at tasks.
  struct Stream {
    uint32_t index = 0;
    std::deque<hw::WorkSequence> sequences;
    size_t sequence_index = 0;
    size_t task_index = 0;
    bool task_started = false;
    bool compute_running = false;
    bool store_issuing = false;  // its SMs are still issuing the current store (issue_sms)
    bool waiting_on_counter = false;
    uint32_t waited_counter = 0;
    uint64_t waited_count = 0;
    bool taking_ready = false;  // in a take_ready task
    uint64_t ready_done = 0;
    uint64_t current_item = ~0ull;  // the item whose tasks run, or none
    size_t current_action = 0;
    std::priority_queue<ReadyItem> ready;
    sc_core::sc_event work_event;
  };
  // Runs a task that takes no executor time (a send, load, store, notification or local copy).
  void issue(const hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  // How long issuing `task` holds its stream: a store task (multimem_store / multimem_red /
  // dynamic_store / send) of a stream with issue_sms > 0 takes its payload bytes at issue_sms x
  // sm_store_gbps; anything else, or issue_sms = 0, takes no time.
  sc_core::sc_time store_issue_time(const hw::WorkSequence& sequence, const hw::Task& task) const;
  // Issues a task that takes no executor time except, for a store, its SMs' issue time (the
  // stream is re-triggered when it is over): true once the task is done, false while it holds
  // the stream (the caller returns; the next visit completes it).
  bool issue_held(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  // The take_ready task at the stream's position: false while items are left (the stream is
  // re-triggered), true once all ran and the stream stands after them.
  bool take_ready(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  // A compute or gemm task: its time starts (the stream is re-triggered when it is over), then
  // its kernel takes effect.
  void start_compute(Stream& stream, const hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);
  void finish_compute(Stream& stream, hw::WorkSequence& sequence, const hw::Task& task);
  Stream& stream(uint32_t index);
  void execute(Stream& stream);
  void describe_stream(std::ostream& os, const Stream& stream, uint32_t index) const;

  std::vector<std::unique_ptr<Stream>> streams_;
  uint64_t pc_ = 0;           // tasks finished over all streams
  uint64_t total_tasks_ = 0;  // tasks submitted over all streams
  uint64_t reported_finish_tasks_ = 0;
  sc_core::sc_event finished_event_;
  sc_core::sc_time finish_time_;

  GpuHub hub_;
  DynamicSourceQueue source_queue_;
  uint32_t dynamic_experts_per_gpu_ = 0;  // from the bound objects; 0: none bound
  sc_core::sc_time hub_miss_time_;
  // Partial sums a switch passed on (reduce_partial), by the load's return address, until the
  // result they belong to arrives.
  struct HeldPartial {
    uint8_t data[64];  // the functional bytes (functional_bytes is at most 64)
    size_t bytes = 0;
    uint32_t parts = 0;
  };
  std::unordered_map<uint64_t, HeldPartial> held_partials_;

  std::vector<ArrivalCounter> counters_;
  // Bit i: stream i waits in a wait_counter task (Stream::waiting_on_counter), so that an arrival
  // looks at the waiting streams only.
  uint32_t counter_waiters_ = 0;
  static_assert(kExecutorStreams <= 32, "counter_waiters_ holds one bit per stream");
  std::vector<TakenItem> taken_items_;
  std::vector<hw::CounterMap> counter_maps_;
  CounterTableStats tables_[hw::kCounterTables];
  sc_core::sc_time table_spill_time_;
  // The writes of the notification messages this GPU made (messages point into them until the
  // end of the run, as into a work sequence's element list).
  static constexpr size_t kNotificationBlock = 4096;
  std::deque<std::vector<hw::WriteElement>> notification_elements_;
  // run_notify's notifications by home GPU, kept between calls so their buffers are reused.
  std::vector<std::vector<hw::WriteElement>> notifications_by_home_;
  std::vector<PhaseTime> phase_times_;
  std::vector<ComputeSpan> compute_spans_;
  std::vector<std::string> phase_names_;
  uint64_t next_sequence_number_ = 0;
  GpuStats stats_;
};

}  // namespace nvsvp::model
