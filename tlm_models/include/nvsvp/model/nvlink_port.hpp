// One NVLink link in one direction: serialization at the link rate, one-hop latency, and
// credit-based flow control per (traffic class, virtual channel) towards the receiver's input
// buffers. The sender (a GPU link engine or a switch output) hands it messages through
// NvlinkTxIf; the port delivers them to the receiver over a TLM socket (NvlinkProtocolTypes).
//
// No process is clocked: the port only notifies its ready event when the link goes idle or when
// credits come back.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"

namespace nvsvp::model {

class NvlinkTxIf : public virtual sc_core::sc_interface {
 public:
  // True when the link is not serializing a message.
  virtual bool idle() const = 0;
  // VC allocation: a virtual channel of `traffic_class` whose receiver buffer has room for a
  // message of `flits`, round robin over the class's VCs; -1 when the link is busy or no VC
  // has room (credits already on their way back then notify the ready event when they land).
  virtual int available_vc(TrafficClass traffic_class, uint32_t flits) = 0;
  // Starts the message now on the VC in its extension, which available_vc() returned.
  // The port takes its own reference.
  virtual void send(tlm::tlm_generic_payload& payload) = 0;
  // Notified when the link goes idle and when credits return.
  virtual const sc_core::sc_event& ready_event() const = 0;
  // Time `flits` occupy this link.
  virtual sc_core::sc_time serialization_time(uint32_t flits) const = 0;
};

struct LinkStats {
  uint64_t messages[kTrafficClasses] = {0, 0};
  uint64_t wire_flits = 0;
  uint64_t wire_bytes = 0;
  uint64_t payload_bytes = 0;
  sc_core::sc_time busy_time;
};

class NvlinkPort : public sc_core::sc_module, public NvlinkTxIf {
 public:
  sc_core::sc_export<NvlinkTxIf> in;
  tlm_utils::simple_initiator_socket<NvlinkPort, 32, NvlinkProtocolTypes> out;

  // `receiver_vcs` virtual channels per class at the receiver, each `receiver_depth_flits` deep.
  NvlinkPort(const sc_core::sc_module_name& name, const LinkParams& params, uint32_t receiver_vcs,
             uint32_t receiver_depth_flits);

  bool idle() const override;
  int available_vc(TrafficClass traffic_class, uint32_t flits) override;
  void send(tlm::tlm_generic_payload& payload) override;
  const sc_core::sc_event& ready_event() const override { return ready_event_; }
  sc_core::sc_time serialization_time(uint32_t flits) const override;

  const LinkParams& params() const { return params_; }
  const LinkStats& stats() const { return stats_; }
  // Credits not yet returned, in flits, summed over all VCs (0 when the receiver is empty).
  uint64_t credits_outstanding() const;
  void describe_state(std::ostream& os) const;

 private:
  struct PendingCredit {
    sc_core::sc_time at;
    uint8_t traffic_class;
    uint16_t vc;
    uint32_t flits;
  };

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void apply_due_credits();
  uint32_t credits_for(uint32_t flits) const { return flits < depth_ ? flits : depth_; }
  int32_t& credits(TrafficClass traffic_class, uint16_t vc) {
    return credits_[static_cast<size_t>(traffic_class) * vcs_ + vc];
  }

  LinkParams params_;
  uint32_t vcs_;
  uint32_t depth_;
  double flit_time_ps_;
  sc_core::sc_time latency_;
  sc_core::sc_time busy_until_;
  std::vector<int32_t> credits_;
  uint16_t next_vc_[kTrafficClasses] = {0, 0};
  std::vector<PendingCredit> pending_credits_;
  sc_core::sc_event ready_event_;
  LinkStats stats_;
};

}  // namespace nvsvp::model
