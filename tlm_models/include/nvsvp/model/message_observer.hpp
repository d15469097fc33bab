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
