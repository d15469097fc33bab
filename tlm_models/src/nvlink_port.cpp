#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: a listener process per link with bit errors
#include "nvsvp/model/nvlink_port.hpp"

#include <algorithm>
#include <cmath>

namespace nvsvp::model {

using sc_core::sc_time;

static_assert(kMaxVcsPerClass <= UINT8_MAX, "NvlinkPort::next_vc_ holds a VC in a byte");

NvlinkPort::NvlinkPort(const sc_core::sc_module_name& name, const LinkParams& params,
                       uint32_t receiver_vcs, uint32_t receiver_depth_flits)
    : sc_module(name),
      in("in"),
      out("out"),
      latency_(picoseconds(to_picoseconds(params.latency_ns))),
      earliest_pending_(never()),
      flit_time_fs_(static_cast<uint64_t>(std::llround(params.flit_time_ps() * 1000.0))),
      head_flit_time_(picoseconds((flit_time_fs_ + 500) / 1000)),
      vcs_(receiver_vcs),
      depth_(receiver_depth_flits),
      flit_bytes_(params.flit_bytes),
      params_(params) {
  stalled_since_[0] = stalled_since_[1] = never();
  require_picosecond_resolution(this->name());
  if (receiver_vcs == 0 || receiver_vcs > kMaxVcsPerClass) {
    SC_REPORT_FATAL(this->name(), "receiver VCs per class out of range (1 to kMaxVcsPerClass)");
  }
  std::fill(credits_.begin(), credits_.begin() + kTrafficClasses * receiver_vcs,
            static_cast<int32_t>(receiver_depth_flits));
  in.bind(*this);
  out.register_nb_transport_bw(this, &NvlinkPort::nb_transport_bw);
}

void NvlinkPort::end_of_elaboration() {
  receiver_ = out.operator->();
  if (const auto* socket = dynamic_cast<const NvlinkTargetSocket*>(receiver_)) {
    direct_ = socket->receiver();
    if (socket->tag() < 0 || socket->tag() > UINT16_MAX) SC_REPORT_FATAL(name(), "receiver tag out of range");
    direct_tag_ = static_cast<uint16_t>(socket->tag());
  }
}

sc_time NvlinkPort::serialization_time(uint32_t flits) const {
  return picoseconds((flits * flit_time_fs_ + 500) / 1000);
}

void NvlinkPort::apply_landed_credits(const sc_time& now) {
  // Pending changes are kept in time order: the due ones are at the front.
  while (!pending_credits_.empty() && pending_credits_.front().at <= now) {
    const PendingCredit& c = pending_credits_.front();
    if (c.change != CreditChange::returned) {
      apply_credit_change(c);
    } else {
      credits(static_cast<TrafficClass>(c.traffic_class), c.vc) += c.flits;
    }
    sc_time& stalled = stalled_since_[c.traffic_class];
    if (stalled != never() && c.change != CreditChange::lost) {
      if (c.at > stalled) hop_stats_.credit_stall_ps[c.traffic_class] += (c.at - stalled).value();
      stalled = never();
    }
    pending_credits_.pop_front();
  }
  earliest_pending_ = pending_credits_.empty() ? never() : pending_credits_.front().at;
}

NvlinkPort::FaultState& NvlinkPort::fault_state() {
  if (!fault_storage_) {
    fault_storage_ = std::make_unique<FaultState>();
    fault_storage_->round_trip = 2 * latency_ + picoseconds(to_picoseconds(params_.replay_overhead_ns));
    fault_storage_->resync_timeout = picoseconds(to_picoseconds(params_.credit_resync_timeout_ns));
    fault_storage_->lost_since[0] = fault_storage_->lost_since[1] = never();
    faults_ = fault_storage_.get();
  }
  return *faults_;
}

void NvlinkPort::set_bit_error_rate(double rate_per_flit, uint64_t seed) {
  if (!(rate_per_flit >= 0.0 && rate_per_flit < 1.0)) SC_REPORT_FATAL(name(), "bit-error rate outside [0, 1)");
  FaultState& f = fault_state();
  f.rate_per_flit = rate_per_flit;
  f.log_keep = std::log1p(-rate_per_flit);
  f.packet_flits = params_.header_flits_per_packet +
                   (params_.max_packet_payload_bytes + params_.flit_bytes - 1) / params_.flit_bytes;
  f.random = hw::Xoshiro256(seed);
  if (rate_per_flit > 0.0) f.flits_to_next_error = draw_error_gap();
  if (rate_per_flit > 0.0 && !f.listener_spawned) {
    f.listener_spawned = true;
    sc_core::sc_spawn_options options;
    options.spawn_method();
    options.set_sensitivity(&f.listener_due);
    options.dont_initialize();
    sc_core::sc_spawn([this] { tell_listener_due(); }, sc_core::sc_gen_unique_name("crc_listener"), &options);
  }
}

void NvlinkPort::tell_listener_due() {
  FaultState& f = *faults_;
  const sc_time now = current_time();
  while (!f.errors_to_receive.empty() && f.errors_to_receive.front() <= now) {
    f.errors_to_receive.pop_front();
    if (fault_listener_ != nullptr) fault_listener_->crc_error_received(fault_listener_tag_);
  }
  while (!f.replays_to_start.empty() && f.replays_to_start.front() <= now) {
    f.replays_to_start.pop_front();
    if (fault_listener_ != nullptr) fault_listener_->replay_started(fault_listener_tag_);
  }
  sc_time next = never();
  if (!f.errors_to_receive.empty()) next = f.errors_to_receive.front();
  if (!f.replays_to_start.empty() && f.replays_to_start.front() < next) next = f.replays_to_start.front();
  if (next != never()) f.listener_due.notify(next - now);
}

void NvlinkPort::schedule_credit_loss(const sc_time& at, uint32_t flits) {
  if (at < current_time()) SC_REPORT_FATAL(name(), "a credit loss scheduled in the past");
  fault_state();
  insert_pending(PendingCredit{at, static_cast<uint8_t>(TrafficClass::request), 0, flits, CreditChange::lost});
}

void NvlinkPort::schedule_down(const sc_time& down_at, const sc_time& up_at) {
  if (down_at < current_time()) SC_REPORT_FATAL(name(), "a link down scheduled in the past");
  if (up_at <= down_at) SC_REPORT_FATAL(name(), "a link up again before it goes down");
  FaultState& f = fault_state();
  if (f.down_at != never()) SC_REPORT_FATAL(name(), "a second link down on one link");
  f.down_at = down_at;
  f.up_at = up_at;
}

bool NvlinkPort::carries(uint32_t flits) const {
  if (faults_ == nullptr || faults_->down_at == never()) return true;
  const sc_time now = current_time();
  const sc_time start = busy_until_ > now ? busy_until_ : now;
  if (start >= faults_->up_at) return true;
  if (start >= faults_->down_at) return false;
  return start + serialization_time(flits) + latency_ <= faults_->down_at;
}

bool NvlinkPort::down_now() const {
  if (faults_ == nullptr) return false;
  const sc_time now = current_time();
  return now >= faults_->down_at && now < faults_->up_at;
}

void NvlinkPort::went_up() {
  if (faults_ == nullptr) return;
  faults_->down_at = faults_->up_at = never();
  if (sender_ != nullptr) sender_->wake_at(sender_client_, current_time());
}

void NvlinkPort::set_fault_listener(LinkFaultListener* listener, uint32_t tag) {
  fault_listener_ = listener;
  fault_listener_tag_ = tag;
}

LinkFaultStats NvlinkPort::fault_stats() const { return faults_ != nullptr ? faults_->stats : LinkFaultStats{}; }

uint64_t NvlinkPort::draw_error_gap() {
  // Good flits before a corrupted one: geometric with success chance rate, by inversion of a
  // uniform in (0, 1] made of the top 53 bits.
  const double uniform = (static_cast<double>(faults_->random.next() >> 11) + 1.0) * 0x1.0p-53;
  const double gap = std::floor(std::log(uniform) / faults_->log_keep);
  return gap >= 1e18 ? UINT64_C(1000000000000000000) : static_cast<uint64_t>(gap);
}

uint32_t NvlinkPort::replay_corrupted_packets(uint32_t flits, const sc_time& start, uint64_t& wasted) {
  FaultState& f = *faults_;
  uint64_t delivered = 0;  // flits of the message through, a packet boundary (packets from its start)
  uint32_t failures = 0;
  wasted = 0;
  sc_time attempt_start = start;  // when the flit at `delivered` goes on the wire
  // Each corrupted flit fails its packet: what was sent of that packet is sent again (go-back-N
  // from the packet's start), the flits before it are through. At most 1000 failures in one
  // message: at the largest rate a scenario allows (0.01 per flit) a 17-flit packet fails 16 %
  // of the time.
  while (failures < 1000 && f.flits_to_next_error < flits - delivered) {
    const uint64_t error_at = delivered + f.flits_to_next_error;
    const uint64_t packet_start = error_at / f.packet_flits * f.packet_flits;
    // The receiver checks the packet's CRC as its bad flit arrives; its NACK reaches the sender a
    // round trip after that flit left, and the replay from the packet's start begins then.
    const sc_time bad_flit_sent = attempt_start + serialization_time(static_cast<uint32_t>(error_at - delivered + 1));
    f.errors_to_receive.push_back(bad_flit_sent + latency_);
    f.replays_to_start.push_back(bad_flit_sent + f.round_trip);
    attempt_start = bad_flit_sent + f.round_trip;
    wasted += error_at - packet_start + 1;
    delivered = packet_start;
    ++failures;
    f.flits_to_next_error = draw_error_gap();
  }
  f.flits_to_next_error -= std::min<uint64_t>(f.flits_to_next_error, flits - delivered);
  // This message's first receipt, unless an earlier notification is pending (it stands). The fast
  // fabric decides packets a little ahead: never before now.
  if (failures > 0) {
    const sc_time first = f.errors_to_receive[f.errors_to_receive.size() - failures];
    const sc_time now = current_time();
    f.listener_due.notify(first > now ? first - now : sc_core::SC_ZERO_TIME);
  }
  return failures;
}

// Corrupted packets: each costs what was sent of it and the round trip to learn of it, the link
// carrying nothing useful meanwhile (go-back-N).
uint64_t NvlinkPort::replays_through_bit_errors(uint32_t flits, uint64_t start_ps) {
  if (faults_->rate_per_flit <= 0.0) return 0;
  uint64_t wasted = 0;
  const uint32_t failed = replay_corrupted_packets(flits, picoseconds(start_ps), wasted);
  if (failed == 0) return 0;
  const sc_time replays = serialization_time(static_cast<uint32_t>(wasted)) + failed * faults_->round_trip;
  faults_->stats.corrupted_packets += failed;
  faults_->stats.replayed_flits += wasted;
  faults_->stats.replay_time_ps += replays.value();
  return replays.value();
}

void NvlinkPort::apply_credit_change(const PendingCredit& c) {
  FaultState& f = *faults_;
  int32_t& credit = credits(static_cast<TrafficClass>(c.traffic_class), c.vc);
  if (c.change == CreditChange::lost) {
    credit -= static_cast<int32_t>(c.flits);  // below zero while returns owed to it are in flight
    if (f.lost[c.traffic_class] == 0) f.lost_since[c.traffic_class] = c.at;
    f.lost[c.traffic_class] += c.flits;
    ++f.stats.credit_losses;
    f.stats.credit_flits_lost += c.flits;
    NVSVP_LOG(log_, info, c.flits << " credit flits of " << to_string(static_cast<TrafficClass>(c.traffic_class))
                                  << " VC " << c.vc << " lost");
    return;
  }
  credit += static_cast<int32_t>(c.flits);
  f.resync_pending[c.traffic_class] = false;
  ++f.stats.credit_resyncs;
  f.stats.credit_flits_resynchronised += c.flits;
  // From the first loss this resynchronisation repairs; losses after it was scheduled wait for
  // the next one.
  const uint64_t repaired_after = (c.at - f.resync_repairs_since[c.traffic_class]).value();
  f.stats.loss_to_resync_ps += repaired_after;
  f.stats.max_loss_to_resync_ps = std::max(f.stats.max_loss_to_resync_ps, repaired_after);
  if (fault_listener_ != nullptr) fault_listener_->credits_resynchronised(fault_listener_tag_);
  NVSVP_LOG(log_, info, c.flits << " credit flits resynchronised");
}

void NvlinkPort::insert_pending(const PendingCredit& change) {
  pending_credits_.push_back(change);
  // Returns come nearly in time order; insertion steps keep the list sorted.
  for (auto it = pending_credits_.end() - 1; it != pending_credits_.begin() && (it - 1)->at > it->at; --it) {
    std::iter_swap(it - 1, it);
  }
  earliest_pending_ = std::min(earliest_pending_, change.at);
}

uint32_t NvlinkPort::best_credits(TrafficClass traffic_class) {
  apply_due_credits();
  int32_t best = 0;
  for (uint16_t vc = 0; vc < vcs_; ++vc) best = std::max(best, credits(traffic_class, vc));
  return static_cast<uint32_t>(best);
}

int NvlinkPort::allocate_vc(TrafficClass traffic_class, uint32_t flits) {
  apply_due_credits();
  const auto needed = static_cast<int32_t>(credits_needed(flits));
  const uint16_t first = next_vc_[static_cast<size_t>(traffic_class)];
  for (uint32_t i = 0; i < vcs_; ++i) {
    const auto vc = static_cast<uint16_t>((first + i) % vcs_);
    if (credits(traffic_class, vc) >= needed) return vc;
  }
  return -1;  // not logged: senders ask again and again while they wait (a stall is logged once)
}

void NvlinkPort::wait_for_credits(TrafficClass traffic_class) {
  const auto c = static_cast<size_t>(traffic_class);
  sender_waiting_[c] = true;
  sc_time& stalled = stalled_since_[c];
  if (stalled == never()) stalled = current_time();
  // A starved sender of a class with lost credits resynchronises them after the timeout.
  if (faults_ != nullptr && faults_->lost[c] > 0 && !faults_->resync_pending[c]) {
    faults_->resync_pending[c] = true;
    faults_->resync_repairs_since[c] = faults_->lost_since[c];
    insert_pending(PendingCredit{stalled + faults_->resync_timeout, static_cast<uint8_t>(c), 0, faults_->lost[c],
                                 CreditChange::resynchronised});
    faults_->lost[c] = 0;
  }
  // Credits already on their way back wake the sender when the first of them lands.
  sc_time earliest = never();
  for (const PendingCredit& p : pending_credits_) {
    if (p.traffic_class == static_cast<uint8_t>(traffic_class) && p.change != CreditChange::lost) {
      earliest = p.at;  // the list is in time order
      break;
    }
  }
  if (earliest != never() && sender_ != nullptr) sender_->wake_at(sender_client_, earliest);
  NVSVP_LOG(log_, trace, "sender stalls on " << to_string(traffic_class) << " credits; "
                                             << (earliest != never() ? "next credits land at " + earliest.to_string()
                                                                     : std::string("none in flight")));
}

void NvlinkPort::send(tlm::tlm_generic_payload& payload) {
  NvlinkExtension& ext = extension_of(payload);
  const sc_time now = current_time();
  const sc_time start = busy_until_ > now ? busy_until_ : now;
  apply_due_credits();
  int32_t& available = credits(ext.traffic_class, ext.vc);
  const uint32_t needed = credits_needed(ext.wire_flits);
  if (available < static_cast<int32_t>(needed)) {
    SC_REPORT_FATAL(name(), "send() without credits: the sender ignored allocate_vc()");
  }
  available -= static_cast<int32_t>(needed);
  next_vc_[static_cast<size_t>(ext.traffic_class)] = static_cast<uint8_t>((ext.vc + 1) % vcs_);

  const sc_time serialization = serialization_time(ext.wire_flits);
  const sc_time replays = picoseconds(replay_time_ps(ext.wire_flits, start.value()));
  const uint64_t waited = start > ext.hop_ready ? (start - ext.hop_ready).value() : 0;
  // On the message fabric a transaction's packets are those its wire size counts.
  const uint64_t packets = ext.packet_count > 1 ? 1
                                                : std::max<uint64_t>(1, (ext.payload_bytes + params_.max_packet_payload_bytes - 1) /
                                                                            params_.max_packet_payload_bytes);
  count_on_wire(ext.traffic_class, ext.packet_index == 0 ? 1 : 0, packets, 1, ext.wire_flits, ext.payload_bytes,
                (serialization + replays).value(), (start + replays + serialization).value(), waited, waited);
  ext.tail_arrival = busy_until_ + latency_;

  if (observer_ != nullptr) observer_->message_sent(*this, payload, start);
  payload.acquire();  // released when the receiver returns the credits
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_time head_delay = (start - now) + replays + latency_ + head_flit_time_;
  const tlm::tlm_sync_enum status = direct_ != nullptr
                                          ? direct_->nb_transport_fw(direct_tag_, payload, phase, head_delay)
                                          : receiver_->nb_transport_fw(payload, phase, head_delay);
  if (status != tlm::TLM_ACCEPTED) {
    SC_REPORT_FATAL(name(), "receiver did not accept a message (NVLink receivers always accept)");
  }
}

void NvlinkPort::record_transfer(TrafficClass traffic_class, uint32_t messages, uint32_t packets, uint64_t wire_flits,
                                 uint64_t payload_bytes, uint64_t busy_ps, uint64_t end_ps, uint64_t queueing_ps,
                                 uint64_t max_queueing_ps) {
  count_on_wire(traffic_class, messages, packets, packets, wire_flits, payload_bytes, busy_ps, end_ps, queueing_ps,
                max_queueing_ps);
}

void NvlinkPort::count_on_wire(TrafficClass traffic_class, uint64_t messages, uint64_t packets, uint64_t sends,
                               uint64_t wire_flits, uint64_t payload_bytes, uint64_t busy_ps, uint64_t end_ps,
                               uint64_t queueing_ps, uint64_t max_queueing_ps) {
  const auto c = static_cast<size_t>(traffic_class);
  stats_.messages[c] += messages;
  stats_.packets[c] += packets;
  stats_.wire_flits += wire_flits;
  stats_.wire_bytes += wire_flits * flit_bytes_;
  stats_.payload_bytes += payload_bytes;
  stats_.busy_time += picoseconds(busy_ps);
  hop_stats_.sends[c] += sends;
  hop_stats_.flits[c] += wire_flits;
  hop_stats_.queueing_ps[c] += queueing_ps;
  if (max_queueing_ps > hop_stats_.max_queueing_ps[c]) hop_stats_.max_queueing_ps[c] = max_queueing_ps;
  const uint64_t start_ps = end_ps - busy_ps;
  if (timeline_ != nullptr) timeline_->add(start_ps, end_ps);
  if (activity_ != nullptr) activity_->add(current_time().value(), start_ps, end_ps);
  if (picoseconds(end_ps) > busy_until_) busy_until_ = picoseconds(end_ps);
}

tlm::tlm_sync_enum NvlinkPort::nb_transport_bw(tlm::tlm_generic_payload& payload,
                                               tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != tlm::END_REQ) {
    SC_REPORT_FATAL(name(), "unexpected phase on the backward path (only END_REQ returns credits)");
  }
  const NvlinkExtension& ext = extension_of(payload);
  const sc_time arrival = current_time() + delay + latency_;
  const uint32_t flits = credits_needed(ext.wire_flits);
  if (observer_ != nullptr) observer_->credits_returned(*this, payload, flits, arrival);
  insert_pending(PendingCredit{arrival, static_cast<uint8_t>(ext.traffic_class), ext.vc, flits});
  bool& waiting = sender_waiting_[static_cast<size_t>(ext.traffic_class)];
  if (waiting && sender_ != nullptr) {
    waiting = false;
    sender_->wake_at(sender_client_, arrival);
  }
  payload.release();
  return tlm::TLM_ACCEPTED;
}

uint64_t NvlinkPort::credits_outstanding() const {
  // Credits the receiver holds: those missing from the VCs, less those on their way back and
  // those lost (a fault, not a message still in the receiver). A loss not yet due is neither.
  int64_t missing = 0;
  for (uint32_t i = 0; i < kTrafficClasses * vcs_; ++i) missing += static_cast<int64_t>(depth_) - credits_[i];
  for (const PendingCredit& c : pending_credits_) {
    if (c.change != CreditChange::lost) missing -= c.flits;
  }
  if (faults_ != nullptr) missing -= static_cast<int64_t>(faults_->lost[0]) + faults_->lost[1];
  return static_cast<uint64_t>(missing);
}

void NvlinkPort::describe_state(std::ostream& os) const {
  os << name() << ": " << (idle() ? "idle" : "busy") << ", " << credits_outstanding()
     << " credit flits held by the receiver, " << pending_credits_.size() << " credit returns in flight";
  if (faults_ != nullptr && faults_->stats.credit_flits_unresolved() > 0) {
    os << ", " << faults_->stats.credit_flits_unresolved() << " credit flits lost and not resynchronised";
  }
}

NvlinkPort* bound_port(sc_core::sc_port<NvlinkTxIf>& port) {
  auto* link = dynamic_cast<NvlinkPort*>(port.operator->());
  if (link == nullptr) SC_REPORT_FATAL(port.name(), "bound to an NvlinkTxIf that is not an NvlinkPort");
  return link;
}

}  // namespace nvsvp::model
