// The receiving end of an NVLink link direction (a GPU's link, a switch chip's input port): a
// TLM-2.0 target socket that is its own forward interface and hands every nb_transport_fw to its
// module with the link's tag.
//
// Why not tlm_utils::simple_target_socket_tagged: that socket forwards through a separate object
// and builds, per socket, the events and queues that convert blocking calls, which NVLink never
// makes. A fabric has thousands of these sockets: the conversion machinery cost a tenth of a small
// run's instructions to build, and the forwarder one more cache miss per message. A port that
// finds this socket at the end of its binding (NvlinkPort) calls the module directly.
#pragma once

#include <systemc>
#include <tlm>

#include "nvsvp/model/nvlink_packet.hpp"

namespace nvsvp::model {

// What a module that receives NVLink messages implements: `tag` is the link or port the message
// arrived on, as given to NvlinkTargetSocket::set_receiver.
class NvlinkReceiver {
 public:
  virtual tlm::tlm_sync_enum nb_transport_fw(int tag, tlm::tlm_generic_payload& payload,
                                             tlm::tlm_phase& phase, sc_core::sc_time& delay) = 0;

 protected:
  ~NvlinkReceiver() = default;
};

class NvlinkTargetSocket : public tlm::tlm_target_socket<32, NvlinkProtocolTypes>,
                           public tlm::tlm_fw_transport_if<NvlinkProtocolTypes> {
 public:
  NvlinkTargetSocket();
  explicit NvlinkTargetSocket(const char* name);

  // Must be called before the simulation starts (the module's constructor).
  void set_receiver(NvlinkReceiver* receiver, int tag) {
    receiver_ = receiver;
    tag_ = tag;
  }
  NvlinkReceiver* receiver() const { return receiver_; }
  int tag() const { return tag_; }

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override {
    return receiver_->nb_transport_fw(tag_, payload, phase, delay);
  }
  // NVLink models use the non-blocking base protocol only: the other calls are errors.
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) override;

  const char* kind() const override { return "nvsvp::model::NvlinkTargetSocket"; }

 private:
  void end_of_elaboration() override;

  NvlinkReceiver* receiver_ = nullptr;
  int tag_ = 0;
};

}  // namespace nvsvp::model
