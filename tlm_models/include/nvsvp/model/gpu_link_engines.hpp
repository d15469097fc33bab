// A GPU's link engines (injection): one per NVLink, each feeding its link's NvlinkPort. A request
// or response for a GPU takes the VC of its destination at the switch's input (GpuParams::
// tx_vc_choice), and an engine keeps a queue per executor stream and VC (the responses one more
// set), so that a message waiting for one destination's VC holds back only messages for the
// destinations sharing that VC: virtual output queues, as wide as the switch's input has VCs.
// Messages the switch consumes (multimem and dynamic requests, member read responses) take any VC
// with room, from a queue of their own per stream. An engine serves the streams round robin, and
// within a stream its non-empty queues round robin (a bit mask of them, so that a serve looks at
// non-empty queues only); a queue's head leaves once it may (its not_before time), its VC has
// credits and, for a multimem load, the engine's load window has room. An engine commits the
// messages that will start within the lookahead (the link takes them back to back) and then sleeps
// until more could go; all of a GPU's engines are clients of one WakeScheduler, and a port whose
// credits an engine waits for wakes it.
//
// Sends are spread over the links by address interleaving (link_for); a chunk's writes each by
// their own target address (GpuParams::chunk_links), the writes sharing a link as one message.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/model/gpu_memory.hpp"
#include "nvsvp/model/gpu_params.hpp"
#include "nvsvp/model/gpu_stats.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/wake_scheduler.hpp"

namespace nvsvp::model {

// A message waiting for its link: a request the executor or the dynamic-multimem client issued
// (everything launch needs is copied here, so the task list is not touched again), or a prepared
// response.
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
  // A chunk: its writes, chunk_writes of them in this message, those whose bits chunk_mask sets
  // (bit i: chunk[i]); nullptr for no chunk.
  const hw::WriteElement* chunk = nullptr;
  uint32_t chunk_writes = 1;
  uint64_t chunk_mask = 1;
  // Dynamic: the target list (remote targets first, then `issuer_targets` of this GPU's own).
  const uint16_t* targets = nullptr;
  const uint64_t* target_addresses = nullptr;  // explicit addressing
  uint16_t target_count = 0;
  uint16_t issuer_targets = 0;
  bool count_per_expert = false;
  bool notification = false;
  uint8_t stream = 0;  // the executor stream that issued a request
  bool for_switch = false;  // consumed by the switch (multimem, dynamic, member read response): any VC
  // The packet fabric: packet `packet_index` of `packet_count` of a message numbered `sequence`
  // whose payload (all writes of a chunk) is `message_bytes`; `bytes`, addresses and wire_flits are
  // the packet's own. A message that travels whole: 0 of 1, numbered when it is launched.
  uint32_t packet_index = 0;
  uint32_t packet_count = 1;
  uint64_t sequence = 0;
  uint64_t message_bytes = 0;
  // The packet fabric queues a message once per link its packets use, as the `link_packets`
  // packets that interleave to `home_link`; the item stands for the next of them (its packet
  // fields filled) and leaves the queue with the last. The message's own addresses and packet size
  // give the others. 0: an item that is one message or one packet.
  uint32_t link_packets = 0;
  uint32_t packet_bytes = 0;
  uint64_t message_source = 0;
  uint64_t message_target = 0;
  uint8_t home_link = 0;
  sc_core::sc_time not_before;
};

// One packet of a message handed to the fast fabric: the link it goes on, its address (the
// destination's: the switch routes it by that), its wire flits and payload.
struct FastPacket {
  uint64_t target_address = 0;
  uint32_t wire_flits = 0;
  uint32_t bytes = 0;
  uint32_t link = 0;
};

// The fast fabric (simulation.fabric: fast, fast_fabric.hpp): a GPU hands it each message whole,
// cut into its packets as the packet fabric cuts it, and the fabric times the packets.
class FastFabricSink {
 public:
  virtual ~FastFabricSink() = default;
  // Decides what is due by now: a sender calls it before it cuts a message, since deciding may land
  // messages whose receivers answer at once, through the same sender.
  virtual void catch_up() = 0;
  // `message` (its extension filled as it will land: packet 0 of 1, the whole message's sizes),
  // issued by executor stream `stream` of GPU `gpu` and ready to leave now, after catch_up(); the
  // fabric takes its own reference.
  virtual void send_message(uint32_t gpu, uint32_t stream, tlm::tlm_generic_payload& message,
                            const FastPacket* packets, uint32_t count) = 0;
};

// The mask of a chunk message that carries all of a chunk's `writes` writes (at most 64).
inline uint64_t all_chunk_writes(uint32_t writes) { return writes >= 64 ? ~0ull : (1ull << writes) - 1; }

// A link engine's queue: a ring buffer that doubles when full and is reused, where std::deque
// would allocate a node per four TxItems.
class TxQueue {
 public:
  bool empty() const { return size_ == 0; }
  const TxItem& front() const { return items_[head_]; }
  TxItem& front() { return items_[head_]; }
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

class GpuLinkEngines {
 public:
  // `owner` names the GPU in reports; `scheduler` serves the engines (its client l is link l).
  GpuLinkEngines(const char* owner, const GpuParams& params, const LinkParams& link, uint32_t gpu_id, uint32_t links,
                 PayloadPool& pool, GpuMemory& memory, WakeScheduler& scheduler, GpuStats& stats);
  GpuLinkEngines(const GpuLinkEngines&) = delete;
  GpuLinkEngines& operator=(const GpuLinkEngines&) = delete;

  // Engine `link` feeds `port` (at the end of elaboration, once bindings are final).
  void attach(uint32_t link, NvlinkPort* port);
  // With simulation.fabric: fast, every message goes to `fabric` instead of the links' queues.
  void attach_fast_fabric(FastFabricSink* fabric) { fast_fabric_ = fabric; }

  uint32_t link_for(uint64_t address) const {
    return interleave_way(address, interleave_bytes_, static_cast<uint32_t>(engines_.size()));
  }
  // The link a write to `peer` at `address` (in the peer's memory) takes: GpuParams::link_interleave.
  uint32_t peer_link_for(uint32_t peer, uint64_t address) const {
    return link_for(fabric_interleave_ ? address + (uint64_t{peer} << kPeerApertureBits) : address);
  }
  // Each GPU's memory as a range of this size in the fabric's address space (above any address the
  // platform gives out).
  static constexpr uint32_t kPeerApertureBits = 40;
  // The message a request task (send, read, multimem or dynamic store or load) puts on its link.
  TxItem request_item(const hw::WorkSequence& sequence, const hw::Task& task) const;
  void enqueue(uint32_t link, TrafficClass traffic_class, const TxItem& item);
  // A send task's messages onto their links: one write on its address's link; a chunk's writes
  // grouped by their links (or whole on its first write's, chunk_links: first_write).
  void enqueue_send(const hw::WorkSequence& sequence, const hw::Task& task);
  // A static multimem task's request (multimem_store, multimem_red, multimem_ld_reduce) onto the
  // link its multimem address interleaves to (the packet fabric: each packet on its own's).
  void enqueue_multimem(const hw::WorkSequence& sequence, const hw::Task& task);
  // A request the switch serves (a static or dynamic multimem item) onto the link its multimem
  // address interleaves to (the packet fabric: each packet on its own's, a dynamic one's every
  // packet carrying the target list).
  void enqueue_for_switch(const TxItem& item);
  // A read task's request onto the link of the address it reads (the packet fabric: one request per
  // packet of the data it reads, each on its own address's link).
  void enqueue_read(const hw::WorkSequence& sequence, const hw::Task& task);
  // The next number of a message this GPU sends (the packet fabric numbers a message when it cuts it).
  uint64_t number_message() { return next_sequence_number_++; }
  // Serves engine `link` (the WakeScheduler's call): commits the queued messages that can start
  // within the lookahead, then asks to be served when more could go.
  void serve_link(uint32_t link);
  // A multimem load's result or refusal came back: its link engine may send more.
  void load_returned(const NvlinkExtension& ext);
  uint64_t queued_messages() const;
  // --- Links out of use (firmware's recovery from a link down, docs/models/gpu.md#links-out-of-use) ---
  // Which switch chip each link goes to (the cabling, from the platform), so that a link's
  // traffic can stay on its chip when the link goes out of use.
  void set_link_chips(std::vector<uint32_t> chip_of_link) { chip_of_link_ = std::move(chip_of_link); }
  // Link `link` goes out of use (false) or back into use (true). Out of use, its queued messages
  // and every message later queued for it move to another link, one to the same chip when there
  // is one. A member's response for a chip (it must stay on its chip) that no link in use reaches
  // is dropped and counted: that chip lost the load it answers (responses_dropped()). With no link
  // in use at all, every other message waits (stranded()) until one comes back into use.
  void set_link_enabled(uint32_t link, bool enabled);
  bool link_enabled(uint32_t link) const { return disabled_links_ == 0 || enabled_[link] != 0; }
  // Messages moved off links out of use (queued when the link went out of use, or queued for it later).
  uint64_t messages_moved() const { return messages_moved_; }
  uint64_t responses_dropped() const { return responses_dropped_; }
  uint64_t stranded() const { return stranded_.size(); }
  // --- Operations a switch chip lost (docs/models/gpu.md#lost-operations) ---
  // `item` (a request of this GPU's, or a response it sent, that a chip lost) waits here until
  // reissue_lost(); a lost load first gives back its place in the load window of `issuer_link`.
  void hold_lost(TrafficClass traffic_class, const TxItem& item);
  void release_lost_load(uint8_t issuer_link, uint64_t bytes);
  // Queues every held operation again, on the links in use now; returns how many.
  uint64_t reissue_lost();
  uint64_t lost_held() const { return lost_.size(); }
  uint64_t operations_reissued() const { return operations_reissued_; }

 private:
  // Queue groups: one per executor stream, the last for responses.
  static constexpr uint32_t kGroups = kExecutorStreams + 1;
  struct LinkEngine {
    // [group * (vcs + 1) + q]: q < vcs holds messages for VC q, q == vcs those for any VC.
    std::vector<TxQueue> queues;
    uint32_t active[kGroups] = {};  // per group, bit q: queue q is not empty
    uint8_t next_queue[kGroups] = {};
    uint32_t next_group = 0;
    uint64_t queued = 0;
    uint64_t queued_flits = 0;  // wire flits of the queued messages
    uint64_t load_bytes_in_flight = 0;  // multimem loads sent whose results have not come back
  };
  static_assert(kMaxVcsPerClass + 1 <= 32, "LinkEngine::active holds a group's queues in 32 bits");
  static bool is_multimem_load(Opcode opcode) {
    return opcode == Opcode::multimem_ld_reduce || opcode == Opcode::dynamic_ld_reduce;
  }
  void launch(uint32_t link, const TxItem& item, uint16_t vc);
  void place(uint32_t link, TrafficClass traffic_class, const TxItem& item);
  static constexpr uint32_t kNoLink = ~0u;
  // The link that carries what was meant for `link` while that one is out of use; kNoLink for a
  // member's response whose chip no link in use reaches.
  uint32_t substitute_link(uint32_t link, const TxItem& item) const;
  // Tries the head of queue `q` of `group`: launched (true), or not (next_ready lowered to when it
  // may leave, if that is what holds it).
  bool try_head(uint32_t link, LinkEngine& engine, uint32_t group, uint32_t q, const sc_core::sc_time& now,
                sc_core::sc_time& next_ready);
  void enqueue_chunk(const TxItem& whole);
  // The packet fabric: `message` (a write, a chunk of writes or a read) cut into packets of at most
  // `packet_bytes` of data, each queued on the link its own address interleaves to.
  void enqueue_packets(const TxItem& message, uint32_t packet_bytes);
  // `message` as the packet and fast fabrics cut it: its packet count and the fields set_packet
  // reads (the whole message's bytes and addresses, the packet size).
  static TxItem cut(const TxItem& message, uint32_t packet_bytes);
  // The fast fabric: `message` cut as enqueue_packets cuts it, handed whole with its packets.
  void send_to_fast_fabric(const TxItem& message, uint32_t packet_bytes);
  // The fast fabric: a read's prepared response, cut as its read was, each packet on the link of
  // the address it lands at.
  void send_response_to_fast_fabric(const TxItem& response);
  [[gnu::cold]] void refuse_on_fast_fabric(const TxItem& message) const;
  // The wire flits of one packet of `message` carrying `bytes` (a load's request: none).
  uint32_t packet_wire_flits(const TxItem& message, uint64_t bytes, uint32_t packet_bytes) const;
  // Fills `item`'s packet fields (index, bytes, addresses, wire flits) for packet `index` of its
  // message, and returns the link that packet interleaves to.
  uint32_t set_packet(TxItem& item, uint32_t index) const;
  // The item at the head of a queue stands for its message's next packet on its home link.
  void advance_to_next_packet(TxItem& item) const;
  // Of the links the chunk's writes interleave to, the one with the least work pending: the rest
  // of its port's message on the wire and its queued flits (ties: the earliest write's).
  uint32_t least_loaded_link(const TxItem& whole) const;
  // A new request's extension and data from its item (part of launch, inlined: once per message;
  // responses come prepared).
  [[gnu::always_inline]] inline void fill_message(tlm::tlm_generic_payload& payload, const TxItem& item);

  const char* owner_;
  LinkParams link_params_;
  uint32_t gpu_id_;
  uint32_t interleave_bytes_;
  uint32_t functional_bytes_;
  uint64_t load_window_bytes_;  // GpuParams::load_bytes_in_flight_per_link
  bool vc_by_destination_;      // GpuParams::tx_vc_choice == "destination"
  bool chunk_per_write_;        // GpuParams::chunk_links == "per_write"
  bool chunk_least_loaded_;     // GpuParams::chunk_links == "least_loaded"
  bool fabric_interleave_;      // GpuParams::link_interleave == "fabric_address"
  bool packet_fabric_;          // GpuParams::packet_fabric
  uint32_t sm_packet_bytes_;    // GpuParams::sm_store_packet_bytes
  uint32_t copy_engine_packet_bytes_;
  uint64_t flit_ps_;            // one flit's time on a link, for the engines' pending work
  uint32_t vcs_ = 1;            // VCs per class of the switch's inputs (the ports', at attach)
  sc_core::sc_time lookahead_;
  PayloadPool& pool_;
  GpuMemory& memory_;
  WakeScheduler& scheduler_;
  GpuStats& stats_;
  std::vector<LinkEngine> engines_;
  // The bound ports, resolved once (sc_vector and sc_port indirections cost cache misses).
  std::vector<NvlinkPort*> ports_;
  uint64_t next_sequence_number_ = 0;
  // Links out of use: how many, and per link 0 when out of use (only read when some are).
  uint32_t disabled_links_ = 0;
  std::vector<uint8_t> enabled_;
  std::vector<uint32_t> chip_of_link_;
  FastFabricSink* fast_fabric_ = nullptr;
  std::vector<FastPacket> fast_packets_;        // send_to_fast_fabric's scratch
  std::vector<uint32_t> packets_per_link_;      // enqueue_packets' scratch, per link
  std::vector<uint32_t> first_packet_of_link_;  // the same
  uint64_t messages_moved_ = 0;
  uint64_t responses_dropped_ = 0;
  std::vector<std::pair<TrafficClass, TxItem>> lost_;
  std::vector<std::pair<TrafficClass, TxItem>> stranded_;  // waiting for a link in use
  uint64_t operations_reissued_ = 0;
};

}  // namespace nvsvp::model
