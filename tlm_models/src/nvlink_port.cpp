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
  // Pending returns are kept in time order: the due ones are at the front.
  while (!pending_credits_.empty() && pending_credits_.front().at <= now) {
    const PendingCredit& c = pending_credits_.front();
    credits(static_cast<TrafficClass>(c.traffic_class), c.vc) += c.flits;
    sc_time& stalled = stalled_since_[c.traffic_class];
    if (stalled != never()) {
      if (c.at > stalled) hop_stats_.credit_stall_ps[c.traffic_class] += (c.at - stalled).value();
      stalled = never();
    }
    pending_credits_.pop_front();
  }
  earliest_pending_ = pending_credits_.empty() ? never() : pending_credits_.front().at;
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
  sender_waiting_[static_cast<size_t>(traffic_class)] = true;
  sc_time& stalled = stalled_since_[static_cast<size_t>(traffic_class)];
  if (stalled == never()) stalled = current_time();
  // Credits already on their way back wake the sender when the first of them lands.
  sc_time earliest = never();
  for (const PendingCredit& c : pending_credits_) {
    if (c.traffic_class == static_cast<uint8_t>(traffic_class)) {
      earliest = c.at;  // the list is in time order
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
  busy_until_ = start + serialization;
  if (timeline_ != nullptr) timeline_->add(start.value(), busy_until_.value());  // ps resolution
  if (activity_ != nullptr) activity_->add(now.value(), start.value(), busy_until_.value());
  ext.tail_arrival = busy_until_ + latency_;

  stats_.messages[static_cast<size_t>(ext.traffic_class)]++;
  stats_.wire_flits += ext.wire_flits;
  stats_.wire_bytes += static_cast<uint64_t>(ext.wire_flits) * flit_bytes_;
  stats_.payload_bytes += ext.payload_bytes;
  stats_.busy_time += serialization;
  const auto c = static_cast<size_t>(ext.traffic_class);
  const uint64_t waited = start > ext.hop_ready ? (start - ext.hop_ready).value() : 0;
  hop_stats_.flits[c] += ext.wire_flits;
  hop_stats_.queueing_ps[c] += waited;
  if (waited > hop_stats_.max_queueing_ps[c]) hop_stats_.max_queueing_ps[c] = waited;

  if (observer_ != nullptr) observer_->message_sent(*this, payload, start);
  payload.acquire();  // released when the receiver returns the credits
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_time head_delay = (start - now) + latency_ + head_flit_time_;
  const tlm::tlm_sync_enum status = direct_ != nullptr
                                          ? direct_->nb_transport_fw(direct_tag_, payload, phase, head_delay)
                                          : receiver_->nb_transport_fw(payload, phase, head_delay);
  if (status != tlm::TLM_ACCEPTED) {
    SC_REPORT_FATAL(name(), "receiver did not accept a message (NVLink receivers always accept)");
  }
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
  pending_credits_.push_back(PendingCredit{arrival, static_cast<uint8_t>(ext.traffic_class), ext.vc, flits});
  // Returns come nearly in time order; one insertion step keeps the list sorted.
  for (auto it = pending_credits_.end() - 1; it != pending_credits_.begin() && (it - 1)->at > it->at; --it) {
    std::iter_swap(it - 1, it);
  }
  earliest_pending_ = std::min(earliest_pending_, arrival);
  bool& waiting = sender_waiting_[static_cast<size_t>(ext.traffic_class)];
  if (waiting && sender_ != nullptr) {
    waiting = false;
    sender_->wake_at(sender_client_, arrival);
  }
  payload.release();
  return tlm::TLM_ACCEPTED;
}

uint64_t NvlinkPort::credits_outstanding() const {
  uint64_t missing = 0;
  for (uint32_t i = 0; i < kTrafficClasses * vcs_; ++i) missing += static_cast<uint64_t>(depth_ - credits_[i]);
  for (const PendingCredit& c : pending_credits_) missing -= c.flits;
  return missing;
}

void NvlinkPort::describe_state(std::ostream& os) const {
  os << name() << ": " << (idle() ? "idle" : "busy") << ", " << credits_outstanding()
     << " credit flits held by the receiver, " << pending_credits_.size() << " credit returns in flight";
}

NvlinkPort* bound_port(sc_core::sc_port<NvlinkTxIf>& port) {
  auto* link = dynamic_cast<NvlinkPort*>(port.operator->());
  if (link == nullptr) SC_REPORT_FATAL(port.name(), "bound to an NvlinkTxIf that is not an NvlinkPort");
  return link;
}

}  // namespace nvsvp::model
