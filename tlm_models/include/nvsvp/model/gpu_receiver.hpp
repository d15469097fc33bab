// A GPU's receive side, on every link: each message kind has its handler. Receiving costs no
// simulation event: a message's data lands and its arrival counter records the tail-arrival time
// when the message is handed over (its tail arrival is then known), and the GPU drains its input at
// line rate, so the buffer credits go back as the tail arrives. A read is answered by a response
// the link engines send once the request has fully arrived.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/model/arrival_counters.hpp"
#include "nvsvp/model/dynamic_multimem_client.hpp"
#include "nvsvp/model/gpu_link_engines.hpp"
#include "nvsvp/model/gpu_memory.hpp"
#include "nvsvp/model/gpu_params.hpp"
#include "nvsvp/model/gpu_stats.hpp"
#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_target_socket.hpp"
#include "nvsvp/model/traffic_statistics.hpp"

namespace nvsvp::model {

// The latency of the messages GPUs receive, from injection (NvlinkExtension::issue_time) to the
// arrival of their tail at the GPU, per message kind (opcode); several GPUs share one.
struct MessageLatencies {
  LatencyHistogram by_opcode[kOpcodes];
};

class GpuReceiver final : public NvlinkReceiver {
 public:
  using Payload = tlm::tlm_generic_payload;

  // `owner` names the GPU in reports.
  GpuReceiver(const char* owner, const GpuParams& params, const LinkParams& link, uint32_t gpu_id, uint32_t links,
              PayloadPool& pool, GpuMemory& memory, ArrivalCounters& counters, GpuLinkEngines& links_out,
              DynamicMultimemClient& dynamic, GpuStats& stats);
  GpuReceiver(const GpuReceiver&) = delete;
  GpuReceiver& operator=(const GpuReceiver&) = delete;

  // Where link `link` returns a message's buffer space (at the end of elaboration, once bound).
  void attach(uint32_t link, tlm::tlm_bw_transport_if<NvlinkProtocolTypes>* backward) { backward_[link] = backward; }
  // From now on every message received adds its latency to `latencies` (nullptr: not recorded).
  void record_latency_in(MessageLatencies* latencies) { latencies_ = latencies; }
  // A load landing at `return_address` was lost by its switch chip and goes again: the partial
  // sums that chip passed on for it are forgotten (the new load's result comes with its own).
  void discard_partials(uint64_t return_address) { held_partials_.erase(return_address); }

  // The packet fabric: messages some of whose packets have landed, not all.
  uint64_t incomplete_messages() const { return partial_messages_.size(); }

  // The fast fabric: a whole message, its tail landing at `arrival` (not before now). It holds no
  // buffer space here (the fast fabric keeps no credits), and the kinds it moves so far (writes)
  // do not ask which link they came by.
  void land(const Payload& message, const sc_core::sc_time& arrival) {
    deliver(0, message, extension_of(message), arrival);
  }

  // A message from the switch on link `link` (the tag its socket was given).
  tlm::tlm_sync_enum nb_transport_fw(int link, tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override;

 private:
  // The handlers of the frequent kinds are inlined into nb_transport_fw: a call per message cost
  // a tenth of the receive side's instructions.
  //
  // A chunk: every write lands at its own target, all counting when the tail arrives.
  [[gnu::always_inline]] inline void receive_chunk(const Payload& payload, const NvlinkExtension& ext,
                                                   const sc_core::sc_time& at);
  // A write or a read response lands at its address; an ld_reduce result is completed first.
  [[gnu::always_inline]] inline void receive_data(const Payload& payload, const NvlinkExtension& ext,
                                                  const sc_core::sc_time& at);
  // An ld_reduce result to complete here: the partials a full switch buffer passed on before it,
  // and this GPU's own experts' partials (a dynamic load keeps them out of the request).
  void complete_load(const Payload& payload, const NvlinkExtension& ext, const sc_core::sc_time& at);
  // A partial sum a switch passed on, held until the result it belongs to arrives.
  void receive_reduce_partial(const Payload& payload, const NvlinkExtension& ext);
  // A dynamic multimem copy: written once per target of this GPU.
  [[gnu::always_inline]] inline void receive_dynamic_write(const Payload& payload, const NvlinkExtension& ext,
                                                           const sc_core::sc_time& at);
  [[gnu::always_inline]] inline void receive_write_ack(const NvlinkExtension& ext, const sc_core::sc_time& at);
  // A member copy of a multimem.red: combined into memory.
  [[gnu::always_inline]] inline void receive_reduce_write(const Payload& payload, const NvlinkExtension& ext,
                                                          const sc_core::sc_time& at);
  // A refused multimem request.
  [[gnu::always_inline]] inline void receive_multimem_error(const NvlinkExtension& ext, const sc_core::sc_time& at);
  void receive_access_error(const NvlinkExtension& ext, const sc_core::sc_time& at);
  // A read, or a switch's member read (static or dynamic) for a ld_reduce: its response queues.
  [[gnu::always_inline]] inline void answer_read(uint32_t link, const Payload& payload, const NvlinkExtension& ext,
                                                 const sc_core::sc_time& at);
  // Hands a whole message to its kind's handler, its tail landed at `arrival`.
  void deliver(uint32_t link, const Payload& payload, const NvlinkExtension& ext, const sc_core::sc_time& arrival);
  // The packet fabric: takes one packet of a message cut into several; returns the message's
  // packet 0 (its header and functional bytes, payload and wire sizes set to the whole message's,
  // the tail arrival to its last packet's) once every packet has landed, else nullptr. The caller
  // releases the returned payload.
  Payload* gather(Payload& packet, const NvlinkExtension& ext);
  // The messages that land (and are gathered when cut into packets), as opposed to those answered
  // or held per packet: reads and member reads, partial sums passed on.
  static bool lands_whole(Opcode opcode) {
    return opcode != Opcode::read && opcode != Opcode::member_read && opcode != Opcode::dynamic_member_read &&
           opcode != Opcode::reduce_partial;
  }
  // The packet fabric: a ld_reduce result's packet other than packet 0 follows the partial sums a
  // full switch buffer passed on for it; they are counted and let go (only packet 0's functional
  // bytes are kept, as for every message).
  void settle_partials(const NvlinkExtension& ext);
  // A request only a switch takes.
  [[gnu::cold]] void reject(const NvlinkExtension& ext);
  // A dynamic copy or member read names as many of this GPU's targets (`here`) as the switch
  // trimmed it to; `what` is "write" or "load".
  void check_trimmed(const char* what, const Payload& payload, const NvlinkExtension& ext,
                     uint32_t here, bool none_allowed) const {
    if (here == ext.destination_targets && here == decode_first_flit(payload.get_address()).target_count &&
        (none_allowed || here != 0)) {
      return;
    }
    report_untrimmed(what, ext, here);
  }
  [[gnu::cold]] void report_untrimmed(const char* what, const NvlinkExtension& ext, uint32_t here) const;

  const char* owner_;
  LinkParams link_params_;
  uint32_t gpu_id_;
  uint32_t functional_bytes_;
  PayloadPool& pool_;
  GpuMemory& memory_;
  ArrivalCounters& counters_;
  GpuLinkEngines& links_;
  DynamicMultimemClient& dynamic_;
  GpuStats& stats_;
  MessageLatencies* latencies_ = nullptr;
  std::vector<tlm::tlm_bw_transport_if<NvlinkProtocolTypes>*> backward_;
  // Partial sums a switch passed on (reduce_partial), by the load's return address, until the
  // result they belong to arrives.
  struct HeldPartial {
    uint8_t data[64];  // the functional bytes (functional_bytes is at most 64)
    size_t bytes = 0;
    uint32_t parts = 0;
  };
  std::unordered_map<uint64_t, HeldPartial> held_partials_;
  // Messages being gathered, by source GPU, class and sequence (gather()).
  struct PartialMessage {
    Payload* first = nullptr;  // packet 0, once it has landed (a reference held)
    uint32_t landed = 0;
    uint64_t payload_bytes = 0;
    uint64_t wire_flits = 0;
    sc_core::sc_time last_tail;
  };
  std::unordered_map<uint64_t, PartialMessage> partial_messages_;
};

}  // namespace nvsvp::model
