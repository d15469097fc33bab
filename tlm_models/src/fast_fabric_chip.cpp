// FastFabric (fast_fabric.hpp), the chip's own messages: the checks by which a chip refuses a
// request, the members' copies of a multicast and the error responses of a refused request, and
// how a packet of each becomes packets in the runs of the chip's own queues.
#include <cstring>

#include "nvsvp/model/fast_fabric.hpp"
#include "nvsvp/reduction/reduce_alu.hpp"

namespace nvsvp::model {

uint32_t FastFabric::partition_refusal(uint32_t link_index, const NvlinkExtension& ext) const {
  const LinkWiring& wiring = wiring_[link_index];
  const SwitchCsr& registers = chips_[wiring.chip]->registers();
  const bool refused = ext.traffic_class == TrafficClass::request && registers.partitioned() &&
                       !registers.may_reach(wiring.port, ext.target_gpu);
  return refused ? static_cast<uint32_t>(hw::switch_regs::error_partition) : 0u;
}

uint32_t FastFabric::multicast_refusal(uint32_t chip, uint32_t port, uint64_t address, const NvlinkExtension& ext,
                                       const MulticastGroup*& group) const {
  namespace regs = hw::switch_regs;
  const SwitchCsr& registers = chips_[chip]->registers();
  group = registers.group_for(address);
  if (group == nullptr) return regs::error_group_not_configured;
  if (!group->has_member(ext.source_gpu)) return regs::error_not_a_member;
  if (registers.partitioned()) {  // a group with a member outside the issuer's partition serves nobody
    for (const uint32_t member : group->members) {
      if (!registers.may_reach(port, member)) return regs::error_partition;
    }
  }
  if (ext.opcode == Opcode::multimem_red &&
      !reduction::op_valid_for_type(static_cast<reduction::ReduceOp>(ext.reduce_op),
                                    static_cast<reduction::ReduceType>(ext.reduce_type))) {
    return regs::error_reduction;
  }
  return 0;
}

void FastFabric::make_refusal(uint32_t message) {
  const NvlinkExtension& ext = extension_of(*messages_[message].payload);
  tlm::tlm_generic_payload& response = copy_pool_.acquire();
  NvlinkExtension& r = extension_of(response);
  const uint32_t packets = messages_[message].packets;
  const bool read = ext.opcode == Opcode::read;
  const bool unicast = ext.opcode == Opcode::write || read;
  make_response(r, unicast ? Opcode::access_error : Opcode::multimem_error, ext.source_gpu, ext.source_gpu,
                ext.counter, read ? ext.return_address : ext.target_address, 0, header_flits_ * packets);
  r.refused_opcode = ext.opcode;
  r.sequence = ext.sequence;
  r.packet_count = ext.packet_count;
  r.issue_time = ext.issue_time;
  response.set_command(tlm::TLM_WRITE_COMMAND);
  response.set_address(r.target_address);
  response.set_data_length(0);
  const uint32_t slot = open_message(response, packets, 0);
  messages_[message].refusal = slot;
}

void FastFabric::make_copies(uint32_t message, const MulticastGroup& group) {
  for (const uint32_t gpu : group.members) {
    const tlm::tlm_generic_payload& request = *messages_[message].payload;
    const NvlinkExtension& ext = extension_of(request);
    tlm::tlm_generic_payload& copy = copy_pool_.acquire();
    const uint64_t local_address = group.local_address(ext.target_address);
    make_switch_copy(extension_of(copy), ext, ext.opcode == Opcode::multimem_store ? Opcode::write : Opcode::reduce_write,
                     gpu, local_address);
    std::memcpy(copy.get_data_ptr(), request.get_data_ptr(), request.get_data_length());
    copy.set_data_length(request.get_data_length());
    copy.set_command(tlm::TLM_WRITE_COMMAND);
    copy.set_address(local_address);
    const uint32_t slot = open_message(copy, messages_[message].packets, 0);
    messages_[message].copies.push_back(slot);
  }
}

// The chip copies the packet to every member, each copy queued at the member's output as the
// chip's own; the packet's room is held until its last copy has left.
void FastFabric::copy_to_members(uint32_t link_index, const Share& share, uint32_t k, const PacketCredits& credits,
                                 uint64_t arrival_ps, uint64_t offset_ps) {
  const LinkWiring& wiring = wiring_[link_index];
  SwitchChip& chip = *chips_[wiring.chip];
  // Not refused: send_message checked the share, and its packets fall in one group.
  const MulticastGroup& group = *chip.registers().group_for(share.addresses[k]);
  const uint64_t local_address = group.local_address(share.addresses[k]);
  // The members' messages are made as the first packet starts, not when the request is handed
  // over: a GPU may hand over far more than its links carry at once.
  if (messages_[share.message].copies.empty()) make_copies(share.message, group);
  const uint32_t held = held_.take();
  held_[held] = HeldPacket{credits, link_index, group.members.count(), 0, share.traffic_class};
  uint32_t member = 0;
  for (const uint32_t gpu : group.members) {
    const uint16_t output = chip.output_for(gpu, local_address);
    const uint32_t copy_message = messages_[share.message].copies[member++];
    const uint32_t r = run_for(output, link_index, share.traffic_class, copy_message, true, arrival_ps, offset_ps);
    run_held_[r].push_back(held);
    add_to_run(r, share.packets[k], offset_ps, k == 0 && share.first_of_message);
  }
  chip.registers().count(SwitchCounter::replications, member);
}

// The chip refuses the packet (share.refusal, its error bit): counted and raised in the chip's
// registers, its buffer space freed as its tail arrives, and a header-only error response queued
// as the chip's own: back by the link it came by across partitions (its source may have no route
// here), else routed to the issuer.
void FastFabric::refuse_packet(uint32_t link_index, const Share& share, uint32_t k, const PacketCredits& credits,
                               uint64_t start_ps, uint64_t offset_ps) {
  const LinkWiring& wiring = wiring_[link_index];
  SwitchChip& chip = *chips_[wiring.chip];
  const SharePacket& packet = share.packets[k];
  const uint64_t tail_ps = start_ps + offset_ps + latency_ps_ + serialization_ps(packet.wire_flits);
  return_credits(links_[link_index], share.traffic_class, CreditReturn{tail_ps + latency_ps_, credits.flits, credits.vc});
  const bool partition = share.refusal == hw::switch_regs::error_partition;
  chip.registers().count(partition ? SwitchCounter::partition_errors : SwitchCounter::access_errors);
  chip.registers().raise_error(share.refusal);
  const uint32_t answer = messages_[share.message].refusal;
  const NvlinkExtension& r = extension_of(*messages_[answer].payload);
  const uint16_t output = partition ? wiring.port : chip.output_for(r.target_gpu, r.target_address);
  const uint64_t arrival_ps = start_ps + offset_ps + latency_ps_ + head_flit_ps_ + chip_latency_ps_[wiring.chip];
  const uint32_t run = run_for(output, link_index, static_cast<uint8_t>(TrafficClass::response), answer, true,
                               arrival_ps, offset_ps);
  run_held_[run].push_back(kNoHeld);
  add_to_run(run, SharePacket{0, header_flits_, packet.index, output}, offset_ps, k == 0 && share.first_of_message);
}

}  // namespace nvsvp::model
