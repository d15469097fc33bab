#include "nvsvp/model/gpu.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

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
    case hw::TaskKind::multimem_store: return "multimem_store";
    case hw::TaskKind::multimem_red: return "multimem_red";
    case hw::TaskKind::multimem_ld_reduce: return "multimem_ld_reduce";
  }
  return "?";
}

constexpr uint32_t kMaxCounters = 1u << 20;

// Firmware names reductions with hw::Multimem{Op,Type}; the values are the reduction unit's.
static_assert(static_cast<int>(hw::MultimemOp::bit_xor) == static_cast<int>(reduction::ReduceOp::bit_xor));
static_assert(static_cast<int>(hw::MultimemOp::max) == static_cast<int>(reduction::ReduceOp::max));
static_assert(static_cast<int>(hw::MultimemType::bf16) == static_cast<int>(reduction::ReduceType::bf16));
static_assert(static_cast<int>(hw::MultimemType::u64) == static_cast<int>(reduction::ReduceType::u64));

// A multimem_red copy lands: every 16-byte beat of `bytes` at `address` becomes the reduction of
// the memory's value and the operand, with the reduction unit's arithmetic (bit-exact with the
// switch's), so that red and ld_reduce agree on rounding.
void combine_into_memory(GpuMemory& memory, uint64_t address, const uint8_t* operand, size_t bytes,
                         reduction::ReduceOp op, reduction::ReduceType type) {
  for (size_t offset = 0; offset < bytes; offset += 16) {
    const size_t n = std::min<size_t>(16, bytes - offset);
    reduction::Beat current{};
    reduction::Beat addend{};
    memory.read(address + offset, current.data(), n);
    std::copy(operand + offset, operand + offset + n, addend.begin());
    const reduction::Beat result =
        reduction::finish(type, reduction::combine(op, type, reduction::widen(type, current), addend));
    memory.write(address + offset, result.data(), n);
  }
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
      link_scheduler_("link_engines", links, [this](uint32_t engine) { serve_link(engine); }) {
  if (params.functional_bytes > PayloadPool::kMaxFunctionalBytes) {
    SC_REPORT_FATAL(this->name(), "functional_bytes exceeds what a payload carries");
  }
  for (uint32_t l = 0; l < links; ++l) {
    rx[l].register_nb_transport_fw(this, &Gpu::nb_transport_fw, static_cast<int>(l));
  }
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.dont_initialize();
  options.set_sensitivity(&work_event_);
  sc_core::sc_spawn([this] { execute(); }, "executor", &options);
}

void Gpu::submit(hw::WorkSequence sequence) {
  total_tasks_ += sequence.tasks.size();
  if (sequence.phase_names.size() > phase_names_.size()) {
    phase_names_ = sequence.phase_names;
    phase_times_.resize(phase_names_.size());
  }
  if (sequence.counters > counters_.size()) counters_.resize(sequence.counters);
  sequences_.push_back(std::move(sequence));
  work_event_.notify(SC_ZERO_TIME);
}

Gpu::ArrivalCounter& Gpu::counter(uint32_t index) {
  if (index >= counters_.size()) {
    if (index >= kMaxCounters) SC_REPORT_FATAL(name(), "arrival counter index out of range");
    counters_.resize(index + 1);
  }
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

sc_time Gpu::compute_time(const hw::Task& task) const {
  const double peak =
      (task.precision == hw::Precision::fp8 ? params_.fp8_tflops : params_.bf16_tflops) * 1e12;
  const double math_s = task.flops / (peak * params_.gemm_efficiency);
  const double memory_s = static_cast<double>(task.bytes) / (params_.hbm_gbps * 1e9);
  const double seconds = std::max(math_s, memory_s) + task.duration_ns * 1e-9;
  return picoseconds(static_cast<uint64_t>(std::llround(seconds * 1e12)));
}

void Gpu::execute() {
  const sc_time now = current_time();
  while (sequence_index_ < sequences_.size()) {
    hw::WorkSequence& sequence = sequences_[sequence_index_];
    if (task_index_ >= sequence.tasks.size()) {
      ++sequence_index_;
      task_index_ = 0;
      continue;
    }
    const hw::Task& task = sequence.tasks[task_index_];
    if (!task_started_) {
      task_started_ = true;
      mark_phase(task.phase, true);
    }
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
      case hw::TaskKind::local_copy: {
        uint8_t data[PayloadPool::kMaxFunctionalBytes];
        const size_t n = static_cast<size_t>(std::min<uint64_t>(task.bytes, params_.functional_bytes));
        memory_.read(task.source_address, data, n);
        memory_.write(task.target_address, data, n);
        record_arrival(task.counter, now);
        stats_.local_copies++;
        break;
      }
      case hw::TaskKind::wait_counter: {
        ArrivalCounter& c = counter(task.counter);
        if (c.arrivals < task.count) {
          waiting_on_counter_ = true;
          waited_counter_ = task.counter;
          waited_count_ = task.count;
          sc_core::next_trigger(work_event_);
          return;
        }
        waiting_on_counter_ = false;
        // The N-th arrival in time order completes the wait.
        if (task.count > 0) {
          const sc_time at = picoseconds(c.nth_arrival_ps(task.count));
          if (at > now) {
            sc_core::next_trigger(at - now);
            return;
          }
        }
        break;
      }
      case hw::TaskKind::compute:
        // First visit: the work takes its time; second visit: its kernel takes effect.
        if (!compute_running_) {
          compute_running_ = true;
          const sc_time duration = compute_time(task);
          stats_.compute_time += duration;
          sc_core::next_trigger(duration);
          return;
        }
        compute_running_ = false;
        if (task.kernel != hw::Task::kNoKernel) sequence.kernels.at(task.kernel)(memory_);
        break;
    }
    mark_phase(task.phase, false);
    task_started_ = false;
    ++task_index_;
    ++pc_;
    stats_.tasks_done++;
  }
  if (finished() && reported_finish_tasks_ != total_tasks_) {
    reported_finish_tasks_ = total_tasks_;
    finish_time_ = now;
    finished_event_.notify(SC_ZERO_TIME);
  }
  sc_core::next_trigger(work_event_);
}

uint64_t Gpu::ArrivalCounter::nth_arrival_ps(uint64_t n) {
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.at_ps < b.at_ps; });
  uint64_t seen = 0;
  for (const Run& run : runs) {
    seen += run.arrivals;
    if (seen >= n) return run.at_ps;
  }
  return runs.back().at_ps;  // n > arrivals: callers check first
}

void Gpu::record_arrival(uint32_t index, const sc_time& at, uint64_t arrivals) {
  ArrivalCounter& c = counter(index);
  c.add(at.value(), arrivals);
  if (waiting_on_counter_ && index == waited_counter_ && c.arrivals >= waited_count_) {
    waiting_on_counter_ = false;
    work_event_.notify(SC_ZERO_TIME);
  }
}

void Gpu::end_of_elaboration() {
  for (uint32_t l = 0; l < links_.size(); ++l) {
    tx_ports_.push_back(tx[l].operator->());
    rx_backward_.push_back(rx[l].operator->());
    tx_ports_[l]->set_sender(&link_scheduler_, l);
  }
}

void Gpu::enqueue(uint32_t link, TrafficClass traffic_class, const TxItem& item) {
  LinkEngine& engine = links_[link];
  engine.queues[static_cast<size_t>(traffic_class)].push_back(item);
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

Gpu::TxItem Gpu::request_item(const hw::WorkSequence& sequence, const hw::Task& task) const {
  TxItem item;
  switch (task.kind) {
    case hw::TaskKind::read: item.opcode = Opcode::read; break;
    case hw::TaskKind::multimem_store: item.opcode = Opcode::multimem_store; break;
    case hw::TaskKind::multimem_red: item.opcode = Opcode::multimem_red; break;
    case hw::TaskKind::multimem_ld_reduce: item.opcode = Opcode::multimem_ld_reduce; break;
    default: item.opcode = Opcode::write; break;
  }
  // A multimem request names the switch, not a GPU; the issuer puts itself as the peer.
  const bool multimem = item.opcode == Opcode::multimem_store || item.opcode == Opcode::multimem_red ||
                        item.opcode == Opcode::multimem_ld_reduce;
  item.peer = multimem ? id_ : task.peer;
  item.counter = task.counter;
  item.bytes = task.bytes;
  item.reduce_op = static_cast<uint8_t>(task.reduce_op);
  item.reduce_type = static_cast<uint8_t>(task.reduce_type);
  // Wire sizes as for plain writes and reads: a load carries no payload on the way out.
  const bool load = item.opcode == Opcode::read || item.opcode == Opcode::multimem_ld_reduce;
  item.wire_flits = link_params_.wire_flits(load ? 0 : task.bytes);
  if (task.elements == 0) {
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
  NvlinkTxIf* port = tx_ports_[link];
  const sc_time now = current_time();
  while (engine.queued > 0) {
    const sc_time free_at = port->busy_until();
    if (free_at > now + lookahead_) {
      link_scheduler_.wake_at(link, free_at - lookahead_);
      return;
    }
    sc_time next_ready = never();
    bool launched = false;
    for (uint32_t i = 0; i < kTrafficClasses && !launched; ++i) {
      const uint32_t q = (engine.next_queue + i) % kTrafficClasses;
      std::deque<TxItem>& queue = engine.queues[q];
      if (queue.empty()) continue;
      const TxItem& item = queue.front();
      if (item.not_before > now) {
        next_ready = std::min(next_ready, item.not_before);
        continue;
      }
      const auto traffic_class = static_cast<TrafficClass>(q);
      const int vc = port->allocate_vc(traffic_class, item.wire_flits);
      if (vc < 0) {
        port->wait_for_credits(traffic_class);
        continue;
      }
      const TxItem committed = item;
      queue.pop_front();
      engine.queued--;
      engine.next_queue = (q + 1) % kTrafficClasses;
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
    if (item.opcode != Opcode::read && item.opcode != Opcode::multimem_ld_reduce) {
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
  }
  NvlinkExtension& ext = extension_of(*payload);
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
  stats_.messages_received++;
  stats_.payload_bytes_received += ext.payload_bytes;
  switch (ext.opcode) {
    case Opcode::write:
      if (ext.element_list != nullptr) {
        const auto n = static_cast<size_t>(std::min<uint64_t>(ext.payload_bytes / ext.elements, params_.functional_bytes));
        for (uint32_t i = 0; i < ext.elements; ++i) {
          memory_.write(ext.element_list[i].target_address, payload.get_data_ptr() + i * params_.functional_bytes, n);
        }
        record_arrival(ext.counter, arrival, ext.elements);
        break;
      }
      [[fallthrough]];
    case Opcode::read_response:
      memory_.write(ext.target_address, payload.get_data_ptr(), payload.get_data_length());
      record_arrival(ext.counter, arrival);
      break;
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
    case Opcode::multimem_ld_reduce: {
      std::ostringstream msg;
      msg << to_string(ext.opcode) << " from GPU " << ext.source_gpu << "#" << ext.sequence
          << " reached GPU " << id_ << ": only a switch takes it";
      SC_REPORT_FATAL(name(), msg.str().c_str());
      break;
    }
    case Opcode::member_read:
    case Opcode::read: {
      // The response leaves once the request has fully arrived.
      tlm::tlm_generic_payload& response = pool_.acquire();
      NvlinkExtension& r = extension_of(response);
      const bool for_switch = ext.opcode == Opcode::member_read;
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
      memory_.read(ext.target_address, response.get_data_ptr(), n);
      response.set_data_length(n);
      response.set_address(r.target_address);
      response.set_command(tlm::TLM_WRITE_COMMAND);
      TxItem item;
      item.payload = &response;
      item.wire_flits = r.wire_flits;
      item.not_before = arrival;
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
  if (sequence_index_ < sequences_.size() && task_index_ < sequences_[sequence_index_].tasks.size()) {
    const hw::WorkSequence& sequence = sequences_[sequence_index_];
    const hw::Task& task = sequence.tasks[task_index_];
    os << "; at task " << task_index_ << " (" << to_string(task.kind);
    if (task.phase < sequence.phase_names.size()) os << ", phase " << sequence.phase_names[task.phase];
    os << ")";
    if (task.kind == hw::TaskKind::wait_counter) {
      const uint64_t have = task.counter < counters_.size() ? counters_[task.counter].arrivals : 0;
      os << " waiting for counter " << task.counter << ": " << have << " of " << task.count
         << " arrivals";
    }
  }
  os << "; " << queued << " messages queued on its links\n";
  return tasks_left + queued;
}

}  // namespace nvsvp::model
