#include "nvsvp/model/switch_chip.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

// One of the two crossbars: an input slot per port and per output's queue of the chip's own
// messages (the input stage's inputs).
SwitchCrossbar make_crossbar(const SwitchParams& params) {
  return SwitchCrossbar(params.ports, 2 * params.ports, params.vcs_per_class, params.arbiter, params.crossbar_speedup,
                        params.packet_fabric, params.allocator_iterations);
}

// What an output's arbitration learns of its requests of one class now. A request is eligible when
// its head is ready, its input's transfer slot is free and the link has credits for it;
// otherwise it says when it could be ready, or that credits block it.
class RequestProbe {
 public:
  RequestProbe(const SwitchCrossbar& crossbar, uint16_t output, NvlinkPort* link, TrafficClass traffic_class,
               const sc_time& now)
      : crossbar_(crossbar),
        link_(link),
        traffic_class_(traffic_class),
        now_(now),
        link_faulty_(link->has_faults()),
        output_(output) {}

  bool operator()(const CrossbarRequest& r) {
    const sc_time& ready = crossbar_.ready_at(r);
    if (ready > now_) {
      if (ready < next_ready) next_ready = ready;
      return false;
    }
    // Asked for at the first ready request only: often none is ready, and the port's answer does
    // not depend on when within this decision it is asked.
    if (!credits_known_) {
      credits_ = link_->best_credits(traffic_class_);
      credits_known_ = true;
    }
    if (link_->credits_needed(r.wire_flits) > credits_) {
      credit_blocked = true;
      return false;
    }
    // A link that is down, or goes down under the message, takes nothing: firmware routes
    // around it, or it comes back up and wakes this output.
    return !link_faulty_ || link_->carries(r.wire_flits);
  }
  // Of the output's requests, those that could have gone now besides `winner`: they wait for it.
  uint32_t losers(int64_t winner) const {
    uint32_t losers = 0;
    const std::vector<CrossbarRequest>& heads = crossbar_.requests(output_);
    for (const CrossbarRequest& r : heads) {
      losers += static_cast<int64_t>(r.requester) != winner && crossbar_.ready_at(r) <= now_ &&
                link_->credits_needed(r.wire_flits) <= credits_;
    }
    return losers;
  }
  sc_time next_ready = never();  // the earliest a request not ready now could be
  bool credit_blocked = false;   // a ready request lacked credits

 private:
  const SwitchCrossbar& crossbar_;
  NvlinkPort* link_;
  TrafficClass traffic_class_;
  sc_time now_;
  bool link_faulty_;
  uint16_t output_;
  bool credits_known_ = false;
  uint32_t credits_ = 0;
};

}  // namespace

SwitchCsrConfig SwitchChip::csr_config(const SwitchParams& params, uint32_t chip_id) {
  SwitchCsrConfig config;
  config.chip_index = chip_id;
  config.ports = params.ports;
  config.multicast_slots = params.multicast_slots;
  config.reduction_contexts_per_port = MultimemEngine::unit_config(params).contexts;
  return config;
}

SwitchChip::SwitchChip(const sc_core::sc_module_name& name, const SwitchParams& params,
                       uint32_t chip_id, uint32_t interleave_bytes, const LinkParams& link)
    : sc_module(name),
      in("in", params.ports),
      out("out", params.ports),
      csr("csr"),
      params_(params),
      chip_id_(chip_id),
      internal_latency_(picoseconds(to_picoseconds(params.latency_ns))),
      register_access_time_(picoseconds(to_picoseconds(params.register_access_ns))),
      registers_(csr_config(params, chip_id)),
      inputs_(this->name(), params, registers_, interleave_bytes),
      crossbars_{make_crossbar(params), make_crossbar(params)},
      outputs_(params.ports),
      output_scheduler_("outputs", params.ports, [this](uint32_t output) { serve_output(static_cast<uint16_t>(output)); },
                        is_matching_allocator(params.arbiter) ? std::function<void()>([this] { match_due_outputs(); })
                                                              : std::function<void()>()),
      multimem_(*this, pool_, registers_, params, link, this->name()) {
  csr.register_b_transport(this, &SwitchChip::register_transport);
  // The line changes inside whatever process touched the registers (firmware's b_transport, the
  // datapath raising an error); waiters hear it one delta later.
  registers_.on_interrupt_change([this](bool) { irq_changed_.notify(SC_ZERO_TIME); });
  registers_.on_route_change([this](uint32_t gpu) { reroute(gpu); });
  registers_.on_flush([this] { discard_contents(); });
  for (uint32_t p = 0; p < params.ports; ++p) in[p].set_receiver(this, static_cast<int>(p));
  inputs_.set_log(&log_);
}

void SwitchChip::end_of_elaboration() {
  for (uint32_t p = 0; p < params_.ports; ++p) {
    outputs_.bind(static_cast<uint16_t>(p), bound_port(out[p]));
    inputs_.bind(p, in[p].operator->());
    outputs_.link(static_cast<uint16_t>(p))->set_sender(&output_scheduler_, p);
    outputs_.link(static_cast<uint16_t>(p))->set_fault_listener(&link_errors_, params_.ports + p);
  }
}

void SwitchChip::no_route_for(uint32_t gpu) {
  registers_.raise_error(hw::switch_regs::error_no_route);
  const std::string message = "no route to GPU " + std::to_string(gpu) + " (a packet on the fast fabric)";
  NVSVP_LOG(log_, error, "route lookup failed: " << message);
  SC_REPORT_FATAL(name(), message.c_str());
}

void SwitchChip::set_route(uint32_t gpu, const std::vector<uint16_t>& ports) {
  try {
    registers_.set_route_ports(gpu, ports);
  } catch (const std::out_of_range& e) {
    SC_REPORT_FATAL(name(), e.what());
  }
}

SwitchStats SwitchChip::stats() const {
  SwitchStats s;
  for (const TrafficClass c : {TrafficClass::request, TrafficClass::response}) {
    s.forwarded_flits[static_cast<size_t>(c)] = outputs_.forwarded_flits(c);
  }
  s.forwarded[static_cast<size_t>(TrafficClass::request)] = registers_.counter(SwitchCounter::forwarded_requests);
  s.forwarded[static_cast<size_t>(TrafficClass::response)] = registers_.counter(SwitchCounter::forwarded_responses);
  s.peak_buffered_messages = inputs_.peak_buffered();
  s.replications = registers_.counter(SwitchCounter::replications);
  s.reductions = registers_.counter(SwitchCounter::reductions);
  s.evictions = registers_.counter(SwitchCounter::evictions);
  s.access_errors = registers_.counter(SwitchCounter::access_errors);
  s.partition_errors = registers_.counter(SwitchCounter::partition_errors);
  const MultimemStats& multimem = multimem_.stats();
  s.parked_loads = multimem.parked_loads;
  s.evicted_partial_bytes = multimem.evicted_partial_bytes;
  s.evicted_reductions = multimem.evicted_reductions;
  s.peak_reduction_buffer_bytes = multimem.peak_reduction_buffer_bytes;
  return s;
}

// The register block's socket. Register-level mistakes (unknown offset, read-only register,
// refused value) complete normally, as on the chip: the read returns 0, the write is ignored and
// ERROR_STATUS says so. Only what is no 4-byte read or write at all gets a TLM error response
// (byte enables, another length, another command); it sets error_bad_register_access as well, so
// firmware that checks only the status still hears of it.
void SwitchChip::register_transport(tlm::tlm_generic_payload& payload, sc_time& delay) {
  delay += register_access_time_;
  if (dead_) {
    // A dead chip's management access is aborted: reads give all ones, writes are lost.
    if (payload.get_command() == tlm::TLM_READ_COMMAND && payload.get_data_length() == 4) {
      const uint32_t all_ones = hw::switch_regs::kDeadChipRead;
      std::memcpy(payload.get_data_ptr(), &all_ones, 4);
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const tlm::tlm_command command = payload.get_command();
  tlm::tlm_response_status refused = tlm::TLM_OK_RESPONSE;
  if (payload.get_byte_enable_ptr() != nullptr) {
    refused = tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  } else if (payload.get_data_length() != 4 || payload.get_streaming_width() < 4) {
    refused = tlm::TLM_BURST_ERROR_RESPONSE;
  } else if (command != tlm::TLM_READ_COMMAND && command != tlm::TLM_WRITE_COMMAND) {
    refused = tlm::TLM_COMMAND_ERROR_RESPONSE;
  }
  if (refused != tlm::TLM_OK_RESPONSE) {
    NVSVP_LOG(log_, debug, "register access at 0x" << std::hex << payload.get_address() << std::dec
                                                   << " refused: " << payload.get_response_string());
    registers_.raise_error(hw::switch_regs::error_bad_register_access);
    payload.set_response_status(refused);
    return;
  }
  // Offsets are 32 bits; an address beyond them is an unknown offset like any other.
  const uint64_t address = payload.get_address();
  const uint32_t offset = address > 0xFFFF'FFFFull ? 0xFFFF'FFFCu : static_cast<uint32_t>(address);
  uint32_t value = 0;
  if (command == tlm::TLM_READ_COMMAND) {
    registers_.read(offset, value);
    std::memcpy(payload.get_data_ptr(), &value, 4);  // little-endian, as the host
  } else {
    std::memcpy(&value, payload.get_data_ptr(), 4);
    registers_.write(offset, value);
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

tlm::tlm_sync_enum SwitchChip::nb_transport_fw(int port, tlm::tlm_generic_payload& payload,
                                               tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) SC_REPORT_FATAL(name(), "unexpected phase on an input (only BEGIN_REQ)");
  if (dead_) SC_REPORT_FATAL(name(), "a message reached a dead switch chip (its links are down)");
  NvlinkExtension& ext = extension_of(payload);
  const size_t fifo = inputs_.fifo_index(ext.traffic_class, ext.vc);
  const uint32_t flits = inputs_.occupy(static_cast<uint32_t>(port), fifo, ext.wire_flits);
  const sc_time ready_at = current_time() + delay + internal_latency_;
  switch (ext.opcode) {
    case Opcode::multimem_store:
    case Opcode::multimem_red:
    case Opcode::multimem_ld_reduce:
      multimem_.accept_static(static_cast<uint16_t>(port), payload, static_cast<uint32_t>(fifo), flits, ready_at);
      return tlm::TLM_ACCEPTED;
    case Opcode::dynamic_store:
    case Opcode::dynamic_ld_reduce:
      multimem_.accept_dynamic(static_cast<uint16_t>(port), payload, static_cast<uint32_t>(fifo), flits, ready_at);
      return tlm::TLM_ACCEPTED;
    case Opcode::member_read_response:
      multimem_.take_member_response(static_cast<uint16_t>(port), payload, static_cast<uint32_t>(fifo), flits);
      return tlm::TLM_ACCEPTED;
    default:
      break;
  }
  // Partitions: a request to a GPU outside the source port's partition is refused (one
  // predictable branch while the chip has none). A response answers a request that passed.
  if (registers_.partitioned() && ext.traffic_class == TrafficClass::request &&
      !registers_.may_reach(static_cast<uint32_t>(port), ext.target_gpu)) {
    multimem_.refuse_across_partitions(static_cast<uint16_t>(port), payload, static_cast<uint32_t>(fifo), flits,
                                       ready_at);
    return tlm::TLM_ACCEPTED;
  }
  const uint16_t output = inputs_.route(ext);
  payload.acquire();
  if (inputs_.push(static_cast<uint32_t>(port), inputs_.queue_index(ext.traffic_class, ext.vc, output),
                   SwitchEntry{&payload, &ext, ext.wire_flits, output, ready_at})) {
    request_output(output, ext.traffic_class,
                   CrossbarRequest{inputs_.queue_requester(static_cast<uint32_t>(port), ext.vc), ext.wire_flits, ready_at});
  }
  return tlm::TLM_ACCEPTED;
}

void SwitchChip::request_output(uint16_t output, TrafficClass traffic_class, const CrossbarRequest& request) {
  crossbars_[static_cast<size_t>(traffic_class)].request(output, request);
  // Served when the head is ready and the link free; the scheduler keeps an earlier wake if the
  // output already has one (a busy output has one for when its link frees).
  output_scheduler_.wake_at(output, std::max({request.ready_at, outputs_.busy_until(output), current_time()}));
}

// Serving one output (a client of the chip's WakeScheduler): forward one message and ask to be
// served again when the link frees, or ask for the earliest moment something could go; credits
// it waits for wake it through the port.
void SwitchChip::serve_output(uint16_t output) {
  if (!crossbars_[0].has_requests(output) && !crossbars_[1].has_requests(output)) return;
  if (crossbars_[0].matches()) {
    // Decided with the other outputs due now, after the scheduler's pass (match_due_outputs).
    if (!output_due_[output]) {
      output_due_[output] = true;
      due_outputs_.push_back(output);
    }
    return;
  }
  const sc_time now = current_time();
  if (outputs_.busy_until(output) > now) {
    output_scheduler_.wake_at(output, outputs_.busy_until(output));
    return;
  }
  NvlinkPort* link = outputs_.link(output);
  sc_time next_ready = never();
  const uint8_t first_class = outputs_.first_class(output);
  for (int turn = 0; turn < kTrafficClasses; ++turn) {
    const auto traffic_class = static_cast<TrafficClass>((first_class + turn) % kTrafficClasses);
    SwitchCrossbar& crossbar = crossbars_[static_cast<size_t>(traffic_class)];
    if (!crossbar.has_requests(output)) continue;
    RequestProbe eligible(crossbar, output, link, traffic_class, now);
    const int64_t winner = crossbar.grant(output, eligible);
    if (winner >= 0) {
      // The other heads that could have gone now wait for this message: arbitration wait.
      const uint32_t losers = crossbar.requests(output).size() > 1 ? eligible.losers(winner) : 0;
      const sc_time serialization = forward(output, traffic_class, static_cast<uint32_t>(winner));
      if (losers > 0) outputs_.add_arbitration_wait(output, traffic_class, losers, serialization);
      outputs_.occupy_link(output, traffic_class, now + serialization);
      output_scheduler_.wake_at(output, outputs_.busy_until(output));
      return;
    }
    if (eligible.next_ready < next_ready) next_ready = eligible.next_ready;
    if (eligible.credit_blocked) link->wait_for_credits(traffic_class);
  }
  if (next_ready != never()) output_scheduler_.wake_at(output, next_ready);
}

// The matching allocators' decision (islip, wavefront): the outputs due now whose links are free
// are matched to inputs together, per crossbar, each output's first class first, then its other
// class for the outputs still free.
void SwitchChip::match_due_outputs() {
  if (due_outputs_.empty()) return;
  const sc_time now = current_time();
  std::vector<uint16_t>& free_outputs = free_outputs_;
  free_outputs.clear();
  for (const uint16_t output : due_outputs_) {
    output_due_[output] = false;
    if (outputs_.busy_until(output) > now) {
      output_scheduler_.wake_at(output, outputs_.busy_until(output));
    } else {
      free_outputs.push_back(output);
    }
  }
  due_outputs_.clear();
  std::sort(free_outputs.begin(), free_outputs.end());
  for (int pass = 0; pass < kTrafficClasses; ++pass) {
    for (int c = 0; c < kTrafficClasses; ++c) {
      const auto traffic_class = static_cast<TrafficClass>(c);
      SwitchCrossbar& crossbar = crossbars_[c];
      match_requests_.clear();
      for (const uint16_t output : free_outputs) {
        if (output_matched_[output] || (outputs_.first_class(output) + pass) % kTrafficClasses != c ||
            !crossbar.has_requests(output)) {
          continue;
        }
        NvlinkPort* link = outputs_.link(output);
        RequestProbe eligible(crossbar, output, link, traffic_class, now);
        for (const CrossbarRequest& r : crossbar.requests(output)) {
          if (eligible(r)) match_requests_.push_back(MatchRequest{output, r.requester});
        }
        if (eligible.next_ready != never()) output_scheduler_.wake_at(output, eligible.next_ready);
        if (eligible.credit_blocked) link->wait_for_credits(traffic_class);
      }
      crossbar.match(match_requests_, match_grants_);
      for (const MatchRequest& grant : match_grants_) {
        uint32_t losers = 0;  // the output's other requests that could have gone now
        for (const MatchRequest& r : match_requests_) losers += r.output == grant.output && r.requester != grant.requester;
        const sc_time serialization = forward(grant.output, traffic_class, grant.requester);
        if (losers > 0) outputs_.add_arbitration_wait(grant.output, traffic_class, losers, serialization);
        outputs_.occupy_link(grant.output, traffic_class, now + serialization);
        output_scheduler_.wake_at(grant.output, outputs_.busy_until(grant.output));
        output_matched_[grant.output] = true;
      }
      // An output left unmatched with a request that was eligible: its input went to another
      // output (it asks again when that input's slot frees) or, with too few islip iterations,
      // nobody took it (it asks again at the allocator's next decision, one flit time later).
      for (const MatchRequest& r : match_requests_) {
        if (output_matched_[r.output]) continue;
        RequestProbe again(crossbar, r.output, outputs_.link(r.output), traffic_class, now);
        bool still_eligible = false;
        for (const CrossbarRequest& request : crossbar.requests(r.output)) still_eligible |= again(request);
        if (still_eligible) {
          output_scheduler_.wake_at(r.output, now + outputs_.link(r.output)->serialization_time(1));
        } else if (again.next_ready != never()) {
          output_scheduler_.wake_at(r.output, again.next_ready);
        }
      }
    }
  }
  for (const uint16_t output : free_outputs) output_matched_[output] = false;
}

sc_time SwitchChip::forward(uint16_t output, TrafficClass traffic_class, uint32_t requester) {
  const uint32_t port = inputs_.input_of(requester);
  SwitchInputStage::Input& input = inputs_.input(port);
  const size_t queue = inputs_.queue_index(traffic_class, inputs_.vc_of(requester), output);
  const SwitchEntry entry = inputs_.pop(input, queue);
  // The VC buffer it held, named by its extension until the output allocates the next hop's VC.
  const size_t fifo = inputs_.fifo_index(traffic_class, entry.ext->vc);
  SwitchCrossbar& crossbar = crossbars_[static_cast<size_t>(traffic_class)];
  crossbar.withdraw(output, requester);

  tlm::tlm_generic_payload& payload = *entry.payload;
  const sc_time serialization = outputs_.link(output)->serialization_time(entry.wire_flits);
  const bool generated = inputs_.is_generated(port);
  // The input buffer drains as the message leaves: its credits (for the input VC, which the
  // extension still names) go back when the tail is out.
  if (!generated) inputs_.return_credits(port, payload, serialization);
  outputs_.send(output, traffic_class, entry);
  if (!generated) {
    crossbar.transfer(port, serialization);
    inputs_.free_space(input, fifo, entry.wire_flits);
  } else if (entry.parent != SwitchEntry::kNoParent) {
    // A member copy: the crossbar replicates without holding an input slot (multicast is one
    // read of the buffer); the request's own buffer frees with its last copy.
    inputs_.copy_left(entry.parent, serialization);
    const Opcode opcode = entry.ext->opcode;
    if (opcode == Opcode::member_read || opcode == Opcode::dynamic_member_read) {
      multimem_.member_read_left(entry.ext->reduction_tag, entry.ext->target_gpu);
    }
  }
  registers_.count(traffic_class == TrafficClass::request ? SwitchCounter::forwarded_requests
                                                          : SwitchCounter::forwarded_responses);
  payload.release();

  if (!input.fifos[queue].empty()) {
    const SwitchEntry& next = input.fifos[queue].front();
    request_output(next.output, traffic_class, CrossbarRequest{requester, next.wire_flits, next.ready_at});
    // It is forwarded once its output and credits allow; by then its header would have left the
    // caches while it waited.
    prefetch_message_header(*next.payload);
  }
  return serialization;
}

void SwitchChip::reroute(uint32_t gpu) {
  const std::vector<uint16_t>& route = registers_.route_ports(gpu);
  auto in_route = [&](uint16_t output) { return std::find(route.begin(), route.end(), output) != route.end(); };
  // Messages from the ports: a new output each, and the head asks for it instead.
  for (uint32_t port = 0; port < params_.ports; ++port) {
    SwitchInputStage::Input& input = inputs_.input(port);
    if (inputs_.output_queued()) {
      requeue_output_queues(port, gpu, in_route);
      continue;
    }
    for (size_t fifo = 0; fifo < input.fifos.size(); ++fifo) {
      bool head = true;
      for (SwitchEntry& entry : input.fifos[fifo]) {
        if (entry.ext->target_gpu == gpu && !in_route(entry.output)) {
          const uint16_t old_output = entry.output;
          entry.output = inputs_.route(*entry.ext);
          if (head) {
            const auto traffic_class = entry.ext->traffic_class;
            const uint32_t requester = inputs_.requester(port, entry.ext->vc);
            crossbars_[static_cast<size_t>(traffic_class)].withdraw(old_output, requester);
            request_output(entry.output, traffic_class, CrossbarRequest{requester, entry.wire_flits, entry.ready_at});
          }
        }
        head = false;
      }
    }
  }
  // The chip's own messages wait in a queue per output: those of a lost port move to the queues
  // of their new outputs.
  for (uint16_t output = 0; output < params_.ports; ++output) {
    if (in_route(output)) continue;
    const uint32_t generated = inputs_.generated_input(output);
    SwitchInputStage::Input& input = inputs_.input(generated);
    for (const TrafficClass traffic_class : {TrafficClass::request, TrafficClass::response}) {
      const size_t fifo = inputs_.queue_index(traffic_class, 0, output);
      if (input.fifos[fifo].empty() || input.fifos[fifo].front().ext->target_gpu != gpu) continue;
      crossbars_[static_cast<size_t>(traffic_class)].withdraw(output, inputs_.queue_requester(generated, 0));
      while (!input.fifos[fifo].empty()) {
        SwitchEntry entry = inputs_.pop(input, fifo);
        entry.output = inputs_.route(*entry.ext);
        push_generated(entry.output, entry, traffic_class);
      }
    }
  }
}

template <class InRoute>
void SwitchChip::requeue_output_queues(uint32_t port, uint32_t gpu, const InRoute& in_route) {
  SwitchInputStage::Input& input = inputs_.input(port);
  const uint32_t requester = inputs_.queue_requester(port, 0);
  for (const TrafficClass traffic_class : {TrafficClass::request, TrafficClass::response}) {
    SwitchCrossbar& crossbar = crossbars_[static_cast<size_t>(traffic_class)];
    for (uint16_t output = 0; output < params_.ports; ++output) {
      const size_t queue = inputs_.queue_index(traffic_class, 0, output);
      if (in_route(output) || input.fifos[queue].empty()) continue;
      // The queue is taken apart in order: the GPU's messages join the queues of their new
      // outputs, the others the old queue again; each queue's head asks for its output.
      crossbar.withdraw(output, requester);
      std::vector<SwitchEntry> entries;
      while (!input.fifos[queue].empty()) entries.push_back(inputs_.pop(input, queue));
      for (SwitchEntry& entry : entries) {
        if (entry.ext->target_gpu == gpu) entry.output = inputs_.route(*entry.ext);
        if (inputs_.push(port, inputs_.queue_index(traffic_class, 0, entry.output), entry)) {
          request_output(entry.output, traffic_class, CrossbarRequest{requester, entry.wire_flits, entry.ready_at});
        }
      }
    }
  }
}

void SwitchChip::fail() {
  if (dead_) return;
  discard_contents();
  dead_ = true;
  irq_changed_.notify(SC_ZERO_TIME);  // the line falls with the chip
  NVSVP_LOG(log_, info, "chip down: " << loss_stats_.messages_lost << " messages and " << loss_stats_.loads_lost
                                      << " loads lost");
}

void SwitchChip::discard_contents() {
  if (lost_sink_ == nullptr) SC_REPORT_FATAL(name(), "the chip lost messages and nobody takes them (no LostOperationSink)");
  // Loads first: their partial sums still queued here are dropped, not handed over (the load
  // goes again whole).
  std::vector<std::pair<uint32_t, uint64_t>> lost_loads;  // (issuer, issue sequence)
  loss_stats_.loads_lost += multimem_.discard_loads(*lost_sink_, lost_loads);
  auto of_lost_load = [&](const NvlinkExtension& ext) {
    return std::find(lost_loads.begin(), lost_loads.end(), std::make_pair(ext.target_gpu, ext.sequence)) != lost_loads.end();
  };
  for (uint32_t index = 0; index < 2 * params_.ports; ++index) {
    SwitchInputStage::Input& input = inputs_.input(index);
    const bool generated = inputs_.is_generated(index);
    for (size_t fifo = 0; fifo < input.fifos.size(); ++fifo) {
      while (!input.fifos[fifo].empty()) {
        const SwitchEntry entry = inputs_.pop(input, fifo);
        tlm::tlm_generic_payload& payload = *entry.payload;
        const Opcode opcode = entry.ext->opcode;
        if (!generated) {
          inputs_.return_credits(index, payload, SC_ZERO_TIME);
          inputs_.free_space(input, inputs_.fifo_index(entry.ext->traffic_class, entry.ext->vc), entry.wire_flits);
        }
        const bool of_a_load = opcode == Opcode::member_read || opcode == Opcode::dynamic_member_read ||
                               (opcode == Opcode::reduce_partial && of_lost_load(*entry.ext));
        if (generated && of_a_load) {
          ++loss_stats_.messages_dropped;
        } else {
          ++loss_stats_.messages_lost;
          lost_sink_->message_lost(payload);
        }
        payload.release();
      }
    }
  }
  inputs_.release_all_held();
  for (SwitchCrossbar& crossbar : crossbars_) crossbar.clear_requests();
}

}  // namespace nvsvp::model
