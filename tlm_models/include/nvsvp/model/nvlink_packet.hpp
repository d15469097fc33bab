// An NVLink message on the wire: a tlm_generic_payload carrying an NvlinkExtension.
//
// One transaction is one message (a token vector, a partial output, a read response...). Its
// `wire_flits` (payload flits plus one header per packet of at most max_packet_payload_bytes) is
// what occupies a link; `payload_bytes` is what the message carries. Only the leading
// functional bytes (GpuParams::functional_bytes) travel as real data in the payload's buffer.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/message_kind.hpp"

namespace nvsvp::model {


struct NvlinkExtension : tlm::tlm_extension<NvlinkExtension> {
  Opcode opcode = Opcode::write;
  TrafficClass traffic_class = TrafficClass::request;
  uint16_t vc = 0;               // virtual channel within the class, kept on every hop
  uint32_t source_gpu = 0;
  uint32_t target_gpu = 0;
  uint32_t counter = 0;          // arrival counter incremented at the target GPU
  uint64_t target_address = 0;   // address in the target GPU's memory
  uint64_t payload_bytes = 0;
  uint64_t read_bytes = 0;       // read: bytes the response will carry
  uint64_t return_address = 0;   // read: where the response lands in the requester
  uint32_t wire_flits = 0;
  // A chunk of `chunk_writes` writes (1 for a message that is no chunk): the functional bytes of
  // its i-th write sit at data + i * functional_bytes. The sender keeps
  // its work sequences until the end of the run, so the addresses the chunk's headers carry are
  // read from its list of writes.
  // A chunk split over links (GpuParams::chunk_links) carries the writes whose bits chunk_mask
  // sets (bit i: chunk[i]; chunk_writes of them), their functional bytes in that order.
  uint32_t chunk_writes = 1;
  const hw::WriteElement* chunk = nullptr;
  uint64_t chunk_mask = 1;
  // Static multimem: the reduction of multimem_red / reduce_write / multimem_ld_reduce (the
  // reduction unit's ReduceOp / ReduceType values), and for member_read(_response) the switch
  // chip's tag of the outstanding ld_reduce the read belongs to.
  uint8_t reduce_op = 0;
  uint8_t reduce_type = 0;
  uint32_t reduction_tag = 0;
  // Dynamic multimem: the issuer's target list (it keeps its work sequences until the end of the
  // run, so requests and their copies point into it). A copy for GPU g carries the targets of g
  // (`destination_targets` of them) and the destination takes those from the list; the wire size counts
  // only the copy's own targets. Explicit addressing adds a destination address per target.
  const uint16_t* targets = nullptr;
  const uint64_t* target_addresses = nullptr;  // explicit addressing, else nullptr
  uint16_t target_count = 0;   // entries of the list
  bool count_per_expert = false;  // a dynamic store: each block counts on counter + local expert
  bool notification = false;      // a chunk of token notifications (notify_tokens)
  uint16_t destination_targets = 0;  // a switch's copy: the targets on its destination GPU
  uint16_t issuer_targets = 0;  // a dynamic ld_reduce request and its result: the issuer's own
                                // targets, which follow the target_count remote ones in the list
  uint32_t evicted_parts = 0;  // an ld_reduce result: reduce_partial messages sent before it
  // A request: the issuer's link it left on; a multimem load's result or refusal: its load's
  // (the issuer's link engine counted the load in flight there).
  uint8_t issuer_link = 0;
  Opcode refused_opcode = Opcode::write;  // an access_error: the request the switch refused
  // A multimem load's result (or refusal): the load's multimem address and read bytes, which the
  // issuer's link engine counted in flight when it sent the load.
  uint64_t multimem_address = 0;
  uint64_t load_bytes = 0;
  uint64_t sequence = 0;         // per-source issue number, for traces and stuck reports
  // The packet fabric (simulation.fabric: packet, docs/models/packet_fabric.md): this transaction
  // is packet `packet_index` of the `packet_count` packets a message was cut into. Every packet of
  // a message has the same source_gpu, traffic class and sequence (a read's response packets: the
  // read's sequence), by which the receiver gathers them; packet 0 carries the message's
  // functional bytes. 0 of 1: a message that travels whole.
  uint32_t packet_index = 0;
  uint32_t packet_count = 1;
  // The fast fabric (docs/models/fabric_engine.md): the packet size its sender cut the message
  // into; a read's response is cut alike. 0 on the other fabrics.
  uint32_t packet_bytes = 0;
  // When the message was injected: handed to its source GPU's link engine queue (may leave from
  // then on); a message the switch makes: when the switch made it, an error response: its request's.
  sc_core::sc_time issue_time;
  sc_core::sc_time hop_ready;    // set by the sender at each hop: when it had the message ready
  sc_core::sc_time tail_arrival; // set by the port at each hop: when the last flit arrives

  tlm::tlm_extension_base* clone() const override { return new NvlinkExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const NvlinkExtension&>(other);
  }
};

// Builders of a message's header, one per way a message comes about, so that a model says what
// the message is instead of filling its fields one by one. They fill the routing fields; what a
// kind carries beyond them (a chunk's writes, a load's return address, a target list) the caller
// adds under those fields' own names.

// A request from `source_gpu` to `target_gpu` (a multimem request names its issuer as both: it
// is for the switch), counted on the target's `counter`, at `address`.
inline void make_request(NvlinkExtension& ext, Opcode opcode, uint32_t source_gpu, uint32_t target_gpu,
                         uint32_t counter, uint64_t address, uint32_t wire_flits) {
  ext.opcode = opcode;
  ext.traffic_class = TrafficClass::request;
  ext.source_gpu = source_gpu;
  ext.target_gpu = target_gpu;
  ext.counter = counter;
  ext.target_address = address;
  ext.wire_flits = wire_flits;
}

// The copy of `request` that a switch sends to one GPU as `opcode`, landing at `address`: it keeps
// everything else the request carries (issuer, counter, reduction, target list, sequence number).
inline void make_switch_copy(NvlinkExtension& copy, const NvlinkExtension& request, Opcode opcode, uint32_t gpu,
                             uint64_t address) {
  copy = request;
  copy.opcode = opcode;
  copy.traffic_class = TrafficClass::request;
  copy.target_gpu = gpu;
  copy.target_address = address;
}

// A response to `requester` carrying `payload_bytes`, landing at `address` there and counted on
// its `counter`. `source_gpu` is who answers (a switch answers in the issuer's name).
inline void make_response(NvlinkExtension& ext, Opcode opcode, uint32_t source_gpu, uint32_t requester,
                          uint32_t counter, uint64_t address, uint64_t payload_bytes, uint32_t wire_flits) {
  ext.opcode = opcode;
  ext.traffic_class = TrafficClass::response;
  ext.source_gpu = source_gpu;
  ext.target_gpu = requester;
  ext.counter = counter;
  ext.target_address = address;
  ext.payload_bytes = payload_bytes;
  ext.wire_flits = wire_flits;
}

// The NVLink protocol is not the TLM base protocol (credits instead of request exclusion), so
// its sockets carry their own types class and do not bind to base-protocol sockets by mistake.
//   fw BEGIN_REQ, delay d: the message's head arrives at the receiver at now + d.
//   bw END_REQ,   delay d: the receiver frees the message's buffer space (returns its credits)
//                          at now + d; the credit reaches the sender one link latency later.
struct NvlinkProtocolTypes {
  using tlm_payload_type = tlm::tlm_generic_payload;
  using tlm_phase_type = tlm::tlm_phase;
};

// An NVLink payload: the generic payload with its extension and functional data inline. Every
// payload on an NVLink socket is one of these, taken from a PayloadPool, so that the extension is
// reached without a lookup (extension_of) and nothing is allocated per message.
struct PooledPayload : tlm::tlm_generic_payload {
  static constexpr uint32_t kMaxFunctionalBytes = hw::kMaxFunctionalBytesPerMessage;
  NvlinkExtension extension;
  unsigned char data[kMaxFunctionalBytes];

  explicit PooledPayload(tlm::tlm_mm_interface* mm);
  ~PooledPayload() override;
};

// Recycles payloads through tlm_mm_interface: a run allocates only as many as are in flight.
class PayloadPool : public tlm::tlm_mm_interface {
 public:
  static constexpr uint32_t kMaxFunctionalBytes = PooledPayload::kMaxFunctionalBytes;

  PayloadPool() = default;
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;
  ~PayloadPool() override;

  // A payload with reference count 1 and a cleared extension.
  tlm::tlm_generic_payload& acquire();
  void free(tlm::tlm_generic_payload* payload) override;

  uint64_t in_use() const { return in_use_; }
  uint64_t allocated() const { return all_.size(); }

 private:
  std::vector<PooledPayload*> all_;
  std::vector<PooledPayload*> free_;
  uint64_t in_use_ = 0;
};

// Starts fetching what every hop of a message reads and writes: the generic payload's fields and
// the extension (the functional data excepted). For a message a model will handle soon, whose
// lines have likely left the caches while it waited.
inline void prefetch_message_header(const tlm::tlm_generic_payload& payload) {
  const auto& pooled = static_cast<const PooledPayload&>(payload);
  const char* end = reinterpret_cast<const char*>(pooled.data);
  for (const char* line = reinterpret_cast<const char*>(&pooled); line < end; line += 64) __builtin_prefetch(line, 1);
}

inline NvlinkExtension& extension_of(tlm::tlm_generic_payload& payload) {
  return static_cast<PooledPayload&>(payload).extension;
}
inline const NvlinkExtension& extension_of(const tlm::tlm_generic_payload& payload) {
  return static_cast<const PooledPayload&>(payload).extension;
}

}  // namespace nvsvp::model
