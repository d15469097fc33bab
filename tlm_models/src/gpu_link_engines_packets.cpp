// GpuLinkEngines (gpu_link_engines.hpp), its packets: how the packet and fast fabrics cut a message
// into its engine's packets, each on the link its own address interleaves to
// (docs/models/packet_fabric.md).
#include <algorithm>

#include "nvsvp/model/gpu_link_engines.hpp"
#include "nvsvp/model/multimem_packet.hpp"

namespace nvsvp::model {

uint32_t GpuLinkEngines::packet_wire_flits(const TxItem& message, uint64_t bytes, uint32_t packet_bytes) const {
  const bool load = message.opcode == Opcode::read || is_multimem_load(message.opcode);
  if (message.opcode == Opcode::dynamic_store || message.opcode == Opcode::dynamic_ld_reduce) {
    // One packet (bytes <= packet_bytes <= the link's largest): its targets ride in it.
    return message.target_addresses != nullptr ? explicit_wire_flits(link_params_, message.target_count, load ? 0 : bytes)
                                               : dynamic_wire_flits(link_params_, message.target_count, load ? 0 : bytes);
  }
  return link_params_.wire_flits(load ? 0 : bytes, packet_bytes);
}

// Each write of a chunk (or the one write, or the data a read asks for) cut from its start; packets
// are numbered in that order, and packet 0 carries the message's functional bytes. A link's packets
// are queued as one item that stands for them in turn (so a message costs an item per link it uses,
// not one per packet), in the order the packets would have been queued one by one.
TxItem GpuLinkEngines::cut(const TxItem& message, uint32_t packet_bytes) {
  const uint32_t writes = message.chunk != nullptr ? message.chunk_writes : 1;
  const uint64_t write_bytes = message.bytes / writes;
  const uint64_t packets_per_write = write_bytes == 0 ? 1 : (write_bytes + packet_bytes - 1) / packet_bytes;
  TxItem stream = message;
  stream.packet_count = static_cast<uint32_t>(packets_per_write * writes);
  stream.message_bytes = message.bytes;
  stream.message_source = message.source_address;
  stream.message_target = message.target_address;
  stream.packet_bytes = packet_bytes;
  return stream;
}

void GpuLinkEngines::enqueue_packets(const TxItem& message, uint32_t packet_bytes) {
  TxItem stream = cut(message, packet_bytes);
  stream.sequence = number_message();
  std::vector<uint32_t>& count = packets_per_link_;
  std::vector<uint32_t>& first = first_packet_of_link_;
  count.assign(engines_.size(), 0);
  first.assign(engines_.size(), 0);
  TxItem probe = stream;  // set_packet fills every packet field anew
  for (uint32_t k = 0; k < stream.packet_count; ++k) {
    const uint32_t link = set_packet(probe, k);
    if (count[link]++ == 0) first[link] = k;
  }
  for (uint32_t link = 0; link < count.size(); ++link) {
    if (count[link] == 0) continue;
    TxItem item = stream;
    set_packet(item, first[link]);
    item.link_packets = count[link];
    item.home_link = static_cast<uint8_t>(link);
    enqueue(link, TrafficClass::request, item);
  }
}

uint32_t GpuLinkEngines::set_packet(TxItem& item, uint32_t index) const {
  const bool read = item.opcode == Opcode::read || is_multimem_load(item.opcode);
  const uint32_t writes = item.chunk != nullptr ? item.chunk_writes : 1;
  const uint64_t write_bytes = item.message_bytes / writes;
  const uint64_t packets_per_write = item.packet_count / writes;  // enqueue_packets cut every write alike
  const auto write = static_cast<uint32_t>(index / packets_per_write);
  const uint64_t offset = (index % packets_per_write) * item.packet_bytes;
  uint64_t source = item.message_source;
  uint64_t target = item.message_target;
  if (item.chunk != nullptr) {
    uint64_t bits = item.chunk_mask;  // the write-th of the chunk's writes in this message
    for (uint32_t w = 0; w < write; ++w) bits &= bits - 1;
    const hw::WriteElement& element = item.chunk[__builtin_ctzll(bits)];
    source = element.source_address;
    target = element.target_address;
  }
  item.packet_index = index;
  item.bytes = std::min<uint64_t>(item.packet_bytes, write_bytes - offset);
  item.source_address = source + offset;
  item.target_address = target + offset;
  item.wire_flits = packet_wire_flits(item, item.bytes, item.packet_bytes);
  // A read's request goes on the link of the address it reads, as its response comes back on the
  // link of the address it lands at; a multimem packet on its multimem address's link, whose chip
  // serves it.
  const uint64_t address = read ? item.source_address : item.target_address;
  return item.for_switch ? link_for(address) : peer_link_for(item.peer, address);
}

void GpuLinkEngines::advance_to_next_packet(TxItem& item) const {
  uint32_t next = item.packet_index + 1;
  while (set_packet(item, next) != item.home_link) ++next;
  item.link_packets--;
}

}  // namespace nvsvp::model
