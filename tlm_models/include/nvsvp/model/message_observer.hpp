// The point where a tool watches the traffic between components: every NVLink message a port
// puts on its wire, every credit return on its backward path, and every register access over the
// management bus. A transaction trace, a monitor or a fault injector implements it and is
// attached to the links (NvlinkPort::attach_observer) and to the management bus by the platform.
// With nothing attached a port pays one test of a pointer it already holds in cache per message.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>

namespace nvsvp::model {

class NvlinkPort;

class MessageObserver {
 public:
  virtual ~MessageObserver() = default;
  // `link` starts serializing `payload` at `start`; its extension is complete (VC allocated,
  // tail_arrival set). Called before the receiver sees the message.
  virtual void message_sent(const NvlinkPort& link, const tlm::tlm_generic_payload& payload,
                            const sc_core::sc_time& start) = 0;
  // The fast fabric's packets (fast_fabric.hpp), which travel without a transaction each: packet
  // `packet_index` of the `packet_count` of `message` (the message whole, as it lands) starts on
  // `link` at `start`, `wire_flits` and `payload_bytes` in size, its tail landing at
  // `tail_arrival`. No VC: the fast fabric pools a class's VCs. A no-op for observers that watch
  // transactions only.
  virtual void packet_sent(const NvlinkPort& /*link*/, const tlm::tlm_generic_payload& /*message*/,
                           uint32_t /*packet_index*/, uint32_t /*packet_count*/, uint32_t /*wire_flits*/,
                           uint32_t /*payload_bytes*/, const sc_core::sc_time& /*start*/,
                           const sc_core::sc_time& /*tail_arrival*/) {}
  // The receiver behind `link` freed `payload`'s buffer space: `flits` credits land back at the
  // sender at `lands`.
  virtual void credits_returned(const NvlinkPort& link, const tlm::tlm_generic_payload& payload,
                                uint32_t flits, const sc_core::sc_time& lands) = 0;
  // A register access to switch chip `chip` completed (the payload holds the command, offset,
  // data and response status); `delay` is the access time it took.
  virtual void register_accessed(uint32_t chip, const tlm::tlm_generic_payload& payload,
                                 const sc_core::sc_time& delay) = 0;
};

}  // namespace nvsvp::model
