// One NVLink link in one direction: serialization at the link rate, one-hop latency, and
// credit-based flow control per (traffic class, virtual channel) towards the receiver's input
// buffers, with the VC allocated per hop. The sender (a GPU link engine or a switch output) hands
// it messages through NvlinkTxIf; the port delivers them to the receiver over a TLM socket
// (NvlinkProtocolTypes). The port has no process of its own: nothing is clocked.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <ostream>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "nvsvp/hw/xoshiro256.hpp"
#include "nvsvp/model/activity_intervals.hpp"
#include "nvsvp/model/busy_timeline.hpp"
#include "nvsvp/model/component_log.hpp"
#include "nvsvp/model/message_observer.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_target_socket.hpp"
#include "nvsvp/model/switch_params.hpp"
#include "nvsvp/model/sim_time.hpp"
#include "nvsvp/model/small_fifo.hpp"
#include "nvsvp/model/wake_scheduler.hpp"

namespace nvsvp::model {

// What a sender (a GPU link engine, a switch output) sees of the link it feeds. Senders are
// self-scheduling clients of a WakeScheduler: the port wakes the sender when credits it waits for
// come back; the sender itself asks to be woken when its send ends.
class NvlinkTxIf : public virtual sc_core::sc_interface {
 public:
  // Who to wake when credits come back: `client` of `scheduler`.
  virtual void set_sender(WakeScheduler* scheduler, uint32_t client) = 0;
  // When the link finishes serializing the message in flight (now or earlier when idle).
  virtual sc_core::sc_time busy_until() const = 0;
  // The most credits any VC of `traffic_class` has now (a message needs min(flits, depth)).
  virtual uint32_t best_credits(TrafficClass traffic_class) = 0;
  virtual uint32_t credits_needed(uint32_t flits) const = 0;
  // VC allocation: a VC of `traffic_class` with room for `flits`, round robin; -1 if none.
  virtual int allocate_vc(TrafficClass traffic_class, uint32_t flits) = 0;
  // The sender waits for credits of `traffic_class`: its event is notified when they land.
  virtual void wait_for_credits(TrafficClass traffic_class) = 0;
  // Starts the message on the VC in its extension (from allocate_vc) as soon as the link is free:
  // now, or when the message on the wire ends (a sender may commit the next message early).
  // The port takes its own reference.
  virtual void send(tlm::tlm_generic_payload& payload) = 0;
  // Time `flits` occupy this link.
  virtual sc_core::sc_time serialization_time(uint32_t flits) const = 0;
};

struct LinkStats {
  // Messages whose first packet this link carried: every transaction on the message fabric; on the
  // packet fabric a message's packets may take several links, and it counts on one.
  uint64_t messages[kTrafficClasses] = {0, 0};
  // Packets on the wire: each transaction on the packet fabric; on the message fabric the packets
  // a message's wire size counts (its payload in packets of at most max_packet_payload_bytes).
  uint64_t packets[kTrafficClasses] = {0, 0};
  uint64_t wire_flits = 0;
  uint64_t wire_bytes = 0;
  uint64_t payload_bytes = 0;
  sc_core::sc_time busy_time;
};

// Where a link's messages waited before its wire, per traffic class (docs/models/nvlink_port.md,
// "Statistics"): queueing delay, from when the sender had the message ready for this hop
// (NvlinkExtension::hop_ready) to the start of its serialization; credit stall, from the sender
// finding no VC of the class with room for its head (wait_for_credits) to the next landing of
// credits of the class. Picoseconds.
struct HopStats {
  uint64_t sends[kTrafficClasses] = {0, 0};  // transactions: messages or packets, as the fabric moves them
  uint64_t flits[kTrafficClasses] = {0, 0};
  uint64_t queueing_ps[kTrafficClasses] = {0, 0};
  uint64_t max_queueing_ps[kTrafficClasses] = {0, 0};
  uint64_t credit_stall_ps[kTrafficClasses] = {0, 0};
};

// What the faults injected into a link did (docs/models/nvlink_port.md#faults). Times in ps.
struct LinkFaultStats {
  uint64_t corrupted_packets = 0;  // packets that failed their CRC, each replayed
  uint64_t replayed_flits = 0;     // flits sent twice: the corrupted packets' flits up to the error
  uint64_t replay_time_ps = 0;     // link time on those flits and the round trips
  uint64_t credit_losses = 0;         // loss events that took effect
  uint64_t credit_flits_lost = 0;
  uint64_t credit_resyncs = 0;
  uint64_t credit_flits_resynchronised = 0;
  uint64_t loss_to_resync_ps = 0;      // summed over resyncs: from the first loss it repaired
  uint64_t max_loss_to_resync_ps = 0;
  uint64_t credit_flits_unresolved() const { return credit_flits_lost - credit_flits_resynchronised; }
  // Several links' together (the maximum of their maxima).
  LinkFaultStats& operator+=(const LinkFaultStats& o) {
    corrupted_packets += o.corrupted_packets;
    replayed_flits += o.replayed_flits;
    replay_time_ps += o.replay_time_ps;
    credit_losses += o.credit_losses;
    credit_flits_lost += o.credit_flits_lost;
    credit_resyncs += o.credit_resyncs;
    credit_flits_resynchronised += o.credit_flits_resynchronised;
    loss_to_resync_ps += o.loss_to_resync_ps;
    max_loss_to_resync_ps = max_loss_to_resync_ps > o.max_loss_to_resync_ps ? max_loss_to_resync_ps : o.max_loss_to_resync_ps;
    return *this;
  }
};

// Who hears of a link's fault events when each end would learn of them (the switch chip, to count
// them in its registers): `tag` is what the listener gave set_fault_listener.
class LinkFaultListener {
 public:
  virtual ~LinkFaultListener() = default;
  // The receiver found a corrupted packet (its CRC failed): when the bad flit arrived.
  virtual void crc_error_received(uint32_t tag) = 0;
  // The sender learnt of it (the receiver's NACK arrived) and replays from that packet.
  virtual void replay_started(uint32_t tag) = 0;
  virtual void credits_resynchronised(uint32_t tag) = 0;
};

// Final, so that a sender holding an NvlinkPort* (GPUs and switch chips do, see their
// end_of_elaboration) calls it without loading a vtable pointer from a cold line of the port.
class NvlinkPort final : public sc_core::sc_module, public NvlinkTxIf {
 public:
  sc_core::sc_export<NvlinkTxIf> in;
  tlm_utils::simple_initiator_socket<NvlinkPort, 32, NvlinkProtocolTypes> out;

  // `receiver_vcs` virtual channels per class at the receiver, each `receiver_depth_flits` deep.
  NvlinkPort(const sc_core::sc_module_name& name, const LinkParams& params, uint32_t receiver_vcs,
             uint32_t receiver_depth_flits);

  void set_sender(WakeScheduler* scheduler, uint32_t client) override {
    sender_ = scheduler;
    sender_client_ = client;
  }
  sc_core::sc_time busy_until() const override { return busy_until_; }
  uint32_t best_credits(TrafficClass traffic_class) override;
  uint32_t credits_needed(uint32_t flits) const override { return flits < depth_ ? flits : depth_; }
  int allocate_vc(TrafficClass traffic_class, uint32_t flits) override;
  // VCs per class at the receiver; whether VC `vc` of `traffic_class` has room for `flits` now
  // (a sender that chooses the VC itself: a GPU link engine, by destination).
  uint32_t vcs() const { return vcs_; }
  bool has_credits(TrafficClass traffic_class, uint16_t vc, uint32_t flits) {
    apply_due_credits();
    return credits(traffic_class, vc) >= static_cast<int32_t>(credits_needed(flits));
  }
  void wait_for_credits(TrafficClass traffic_class) override;
  void send(tlm::tlm_generic_payload& payload) override;
  sc_core::sc_time serialization_time(uint32_t flits) const override;
  bool idle() const { return current_time() >= busy_until_; }

  const LinkParams& params() const { return params_; }
  const LinkStats& stats() const { return stats_; }
  const HopStats& hop_stats() const { return hop_stats_; }
  // Also records every message's serialization interval in `timeline` (nullptr: none). Several
  // ports may share one timeline (a GPU's links of one direction).
  void record_busy_in(BusyTimeline* timeline) { timeline_ = timeline; }
  // Also adds every message's serialization interval to `activity` (nullptr: none), which
  // several ports may share (all links of a GPU, for the time breakdown).
  void record_activity_in(ActivityIntervals* activity) { activity_ = activity; }
  // Tells `observer` of every message sent and every credit return (nullptr: nobody). Several
  // ports may share one observer.
  void attach_observer(MessageObserver* observer) { observer_ = observer; }
  MessageObserver* observer() const { return observer_; }
  // A transmission of `flits` wire flits (send()'s message, or a fast fabric packet), its first
  // attempt on the wire at `start_ps`, through the link's bit errors (set_bit_error_rate): the
  // time its replays add before the good copy goes (0 without errors), counted in fault_stats()
  // and told to the fault listener at its times.
  uint64_t replay_time_ps(uint32_t flits, uint64_t start_ps) {
    return faults_ == nullptr ? 0 : replays_through_bit_errors(flits, start_ps);  // inline: no faults, one test
  }
  // The fast fabric (fast_fabric.hpp) moves packets itself and counts them here, as send() counts
  // its transactions: `packets` packets of `traffic_class` (`messages` of them their message's
  // first on this link), `wire_flits` and `payload_bytes` in all, serializing for `busy_ps` and
  // ending at `end_ps`; `queueing_ps` their waits from ready to their own start summed, the longest
  // `max_queueing_ps`.
  void record_transfer(TrafficClass traffic_class, uint32_t messages, uint32_t packets, uint64_t wire_flits,
                       uint64_t payload_bytes, uint64_t busy_ps, uint64_t end_ps, uint64_t queueing_ps,
                       uint64_t max_queueing_ps);
  // The fast fabric's sender waited `ps` for credits of `traffic_class` (HopStats::credit_stall_ps).
  void record_credit_stall(TrafficClass traffic_class, uint64_t ps) {
    hop_stats_.credit_stall_ps[static_cast<size_t>(traffic_class)] += ps;
  }
  // Credits not yet returned, in flits, summed over all VCs (0 when the receiver is empty).
  uint64_t credits_outstanding() const;
  void describe_state(std::ostream& os) const;

  // --- Faults (docs/models/nvlink_port.md#faults) ---
  // From now on each flit on the wire is corrupted with probability `rate_per_flit`,
  // independently (the gaps between corrupted flits drawn from a stream of its own seeded with
  // `seed`). A packet with a corrupted flit fails its CRC at the receiver and the sender replays
  // it after the round trip (go-back-N), as often as it fails. The receiver gets each message
  // once, later.
  void set_bit_error_rate(double rate_per_flit, uint64_t seed);
  // At `at` (not before now), `flits` credits of the request class's VC 0 vanish: the receiver
  // freed the space, the return never arrives. A sender that then starves of that class's
  // credits resynchronises them after LinkParams::credit_resync_timeout_ns.
  void schedule_credit_loss(const sc_core::sc_time& at, uint32_t flits);
  // Tells `listener` of each replay and resynchronisation, with `tag`.
  void set_fault_listener(LinkFaultListener* listener, uint32_t tag);
  // All zero when no fault was injected.
  LinkFaultStats fault_stats() const;
  // The link is down from `down_at` until `up_at` (never(): for good), in this direction. A
  // sender asks carries() before it commits a message: nothing starts while the link is down,
  // and nothing that would still be on the wire when it goes down (the replay buffer would have
  // to send it again on another link: it waits at the sender instead).
  void schedule_down(const sc_core::sc_time& down_at, const sc_core::sc_time& up_at);
  // Whether the port has any fault injected (senders check carries() only then).
  bool has_faults() const { return faults_ != nullptr; }
  // Whether a message of `flits` flits committed now arrives whole while the link is up.
  bool carries(uint32_t flits) const;
  // The link came back up (the platform calls it at up_at): the sender is woken.
  void went_up();
  bool down_now() const;
  // Credit stalls, at trace level (never on a send's own path).
  ComponentLog& log() { return log_; }

 private:
  // What one send or one fast-fabric run put on the wire, counted in stats_ and hop_stats_ (`sends`:
  // the transactions queueing is averaged over), its serialization recorded in the timeline and
  // the activity, ending at `end_ps`.
  void count_on_wire(TrafficClass traffic_class, uint64_t messages, uint64_t packets, uint64_t sends,
                     uint64_t wire_flits, uint64_t payload_bytes, uint64_t busy_ps, uint64_t end_ps,
                     uint64_t queueing_ps, uint64_t max_queueing_ps);
  // A change of a VC's credits at a time: a return from the receiver, and with faults a loss
  // (credits that vanish) or a resynchronisation (lost credits given back).
  enum class CreditChange : uint8_t { returned, lost, resynchronised };
  struct PendingCredit {
    sc_core::sc_time at;
    uint8_t traffic_class;
    uint16_t vc;
    uint32_t flits;
    CreditChange change = CreditChange::returned;
  };
  // The state of injected faults, allocated only when one is: cold, off the send path.
  struct FaultState {
    double rate_per_flit = 0.0;
    double log_keep = 0.0;            // log(1 - rate_per_flit), for the gaps
    uint64_t flits_to_next_error = 0;  // good flits on the wire before the next corrupted one
    uint32_t packet_flits = 1;        // a full packet's wire flits: the replay unit
    hw::Xoshiro256 random{0};
    sc_core::sc_time round_trip;   // 2 x latency + replay overhead
    sc_core::sc_time resync_timeout;
    LinkFaultStats stats;
    // Per class: flits lost and not yet covered by a pending resynchronisation, and since when;
    // whether one is pending, and since when the losses it repairs go back.
    uint32_t lost[kTrafficClasses] = {0, 0};
    sc_core::sc_time lost_since[kTrafficClasses];
    bool resync_pending[kTrafficClasses] = {false, false};
    sc_core::sc_time resync_repairs_since[kTrafficClasses];
    // link_down: [down_at, up_at), or never() when the link does not go down.
    sc_core::sc_time down_at = never();
    sc_core::sc_time up_at = never();
    // Replays decided at send whose ends have not yet heard of them, each in time order: when the
    // receiver sees the bad flit, when the sender gets its NACK (for the listener).
    std::deque<sc_core::sc_time> errors_to_receive;
    std::deque<sc_core::sc_time> replays_to_start;
    sc_core::sc_event listener_due;
    bool listener_spawned = false;
  };
  FaultState& fault_state();
  // A message of `flits` wire flits, its first sent at `start`, through the corrupted-flit
  // stream: the packets that failed (returned) and the flits sent in vain before each failure was
  // seen (`wasted`); each failure's receipt and NACK are queued for the listener.
  uint32_t replay_corrupted_packets(uint32_t flits, const sc_core::sc_time& start, uint64_t& wasted);
  // Tells the listener of the receipts and NACKs now due (a method process, spawned with the
  // first bit-error rate).
  void tell_listener_due();
  uint64_t replays_through_bit_errors(uint32_t flits, uint64_t start_ps);  // replay_time_ps with faults
  uint64_t draw_error_gap();
  void apply_credit_change(const PendingCredit& change);
  void insert_pending(const PendingCredit& change);

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  // Inline: most calls find nothing due.
  void apply_due_credits() {
    const sc_core::sc_time& now = current_time();
    if (earliest_pending_ <= now) apply_landed_credits(now);
  }
  void apply_landed_credits(const sc_core::sc_time& now);
  int32_t& credits(TrafficClass traffic_class, uint16_t vc) {
    return credits_[static_cast<size_t>(traffic_class) * vcs_ + vc];
  }

  void end_of_elaboration() override;

  // What every send touches, in the first two cache lines of their own (the SystemC members above
  // are large and cold; a field added here past 128 bytes costs every send a cache line); then
  // the credits on a line of their own, then what credit returns touch.
  alignas(64) sc_core::sc_time busy_until_;
  sc_core::sc_time latency_;
  sc_core::sc_time earliest_pending_;  // of pending_credits_, or never() when empty
  uint64_t flit_time_fs_;  // femtoseconds, so that a message's time rounds once
  sc_core::sc_time head_flit_time_;  // serialization_time(1), for every send's head delay
  // The module behind `out` when it is an NvlinkTargetSocket (found once bound), called as the
  // socket would call it with `direct_tag_`: saves two dependent loads per message.
  NvlinkReceiver* direct_ = nullptr;
  uint32_t vcs_;
  uint32_t depth_;
  uint32_t flit_bytes_;  // params_.flit_bytes
  uint8_t next_vc_[kTrafficClasses] = {0, 0};
  uint16_t direct_tag_ = 0;  // narrow, so that the first line holds it
  LinkStats stats_;
  BusyTimeline* timeline_ = nullptr;
  ActivityIntervals* activity_ = nullptr;
  MessageObserver* observer_ = nullptr;
  FaultState* faults_ = nullptr;  // beside observer_, on the line every send reads already
  alignas(64) std::array<int32_t, kTrafficClasses * kMaxVcsPerClass> credits_{};  // [class * vcs + vc]
  HopStats hop_stats_;
  // Per class: since when the sender has waited for credits, or never() when it does not.
  sc_core::sc_time stalled_since_[kTrafficClasses];
  // In time order. Read on every send: compacted after 8 landed returns, so that a link that never
  // drains cycles over a few cache lines.
  SmallFifo<PendingCredit, 8> pending_credits_;
  WakeScheduler* sender_ = nullptr;
  uint32_t sender_client_ = 0;
  bool sender_waiting_[kTrafficClasses] = {false, false};
  tlm::tlm_fw_transport_if<NvlinkProtocolTypes>* receiver_ = nullptr;  // `out`'s, once bound
  LinkParams params_;
  ComponentLog log_;  // cold: read only when a sender stalls
  std::unique_ptr<FaultState> fault_storage_;  // owns *faults_
  LinkFaultListener* fault_listener_ = nullptr;  // with no fault injected, never called
  uint32_t fault_listener_tag_ = 0;
};

// The NvlinkPort that a sender's port is bound to (call after binding, e.g. in
// end_of_elaboration); a fatal error if it is bound to another implementation of NvlinkTxIf.
NvlinkPort* bound_port(sc_core::sc_port<NvlinkTxIf>& port);

}  // namespace nvsvp::model
