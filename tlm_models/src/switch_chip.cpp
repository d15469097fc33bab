#include "nvsvp/model/switch_chip.hpp"

#include <algorithm>
#include <sstream>

#include "nvsvp/model/address_hash.hpp"

namespace nvsvp::model {

using sc_core::sc_time;
using sc_core::SC_PS;
using sc_core::SC_ZERO_TIME;

SwitchChip::SwitchChip(const sc_core::sc_module_name& name, const SwitchParams& params,
                       uint32_t chip_id, uint32_t interleave_bytes)
    : sc_module(name),
      in("in", params.ports),
      out("out", params.ports),
      params_(params),
      chip_id_(chip_id),
      interleave_bytes_(interleave_bytes),
      internal_latency_(params.latency_ns * 1000.0, SC_PS),
      inputs_(params.ports),
      outputs_(params.ports) {
  const size_t fifos = static_cast<size_t>(kTrafficClasses) * params.vcs_per_class;
  for (uint32_t p = 0; p < params.ports; ++p) {
    in[p].register_nb_transport_fw(this, &SwitchChip::nb_transport_fw, static_cast<int>(p));
    inputs_[p].fifos.resize(fifos);
    inputs_[p].occupied_flits.assign(fifos, 0);
    for (CrossbarOutput& xbar : outputs_[p].crossbar) xbar.arbiter = make_arbiter(params.arbiter);

    sc_core::sc_spawn_options options;
    options.spawn_method();
    options.dont_initialize();
    options.set_sensitivity(&outputs_[p].wake);
    const uint16_t output = static_cast<uint16_t>(p);
    outputs_[p].listening = true;
    sc_core::sc_spawn([this, output] { serve_output(output); },
                      sc_core::sc_gen_unique_name("output"), &options);
  }
}

void SwitchChip::set_route(uint32_t gpu, const std::vector<uint16_t>& ports) {
  for (uint16_t p : ports) {
    if (p >= params_.ports) SC_REPORT_FATAL(name(), "route names a port the chip does not have");
  }
  if (routes_.size() <= gpu) routes_.resize(gpu + 1);
  routes_[gpu] = ports;
}

const std::vector<uint16_t>& SwitchChip::route(uint32_t gpu) const {
  static const std::vector<uint16_t> none;
  return gpu < routes_.size() ? routes_[gpu] : none;
}

uint16_t SwitchChip::select_output(const NvlinkExtension& ext) const {
  const std::vector<uint16_t>& ports = route(ext.target_gpu);
  if (ports.empty()) {
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
  const NvlinkExtension& ext = extension_of(payload);
  InputPort& input = inputs_[port];
  const size_t fifo = fifo_index(ext.traffic_class, ext.vc);
  const uint32_t flits = std::min(ext.wire_flits, params_.vc_depth_flits);
  input.occupied_flits[fifo] += flits;
  if (input.occupied_flits[fifo] > params_.vc_depth_flits) {
    SC_REPORT_FATAL(name(), "input buffer overflow: the sender ignored credits");
  }
  const uint16_t output = select_output(ext);
  const sc_time ready_at = sc_core::sc_time_stamp() + delay + internal_latency_;
  payload.acquire();
  input.fifos[fifo].push_back(Entry{&payload, output, ready_at});
  stats_.peak_buffered_messages = std::max(stats_.peak_buffered_messages, ++buffered_);
  if (input.fifos[fifo].size() == 1) {
    request_output(output, ext.traffic_class, static_cast<uint32_t>(port) * params_.vcs_per_class + ext.vc,
                   ready_at);
  }
  return tlm::TLM_ACCEPTED;
}

void SwitchChip::request_output(uint16_t output, TrafficClass traffic_class, uint32_t requester,
                                const sc_time& ready_at) {
  OutputPort& o = outputs_[output];
  std::vector<uint32_t>& requesters = o.crossbar[static_cast<size_t>(traffic_class)].requesters;
  requesters.insert(std::upper_bound(requesters.begin(), requesters.end(), requester), requester);
  if (o.listening) {
    const sc_time now = sc_core::sc_time_stamp();
    o.wake.notify(ready_at > now ? ready_at - now : SC_ZERO_TIME);
  }
}

void SwitchChip::serve_output(uint16_t output) {
  OutputPort& o = outputs_[output];
  NvlinkTxIf* link = out[output].operator->();
  o.listening = false;
  if (o.crossbar[0].requesters.empty() && o.crossbar[1].requesters.empty()) {
    o.listening = true;
    sc_core::next_trigger(o.wake);
    return;
  }
  if (!link->idle()) {
    sc_core::next_trigger(link->ready_event());
    return;
  }
  const sc_time now = sc_core::sc_time_stamp();
  sc_time next_ready = sc_core::sc_max_time();
  for (int i = 0; i < kTrafficClasses; ++i) {
    const auto traffic_class = static_cast<TrafficClass>((o.next_class + i) % kTrafficClasses);
    CrossbarOutput& xbar = o.crossbar[static_cast<size_t>(traffic_class)];
    eligible_.clear();
    for (uint32_t requester : xbar.requesters) {
      const uint32_t port = requester / params_.vcs_per_class;
      const auto vc = static_cast<uint16_t>(requester % params_.vcs_per_class);
      const InputPort& input = inputs_[port];
      const Entry& head = input.fifos[fifo_index(traffic_class, vc)].front();
      const sc_time& input_free = input.crossbar_free[static_cast<size_t>(traffic_class)];
      const sc_time ready = std::max(head.ready_at, input_free);
      if (ready > now) {
        next_ready = std::min(next_ready, ready);
        continue;
      }
      if (link->available_vc(traffic_class, extension_of(*head.payload).wire_flits) < 0) continue;
      eligible_.push_back(ArbiterRequest{requester, head.ready_at.value()});
    }
    if (!eligible_.empty()) {
      const uint32_t winner = eligible_[xbar.arbiter->pick(eligible_)].requester;
      forward(output, traffic_class, winner);
      o.next_class = static_cast<uint8_t>((static_cast<int>(traffic_class) + 1) % kTrafficClasses);
      sc_core::next_trigger(link->ready_event());
      return;
    }
  }
  // Nothing can go now: wait for a head to become ready, credits to return, or a new request.
  o.listening = true;
  if (next_ready != sc_core::sc_max_time()) {
    sc_core::next_trigger(next_ready - now, link->ready_event() | o.wake);
  } else {
    sc_core::next_trigger(link->ready_event() | o.wake);
  }
}

void SwitchChip::forward(uint16_t output, TrafficClass traffic_class, uint32_t requester) {
  const uint32_t port = requester / params_.vcs_per_class;
  const auto vc = static_cast<uint16_t>(requester % params_.vcs_per_class);
  InputPort& input = inputs_[port];
  const size_t fifo = fifo_index(traffic_class, vc);
  const Entry entry = input.fifos[fifo].front();
  input.fifos[fifo].pop_front();
  --buffered_;

  std::vector<uint32_t>& requesters =
      outputs_[output].crossbar[static_cast<size_t>(traffic_class)].requesters;
  requesters.erase(std::lower_bound(requesters.begin(), requesters.end(), requester));

  tlm::tlm_generic_payload& payload = *entry.payload;
  NvlinkExtension& ext = extension_of(payload);
  const uint32_t wire_flits = ext.wire_flits;
  NvlinkTxIf* link = out[output].operator->();
  const sc_time serialization = link->serialization_time(wire_flits);

  // The input buffer drains as the message leaves: its credits (for the input VC, which the
  // extension still names) go back when the tail is out.
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_time drained = serialization;
  in[port]->nb_transport_bw(payload, phase, drained);

  // VC allocation for the next hop, then the output link takes the message.
  ext.vc = static_cast<uint16_t>(link->available_vc(traffic_class, wire_flits));
  link->send(payload);

  input.crossbar_free[static_cast<size_t>(traffic_class)] =
      sc_core::sc_time_stamp() + serialization / params_.crossbar_speedup;
  input.occupied_flits[fifo] -= std::min(wire_flits, params_.vc_depth_flits);
  stats_.forwarded[static_cast<size_t>(traffic_class)]++;
  stats_.forwarded_flits[static_cast<size_t>(traffic_class)] += wire_flits;

  payload.release();

  if (!input.fifos[fifo].empty()) {
    const Entry& next = input.fifos[fifo].front();
    request_output(next.output, traffic_class, requester, next.ready_at);
  }
}

uint64_t SwitchChip::describe_outstanding(std::ostream& os) const {
  uint64_t count = 0;
  for (size_t p = 0; p < inputs_.size(); ++p) {
    for (size_t f = 0; f < inputs_[p].fifos.size(); ++f) {
      for (const Entry& e : inputs_[p].fifos[f]) {
        const NvlinkExtension& ext = extension_of(*e.payload);
        os << "  " << name() << " input " << p << " " << to_string(ext.traffic_class) << " vc "
           << ext.vc << ": " << to_string(ext.opcode) << " GPU " << ext.source_gpu << "#"
           << ext.sequence << " -> GPU " << ext.target_gpu << " via output " << e.output
           << ", ready at " << e.ready_at << "\n";
        ++count;
      }
    }
  }
  return count;
}

}  // namespace nvsvp::model
