#include "nvsvp/model/nvlink_packet.hpp"

namespace nvsvp::model {

const char* to_string(Opcode opcode) {
  switch (opcode) {
    case Opcode::write: return "write";
    case Opcode::read: return "read";
    case Opcode::read_response: return "read_response";
    case Opcode::write_ack: return "write_ack";
  }
  return "?";
}

const char* to_string(TrafficClass traffic_class) {
  return traffic_class == TrafficClass::request ? "request" : "response";
}

struct PayloadPool::Slot : tlm::tlm_generic_payload {
  NvlinkExtension extension;
  unsigned char data[kMaxFunctionalBytes];

  explicit Slot(tlm::tlm_mm_interface* mm) : tlm::tlm_generic_payload(mm) {
    // The extension is owned by the slot, so it is set once and never freed by the payload.
    set_extension(&extension);
    set_data_ptr(data);
  }
  ~Slot() override { clear_extension(&extension); }
};

PayloadPool::~PayloadPool() {
  for (Slot* slot : all_) delete slot;
}

tlm::tlm_generic_payload& PayloadPool::acquire() {
  Slot* slot;
  if (free_.empty()) {
    slot = new Slot(this);
    all_.push_back(slot);
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  slot->extension = NvlinkExtension{};
  slot->set_data_ptr(slot->data);
  slot->set_data_length(0);
  slot->set_streaming_width(0);
  slot->set_byte_enable_ptr(nullptr);
  slot->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  slot->acquire();
  ++in_use_;
  return *slot;
}

void PayloadPool::free(tlm::tlm_generic_payload* payload) {
  free_.push_back(static_cast<Slot*>(payload));
  --in_use_;
}

}  // namespace nvsvp::model
