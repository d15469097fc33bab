#include "nvsvp/model/nvlink_packet.hpp"

namespace nvsvp::model {

PooledPayload::PooledPayload(tlm::tlm_mm_interface* mm) : tlm::tlm_generic_payload(mm) {
  // The extension belongs to the payload object, so it is set once and never freed by TLM.
  set_extension(&extension);
  set_data_ptr(data);
}

PooledPayload::~PooledPayload() { clear_extension(&extension); }

PayloadPool::~PayloadPool() {
  for (PooledPayload* payload : all_) delete payload;
}

tlm::tlm_generic_payload& PayloadPool::acquire() {
  PooledPayload* payload;
  if (free_.empty()) {
    payload = new PooledPayload(this);
    all_.push_back(payload);
  } else {
    payload = free_.back();
    free_.pop_back();
    // The payload this call resets was freed many messages ago and has left the caches; the one
    // the next call takes likely has too. Fetch it now: a payload is taken per message, so the
    // lines arrive long before they are written.
    if (!free_.empty()) prefetch_message_header(*free_.back());
  }
  payload->extension = NvlinkExtension{};
  payload->set_data_ptr(payload->data);
  payload->set_data_length(0);
  payload->set_streaming_width(0);
  payload->set_byte_enable_ptr(nullptr);
  payload->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  payload->acquire();
  ++in_use_;
  return *payload;
}

void PayloadPool::free(tlm::tlm_generic_payload* payload) {
  free_.push_back(static_cast<PooledPayload*>(payload));
  --in_use_;
}

}  // namespace nvsvp::model
