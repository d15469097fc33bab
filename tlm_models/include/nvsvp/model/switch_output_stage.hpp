// The output stage of a switch chip: per output port, the NVLink port it feeds, when that link
// is busy until, and the link-level round robin between the two crossbars (the output link is the
// only resource requests and responses share; it alternates between them per message). A sent
// message gets its VC for the next hop here.
//
// A plain class the chip calls directly: every call here is per message.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/switch_input_stage.hpp"

namespace nvsvp::model {

class SwitchOutputStage {
 public:
  explicit SwitchOutputStage(uint32_t outputs) : outputs_(outputs) {}

  // The port output `output` feeds (resolved once, at the end of elaboration: the sc_port
  // indirection costs cache misses).
  void bind(uint16_t output, NvlinkPort* link) { outputs_[output].link = link; }
  NvlinkPort* link(uint16_t output) const { return outputs_[output].link; }
  // Mirrors the port's own, so that serving an output reads the output's state only.
  const sc_core::sc_time& busy_until(uint16_t output) const { return outputs_[output].busy_until; }
  // The crossbar to try first when `output` is served: the one after the last sender's; the
  // others follow in class order from it.
  uint8_t first_class(uint16_t output) const { return outputs_[output].next_class; }

  // `entry` leaves through `output`: the link allocates its VC for the next hop and takes it.
  void send(uint16_t output, TrafficClass traffic_class, const SwitchEntry& entry) {
    NvlinkPort* link = outputs_[output].link;
    entry.ext->vc = static_cast<uint16_t>(link->allocate_vc(traffic_class, entry.wire_flits));
    entry.ext->hop_ready = entry.ready_at;  // the link counts its queueing delay from here
    link->send(*entry.payload);
    forwarded_flits_[static_cast<size_t>(traffic_class)] += entry.wire_flits;
  }
  // What `output` just sent of `traffic_class` keeps its link busy until `until`; the other
  // crossbar goes first next time.
  void occupy_link(uint16_t output, TrafficClass traffic_class, const sc_core::sc_time& until) {
    Output& o = outputs_[output];
    o.busy_until = until;
    o.next_class = static_cast<uint8_t>((static_cast<int>(traffic_class) + 1) % kTrafficClasses);
  }

  // Arbitration wait (docs/models/switch_chip.md, "Statistics"): while `output` sends a message of
  // `traffic_class` taking `serialization`, `losers` other heads were ready for it with credits.
  void add_arbitration_wait(uint16_t output, TrafficClass traffic_class, uint32_t losers,
                            const sc_core::sc_time& serialization) {
    outputs_[output].arbitration_wait_ps[static_cast<size_t>(traffic_class)] += losers * serialization.value();
  }
  uint64_t arbitration_wait_ps(uint16_t output, TrafficClass traffic_class) const {
    return outputs_[output].arbitration_wait_ps[static_cast<size_t>(traffic_class)];
  }

  // The fast fabric's packets, which it moves itself (fast_fabric.hpp).
  void add_forwarded_flits(TrafficClass traffic_class, uint64_t flits) {
    forwarded_flits_[static_cast<size_t>(traffic_class)] += flits;
  }
  // Wire flits sent per class (member copies and the chip's own messages included).
  uint64_t forwarded_flits(TrafficClass traffic_class) const {
    return forwarded_flits_[static_cast<size_t>(traffic_class)];
  }

 private:
  struct Output {
    NvlinkPort* link = nullptr;
    sc_core::sc_time busy_until;
    uint8_t next_class = 0;
    uint64_t arbitration_wait_ps[kTrafficClasses] = {0, 0};
  };
  std::vector<Output> outputs_;
  uint64_t forwarded_flits_[kTrafficClasses] = {0, 0};
};

}  // namespace nvsvp::model
