// NVLink's target socket (nvlink_target_socket.hpp).
#include "nvsvp/model/nvlink_target_socket.hpp"

namespace nvsvp::model {

NvlinkTargetSocket::NvlinkTargetSocket() : NvlinkTargetSocket(sc_core::sc_gen_unique_name("nvlink_target_socket")) {}

NvlinkTargetSocket::NvlinkTargetSocket(const char* name) : tlm::tlm_target_socket<32, NvlinkProtocolTypes>(name) {
  bind(static_cast<tlm::tlm_fw_transport_if<NvlinkProtocolTypes>&>(*this));
}

void NvlinkTargetSocket::b_transport(tlm::tlm_generic_payload&, sc_core::sc_time&) {
  SC_REPORT_FATAL(name(), "b_transport on an NVLink socket: NVLink models use nb_transport only");
}

bool NvlinkTargetSocket::get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) { return false; }

unsigned int NvlinkTargetSocket::transport_dbg(tlm::tlm_generic_payload&) { return 0; }

void NvlinkTargetSocket::end_of_elaboration() {
  tlm::tlm_target_socket<32, NvlinkProtocolTypes>::end_of_elaboration();
  if (receiver_ == nullptr) SC_REPORT_FATAL(name(), "no receiver: the module never called set_receiver");
}

}  // namespace nvsvp::model
