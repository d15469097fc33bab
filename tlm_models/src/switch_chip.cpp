#include "nvsvp/model/switch_chip.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "nvsvp/model/sim_time.hpp"

#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/reduction/reduce_alu.hpp"
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
                       uint32_t chip_id, uint32_t interleave_bytes, const LinkParams& link)
    : sc_module(name),
      in("in", params.ports),
      out("out", params.ports),
      csr("csr"),
      params_(params),
      chip_id_(chip_id),
      link_(link),
      header_flits_(link.header_flits_per_packet),
      interleave_bytes_(interleave_bytes),
      internal_latency_(picoseconds(to_picoseconds(params.latency_ns))),
      // Inputs 0 .. ports-1 are the ports; input ports + o holds what the chip itself made for
      // output o (member copies, reduced results, error responses).
      inputs_(2 * static_cast<size_t>(params.ports)),
      crossbar_free_(2 * static_cast<size_t>(params.ports) * kTrafficClasses),
      outputs_(params.ports),
      output_scheduler_("outputs", params.ports,
                        [this](uint32_t output) { serve_output(static_cast<uint16_t>(output)); }),
      reduction_config_(reduction_config(params)),
      registers_(csr_config(params, chip_id, reduction_config_)),
      register_access_time_(picoseconds(to_picoseconds(params.register_access_ns))),
      reduction_clock_(picoseconds(to_picoseconds(params.reduction_clock_ns))) {
  csr.register_b_transport(this, &SwitchChip::register_transport);
  // The line changes inside whatever process touched the registers (firmware's b_transport, the
  // datapath raising an error); waiters hear it one delta later.
  registers_.on_interrupt_change([this](bool) { irq_changed_.notify(SC_ZERO_TIME); });
  const size_t fifos = static_cast<size_t>(kTrafficClasses) * params.vcs_per_class;
  for (uint32_t p = 0; p < params.ports; ++p) {
    in[p].set_receiver(this, static_cast<int>(p));
    for (CrossbarOutput& xbar : outputs_[p].crossbar) xbar.arbiter = make_arbiter(params.arbiter);
  }
  for (InputPort& input : inputs_) {
    input.fifos.resize(fifos);
    input.occupied_flits.assign(fifos, 0);
  }
}

void SwitchChip::end_of_elaboration() {
  for (uint32_t p = 0; p < params_.ports; ++p) {
    out_ports_.push_back(bound_port(out[p]));
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
  s.replications = registers_.counter(SwitchCounter::replications);
  s.reductions = registers_.counter(SwitchCounter::reductions);
  s.evictions = registers_.counter(SwitchCounter::evictions);
  s.access_errors = registers_.counter(SwitchCounter::access_errors);
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
  const sc_time ready_at = current_time() + delay + internal_latency_;
  switch (ext.opcode) {
    case Opcode::multimem_store:
    case Opcode::multimem_red:
    case Opcode::multimem_ld_reduce:
      accept_multimem(static_cast<uint16_t>(port), payload, static_cast<uint32_t>(fifo), flits, ready_at);
      return tlm::TLM_ACCEPTED;
    case Opcode::dynamic_store:
    case Opcode::dynamic_ld_reduce:
      accept_dynamic(static_cast<uint16_t>(port), payload, static_cast<uint32_t>(fifo), flits, ready_at);
      return tlm::TLM_ACCEPTED;
    case Opcode::member_read_response:
      take_member_response(static_cast<uint16_t>(port), payload, static_cast<uint32_t>(fifo), flits);
      return tlm::TLM_ACCEPTED;
    default:
      break;
  }
  const uint16_t output = select_output(ext);
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
  NvlinkPort* link = out_ports_[output];
  sc_time next_ready = never();
  for (int i = 0; i < kTrafficClasses; ++i) {
    const auto traffic_class = static_cast<TrafficClass>((o.next_class + i) % kTrafficClasses);
    CrossbarOutput& xbar = o.crossbar[static_cast<size_t>(traffic_class)];
    if (xbar.requests.empty()) continue;
    // Asked for at the first ready request only: often none is ready, and the port's answer does
    // not depend on when within this serve it is asked.
    uint32_t credits = 0;
    bool credits_known = false;
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
      if (!credits_known) {
        credits = link->best_credits(traffic_class);
        credits_known = true;
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
  NvlinkPort* link = out_ports_[output];
  const sc_time serialization = link->serialization_time(entry.wire_flits);

  const bool generated = is_generated_input(port);
  if (!generated) {
    // The input buffer drains as the message leaves: its credits (for the input VC, which the
    // extension still names) go back when the tail is out.
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_time drained = serialization;
    in_backward_[port]->nb_transport_bw(payload, phase, drained);
  }

  // VC allocation for the next hop, then the output link takes the message.
  entry.ext->vc = static_cast<uint16_t>(link->allocate_vc(traffic_class, entry.wire_flits));
  link->send(payload);

  if (!generated) {
    crossbar_free_[port * kTrafficClasses + static_cast<size_t>(traffic_class)] =
        current_time() + serialization / params_.crossbar_speedup;
    input.occupied_flits[fifo] -= std::min(entry.wire_flits, params_.vc_depth_flits);
  } else if (entry.parent != kNoParent) {
    // A member copy: the crossbar replicates without holding an input slot (multicast is one
    // read of the buffer); the request's own buffer frees with its last copy.
    release_copy_parent(entry.parent, serialization);
  }
  registers_.count(traffic_class == TrafficClass::request ? SwitchCounter::forwarded_requests
                                                          : SwitchCounter::forwarded_responses);
  stats_.forwarded_flits[static_cast<size_t>(traffic_class)] += entry.wire_flits;
  payload.release();

  if (!input.fifos[fifo].empty()) {
    const Entry& next = input.fifos[fifo].front();
    request_output(next.output, traffic_class, Request{requester, next.wire_flits, next.ready_at});
    // It is forwarded once its output and credits allow; by then its header would have left the
    // caches while it waited.
    prefetch_message_header(*next.payload);
  }
  return serialization;
}

// ---------------------------------------------------------------------------------------------
// Static multimem

namespace {

static_assert(static_cast<int>(hw::MultimemOp::bit_xor) == static_cast<int>(reduction::ReduceOp::bit_xor));
static_assert(static_cast<int>(hw::MultimemType::u64) == static_cast<int>(reduction::ReduceType::u64));

bool is_member_of(uint64_t members, uint32_t gpu) { return gpu < 64 && ((members >> gpu) & 1u) != 0; }

}  // namespace

void SwitchChip::free_input_space(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits) {
  inputs_[port].occupied_flits[fifo] -= flits;
  const NvlinkExtension& ext = extension_of(payload);
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_time freed = ext.tail_arrival > current_time() ? ext.tail_arrival - current_time() : SC_ZERO_TIME;
  in_backward_[port]->nb_transport_bw(payload, phase, freed);
}

uint32_t SwitchChip::hold(tlm::tlm_generic_payload& payload, uint16_t port, uint32_t fifo, uint32_t flits,
                          uint32_t copies) {
  const uint32_t index = held_.take();
  payload.acquire();
  held_[index] = HeldRequest{&payload, port, fifo, flits, copies};
  return index;
}

void SwitchChip::release_copy_parent(uint32_t parent, const sc_time& drained) {
  HeldRequest& held = held_[parent];
  if (--held.copies_left > 0) return;
  inputs_[held.port].occupied_flits[held.fifo] -= held.flits;
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_time when = drained;
  in_backward_[held.port]->nb_transport_bw(*held.payload, phase, when);
  held.payload->release();
  held.payload = nullptr;
  held_.give(parent);
}

void SwitchChip::push_generated(uint16_t output, const Entry& entry, TrafficClass traffic_class) {
  const uint32_t input = params_.ports + output;
  SmallFifo<Entry>& queue = inputs_[input].fifos[fifo_index(traffic_class, 0)];
  queue.push_back(entry);
  stats_.peak_buffered_messages = std::max(stats_.peak_buffered_messages, ++buffered_);
  if (queue.size() == 1) {
    request_output(output, traffic_class, Request{input * params_.vcs_per_class, entry.wire_flits, entry.ready_at});
  }
}

void SwitchChip::refuse_multimem(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                                 uint32_t flits, uint32_t error_bit, const sc_time& ready_at) {
  const NvlinkExtension ext = extension_of(payload);
  registers_.count(SwitchCounter::access_errors);
  registers_.raise_error(error_bit);
  free_input_space(port, payload, fifo, flits);
  // The issuer hears of it (nothing is written anywhere): a header-only error response.
  tlm::tlm_generic_payload& response = pool_.acquire();
  NvlinkExtension& r = extension_of(response);
  r.opcode = Opcode::multimem_error;
  r.traffic_class = TrafficClass::response;
  r.source_gpu = ext.source_gpu;
  r.target_gpu = ext.source_gpu;
  r.counter = ext.counter;
  const bool load = ext.opcode == Opcode::multimem_ld_reduce || ext.opcode == Opcode::dynamic_ld_reduce;
  r.target_address = load ? ext.return_address : ext.target_address;
  if (load) {
    r.multimem_address = ext.target_address;
    r.load_bytes = ext.read_bytes;
  }
  r.wire_flits = header_flits_;
  r.sequence = ext.sequence;
  r.issue_time = ext.issue_time;
  response.set_command(tlm::TLM_WRITE_COMMAND);
  response.set_address(r.target_address);
  const uint16_t output = select_output(r);
  push_generated(output, Entry{&response, &r, r.wire_flits, output, ready_at}, TrafficClass::response);
}

void SwitchChip::accept_multimem(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                                 uint32_t flits, const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const MulticastGroup* group = registers_.group_for(ext.target_address);
  if (group == nullptr) {
    refuse_multimem(port, payload, fifo, flits, hw::switch_regs::error_group_not_configured, ready_at);
    return;
  }
  if (!group->has_member(ext.source_gpu)) {
    refuse_multimem(port, payload, fifo, flits, hw::switch_regs::error_not_a_member, ready_at);
    return;
  }
  if (ext.opcode != Opcode::multimem_store &&
      !reduction::op_valid_for_type(static_cast<reduction::ReduceOp>(ext.reduce_op),
                                    static_cast<reduction::ReduceType>(ext.reduce_type))) {
    // A bitwise op on a float type: the reduction unit would refuse the context.
    refuse_multimem(port, payload, fifo, flits, hw::switch_regs::error_reduction, ready_at);
    return;
  }
  if (ext.opcode == Opcode::multimem_ld_reduce) {
    if (admit_load(port, payload, fifo, flits)) start_load(port, payload, fifo, flits, ready_at);
    return;
  }
  // multimem_store / multimem_red: one copy per member, the issuer included, in GPU order.
  const uint64_t members = group->members;
  const uint32_t copies = static_cast<uint32_t>(__builtin_popcountll(members));
  const uint32_t parent = hold(payload, port, fifo, flits, copies);
  const uint64_t local_address = group->local_address(ext.target_address);
  for (uint32_t gpu = 0; gpu < 64; ++gpu) {
    if (!is_member_of(members, gpu)) continue;
    tlm::tlm_generic_payload& copy = pool_.acquire();
    NvlinkExtension& c = extension_of(copy);
    c = ext;
    c.opcode = ext.opcode == Opcode::multimem_store ? Opcode::write : Opcode::reduce_write;
    c.traffic_class = TrafficClass::request;
    c.target_gpu = gpu;
    c.target_address = local_address;
    std::memcpy(copy.get_data_ptr(), payload.get_data_ptr(), payload.get_data_length());
    copy.set_data_length(payload.get_data_length());
    copy.set_command(tlm::TLM_WRITE_COMMAND);
    copy.set_address(local_address);
    const uint16_t output = select_output(c);
    push_generated(output, Entry{&copy, &c, c.wire_flits, output, ready_at, parent}, TrafficClass::request);
  }
  registers_.count(SwitchCounter::replications, copies);
}

bool SwitchChip::admit_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits) {
  if (free_contexts_.empty()) {
    free_contexts_.resize(params_.ports);
    context_tag_.resize(params_.ports);
    parked_loads_.resize(params_.ports);
    evicted_seen_.assign(params_.ports, 0);
    buffer_used_.assign(params_.ports, 0);
  }
  std::vector<uint16_t>& free = free_contexts_[port];
  if (context_tag_[port].empty()) {
    // Context ids handed out lowest first, so a run is reproducible whatever the backend.
    context_tag_[port].assign(reduction_config_.contexts, 0);
    for (uint32_t c = reduction_config_.contexts; c-- > 0;) free.push_back(static_cast<uint16_t>(c));
  }
  if (context_available(port) && parked_loads_[port].empty()) return true;
  // Flow control, not an error: the request keeps its buffer space (the issuer's credits) and
  // starts when a context of this port frees.
  payload.acquire();
  parked_loads_[port].push_back(ParkedLoad{&payload, fifo, flits});
  ++stats_.parked_loads;
  return false;
}

void SwitchChip::start_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                            const sc_time& ready_at) {
  if (extension_of(payload).opcode == Opcode::dynamic_ld_reduce) {
    // A parked load was trimmed when it arrived, but trim_ is scratch: trim it again.
    const NvlinkExtension& ext = extension_of(payload);
    trim_targets(ext.targets, ext.target_count,
                 [per_gpu = registers_.dynamic_experts_per_gpu()](uint16_t expert) { return expert / per_gpu; },
                 ReduceResponses::one_per_port, trim_);
    start_dynamic_ld_reduce(port, payload, fifo, flits, ready_at);
  } else {
    start_ld_reduce(port, payload, fifo, flits, ready_at);
  }
}

bool SwitchChip::context_available(uint16_t port) const {
  // The unit has reduction_config_.contexts; firmware lets the port hold CONTEXTS_ENABLED of them.
  const size_t held = reduction_config_.contexts - free_contexts_[port].size();
  return held < registers_.reduction_contexts_enabled();
}

uint32_t SwitchChip::open_reduction(uint16_t port, const NvlinkExtension& request, uint32_t responses) {
  const uint16_t context = free_contexts_[port].back();
  free_contexts_[port].pop_back();
  // Always succeeds: the chip-wide pool is the sum of the ports' enabled contexts (kept for the
  // register block's in-use and peak figures).
  registers_.acquire_reduction_context();
  const uint32_t tag = reductions_.take();
  context_tag_[port][context] = tag;
  PendingReduction& r = reductions_[tag];
  // The per-beat vectors keep their capacity from the tag's last use: reductions are many and
  // short, and take_member_response sizes them afresh when the context opens.
  std::vector<reduction::Beat> result = std::move(r.result);
  std::vector<uint16_t> result_parts = std::move(r.result_parts);
  r = PendingReduction{};
  r.result = std::move(result);
  r.result_parts = std::move(result_parts);
  r.active = true;
  r.port = port;
  r.context = context;
  r.responses_left = responses;
  r.reduce_op = request.reduce_op;
  r.reduce_type = request.reduce_type;
  r.issuer = request.source_gpu;
  r.counter = request.counter;
  r.return_address = request.return_address;
  r.read_bytes = request.read_bytes;
  r.issue_sequence = request.sequence;
  r.multimem_address = request.target_address;
  return tag;
}

void SwitchChip::start_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                                 uint32_t flits, const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const MulticastGroup* group = registers_.group_for(ext.target_address);
  const uint64_t members = group->members;
  const uint32_t member_count = static_cast<uint32_t>(__builtin_popcountll(members));
  const uint32_t tag = open_reduction(port, ext, member_count);
  const uint32_t parent = hold(payload, port, fifo, flits, member_count);
  const uint64_t local_address = group->local_address(ext.target_address);
  for (uint32_t gpu = 0; gpu < 64; ++gpu) {
    if (!is_member_of(members, gpu)) continue;
    tlm::tlm_generic_payload& read = pool_.acquire();
    NvlinkExtension& m = extension_of(read);
    m = ext;
    m.opcode = Opcode::member_read;
    m.traffic_class = TrafficClass::request;
    m.target_gpu = gpu;
    m.target_address = local_address;
    m.reduction_tag = tag;
    read.set_data_length(0);
    read.set_command(tlm::TLM_READ_COMMAND);
    read.set_address(local_address);
    const uint16_t output = select_output(m);
    push_generated(output, Entry{&read, &m, m.wire_flits, output, ready_at, parent}, TrafficClass::request);
  }
  registers_.count(SwitchCounter::replications, member_count);
}

// ---------------------------------------------------------------------------------------------
// Dynamic multimem

bool SwitchChip::trim_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                              const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const uint32_t per_gpu = registers_.dynamic_experts_per_gpu();
  // The first flit says how many targets follow and which stage this is.
  const DynamicFirstFlit flit = decode_first_flit(payload.get_address());
  const hw::MultimemStage stage =
      ext.opcode == Opcode::dynamic_store ? hw::MultimemStage::dispatch : hw::MultimemStage::combine;
  bool routable = per_gpu != 0 && ext.targets != nullptr && flit.target_count > 0 && flit.stage == stage &&
                  flit.target_count == ext.target_count;
  if (routable) {
    // One copy per destination GPU (the output port is the GPU's, chosen by address as for any
    // message to it), each with the targets behind it.
    auto gpu_of = [&](uint16_t expert) {
      const uint32_t gpu = expert / per_gpu;
      if (registers_.route_ports(gpu).empty()) routable = false;
      return gpu;
    };
    try {
      trim_targets(ext.targets, flit.target_count, gpu_of, ReduceResponses::one_per_port, trim_);
    } catch (const std::exception&) {
      routable = false;  // an expert listed twice: it would be written twice
    }
  }
  if (routable && ext.opcode == Opcode::dynamic_ld_reduce &&
      !reduction::op_valid_for_type(static_cast<reduction::ReduceOp>(ext.reduce_op),
                                    static_cast<reduction::ReduceType>(ext.reduce_type))) {
    refuse_multimem(port, payload, fifo, flits, hw::switch_regs::error_reduction, ready_at);
    return false;
  }
  if (!routable) refuse_multimem(port, payload, fifo, flits, hw::switch_regs::error_bad_target, ready_at);
  return routable;
}

void SwitchChip::accept_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                                const sc_time& ready_at) {
  // The target list costs the chip one pipeline cycle (dysharp.md §2).
  const sc_time leaves = ready_at + reduction_clock_;
  if (!trim_dynamic(port, payload, fifo, flits, leaves)) return;
  const NvlinkExtension& ext = extension_of(payload);
  if (ext.opcode == Opcode::dynamic_ld_reduce) {
    if (admit_load(port, payload, fifo, flits)) start_dynamic_ld_reduce(port, payload, fifo, flits, leaves);
    return;
  }
  const uint32_t parent = hold(payload, port, fifo, flits, static_cast<uint32_t>(trim_.copies.size()));
  send_dynamic_copies(payload, parent, 0, leaves);
}

void SwitchChip::send_dynamic_copies(tlm::tlm_generic_payload& request, uint32_t parent, uint32_t tag,
                                     const sc_time& leaves) {
  const NvlinkExtension& ext = extension_of(request);
  const bool store = ext.opcode == Opcode::dynamic_store;
  const bool explicit_addresses = ext.target_addresses != nullptr;
  // A store's copies carry its payload; a load's reads carry none (the answers do).
  const uint64_t bytes = store ? ext.payload_bytes : 0;
  for (const TrimmedCopy& t : trim_.copies) {
    tlm::tlm_generic_payload& copy = pool_.acquire();
    NvlinkExtension& c = extension_of(copy);
    c = ext;
    c.opcode = store ? Opcode::dynamic_write : Opcode::dynamic_member_read;
    c.traffic_class = TrafficClass::request;
    c.target_gpu = t.port;  // trimmed per GPU (see trim_dynamic)
    c.targets_here = static_cast<uint16_t>(t.target_count);
    c.reduction_tag = tag;
    c.wire_flits = explicit_addresses ? explicit_wire_flits(link_, t.target_count, bytes)
                                      : dynamic_wire_flits(link_, t.target_count, bytes);
    if (store) std::memcpy(copy.get_data_ptr(), request.get_data_ptr(), request.get_data_length());
    copy.set_data_length(store ? request.get_data_length() : 0);
    copy.set_command(store ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    copy.set_address(encode_first_flit(DynamicFirstFlit{
        c.target_address, store ? hw::MultimemStage::dispatch : hw::MultimemStage::combine, t.target_count}));
    const uint16_t output = select_output(c);
    push_generated(output, Entry{&copy, &c, c.wire_flits, output, leaves, parent}, TrafficClass::request);
  }
  registers_.count(SwitchCounter::replications, trim_.copies.size());
}

void SwitchChip::start_dynamic_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                                         uint32_t flits, const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const auto copies = static_cast<uint32_t>(trim_.copies.size());
  const uint32_t tag = open_reduction(port, ext, trim_.expected_responses);
  PendingReduction& r = reductions_[tag];
  r.targets = ext.targets;
  r.target_addresses = ext.target_addresses;
  r.remote_targets = ext.target_count;
  r.issuer_targets = ext.targets_here;
  const uint32_t parent = hold(payload, port, fifo, flits, copies);
  send_dynamic_copies(payload, parent, tag, ready_at);
}

void SwitchChip::run_reduction_unit(uint16_t port, const std::vector<reduction::Command>& commands) {
  reduction::ReductionUnit& unit = reduction_unit(port);
  std::vector<reduction::ResultBeat>& results = unit_results_;
  results.clear();
  const uint64_t cycles_before = unit.cycles();
  try {
    unit.process(commands, results);
  } catch (const reduction::ReductionMismatch& mismatch) {
    // The `both` backend found the RTL and the model disagreeing: the run is not trustworthy.
    const std::string message = std::string("ReductionMismatch at port ") + std::to_string(port) + ": " + mismatch.what();
    SC_REPORT_FATAL(name(), message.c_str());
    return;
  }
  const sc_time latency = reduction_clock_ * static_cast<double>(unit.cycles() - cycles_before);
  const reduction::ReductionStatus status = unit.status();
  if (status.sticky != 0) registers_.raise_error(hw::switch_regs::error_reduction);
  if (status.counters.evicted_beats > evicted_seen_[port]) {
    registers_.count(SwitchCounter::evictions, status.counters.evicted_beats - evicted_seen_[port]);
    evicted_seen_[port] = status.counters.evicted_beats;
  }
  // Result beats may belong to other contexts of this port (a beat evicted to make room): each
  // goes to its own reduction, where partial beats are folded together.
  for (const reduction::ResultBeat& beat : results) {
    const uint32_t tag = context_tag_[port][beat.context];
    PendingReduction& r = reductions_[tag];
    if (!r.active || beat.beat >= r.length_beats) SC_REPORT_FATAL(name(), "reduction result for no outstanding ld_reduce");
    const auto op = static_cast<reduction::ReduceOp>(r.reduce_op);
    const auto type = static_cast<reduction::ReduceType>(r.reduce_type);
    if (r.result_parts[beat.beat]++ == 0) {
      r.result[beat.beat] = beat.data;
    } else {
      r.result[beat.beat] = reduction::finish(type, reduction::combine(op, type, reduction::widen(type, r.result[beat.beat]), beat.data));
    }
    r.unit_latency = latency;
  }
}

void SwitchChip::take_member_response(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits) {
  const NvlinkExtension& ext = extension_of(payload);
  // The response is consumed here: its buffer space frees as its tail arrives.
  free_input_space(port, payload, fifo, flits);
  if (ext.reduction_tag >= reductions_.size() || !reductions_[ext.reduction_tag].active) {
    SC_REPORT_FATAL(name(), "member read response for no outstanding ld_reduce");
  }
  const uint32_t tag = ext.reduction_tag;
  PendingReduction& r = reductions_[tag];
  r.last_arrival = std::max(r.last_arrival, ext.tail_arrival);
  const uint32_t bytes = static_cast<uint32_t>(payload.get_data_length());
  std::vector<reduction::Command>& commands = unit_commands_;
  commands.clear();
  if (!r.context_opened) {
    // The reduction takes its room in the port's buffer with its first partial. A full buffer
    // cannot accumulate it: the partial goes on to the issuer (an eviction, extra traffic). A
    // last response with nothing accumulated before it is the result as it is.
    const bool full = buffer_used_[r.port] + r.read_bytes > params_.reduction_buffer_bytes;
    if (r.responses_left == 1 && (full || r.evicted_parts > 0)) {
      finish_reduction(tag, &payload);
      return;
    }
    if (full) {
      pass_partial_on(tag, payload);
      --r.responses_left;
      return;
    }
    buffer_used_[r.port] += r.read_bytes;
    stats_.peak_reduction_buffer_bytes = std::max(stats_.peak_reduction_buffer_bytes, buffer_used_[r.port]);
    // The functional bytes (what the members' responses carry) set the context's length.
    r.context_opened = true;
    r.functional_bytes = bytes;
    r.length_beats = std::max<uint32_t>(1, (bytes + 15) / 16);
    r.result.assign(r.length_beats, reduction::Beat{});
    r.result_parts.assign(r.length_beats, 0);
    reduction::Command open;
    open.kind = reduction::Command::Kind::open_context;
    open.open.context = r.context;
    open.open.contributions = static_cast<uint16_t>(r.responses_left);
    open.open.op = static_cast<reduction::ReduceOp>(r.reduce_op);
    open.open.type = static_cast<reduction::ReduceType>(r.reduce_type);
    open.open.length_beats = r.length_beats;
    commands.push_back(open);
  }
  for (uint32_t beat = 0; beat < r.length_beats; ++beat) {
    reduction::Command contribution;
    contribution.kind = reduction::Command::Kind::contribution;
    contribution.contribution.context = r.context;
    contribution.contribution.beat = beat;
    const uint32_t offset = beat * 16;
    if (offset < bytes) {
      std::memcpy(contribution.contribution.data.data(), payload.get_data_ptr() + offset, std::min<uint32_t>(16, bytes - offset));
    }
    commands.push_back(contribution);
  }
  const uint16_t unit_port = r.port;
  run_reduction_unit(unit_port, commands);
  if (--reductions_[tag].responses_left == 0) finish_reduction(tag);
}

void SwitchChip::finish_reduction(uint32_t tag, const tlm::tlm_generic_payload* last_response) {
  PendingReduction& r = reductions_[tag];
  for (uint32_t beat = 0; beat < r.length_beats && last_response == nullptr; ++beat) {
    if (r.result_parts[beat] == 0) SC_REPORT_FATAL(name(), "ld_reduce completed without a result beat");
  }
  // The one result to the issuer: as large as one member's response, the reduced data inside.
  tlm::tlm_generic_payload& response = issuer_response(r, Opcode::read_response);
  NvlinkExtension& x = extension_of(response);
  x.evicted_parts = r.evicted_parts;
  x.targets = r.targets;
  x.target_addresses = r.target_addresses;
  x.target_count = r.remote_targets;
  x.targets_here = r.issuer_targets;
  x.multimem_address = r.multimem_address;
  x.load_bytes = r.read_bytes;
  if (last_response != nullptr) {
    // Passed through: nothing was accumulated here.
    std::memcpy(response.get_data_ptr(), last_response->get_data_ptr(), last_response->get_data_length());
    response.set_data_length(last_response->get_data_length());
    r.last_arrival = std::max(r.last_arrival, extension_of(*last_response).tail_arrival);
  } else {
    for (uint32_t beat = 0; beat < r.length_beats; ++beat) {
      const uint32_t offset = beat * 16;
      if (offset < r.functional_bytes) {
        std::memcpy(response.get_data_ptr() + offset, r.result[beat].data(), std::min<uint32_t>(16, r.functional_bytes - offset));
      }
    }
    response.set_data_length(r.functional_bytes);
    buffer_used_[r.port] -= r.read_bytes;
  }
  const sc_time ready_at = std::max(current_time(), r.last_arrival) + internal_latency_ +
                           (last_response == nullptr ? r.unit_latency : SC_ZERO_TIME);
  const uint16_t output = select_output(x);
  push_generated(output, Entry{&response, &x, x.wire_flits, output, ready_at}, TrafficClass::response);
  registers_.count(SwitchCounter::reductions);

  const uint16_t port = r.port;
  free_contexts_[port].push_back(r.context);
  registers_.release_reduction_context();
  r.active = false;
  reductions_.give(tag);
  // A parked ld_reduce of this port takes the context.
  if (!parked_loads_[port].empty() && context_available(port)) {
    const ParkedLoad parked = parked_loads_[port].front();
    parked_loads_[port].pop_front();
    start_load(port, *parked.payload, parked.fifo, parked.flits, current_time() + internal_latency_);
    parked.payload->release();  // hold() took its own reference
  }
}

tlm::tlm_generic_payload& SwitchChip::issuer_response(const PendingReduction& r, Opcode opcode) {
  tlm::tlm_generic_payload& response = pool_.acquire();
  NvlinkExtension& x = extension_of(response);
  x.opcode = opcode;
  x.traffic_class = TrafficClass::response;
  x.source_gpu = r.issuer;
  x.target_gpu = r.issuer;
  x.counter = r.counter;
  x.target_address = r.return_address;
  x.payload_bytes = r.read_bytes;
  x.wire_flits = link_.wire_flits(r.read_bytes);
  x.reduce_op = r.reduce_op;
  x.reduce_type = r.reduce_type;
  x.sequence = r.issue_sequence;
  x.issue_time = current_time();
  response.set_command(tlm::TLM_WRITE_COMMAND);
  response.set_address(x.target_address);
  return response;
}

void SwitchChip::pass_partial_on(uint32_t tag, tlm::tlm_generic_payload& member_response) {
  PendingReduction& r = reductions_[tag];
  const NvlinkExtension& m = extension_of(member_response);
  tlm::tlm_generic_payload& partial = issuer_response(r, Opcode::reduce_partial);
  NvlinkExtension& x = extension_of(partial);
  std::memcpy(partial.get_data_ptr(), member_response.get_data_ptr(), member_response.get_data_length());
  partial.set_data_length(member_response.get_data_length());
  const sc_time ready_at = std::max(current_time(), m.tail_arrival) + internal_latency_;
  const uint16_t output = select_output(x);
  push_generated(output, Entry{&partial, &x, x.wire_flits, output, ready_at}, TrafficClass::response);
  ++r.evicted_parts;
  registers_.count(SwitchCounter::evictions);
  stats_.evicted_partial_bytes += r.read_bytes;
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

void SwitchChip::replace_reduction_unit(uint16_t port, std::unique_ptr<reduction::ReductionUnit> unit) {
  if (port >= params_.ports) SC_REPORT_FATAL(name(), "reduction unit of a port the chip does not have");
  if (reduction_units_.empty()) reduction_units_.resize(params_.ports);
  reduction_units_[port] = std::move(unit);
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
