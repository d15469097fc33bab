#include "nvsvp/model/gpu_receiver.hpp"

#include <algorithm>
#include <sstream>

#include "nvsvp/hw/hex_text.hpp"
#include "nvsvp/model/gpu_reduce.hpp"
#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

using sc_core::sc_time;

GpuReceiver::GpuReceiver(const char* owner, const GpuParams& params, const LinkParams& link, uint32_t gpu_id,
                         uint32_t links, PayloadPool& pool, GpuMemory& memory, ArrivalCounters& counters,
                         GpuLinkEngines& links_out, DynamicMultimemClient& dynamic, GpuStats& stats)
    : owner_(owner),
      link_params_(link),
      gpu_id_(gpu_id),
      functional_bytes_(params.functional_bytes),
      pool_(pool),
      memory_(memory),
      counters_(counters),
      links_(links_out),
      dynamic_(dynamic),
      stats_(stats),
      backward_(links, nullptr) {}

inline void GpuReceiver::receive_chunk(const Payload& payload, const NvlinkExtension& ext, const sc_time& at) {
  const auto n = static_cast<size_t>(std::min<uint64_t>(ext.payload_bytes / ext.chunk_writes, functional_bytes_));
  const uint8_t* data = payload.get_data_ptr();
  for (uint64_t bits = ext.chunk_mask; bits != 0; bits &= bits - 1, data += functional_bytes_) {
    const uint64_t target = ext.chunk[__builtin_ctzll(bits)].target_address;
    memory_.write(target, data, n);
    counters_.count_landing(target, at);
  }
  // The part without the chunk's first write is one more message of a chunk split over links.
  if ((ext.chunk_mask & 1) == 0) stats_.chunk_parts_received++;
  if (ext.notification) {
    stats_.notification_messages_received++;
    stats_.notifications_received += ext.chunk_writes;
  }
  counters_.record_arrival(ext.counter, at, ext.chunk_writes);
}

inline void GpuReceiver::receive_data(const Payload& payload, const NvlinkExtension& ext, const sc_time& at) {
  if (ext.evicted_parts != 0 || ext.issuer_targets != 0) {
    complete_load(payload, ext, at);
    return;
  }
  memory_.write(ext.target_address, payload.get_data_ptr(), payload.get_data_length());
  counters_.count_landing(ext.target_address, at);
  counters_.record_arrival(ext.counter, at);
}

void GpuReceiver::complete_load(const Payload& payload, const NvlinkExtension& ext, const sc_time& at) {
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
      SC_REPORT_FATAL(owner_, msg.str().c_str());
    }
    accumulate(sum, held->second.data, std::min(bytes, held->second.bytes), op, type);
    held_partials_.erase(held);
  }
  bool miss = false;
  if (ext.issuer_targets > 0) {
    dynamic_.add_local_partials(ext.multimem_address, ext.targets, ext.target_addresses, ext.target_count,
                                ext.issuer_targets, ext.payload_bytes, ext.reduce_op, ext.reduce_type, sum, bytes, true,
                                miss);
  }
  memory_.write(ext.target_address, sum, bytes);
  counters_.record_arrival(ext.counter, dynamic_.landed(at, miss));
}

void GpuReceiver::settle_partials(const NvlinkExtension& ext) {
  auto held = held_partials_.find(ext.target_address);
  const uint32_t parts = held == held_partials_.end() ? 0 : held->second.parts;
  if (parts != ext.evicted_parts) {
    std::ostringstream msg;
    msg << "ld_reduce result packet " << ext.packet_index << " for " << hw::hex_text(ext.target_address) << " follows "
        << parts << " passed-on partials, the switch sent " << ext.evicted_parts;
    SC_REPORT_FATAL(owner_, msg.str().c_str());
  }
  held_partials_.erase(held);
}

void GpuReceiver::receive_reduce_partial(const Payload& payload, const NvlinkExtension& ext) {
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
}

void GpuReceiver::report_untrimmed(const char* what, const NvlinkExtension& ext, uint32_t here) const {
  std::ostringstream msg;
  msg << "dynamic " << what << " from GPU " << ext.source_gpu << "#" << ext.sequence << " names " << here
      << " experts of GPU " << gpu_id_ << ", the switch trimmed it to " << ext.destination_targets;
  SC_REPORT_FATAL(owner_, msg.str().c_str());
}

inline void GpuReceiver::receive_dynamic_write(const Payload& payload, const NvlinkExtension& ext, const sc_time& at) {
  const auto n = static_cast<size_t>(std::min<uint64_t>(ext.payload_bytes, functional_bytes_));
  const auto packets = static_cast<uint32_t>(packets_of(link_params_, ext.payload_bytes));
  bool miss = false;
  uint32_t written = 0;
  for (uint32_t i = 0; i < ext.target_count; ++i) {
    if (!dynamic_.is_local_expert(ext.targets[i])) continue;
    const uint64_t address = dynamic_.target_location(ext.target_address, hw::MultimemStage::dispatch, ext.targets,
                                                      ext.target_addresses, i, packets, miss);
    memory_.write(address, payload.get_data_ptr(), n);
    counters_.count_landing(address, dynamic_.landed(at, miss));
    ++written;
  }
  const sc_time landed = dynamic_.landed(at, miss);
  check_trimmed("write", payload, ext, written, true);
  if (ext.count_per_expert) {
    for (uint32_t i = 0; i < ext.target_count; ++i) {
      if (dynamic_.is_local_expert(ext.targets[i])) {
        dynamic_.count_dynamic_block(ext.counter, true, ext.targets[i], landed);
      }
    }
  } else {
    counters_.record_arrival(ext.counter, landed, written);
  }
}

inline void GpuReceiver::receive_write_ack(const NvlinkExtension& ext, const sc_time& at) {
  counters_.record_arrival(ext.counter, at);
}

inline void GpuReceiver::receive_reduce_write(const Payload& payload, const NvlinkExtension& ext, const sc_time& at) {
  uint8_t current[PayloadPool::kMaxFunctionalBytes];
  const size_t bytes = payload.get_data_length();
  memory_.read(ext.target_address, current, bytes);
  accumulate(current, payload.get_data_ptr(), bytes, static_cast<reduction::ReduceOp>(ext.reduce_op),
             static_cast<reduction::ReduceType>(ext.reduce_type));
  memory_.write(ext.target_address, current, bytes);
  counters_.record_arrival(ext.counter, at);
}

inline void GpuReceiver::receive_multimem_error(const NvlinkExtension& ext, const sc_time& at) {
  // Nothing was written anywhere; the wait on the counter completes so that firmware sees the
  // error (switch ERROR_STATUS, this count) instead of a hang.
  stats_.multimem_errors++;
  counters_.record_arrival(ext.counter, at);
}

// Out of line: refusals are rare. A refused read's wait completes, as a refused multimem load's
// does; a refused write leaves every counter alone (its destination's counts nothing).
void GpuReceiver::receive_access_error(const NvlinkExtension& ext, const sc_time& at) {
  stats_.access_errors++;
  if (ext.refused_opcode == Opcode::read) counters_.record_arrival(ext.counter, at);
}

void GpuReceiver::reject(const NvlinkExtension& ext) {
  std::ostringstream msg;
  msg << to_string(ext.opcode) << " from GPU " << ext.source_gpu << "#" << ext.sequence << " reached GPU " << gpu_id_
      << ": only a switch takes it";
  SC_REPORT_FATAL(owner_, msg.str().c_str());
}

inline void GpuReceiver::answer_read(uint32_t link, const Payload& payload, const NvlinkExtension& ext,
                                     const sc_time& at) {
  // The response leaves once the request has fully arrived.
  tlm::tlm_generic_payload& response = pool_.acquire();
  NvlinkExtension& r = extension_of(response);
  const bool for_switch = ext.opcode == Opcode::member_read || ext.opcode == Opcode::dynamic_member_read;
  make_response(r, for_switch ? Opcode::member_read_response : Opcode::read_response, gpu_id_, ext.source_gpu,
                ext.counter, ext.return_address, ext.read_bytes, link_params_.wire_flits(ext.read_bytes));
  r.reduction_tag = ext.reduction_tag;
  // The packet fabric: one response packet per read packet, gathered at the requester by the read's
  // number.
  r.packet_index = ext.packet_index;
  r.packet_count = ext.packet_count;
  r.sequence = ext.sequence;
  r.packet_bytes = ext.packet_bytes;  // the fast fabric cuts the response as the read was cut
  const auto n = static_cast<unsigned>(std::min<uint64_t>(ext.read_bytes, functional_bytes_));
  bool miss = false;
  if (ext.opcode == Opcode::dynamic_member_read) {
    // One response for all of this GPU's targets: the sum of their partials.
    const uint32_t summed =
        dynamic_.add_local_partials(ext.target_address, ext.targets, ext.target_addresses, 0, ext.target_count,
                                    ext.read_bytes, ext.reduce_op, ext.reduce_type, response.get_data_ptr(), n, false,
                                    miss);
    check_trimmed("load", payload, ext, summed, false);
    if (ext.target_addresses != nullptr) {
      r.wire_flits = explicit_wire_flits(link_params_, ext.destination_targets, ext.read_bytes);
    }
  } else {
    memory_.read(ext.target_address, response.get_data_ptr(), n);
  }
  response.set_data_length(n);
  response.set_address(r.target_address);
  response.set_command(tlm::TLM_WRITE_COMMAND);
  TxItem item;
  item.payload = &response;
  item.opcode = r.opcode;
  item.peer = ext.source_gpu;
  item.for_switch = for_switch;
  item.wire_flits = r.wire_flits;
  item.not_before = dynamic_.landed(at, miss);
  // A member read goes back on the link it came by: that link reaches the switch chip that
  // reduces it.
  links_.enqueue(for_switch ? link : links_.peer_link_for(ext.source_gpu, r.target_address), TrafficClass::response,
                 item);
}

GpuReceiver::Payload* GpuReceiver::gather(Payload& packet, const NvlinkExtension& ext) {
  // At most 2^11 GPUs and 2^52 messages per GPU: the key is unique for a run.
  const uint64_t key = (ext.sequence << 12) | (uint64_t{ext.source_gpu} << 1) |
                       (ext.traffic_class == TrafficClass::response ? 1u : 0u);
  PartialMessage& message = partial_messages_[key];
  message.landed++;
  message.payload_bytes += ext.payload_bytes;
  message.wire_flits += ext.wire_flits;
  message.last_tail = std::max(message.last_tail, ext.tail_arrival);
  if (ext.packet_index == 0) {
    packet.acquire();
    message.first = &packet;
  }
  if (message.landed < ext.packet_count) return nullptr;
  Payload* first = message.first;
  if (first == nullptr || message.landed != ext.packet_count) {
    std::ostringstream msg;
    msg << to_string(ext.opcode) << " from GPU " << ext.source_gpu << "#" << ext.sequence << ": " << message.landed
        << " packets landed of " << ext.packet_count << (first == nullptr ? ", packet 0 not among them" : "");
    SC_REPORT_FATAL(owner_, msg.str().c_str());
  }
  NvlinkExtension& whole = extension_of(*first);
  whole.payload_bytes = message.payload_bytes;
  whole.wire_flits = static_cast<uint32_t>(message.wire_flits);
  whole.tail_arrival = message.last_tail;
  partial_messages_.erase(key);
  return first;
}

tlm::tlm_sync_enum GpuReceiver::nb_transport_fw(int link, tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                                sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) SC_REPORT_FATAL(owner_, "unexpected phase on a receive link");
  const NvlinkExtension& ext = extension_of(payload);
  if (ext.target_gpu != gpu_id_) {
    std::ostringstream msg;
    msg << "message for GPU " << ext.target_gpu << " delivered to GPU " << gpu_id_ << " (from GPU "
        << ext.source_gpu << "#" << ext.sequence << ")";
    SC_REPORT_FATAL(owner_, msg.str().c_str());
  }
  const sc_time arrival = ext.tail_arrival;
  // The GPU drains its input at line rate: the buffer space frees as the tail arrives.
  const auto return_credits = [&] {
    tlm::tlm_phase end = tlm::END_REQ;
    sc_time freed = arrival - current_time();
    backward_[static_cast<size_t>(link)]->nb_transport_bw(payload, end, freed);
  };
  // A message cut into packets lands whole; what is answered or held per packet (reads, member
  // reads, partial sums passed on) is taken packet by packet.
  if (ext.packet_count > 1 && lands_whole(ext.opcode)) {
    return_credits();  // this packet's, before gather() gives packet 0 the whole message's sizes
    if (ext.load_bytes > 0) links_.load_returned(ext);  // each packet was a load in flight
    if (ext.packet_index != 0 && ext.evicted_parts != 0) settle_partials(ext);
    Payload* whole = gather(payload, ext);
    if (whole == nullptr) return tlm::TLM_ACCEPTED;
    const NvlinkExtension& message = extension_of(*whole);
    deliver(static_cast<uint32_t>(link), *whole, message, message.tail_arrival);
    whole->release();
    return tlm::TLM_ACCEPTED;
  }
  deliver(static_cast<uint32_t>(link), payload, ext, arrival);
  return_credits();
  return tlm::TLM_ACCEPTED;
}

void GpuReceiver::deliver(uint32_t link, const Payload& payload, const NvlinkExtension& ext, const sc_time& arrival) {
  if (ext.load_bytes > 0 && ext.packet_count == 1) links_.load_returned(ext);
  // A read's packets are one message; each partial sum passed on is one of its own.
  if (ext.packet_index == 0 || ext.opcode == Opcode::reduce_partial) stats_.messages_received++;
  stats_.payload_bytes_received += ext.payload_bytes;
  if (latencies_ != nullptr) {
    latencies_->by_opcode[static_cast<size_t>(ext.opcode)].record(
        arrival > ext.issue_time ? (arrival - ext.issue_time).value() : 0);
  }
  switch (ext.opcode) {
    case Opcode::write:
      if (ext.chunk != nullptr) {
        receive_chunk(payload, ext, arrival);
      } else {
        receive_data(payload, ext, arrival);
      }
      break;
    case Opcode::read_response: receive_data(payload, ext, arrival); break;
    case Opcode::reduce_partial: receive_reduce_partial(payload, ext); break;
    case Opcode::dynamic_write: receive_dynamic_write(payload, ext, arrival); break;
    case Opcode::write_ack: receive_write_ack(ext, arrival); break;
    case Opcode::reduce_write: receive_reduce_write(payload, ext, arrival); break;
    case Opcode::multimem_error: receive_multimem_error(ext, arrival); break;
    case Opcode::access_error: receive_access_error(ext, arrival); break;
    case Opcode::member_read_response:
    case Opcode::multimem_store:
    case Opcode::multimem_red:
    case Opcode::multimem_ld_reduce:
    case Opcode::dynamic_store:
    case Opcode::dynamic_ld_reduce: reject(ext); break;
    case Opcode::dynamic_member_read:
    case Opcode::member_read:
    case Opcode::read: answer_read(link, payload, ext, arrival); break;
  }
}

}  // namespace nvsvp::model
