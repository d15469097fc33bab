#include "nvsvp/model/multimem_engine.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "nvsvp/model/sim_time.hpp"
#include "nvsvp/model/switch_chip.hpp"
#include "nvsvp/reduction/reduce_alu.hpp"
#include "nvsvp/reduction/reduction_factory.hpp"

namespace nvsvp::model {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

static_assert(static_cast<int>(hw::MultimemOp::bit_xor) == static_cast<int>(reduction::ReduceOp::bit_xor));
static_assert(static_cast<int>(hw::MultimemType::u64) == static_cast<int>(reduction::ReduceType::u64));

}  // namespace

MultimemEngine::MultimemEngine(SwitchChip& chip, PayloadPool& pool, SwitchCsr& registers,
                               const SwitchParams& params, const LinkParams& link, const char* owner)
    : chip_(chip),
      pool_(pool),
      registers_(registers),
      owner_(owner),
      params_(params),
      link_(link),
      internal_latency_(picoseconds(to_picoseconds(params.latency_ns))),
      reduction_clock_(picoseconds(to_picoseconds(params.reduction_clock_ns))),
      reduction_config_(unit_config(params)) {}

void MultimemEngine::send_generated(tlm::tlm_generic_payload& message, NvlinkExtension& ext, const sc_time& ready_at,
                                    uint32_t parent) {
  const uint16_t output = chip_.select_output(ext);
  chip_.push_generated(output, SwitchEntry{&message, &ext, ext.wire_flits, output, ready_at, parent},
                       ext.traffic_class);
}

// ---------------------------------------------------------------------------------------------
// Static multimem

void MultimemEngine::refuse(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                            uint32_t error_bit, const sc_time& ready_at) {
  const NvlinkExtension ext = extension_of(payload);
  NVSVP_LOG(chip_.log(), debug, "access error: " << to_string(ext.opcode) << " #" << ext.sequence << " from GPU "
                                                 << ext.source_gpu << " at 0x" << std::hex << ext.target_address
                                                 << " refused, error bit 0x" << error_bit << std::dec);
  const bool across_partitions = error_bit == hw::switch_regs::error_partition;
  registers_.count(across_partitions ? SwitchCounter::partition_errors : SwitchCounter::access_errors);
  registers_.raise_error(error_bit);
  chip_.free_input_space(port, payload, fifo, flits);
  // The issuer hears of it (nothing is written anywhere): a header-only error response.
  tlm::tlm_generic_payload& response = pool_.acquire();
  NvlinkExtension& r = extension_of(response);
  const bool load = ext.opcode == Opcode::multimem_ld_reduce || ext.opcode == Opcode::dynamic_ld_reduce;
  const bool unicast = ext.opcode == Opcode::write || ext.opcode == Opcode::read;
  make_response(r, unicast ? Opcode::access_error : Opcode::multimem_error, ext.source_gpu, ext.source_gpu,
                ext.counter, load || ext.opcode == Opcode::read ? ext.return_address : ext.target_address, 0,
                link_.header_flits_per_packet);
  r.refused_opcode = ext.opcode;
  if (load) {
    r.multimem_address = ext.target_address;
    r.load_bytes = ext.read_bytes;
    r.issuer_link = ext.issuer_link;
  }
  r.sequence = ext.sequence;
  r.packet_index = ext.packet_index;  // a refused packet's refusal: that packet of its message's
  r.packet_count = ext.packet_count;
  r.issue_time = ext.issue_time;
  response.set_command(tlm::TLM_WRITE_COMMAND);
  response.set_address(r.target_address);
  if (across_partitions) {
    // Back by the link it came by: the source may be isolated, with no route here.
    chip_.push_generated(port, SwitchEntry{&response, &r, r.wire_flits, port, ready_at}, TrafficClass::response);
  } else {
    send_generated(response, r, ready_at);
  }
}

bool MultimemEngine::group_within_partition(uint16_t port, const hw::GpuMask& members) const {
  for (uint32_t gpu : members) {
    if (!registers_.may_reach(port, gpu)) return false;
  }
  return true;
}

void MultimemEngine::accept_static(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                                   const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const MulticastGroup* group = registers_.group_for(ext.target_address);
  if (group == nullptr) {
    refuse(port, payload, fifo, flits, hw::switch_regs::error_group_not_configured, ready_at);
    return;
  }
  if (!group->has_member(ext.source_gpu)) {
    refuse(port, payload, fifo, flits, hw::switch_regs::error_not_a_member, ready_at);
    return;
  }
  // A group with a member outside the issuer's partition serves nobody (one predictable branch
  // while the chip has no partitions).
  if (registers_.partitioned() && !group_within_partition(port, group->members)) {
    refuse(port, payload, fifo, flits, hw::switch_regs::error_partition, ready_at);
    return;
  }
  if (ext.opcode != Opcode::multimem_store &&
      !reduction::op_valid_for_type(static_cast<reduction::ReduceOp>(ext.reduce_op),
                                    static_cast<reduction::ReduceType>(ext.reduce_type))) {
    // A bitwise op on a float type: the reduction unit would refuse the context.
    refuse(port, payload, fifo, flits, hw::switch_regs::error_reduction, ready_at);
    return;
  }
  if (ext.opcode == Opcode::multimem_ld_reduce) {
    if (admit_load(port, payload, fifo, flits)) start_load(port, payload, fifo, flits, ready_at);
    return;
  }
  // multimem_store / multimem_red: one copy per member, the issuer included, in GPU order.
  const hw::GpuMask& members = group->members;
  const uint32_t copies = members.count();
  const uint32_t parent = chip_.hold_input_space(payload, port, fifo, flits, copies);
  const uint64_t local_address = group->local_address(ext.target_address);
  for (uint32_t gpu : members) {
    tlm::tlm_generic_payload& copy = pool_.acquire();
    NvlinkExtension& c = extension_of(copy);
    make_switch_copy(c, ext, ext.opcode == Opcode::multimem_store ? Opcode::write : Opcode::reduce_write, gpu,
                     local_address);
    std::memcpy(copy.get_data_ptr(), payload.get_data_ptr(), payload.get_data_length());
    copy.set_data_length(payload.get_data_length());
    copy.set_command(tlm::TLM_WRITE_COMMAND);
    copy.set_address(local_address);
    send_generated(copy, c, ready_at, parent);
  }
  NVSVP_LOG(chip_.log(), debug, to_string(ext.opcode) << " #" << ext.sequence << " from GPU " << ext.source_gpu
                                << ": group at 0x" << std::hex << group->base << std::dec << ", " << copies
                                << " member copies");
  registers_.count(SwitchCounter::replications, copies);
}

void MultimemEngine::start_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                                     uint32_t flits, const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const MulticastGroup* group = registers_.group_for(ext.target_address);
  const hw::GpuMask& members = group->members;
  const uint32_t member_count = members.count();
  const uint32_t tag = open_reduction(port, payload, member_count);
  const uint32_t parent = chip_.hold_input_space(payload, port, fifo, flits, member_count);
  const uint64_t local_address = group->local_address(ext.target_address);
  for (uint32_t gpu : members) {
    tlm::tlm_generic_payload& read = pool_.acquire();
    NvlinkExtension& m = extension_of(read);
    make_switch_copy(m, ext, Opcode::member_read, gpu, local_address);
    m.reduction_tag = tag;
    read.set_data_length(0);
    read.set_command(tlm::TLM_READ_COMMAND);
    read.set_address(local_address);
    send_generated(read, m, ready_at, parent);
  }
  registers_.count(SwitchCounter::replications, member_count);
}

// ---------------------------------------------------------------------------------------------
// Dynamic multimem

bool MultimemEngine::trim_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                                  const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const uint32_t per_gpu = registers_.dynamic_experts_per_gpu();
  // The first flit says how many targets follow and which stage this is.
  const DynamicFirstFlit flit = decode_first_flit(payload.get_address());
  const hw::MultimemStage stage =
      ext.opcode == Opcode::dynamic_store ? hw::MultimemStage::dispatch : hw::MultimemStage::combine;
  bool routable = per_gpu != 0 && ext.targets != nullptr && flit.target_count > 0 && flit.stage == stage &&
                  flit.target_count == ext.target_count;
  bool crosses_partitions = false;
  if (routable) {
    // One copy per destination GPU (the output port is the GPU's, chosen by address as for any
    // message to it), each with the targets behind it.
    const bool partitioned = registers_.partitioned();
    auto gpu_of = [&](uint16_t expert) {
      const uint32_t gpu = expert / per_gpu;
      if (partitioned && !registers_.may_reach(port, gpu)) crosses_partitions = true;
      if (registers_.route_ports(gpu).empty()) routable = false;
      return gpu;
    };
    try {
      trim_targets(ext.targets, flit.target_count, gpu_of, ReduceResponses::one_per_port, trim_);
    } catch (const std::exception&) {
      routable = false;  // an expert listed twice: it would be written twice
    }
  }
  if (crosses_partitions) {
    refuse(port, payload, fifo, flits, hw::switch_regs::error_partition, ready_at);
    return false;
  }
  if (routable && ext.opcode == Opcode::dynamic_ld_reduce &&
      !reduction::op_valid_for_type(static_cast<reduction::ReduceOp>(ext.reduce_op),
                                    static_cast<reduction::ReduceType>(ext.reduce_type))) {
    refuse(port, payload, fifo, flits, hw::switch_regs::error_reduction, ready_at);
    return false;
  }
  if (!routable) refuse(port, payload, fifo, flits, hw::switch_regs::error_bad_target, ready_at);
  return routable;
}

void MultimemEngine::accept_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                                    const sc_time& ready_at) {
  // The target list costs the chip one pipeline cycle (docs/models/dynamic_multimem.md).
  const sc_time leaves = ready_at + reduction_clock_;
  if (!trim_dynamic(port, payload, fifo, flits, leaves)) return;
  const NvlinkExtension& ext = extension_of(payload);
  if (ext.opcode == Opcode::dynamic_ld_reduce) {
    if (admit_load(port, payload, fifo, flits)) start_dynamic_ld_reduce(port, payload, fifo, flits, leaves);
    return;
  }
  const uint32_t parent = chip_.hold_input_space(payload, port, fifo, flits, static_cast<uint32_t>(trim_.copies.size()));
  send_dynamic_copies(payload, parent, 0, leaves);
}

void MultimemEngine::send_dynamic_copies(tlm::tlm_generic_payload& request, uint32_t parent, uint32_t tag,
                                         const sc_time& leaves) {
  const NvlinkExtension& ext = extension_of(request);
  const bool store = ext.opcode == Opcode::dynamic_store;
  const bool explicit_addresses = ext.target_addresses != nullptr;
  // A store's copies carry its payload; a load's reads carry none (the answers do).
  const uint64_t bytes = store ? ext.payload_bytes : 0;
  for (const TrimmedCopy& t : trim_.copies) {
    tlm::tlm_generic_payload& copy = pool_.acquire();
    NvlinkExtension& c = extension_of(copy);
    // Trimmed per GPU (see trim_dynamic); the multimem address stays the target.
    make_switch_copy(c, ext, store ? Opcode::dynamic_write : Opcode::dynamic_member_read, t.port, ext.target_address);
    c.destination_targets = static_cast<uint16_t>(t.target_count);
    c.reduction_tag = tag;
    c.wire_flits = explicit_addresses ? explicit_wire_flits(link_, t.target_count, bytes)
                                      : dynamic_wire_flits(link_, t.target_count, bytes);
    if (store) std::memcpy(copy.get_data_ptr(), request.get_data_ptr(), request.get_data_length());
    copy.set_data_length(store ? request.get_data_length() : 0);
    copy.set_command(store ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    copy.set_address(encode_first_flit(DynamicFirstFlit{
        c.target_address, store ? hw::MultimemStage::dispatch : hw::MultimemStage::combine, t.target_count}));
    send_generated(copy, c, leaves, parent);
  }
  NVSVP_LOG(chip_.log(), debug, to_string(ext.opcode) << " #" << ext.sequence << " from GPU " << ext.source_gpu
                                << ": " << ext.target_count << " targets, " << trim_.copies.size() << " copies");
  registers_.count(SwitchCounter::replications, trim_.copies.size());
}

void MultimemEngine::start_dynamic_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                                             uint32_t flits, const sc_time& ready_at) {
  const NvlinkExtension& ext = extension_of(payload);
  const auto copies = static_cast<uint32_t>(trim_.copies.size());
  const uint32_t tag = open_reduction(port, payload, trim_.expected_responses);
  PendingReduction& r = reductions_[tag];
  r.targets = ext.targets;
  r.target_addresses = ext.target_addresses;
  r.remote_targets = ext.target_count;
  r.issuer_targets = ext.issuer_targets;
  const uint32_t parent = chip_.hold_input_space(payload, port, fifo, flits, copies);
  send_dynamic_copies(payload, parent, tag, ready_at);
}

// ---------------------------------------------------------------------------------------------
// Reduction contexts

bool MultimemEngine::admit_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits) {
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
  NVSVP_LOG(chip_.log(), debug, "port " << port << ": no free reduction context, " << to_string(extension_of(payload).opcode)
                                << " #" << extension_of(payload).sequence << " from GPU "
                                << extension_of(payload).source_gpu << " parked");
  parked_loads_[port].push_back(ParkedLoad{&payload, fifo, flits});
  ++stats_.parked_loads;
  return false;
}

void MultimemEngine::start_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
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

bool MultimemEngine::context_available(uint16_t port) const {
  // The unit has reduction_config_.contexts; firmware lets the port hold CONTEXTS_ENABLED of them.
  const size_t held = reduction_config_.contexts - free_contexts_[port].size();
  return held < registers_.reduction_contexts_enabled();
}

uint32_t MultimemEngine::open_reduction(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t responses) {
  const NvlinkExtension& request = extension_of(payload);
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
  r.issuer_link = request.issuer_link;
  r.request = &payload;
  payload.acquire();
  return tag;
}

// ---------------------------------------------------------------------------------------------
// Member responses and results

void MultimemEngine::run_reduction_unit(uint16_t port, const std::vector<reduction::Command>& commands) {
  reduction::ReductionUnit& unit = reduction_unit(port);
  std::vector<reduction::ResultBeat>& results = unit_results_;
  results.clear();
  const uint64_t cycles_before = unit.cycles();
  try {
    unit.process(commands, results);
  } catch (const reduction::ReductionMismatch& mismatch) {
    // The `both` backend found the RTL and the model disagreeing: the run is not trustworthy.
    const std::string message = std::string("ReductionMismatch at port ") + std::to_string(port) + ": " + mismatch.what();
    SC_REPORT_FATAL(owner_, message.c_str());
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
    if (!r.active || beat.beat >= r.length_beats) SC_REPORT_FATAL(owner_, "reduction result for no outstanding ld_reduce");
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

void MultimemEngine::open_context(PendingReduction& r, uint32_t bytes, std::vector<reduction::Command>& commands) {
  buffer_used_[r.port] += r.read_bytes;
  count_reduction_buffer(static_cast<int64_t>(r.read_bytes));
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

void MultimemEngine::take_member_response(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                                          uint32_t flits) {
  const NvlinkExtension& ext = extension_of(payload);
  // The response is consumed here: its buffer space frees as its tail arrives.
  chip_.free_input_space(port, payload, fifo, flits);
  if (ext.reduction_tag >= reductions_.size() || !reductions_[ext.reduction_tag].active) {
    SC_REPORT_FATAL(owner_, "member read response for no outstanding ld_reduce");
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
    open_context(r, bytes, commands);
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

void MultimemEngine::finish_reduction(uint32_t tag, const tlm::tlm_generic_payload* last_response) {
  PendingReduction& r = reductions_[tag];
  for (uint32_t beat = 0; beat < r.length_beats && last_response == nullptr; ++beat) {
    if (r.result_parts[beat] == 0) SC_REPORT_FATAL(owner_, "ld_reduce completed without a result beat");
  }
  // The one result to the issuer: as large as one member's response, the reduced data inside.
  tlm::tlm_generic_payload& response = issuer_response(r, Opcode::read_response);
  NvlinkExtension& x = extension_of(response);
  x.evicted_parts = r.evicted_parts;
  x.targets = r.targets;
  x.target_addresses = r.target_addresses;
  x.target_count = r.remote_targets;
  x.issuer_targets = r.issuer_targets;
  x.multimem_address = r.multimem_address;
  x.issuer_link = r.issuer_link;
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
    count_reduction_buffer(-static_cast<int64_t>(r.read_bytes));
  }
  const sc_time ready_at = std::max(current_time(), r.last_arrival) + internal_latency_ +
                           (last_response == nullptr ? r.unit_latency : SC_ZERO_TIME);
  send_generated(response, x, ready_at);
  registers_.count(SwitchCounter::reductions);
  if (r.evicted_parts > 0) ++stats_.evicted_reductions;
  NVSVP_LOG(chip_.log(), debug, "reduction #" << r.issue_sequence << " for GPU " << r.issuer << " done on port " << r.port
                                << ", " << r.read_bytes << " bytes, " << r.evicted_parts << " partials evicted");

  const uint16_t port = r.port;
  free_contexts_[port].push_back(r.context);
  registers_.release_reduction_context();
  r.active = false;
  r.request->release();  // every reduction holds its request (open_reduction)
  reductions_.give(tag);
  // A parked ld_reduce of this port takes the context.
  if (!parked_loads_[port].empty() && context_available(port)) {
    const ParkedLoad parked = parked_loads_[port].front();
    parked_loads_[port].pop_front();
    start_load(port, *parked.payload, parked.fifo, parked.flits, current_time() + internal_latency_);
    parked.payload->release();  // hold_input_space took its own reference
  }
}

uint64_t MultimemEngine::discard_loads(LostOperationSink& sink, std::vector<std::pair<uint32_t, uint64_t>>& lost) {
  uint64_t loads = 0;
  for (uint32_t tag = 0; tag < reductions_.size(); ++tag) {
    PendingReduction& r = reductions_[tag];
    if (!r.active) continue;
    lost.emplace_back(r.issuer, r.issue_sequence);
    sink.load_lost(*r.request, r.members_read);
    r.request->release();
    r.active = false;
    if (r.context_opened) {
      buffer_used_[r.port] -= r.read_bytes;
      count_reduction_buffer(-static_cast<int64_t>(r.read_bytes));
    }
    free_contexts_[r.port].push_back(r.context);
    registers_.release_reduction_context();
    reductions_.give(tag);
    ++loads;
  }
  for (uint16_t port = 0; port < parked_loads_.size(); ++port) {
    for (const ParkedLoad& parked : parked_loads_[port]) {
      chip_.free_input_space(port, *parked.payload, parked.fifo, parked.flits);
      sink.load_lost(*parked.payload, 0);
      parked.payload->release();
    }
    loads += parked_loads_[port].size();
    parked_loads_[port].clear();
  }
  return loads;
}

void MultimemEngine::count_reduction_buffer(int64_t delta_bytes) {
  const uint64_t now = current_time().value();
  reduction_occupancy_.change(now, delta_bytes);
  if (reduction_timeline_ != nullptr) reduction_timeline_->change(now, delta_bytes);
}

tlm::tlm_generic_payload& MultimemEngine::issuer_response(const PendingReduction& r, Opcode opcode) {
  tlm::tlm_generic_payload& response = pool_.acquire();
  NvlinkExtension& x = extension_of(response);
  make_response(x, opcode, r.issuer, r.issuer, r.counter, r.return_address, r.read_bytes,
                link_.wire_flits(r.read_bytes));
  x.reduce_op = r.reduce_op;
  x.reduce_type = r.reduce_type;
  x.sequence = r.issue_sequence;
  x.packet_index = extension_of(*r.request).packet_index;  // a load packet's result: that packet of
  x.packet_count = extension_of(*r.request).packet_count;  // its load's result (the packet fabric)
  x.issue_time = current_time();
  response.set_command(tlm::TLM_WRITE_COMMAND);
  response.set_address(x.target_address);
  return response;
}

void MultimemEngine::pass_partial_on(uint32_t tag, tlm::tlm_generic_payload& member_response) {
  PendingReduction& r = reductions_[tag];
  const NvlinkExtension& m = extension_of(member_response);
  tlm::tlm_generic_payload& partial = issuer_response(r, Opcode::reduce_partial);
  NvlinkExtension& x = extension_of(partial);
  std::memcpy(partial.get_data_ptr(), member_response.get_data_ptr(), member_response.get_data_length());
  partial.set_data_length(member_response.get_data_length());
  const sc_time ready_at = std::max(current_time(), m.tail_arrival) + internal_latency_;
  send_generated(partial, x, ready_at);
  ++r.evicted_parts;
  NVSVP_LOG(chip_.log(), debug, "eviction: reduction buffer of port " << r.port << " full, a partial of reduction #"
                                << r.issue_sequence << " passed on to GPU " << r.issuer);
  registers_.count(SwitchCounter::evictions);
  stats_.evicted_partial_bytes += r.read_bytes;
}

std::unique_ptr<reduction::ReductionUnit>& MultimemEngine::unit_slot(uint16_t port) {
  if (port >= params_.ports) SC_REPORT_FATAL(owner_, "reduction unit of a port the chip does not have");
  if (reduction_units_.empty()) reduction_units_.resize(params_.ports);
  return reduction_units_[port];
}

reduction::ReductionUnit& MultimemEngine::reduction_unit(uint16_t port) {
  std::unique_ptr<reduction::ReductionUnit>& unit = unit_slot(port);
  if (!unit) unit = reduction::make_reduction_unit(params_.reduction_backend, reduction_config_);
  return *unit;
}

void MultimemEngine::replace_reduction_unit(uint16_t port, std::unique_ptr<reduction::ReductionUnit> unit) {
  unit_slot(port) = std::move(unit);
}

}  // namespace nvsvp::model
