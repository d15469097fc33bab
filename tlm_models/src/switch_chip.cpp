#include "nvsvp/model/switch_chip.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "nvsvp/model/sim_time.hpp"

#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/reduction/reduction_factory.hpp"

namespace nvsvp::model {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

SwitchCsrConfig csr_config(const SwitchParams& params, uint32_t chip_id,
                           const reduction::ReductionUnitConfig& reduction) {
  SwitchCsrConfig config;
  config.chip_index = chip_id;
  config.ports = params.ports;
  config.multicast_slots = params.multicast_slots;
  config.reduction_contexts_per_port = reduction.contexts;
  return config;
}

// The reduction units' structure, as the parameters set it (the register block reports it).
reduction::ReductionUnitConfig reduction_config(const SwitchParams& params) {
  reduction::ReductionUnitConfig config;
  config.buffer_bytes = params.reduction_buffer_bytes;
  return config;
}

}  // namespace

SwitchChip::SwitchChip(const sc_core::sc_module_name& name, const SwitchParams& params,
                       uint32_t chip_id, uint32_t interleave_bytes)
    : sc_module(name),
      in("in", params.ports),
      out("out", params.ports),
      csr("csr"),
      params_(params),
      chip_id_(chip_id),
      interleave_bytes_(interleave_bytes),
      internal_latency_(picoseconds(to_picoseconds(params.latency_ns))),
      inputs_(params.ports),
      crossbar_free_(static_cast<size_t>(params.ports) * kTrafficClasses),
      outputs_(params.ports),
      output_scheduler_("outputs", params.ports,
                        [this](uint32_t output) { serve_output(static_cast<uint16_t>(output)); }),
      reduction_config_(reduction_config(params)),
      registers_(csr_config(params, chip_id, reduction_config_)),
      register_access_time_(picoseconds(to_picoseconds(params.register_access_ns))) {
  csr.register_b_transport(this, &SwitchChip::register_transport);
  // The line changes inside whatever process touched the registers (firmware's b_transport, the
  // datapath raising an error); waiters hear it one delta later.
  registers_.on_interrupt_change([this](bool) { irq_changed_.notify(SC_ZERO_TIME); });
  const size_t fifos = static_cast<size_t>(kTrafficClasses) * params.vcs_per_class;
  for (uint32_t p = 0; p < params.ports; ++p) {
    in[p].register_nb_transport_fw(this, &SwitchChip::nb_transport_fw, static_cast<int>(p));
    inputs_[p].fifos.resize(fifos);
    inputs_[p].occupied_flits.assign(fifos, 0);
    for (CrossbarOutput& xbar : outputs_[p].crossbar) xbar.arbiter = make_arbiter(params.arbiter);
  }
}

void SwitchChip::end_of_elaboration() {
  for (uint32_t p = 0; p < params_.ports; ++p) {
    out_ports_.push_back(out[p].operator->());
    in_backward_.push_back(in[p].operator->());
    out_ports_[p]->set_sender(&output_scheduler_, p);
  }
}

void SwitchChip::set_route(uint32_t gpu, const std::vector<uint16_t>& ports) {
  try {
    registers_.set_route_ports(gpu, ports);
  } catch (const std::out_of_range& e) {
    SC_REPORT_FATAL(name(), e.what());
  }
}

SwitchStats SwitchChip::stats() const {
  SwitchStats s = stats_;
  s.forwarded[static_cast<size_t>(TrafficClass::request)] = registers_.counter(SwitchCounter::forwarded_requests);
  s.forwarded[static_cast<size_t>(TrafficClass::response)] = registers_.counter(SwitchCounter::forwarded_responses);
  return s;
}

// The register block's socket. Register-level mistakes (unknown offset, read-only register,
// refused value) complete normally, as on the chip: the read returns 0, the write is ignored and
// ERROR_STATUS says so. Only what is no 4-byte read or write at all gets a TLM error response
// (byte enables, another length, another command); it sets error_bad_register_access as well, so
// firmware that checks only the status still hears of it.
void SwitchChip::register_transport(tlm::tlm_generic_payload& payload, sc_time& delay) {
  delay += register_access_time_;
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

uint16_t SwitchChip::select_output(const NvlinkExtension& ext) {
  const std::vector<uint16_t>& ports = registers_.route_ports(ext.target_gpu);
  if (ports.empty()) {
    registers_.raise_error(hw::switch_regs::error_no_route);
    std::ostringstream msg;
    msg << "no route to GPU " << ext.target_gpu << " (message " << ext.source_gpu << "#"
        << ext.sequence << ")";
    SC_REPORT_FATAL(name(), msg.str().c_str());
  }
  return ports[interleave_way(ext.target_address, interleave_bytes_, static_cast<uint32_t>(ports.size()))];
}

tlm::tlm_sync_enum SwitchChip::nb_transport_fw(int port, tlm::tlm_generic_payload& payload,
                                               tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) SC_REPORT_FATAL(name(), "unexpected phase on an input (only BEGIN_REQ)");
  NvlinkExtension& ext = extension_of(payload);
  InputPort& input = inputs_[port];
  const size_t fifo = fifo_index(ext.traffic_class, ext.vc);
  const uint32_t flits = std::min(ext.wire_flits, params_.vc_depth_flits);
  input.occupied_flits[fifo] += flits;
  if (input.occupied_flits[fifo] > params_.vc_depth_flits) {
    SC_REPORT_FATAL(name(), "input buffer overflow: the sender ignored credits");
  }
  const uint16_t output = select_output(ext);
  const sc_time ready_at = current_time() + delay + internal_latency_;
  payload.acquire();
  input.fifos[fifo].push_back(Entry{&payload, &ext, ext.wire_flits, output, ready_at});
  stats_.peak_buffered_messages = std::max(stats_.peak_buffered_messages, ++buffered_);
  if (input.fifos[fifo].size() == 1) {
    request_output(output, ext.traffic_class,
                   Request{static_cast<uint32_t>(port) * params_.vcs_per_class + ext.vc, ext.wire_flits, ready_at});
  }
  return tlm::TLM_ACCEPTED;
}

void SwitchChip::request_output(uint16_t output, TrafficClass traffic_class, const Request& request) {
  OutputPort& o = outputs_[output];
  std::vector<Request>& requests = o.crossbar[static_cast<size_t>(traffic_class)].requests;
  auto by_requester = [](const Request& a, const Request& b) { return a.requester < b.requester; };
  requests.insert(std::upper_bound(requests.begin(), requests.end(), request, by_requester), request);
  // Served when the head is ready and the link free; the scheduler keeps an earlier wake if the
  // output already has one (a busy output has one for when its link frees).
  output_scheduler_.wake_at(output, std::max({request.ready_at, o.link_busy_until, current_time()}));
}

// Serving one output (a client of the chip's WakeScheduler): forward one message and ask to be
// served again when the link frees, or ask for the earliest moment something could go; credits
// it waits for wake it through the port.
void SwitchChip::serve_output(uint16_t output) {
  OutputPort& o = outputs_[output];
  if (o.crossbar[0].requests.empty() && o.crossbar[1].requests.empty()) return;
  const sc_time now = current_time();
  if (o.link_busy_until > now) {
    output_scheduler_.wake_at(output, o.link_busy_until);
    return;
  }
  NvlinkTxIf* link = out_ports_[output];
  sc_time next_ready = never();
  for (int i = 0; i < kTrafficClasses; ++i) {
    const auto traffic_class = static_cast<TrafficClass>((o.next_class + i) % kTrafficClasses);
    CrossbarOutput& xbar = o.crossbar[static_cast<size_t>(traffic_class)];
    if (xbar.requests.empty()) continue;
    const uint32_t credits = link->best_credits(traffic_class);
    bool credit_blocked = false;
    // A request is eligible when its head is ready, its input's transfer slot is free and the
    // link has credits for it; otherwise it says when it could be ready, or that credits block it.
    auto eligible = [&](const Request& r) {
      const uint32_t port = r.requester / params_.vcs_per_class;
      const sc_time& input_free = crossbar_free_[port * kTrafficClasses + static_cast<size_t>(traffic_class)];
      const sc_time& ready = r.ready_at > input_free ? r.ready_at : input_free;
      if (ready > now) {
        if (ready < next_ready) next_ready = ready;
        return false;
      }
      if (link->credits_needed(r.wire_flits) > credits) {
        credit_blocked = true;
        return false;
      }
      return true;
    };
    std::vector<Request>& requests = xbar.requests;
    int64_t after = Arbiter::kFromLowest;
    int64_t winner = -1;
    if (xbar.arbiter->rotation_start(after)) {
      // Scan in the arbiter's rotation and stop at the first eligible request (its choice).
      const auto start = static_cast<size_t>(
          std::upper_bound(requests.begin(), requests.end(), after,
                           [](int64_t a, const Request& r) { return a < static_cast<int64_t>(r.requester); }) -
          requests.begin());
      for (size_t k = 0; k < requests.size() && winner < 0; ++k) {
        const Request& r = requests[(start + k) % requests.size()];
        if (eligible(r)) winner = r.requester;
      }
      if (winner >= 0) xbar.arbiter->granted(static_cast<uint32_t>(winner));
    } else {
      eligible_.clear();
      for (const Request& r : requests) {
        if (eligible(r)) eligible_.push_back(ArbiterRequest{r.requester, r.ready_at.value()});
      }
      if (!eligible_.empty()) winner = eligible_[xbar.arbiter->pick(eligible_)].requester;
    }
    if (winner >= 0) {
      const sc_time serialization = forward(output, traffic_class, static_cast<uint32_t>(winner));
      o.link_busy_until = now + serialization;
      o.next_class = static_cast<uint8_t>((static_cast<int>(traffic_class) + 1) % kTrafficClasses);
      output_scheduler_.wake_at(output, o.link_busy_until);
      return;
    }
    if (credit_blocked) link->wait_for_credits(traffic_class);
  }
  if (next_ready != never()) output_scheduler_.wake_at(output, next_ready);
}

sc_time SwitchChip::forward(uint16_t output, TrafficClass traffic_class, uint32_t requester) {
  const uint32_t port = requester / params_.vcs_per_class;
  const auto vc = static_cast<uint16_t>(requester % params_.vcs_per_class);
  InputPort& input = inputs_[port];
  const size_t fifo = fifo_index(traffic_class, vc);
  const Entry entry = input.fifos[fifo].front();
  input.fifos[fifo].pop_front();
  --buffered_;

  std::vector<Request>& requests = outputs_[output].crossbar[static_cast<size_t>(traffic_class)].requests;
  requests.erase(std::lower_bound(requests.begin(), requests.end(), requester,
                                  [](const Request& r, uint32_t id) { return r.requester < id; }));

  tlm::tlm_generic_payload& payload = *entry.payload;
  NvlinkTxIf* link = out_ports_[output];
  const sc_time serialization = link->serialization_time(entry.wire_flits);

  // The input buffer drains as the message leaves: its credits (for the input VC, which the
  // extension still names) go back when the tail is out.
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_time drained = serialization;
  in_backward_[port]->nb_transport_bw(payload, phase, drained);

  // VC allocation for the next hop, then the output link takes the message.
  entry.ext->vc = static_cast<uint16_t>(link->allocate_vc(traffic_class, entry.wire_flits));
  link->send(payload);

  crossbar_free_[port * kTrafficClasses + static_cast<size_t>(traffic_class)] =
      current_time() + serialization / params_.crossbar_speedup;
  input.occupied_flits[fifo] -= std::min(entry.wire_flits, params_.vc_depth_flits);
  registers_.count(traffic_class == TrafficClass::request ? SwitchCounter::forwarded_requests
                                                          : SwitchCounter::forwarded_responses);
  stats_.forwarded_flits[static_cast<size_t>(traffic_class)] += entry.wire_flits;
  payload.release();

  if (!input.fifos[fifo].empty()) {
    const Entry& next = input.fifos[fifo].front();
    request_output(next.output, traffic_class, Request{requester, next.wire_flits, next.ready_at});
  }
  return serialization;
}

reduction::ReductionUnit& SwitchChip::reduction_unit(uint16_t port) {
  if (port >= params_.ports) SC_REPORT_FATAL(name(), "reduction unit of a port the chip does not have");
  if (reduction_units_.empty()) reduction_units_.resize(params_.ports);
  std::unique_ptr<reduction::ReductionUnit>& unit = reduction_units_[port];
  if (!unit) {
    unit = reduction::make_reduction_unit(params_.reduction_backend, reduction_config_);
  }
  return *unit;
}

uint64_t SwitchChip::describe_outstanding(std::ostream& os, uint64_t max_lines) const {
  uint64_t count = 0;
  for (size_t p = 0; p < inputs_.size(); ++p) {
    for (size_t f = 0; f < inputs_[p].fifos.size(); ++f) {
      for (const Entry& e : inputs_[p].fifos[f]) {
        if (count++ >= max_lines) continue;
        const NvlinkExtension& ext = *e.ext;
        os << "  " << name() << " input " << p << " " << to_string(ext.traffic_class) << " vc "
           << ext.vc << ": " << to_string(ext.opcode) << " GPU " << ext.source_gpu << "#"
           << ext.sequence << " -> GPU " << ext.target_gpu << " via output " << e.output
           << ", ready at " << e.ready_at << "\n";
      }
    }
  }
  return count;
}

}  // namespace nvsvp::model
