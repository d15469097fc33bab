// The input stage of a switch chip: per input port and traffic class, `vcs_per_class` VC
// buffers of `vc_depth_flits` each, whose space the upstream port's credits guard; the credit
// returns to that port as the space frees; and the route lookup that gives a message its output
// port. Behind the ports come one more input per output port: the queue of the messages the chip
// made itself for that output (member copies, reduced results, error responses), which competes
// for the output like a port and holds no buffer space of its own.
//
// A multimem request keeps its buffer space (so the issuer's credits stay taken) until its last
// member copy has left: hold() records that space, and each copy leaving says so (copy_left).
//
// A plain class the chip calls directly: every call here is per message.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/model/component_log.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/sim_time.hpp"
#include "nvsvp/model/slot_pool.hpp"
#include "nvsvp/model/small_fifo.hpp"
#include "nvsvp/model/switch_csr.hpp"
#include "nvsvp/model/switch_params.hpp"
#include "nvsvp/model/traffic_statistics.hpp"

namespace nvsvp::model {

// A message in an input buffer (or in an output's queue of generated messages), waiting for its
// output port.
struct SwitchEntry {
  static constexpr uint32_t kNoParent = 0xFFFF'FFFFu;
  tlm::tlm_generic_payload* payload;
  NvlinkExtension* ext;
  uint32_t wire_flits;
  uint16_t output;
  sc_core::sc_time ready_at;
  uint32_t parent = kNoParent;  // a member copy: the buffer space its multimem request holds
};

class SwitchInputStage {
 public:
  // One input: its queues (queue_index) and the flits each VC buffer holds, [class * vcs + vc].
  struct Input {
    std::vector<SmallFifo<SwitchEntry>> fifos;
    std::vector<uint32_t> occupied_flits;
    // Flits held per traffic class (its VCs together) over time (docs/models/switch_chip.md,
    // "Statistics"): from when the sender takes the credits to when the space frees.
    OccupancyStatistics occupancy[kTrafficClasses];
  };

  // `owner`: the chip's name, for fatal reports. The route table is the register block's.
  SwitchInputStage(const char* owner, const SwitchParams& params, SwitchCsr& registers,
                   uint32_t interleave_bytes);
  // The chip's log (route lookup failures); none: they are only reported as fatal errors.
  void set_log(const ComponentLog* log) { log_ = log; }

  // The upstream port's backward path of input port `port` (resolved once, at the end of
  // elaboration: the socket's indirections cost cache misses).
  void bind(uint32_t port, tlm::tlm_bw_transport_if<NvlinkProtocolTypes>* backward) {
    backward_[port] = backward;
  }

  // The buffer space (credits) of a VC: occupy, free_space, hold and the chip's `fifo` arguments
  // name it.
  size_t fifo_index(TrafficClass traffic_class, uint16_t vc) const {
    return static_cast<size_t>(traffic_class) * vcs_per_class_ + vc;
  }
  // The queue a message for `output` waits in (Input::fifos): on the message fabric its VC's, so
  // that only a VC's head asks for its output; on the packet fabric the input's virtual output
  // queue of its class for that output, so that every output is asked for by the first packet
  // the input holds for it, whatever VC the packets sit in (docs/models/packet_fabric.md).
  bool output_queued() const { return output_queued_; }
  size_t queue_index(TrafficClass traffic_class, uint16_t vc, uint16_t output) const {
    return output_queued_ ? static_cast<size_t>(traffic_class) * ports_ + output : fifo_index(traffic_class, vc);
  }
  // The requester id of a queue's head: per VC, or per input with output queues (the VC has no
  // say in which packet goes next).
  uint32_t queue_requester(uint32_t input, uint16_t vc) const {
    return output_queued_ ? requester(input, 0) : requester(input, vc);
  }
  // Arbitration names a head message by its requester id: input * vcs + vc.
  uint32_t requester(uint32_t input, uint16_t vc) const { return input * vcs_per_class_ + vc; }
  uint32_t input_of(uint32_t requester) const { return requester / vcs_per_class_; }
  uint16_t vc_of(uint32_t requester) const { return static_cast<uint16_t>(requester % vcs_per_class_); }
  // Where the chip queues its own messages for `output` (on VC 0 of their class).
  uint32_t generated_input(uint16_t output) const { return ports_ + output; }
  bool is_generated(uint32_t input) const { return input >= ports_; }
  Input& input(uint32_t index) { return inputs_[index]; }

  // A message arrives on `port`: it takes min(wire_flits, depth) flits of VC buffer `fifo`
  // (returned); an overflow is a fatal model error (the sender ignored credits).
  uint32_t occupy(uint32_t port, size_t fifo, uint32_t wire_flits) {
    const uint32_t flits = std::min(wire_flits, vc_depth_flits_);
    uint32_t& occupied = inputs_[port].occupied_flits[fifo];
    occupied += flits;
    if (occupied > vc_depth_flits_) overflow();
    count_occupancy(inputs_[port], fifo, static_cast<int64_t>(flits));
    return flits;
  }
  // Queues `entry` in queue `queue` of `input` (queue_index); true when it is the queue's head now.
  bool push(uint32_t input, size_t queue_at, const SwitchEntry& entry) {
    SmallFifo<SwitchEntry>& queue = inputs_[input].fifos[queue_at];
    queue.push_back(entry);
    peak_buffered_ = std::max(peak_buffered_, ++buffered_);
    return queue.size() == 1;
  }
  // As push, but behind only the entries ready no later than it (a queue in order of arrival).
  bool push_in_arrival_order(uint32_t input, size_t queue_at, const SwitchEntry& entry) {
    SmallFifo<SwitchEntry>& queue = inputs_[input].fifos[queue_at];
    const bool head = queue.insert_in_order(
        entry, [](const SwitchEntry& queued, const SwitchEntry& fresh) { return queued.ready_at > fresh.ready_at; });
    peak_buffered_ = std::max(peak_buffered_, ++buffered_);
    return head;
  }
  // The head of queue `queue` of `input` leaves (its space frees with free_space or copy_left).
  SwitchEntry pop(Input& input, size_t queue) {
    const SwitchEntry entry = input.fifos[queue].front();
    input.fifos[queue].pop_front();
    --buffered_;
    return entry;
  }
  void free_space(Input& input, size_t fifo, uint32_t wire_flits) {
    const uint32_t flits = std::min(wire_flits, vc_depth_flits_);
    input.occupied_flits[fifo] -= flits;
    count_occupancy(input, fifo, -static_cast<int64_t>(flits));
  }
  // The upstream port of `port` gets the credits of `payload` (for the input VC its extension
  // names) back after `delay`.
  void return_credits(uint32_t port, tlm::tlm_generic_payload& payload, sc_core::sc_time delay) {
    tlm::tlm_phase phase = tlm::END_REQ;
    backward_[port]->nb_transport_bw(payload, phase, delay);
  }
  // A message consumed on arrival (a multimem request refused, a member response): its `flits`
  // of buffer `fifo` free now and their credits go back when its tail has arrived.
  void free_at_tail(uint32_t port, tlm::tlm_generic_payload& payload, size_t fifo, uint32_t flits) {
    inputs_[port].occupied_flits[fifo] -= flits;
    count_occupancy(inputs_[port], fifo, -static_cast<int64_t>(flits));
    const sc_core::sc_time& now = current_time();
    const sc_core::sc_time& tail = extension_of(payload).tail_arrival;
    return_credits(port, payload, tail > now ? tail - now : sc_core::SC_ZERO_TIME);
  }
  // A multimem request keeps its `flits` of buffer `fifo` of `port` until `copies` member copies
  // have left; returns the id its copies carry as their parent.
  uint32_t hold(tlm::tlm_generic_payload& payload, uint16_t port, size_t fifo, uint32_t flits, uint32_t copies) {
    const uint32_t index = held_.take();
    payload.acquire();
    held_[index] = HeldRequest{&payload, port, static_cast<uint32_t>(fifo), flits, copies};
    return index;
  }
  // A member copy of held request `parent` has left; the last one frees the request's space,
  // its credits going back after `drained`.
  void copy_left(uint32_t parent, const sc_core::sc_time& drained) {
    if (--held_[parent].copies_left == 0) release_held(parent, drained);
  }
  // Every held request's space frees now (the chip lost its copies: death, flush).
  void release_all_held() {
    for (uint32_t i = 0; i < held_.size(); ++i) {
      if (held_[i].payload != nullptr) release_held(i, sc_core::SC_ZERO_TIME);
    }
  }

  // Route lookup: the output port for the message's destination GPU, one of the route's ports
  // chosen by address (the same granule as the GPUs' link interleaving). A GPU without a route
  // raises no_route and is a fatal error.
  uint16_t route(const NvlinkExtension& ext) {
    const std::vector<uint16_t>& ports = registers_.route_ports(ext.target_gpu);
    if (ports.empty()) no_route(ext);
    return route_port(ports, ext.target_address);
  }
  // Of a route's `ports` (not empty), the one the packet or message at `address` leaves by.
  uint16_t route_port(const std::vector<uint16_t>& ports, uint64_t address) const {
    return ports[interleave_way(address, interleave_bytes_, static_cast<uint32_t>(ports.size()))];
  }

  // Input `port`'s buffer occupancy of `traffic_class`.
  const OccupancyStatistics& occupancy(uint32_t port, TrafficClass traffic_class) const {
    return inputs_[port].occupancy[static_cast<size_t>(traffic_class)];
  }
  // All input buffers of the chip together.
  const OccupancyStatistics& total_occupancy() const { return total_occupancy_; }
  // From now on also records the chip's total input buffer occupancy per time bin (nullptr: not).
  void record_occupancy_in(OccupancyTimeline* timeline) { timeline_ = timeline; }

  uint64_t buffered() const { return buffered_; }
  uint64_t peak_buffered() const { return peak_buffered_; }
  // Lists up to `max_lines` buffered messages (input, VC, source, destination, output); returns
  // how many there are.
  uint64_t describe(std::ostream& os, uint64_t max_lines) const;

 private:
  // The buffer space a multimem request keeps while its member copies are in the chip.
  struct HeldRequest {
    tlm::tlm_generic_payload* payload = nullptr;
    uint16_t port = 0;
    uint32_t fifo = 0;
    uint32_t flits = 0;
    uint32_t copies_left = 0;
  };

  static_assert(kTrafficClasses == 2, "count_occupancy tells the class of a buffer by one comparison");
  void count_occupancy(Input& input, size_t fifo, int64_t delta) {
    const uint64_t now = current_time().value();
    input.occupancy[fifo < vcs_per_class_ ? 0 : 1].change(now, delta);  // fifo = class x vcs + vc
    total_occupancy_.change(now, delta);
    if (timeline_ != nullptr) timeline_->change(now, delta);
  }
  void overflow() const;
  void no_route(const NvlinkExtension& ext);
  void release_held(uint32_t parent, const sc_core::sc_time& drained);

  const char* owner_;
  const ComponentLog* log_ = nullptr;
  SwitchCsr& registers_;
  uint32_t ports_;
  uint32_t vcs_per_class_;
  uint32_t vc_depth_flits_;
  uint32_t interleave_bytes_;
  bool output_queued_;  // SwitchParams::packet_fabric: a queue per input, class and output
  std::vector<Input> inputs_;  // the ports, then one per output for the chip's own messages
  std::vector<tlm::tlm_bw_transport_if<NvlinkProtocolTypes>*> backward_;  // [port]
  SlotPool<HeldRequest> held_;
  uint64_t buffered_ = 0;
  uint64_t peak_buffered_ = 0;
  OccupancyStatistics total_occupancy_;
  OccupancyTimeline* timeline_ = nullptr;
};

}  // namespace nvsvp::model
