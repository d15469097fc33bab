#include "nvsvp/model/fast_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

namespace {
constexpr uint32_t kNoShare = ~0u;
}

FastFabric::FastFabric(const sc_core::sc_module_name& name, const LinkParams& link)
    : sc_module(name),
      latency_ps_(to_picoseconds(link.latency_ns)),
      flit_time_fs_(static_cast<uint64_t>(std::llround(link.flit_time_ps() * 1000.0))),
      head_flit_ps_((flit_time_fs_ + 500) / 1000),
      header_flits_(link.header_flits_per_packet) {
  require_picosecond_resolution(this->name());
  SC_METHOD(serve);
  sensitive << wake_;
  dont_initialize();
}

void FastFabric::attach_chip(SwitchChip& chip) {
  if (chip.chip_id() != chips_.size()) SC_REPORT_FATAL(name(), "chips attached out of order");
  chips_.push_back(&chip);
  const SwitchParams& params = chip.params();
  chip_latency_ps_.push_back(to_picoseconds(params.latency_ns));
  chip_vcs_.push_back(params.vcs_per_class);
  chip_vc_depth_.push_back(params.vc_depth_flits);
  output_state_.emplace_back(params.ports);
  if (params.arbiter != "round_robin" && params.arbiter != "oldest_first") {
    const std::string text = "the fast fabric's outputs arbitrate round_robin or oldest_first, not " + params.arbiter +
                             " (simulation.fabric: packet has every arbiter)";
    SC_REPORT_FATAL(name(), text.c_str());
  }
  chip_oldest_first_.push_back(params.arbiter == "oldest_first" ? 1 : 0);
  outputs_.emplace_back(params.ports, nullptr);
  if (run_of_output_.size() < params.ports) run_of_output_.resize(params.ports, kNoRun);
}

void FastFabric::attach_gpu(Gpu& gpu, std::vector<LinkWiring> links) {
  if (gpu.id() != gpus_.size()) SC_REPORT_FATAL(name(), "GPUs attached out of order");
  if (!gpus_.empty() && links.size() != links_per_gpu_) SC_REPORT_FATAL(name(), "GPUs with different link counts");
  links_per_gpu_ = static_cast<uint32_t>(links.size());
  for (const LinkWiring& wiring : links) {
    if (wiring.chip >= chips_.size() || wiring.port >= outputs_[wiring.chip].size()) {
      SC_REPORT_FATAL(name(), "a GPU link wired to a chip or port that was not attached");
    }
    outputs_[wiring.chip][wiring.port] = wiring.down;
    wiring_.push_back(wiring);
    Link& link = links_.emplace_back();
    for (auto& vcs : link.credits) std::fill(vcs, vcs + chip_vcs_[wiring.chip], static_cast<int32_t>(chip_vc_depth_[wiring.chip]));
  }
  gpus_.push_back(&gpu);
  share_of_link_.assign(links_per_gpu_, kNoShare);
  gpu.attach_fast_fabric(this);
}

void FastFabric::send_message(uint32_t gpu, uint32_t stream, tlm::tlm_generic_payload& message,
                              const FastPacket* packets, uint32_t count) {
  const NvlinkExtension& ext = extension_of(message);
  const uint64_t now = current_time().value();
  // Everything due by a hop from now is decided first: this message's links start in that order.
  // The sender did so (catch_up) before it cut the message: deciding here could land messages
  // whose receivers send through the sender's packets, under these very `packets`.
  if (now + latency_ps_ > horizon_ps_) {
    SC_REPORT_FATAL(name(), "send_message() before catch_up(): its packets may be overwritten");
  }
  const bool multicast = ext.opcode == Opcode::multimem_store || ext.opcode == Opcode::multimem_red;
  message.acquire();
  // A multicast's packets go through as its copies'.
  const uint32_t slot = open_message(message, count, multicast ? count : 0);
  const uint32_t first_link = gpu * links_per_gpu_;
  const MulticastGroup* group = nullptr;
  uint32_t shares = 0, refused = 0;
  for (uint32_t k = 0; k < count; ++k) {
    const FastPacket& packet = packets[k];
    uint32_t& share_index = share_of_link_[packet.link];
    if (share_index == kNoShare) {
      share_index = shares_.take();
      Share& share = shares_[share_index];  // a reused record keeps its packets' storage
      share.message = slot;
      share.stream = stream;
      share.traffic_class = static_cast<uint8_t>(ext.traffic_class);
      share.ready_ps = std::max<uint64_t>(now, ext.hop_ready.value());  // a response: once its read landed
      share.packets.clear();
      share.next = 0;
      share.first_of_message = k == 0;
      share.multicast = multicast;
      share.addresses.clear();
      share.refusal = multicast ? 0 : partition_refusal(first_link + packet.link, ext);
      links_used_.push_back(packet.link);
    }
    const LinkWiring& wiring = wiring_[first_link + packet.link];
    Share& share = shares_[share_index];
    if (multicast) {
      // Each chip the message reaches copies its packets to the same members (checked here: the
      // members' copies are made once, when its first packet starts), or refuses them.
      // The chip's checks once per share; its other packets must fall in the same group.
      const MulticastGroup* on_chip = chips_[wiring.chip]->registers().group_for(packet.target_address);
      if (share.packets.empty()) {
        share.refusal = multicast_refusal(wiring.chip, wiring.port, packet.target_address, ext, on_chip);
        if (share.refusal == 0 && group == nullptr) group = on_chip;
        if (share.refusal == 0 && !(on_chip->members == group->members)) {
          SC_REPORT_FATAL(name(), "a multicast whose packets reach groups of different members on different chips");
        }
      } else if (on_chip != chips_[wiring.chip]->registers().group_for(share.addresses[0])) {
        SC_REPORT_FATAL(name(), "a multicast whose packets on one chip fall in different groups");
      }
      share.addresses.push_back(packet.target_address);
      share.packets.push_back(SharePacket{packet.bytes, packet.wire_flits, k, 0});
    } else {
      const uint16_t output = chips_[wiring.chip]->output_for(ext.target_gpu, packet.target_address);
      share.packets.push_back(SharePacket{packet.bytes, packet.wire_flits, k, output});
    }
    if (share.packets.size() == 1) {
      shares++;
      if (share.refusal != 0) refused++;
    }
  }
  if (refused > 0) {
    // The chips refuse it: an error response per packet goes back to the issuer, which gathers them.
    if (refused != shares) SC_REPORT_FATAL(name(), "a request refused by some of the chips it reaches and not by others");
    messages_[slot].packets_left = 0;
    messages_[slot].unstarted = count;
    make_refusal(slot);
  }
  for (const uint32_t link : links_used_) {
    Link& queue_link = links_[first_link + link];
    queue_link.shares[stream].push_back(share_of_link_[link]);
    queue_link.waiting++;
    share_of_link_[link] = kNoShare;
  }
  for (const uint32_t link : links_used_) advance_link(first_link + link, horizon_ps_ + latency_ps_);
  links_used_.clear();
}

uint32_t FastFabric::open_message(tlm::tlm_generic_payload& payload, uint32_t packets, uint32_t unstarted) {
  const uint32_t slot = messages_.take();
  Message& record = messages_[slot];  // a reused record keeps its copies' storage
  record.payload = &payload;
  record.landing_ps = 0;
  record.packets_left = unstarted > 0 ? 0 : packets;
  record.packets = packets;
  record.unstarted = unstarted;
  record.copies.clear();
  record.refusal = kNoMessage;
  ++in_flight_;
  return slot;
}

void FastFabric::push_due(const Due& due) {
  due_.push(due);
  // The process wakes when the first due is; it then decides everything due within a hop.
  wake_no_later_than(due.at_ps);
}

// A link's shares start in order, as the link engines start theirs: the link picks among the
// shares ready now (never one it knows will be ready later: a share handed over meanwhile may be
// ready first), and the one it picks starts now, back to back behind the one it is sending, or
// when room for its first packet comes back, as far as that is known (up to `limit`: a hop past
// what is decided, since what is not decided yet returns later).
void FastFabric::advance_link(uint32_t index, uint64_t limit) {
  Link& link = links_[index];
  const uint32_t chip = wiring_[index].chip;
  const uint64_t now = current_time().value();
  while (link.waiting > 0) {
    // The queues round robin from after the last one served, among those whose head is ready now;
    // none ready: look again when the first is.
    uint32_t chosen = kQueues;
    uint64_t first_ready = kNever;
    for (uint32_t i = 0; i < kQueues; ++i) {
      const uint32_t queue = (link.next_stream + i) % kQueues;
      if (link.shares[queue].empty()) continue;
      const uint64_t ready = shares_[link.shares[queue].front()].ready_ps;
      if (ready <= now) {
        chosen = queue;
        break;
      }
      first_ready = std::min(first_ready, ready);
    }
    if (chosen == kQueues) {
      look_at_link_again(index, first_ready);
      return;
    }
    const uint32_t share_index = link.shares[chosen].front();
    const Share& share = shares_[share_index];
    const uint32_t c = share.traffic_class;
    uint64_t start = std::max(link.free_ps, now);
    const int32_t need = static_cast<int32_t>(std::min(share.packets[share.next].wire_flits, chip_vc_depth_[chip]));
    take_returns(link, c, start);
    if (allocate_vc(link, c, chip_vcs_[chip], need) < 0) {
      if (link.stalled_since_ps[c] == kNever) link.stalled_since_ps[c] = start;
      // The first time one VC has room, among the returns known.
      int32_t known[kMaxVcsPerClass];
      std::copy(link.credits[c], link.credits[c] + chip_vcs_[chip], known);
      uint64_t enough = kNever;
      for (const CreditReturn& back : link.returns[c]) {
        known[back.vc] += static_cast<int32_t>(back.flits);
        if (known[back.vc] >= need) {
          enough = back.at_ps;
          break;
        }
      }
      if (enough == kNever) return;  // advance_output() looks again as buffer space comes back
      start = enough;
    }
    if (start > limit) {
      look_at_link_again(index, start);
      return;
    }
    take_returns(link, c, start);
    if (link.stalled_since_ps[c] != kNever) {
      wiring_[index].up->record_credit_stall(static_cast<TrafficClass>(c), start - link.stalled_since_ps[c]);
      link.stalled_since_ps[c] = kNever;
    }
    link.next_stream = (chosen + 1) % kQueues;
    if (start_packets(index, share_index, start)) {
      link.shares[chosen].pop_front();
      link.waiting--;
      shares_.give(share_index);
    }
  }
}

void FastFabric::look_at_link_again(uint32_t index, uint64_t at_ps) {
  Link& link = links_[index];
  if (link.wake_ps <= at_ps) return;  // a look due by then decides again
  link.wake_ps = at_ps;
  link_due_.push(Due{at_ps, next_order_++, index, 0, DueKind::link});
  wake_no_later_than(at_ps);
}

void FastFabric::take_returns(Link& link, uint32_t c, uint64_t until_ps) {
  std::deque<CreditReturn>& returns = link.returns[c];
  while (!returns.empty() && returns.front().at_ps <= until_ps) {
    link.credits[c][returns.front().vc] += static_cast<int32_t>(returns.front().flits);
    returns.pop_front();
  }
}

int FastFabric::allocate_vc(const Link& link, uint32_t c, uint32_t vcs, int32_t need) {
  const uint32_t first = link.next_vc[c];
  for (uint32_t i = 0; i < vcs; ++i) {
    const uint32_t vc = first + i < vcs ? first + i : first + i - vcs;
    if (link.credits[c][vc] >= need) return static_cast<int>(vc);
  }
  return -1;
}

uint32_t FastFabric::run_for(uint16_t output, uint32_t link_index, uint8_t traffic_class, uint32_t message, bool copy,
                             uint64_t arrival_ps, uint64_t offset_ps) {
  if (run_of_output_[output] != kNoRun) return run_of_output_[output];
  const uint32_t index = runs_.take();
  run_of_output_[output] = index;
  outputs_used_.push_back(output);
  const uint32_t chip = wiring_[link_index].chip;
  Run& fresh = runs_[index];
  fresh = Run{};
  fresh.chip = chip;
  fresh.output = output;
  fresh.traffic_class = traffic_class;
  fresh.message = message;
  fresh.link = link_index;
  fresh.copy = copy;
  fresh.first_offset_ps = offset_ps;
  fresh.arrival_ps = arrival_ps;
  fresh.traced = outputs_[chip][output]->observer() != nullptr;
  // What its packets took at the switch input: their own credits, or (copies) the held packets.
  if (copy) {
    if (run_held_.size() <= index) run_held_.resize(index + 1);
    run_held_[index].clear();
  } else {
    if (run_credits_.size() <= index) run_credits_.resize(index + 1);
    run_credits_[index].clear();
  }
  if (fresh.traced) {
    if (traced_packets_.size() <= index) traced_packets_.resize(index + 1);
    traced_packets_[index].clear();
  }
  return index;
}

void FastFabric::add_to_run(uint32_t run_index, const SharePacket& packet, uint64_t offset_ps, bool message_first) {
  Run& run = runs_[run_index];
  if (run.traced) traced_packets_[run_index].push_back(TracedPacket{packet.index, packet.wire_flits, packet.bytes});
  run.last_offset_ps = offset_ps;
  run.last_packet_flits = packet.wire_flits;
  run.packets++;
  run.wire_flits += packet.wire_flits;
  run.payload_bytes += packet.bytes;
  run.serialization_ps += serialization_ps(packet.wire_flits);
  run.first_of_message = run.first_of_message || message_first;
}

bool FastFabric::start_packets(uint32_t link_index, uint32_t share_index, uint64_t start) {
  Link& link = links_[link_index];
  Share& share = shares_[share_index];
  const LinkWiring& wiring = wiring_[link_index];
  NvlinkPort& up = *wiring.up;
  MessageObserver* const up_observer = up.observer();
  const uint32_t c = share.traffic_class;
  const uint32_t vcs = chip_vcs_[wiring.chip];
  const uint32_t depth = chip_vc_depth_[wiring.chip];
  const uint64_t head = start + latency_ps_ + head_flit_ps_ + chip_latency_ps_[wiring.chip];
  uint64_t busy = 0, offsets = 0, last_offset = 0, payload = 0;
  uint32_t packets = 0, wire_flits = 0;
  bool first_of_message = false;
  uint32_t k = share.next;
  for (; k < share.packets.size(); ++k) {
    const SharePacket& packet = share.packets[k];
    // The packet takes room in one VC of its class, round robin from after the last one taken
    // (NvlinkPort::allocate_vc); the first is known to find it.
    const auto need = static_cast<int32_t>(std::min(packet.wire_flits, depth));
    const int vc = allocate_vc(link, c, vcs, need);
    if (vc < 0) {
      if (k == share.next) SC_REPORT_FATAL(name(), "a share started without room for its first packet");
      break;
    }
    link.credits[c][vc] -= need;
    link.next_vc[c] = static_cast<uint8_t>(vc + 1 == static_cast<int>(vcs) ? 0 : vc + 1);
    const PacketCredits credits{static_cast<uint32_t>(need), static_cast<uint32_t>(vc)};
    // Bit errors: the packet's corrupted attempts go first (go-back-N), its wait counted to the first.
    const uint64_t attempt = busy;
    busy += up.replay_time_ps(packet.wire_flits, start + busy);
    const uint64_t serialization = serialization_ps(packet.wire_flits);
    const bool message_first = k == 0 && share.first_of_message;
    if (share.refusal != 0) {
      refuse_packet(link_index, share, k, credits, start, busy);
    } else if (share.multicast) {
      copy_to_members(link_index, share, k, credits, head + busy, busy);
    } else {
      const uint32_t r = run_for(packet.output, link_index, share.traffic_class, share.message, false, head + busy, busy);
      run_credits_[r].push_back(credits);
      add_to_run(r, packet, busy, message_first);
    }
    if (up_observer != nullptr) {
      const Message& record = messages_[share.message];
      up_observer->packet_sent(up, *record.payload, packet.index, record.packets, packet.wire_flits, packet.bytes,
                               picoseconds(start + attempt), picoseconds(start + busy + serialization + latency_ps_));
    }
    first_of_message = first_of_message || message_first;
    offsets += attempt;
    last_offset = attempt;
    busy += serialization;
    packets++;
    wire_flits += packet.wire_flits;
    payload += packet.bytes;
  }
  share.next = k;
  link.free_ps = start + busy;
  const uint64_t wait = start - share.ready_ps;
  const NvlinkExtension& ext = extension_of(*messages_[share.message].payload);
  up.record_transfer(ext.traffic_class, first_of_message ? 1 : 0, packets, wire_flits, payload, busy,
                     link.free_ps, wait * packets + offsets, wait + last_offset);
  for (const uint16_t output : outputs_used_) {
    const uint32_t r = run_of_output_[output];
    run_of_output_[output] = kNoRun;
    const Run& run = runs_[r];
    output_state_[run.chip][run.output].coming.push(run.arrival_ps);
    push_due(Due{run.arrival_ps, next_order_++, r, 0, DueKind::run});
  }
  outputs_used_.clear();
  if (share.multicast || share.refusal != 0) {
    // The request itself lands nowhere: its record goes once its last packet has started.
    Message& record = messages_[share.message];
    record.unstarted -= packets;
    if (record.unstarted == 0) {
      record.payload->release();
      record.payload = nullptr;
      messages_.give(share.message);
      --in_flight_;
    }
  }
  return share.next == share.packets.size();
}

void FastFabric::decide(uint64_t now) {
  if (now + latency_ps_ <= horizon_ps_) return;
  horizon_ps_ = now + latency_ps_;
  // Runs and outputs due by the horizon, links due by now (a link's start is decided at its time),
  // in time order.
  for (;;) {
    const bool run_or_output = !due_.empty() && due_.top().at_ps <= horizon_ps_;
    const bool link = !link_due_.empty() && link_due_.top().at_ps <= now;
    if (!run_or_output && !link) break;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>>& queue =
        link && (!run_or_output || due_.top() > link_due_.top()) ? link_due_ : due_;
    const Due due = queue.top();
    queue.pop();
    switch (due.kind) {
      case DueKind::link:
        if (links_[due.index].wake_ps != due.at_ps) break;  // stale: an earlier look was asked for since
        links_[due.index].wake_ps = kNever;
        advance_link(due.index, horizon_ps_ + latency_ps_);
        break;
      case DueKind::run: arrive(due.index); break;
      case DueKind::output: {
        const uint32_t chip = due.index >> 16;
        const auto port = static_cast<uint16_t>(due.index & 0xFFFF);
        if (output_state_[chip][port].version != due.version) break;  // stale: rescheduled since
        // Its packets are decided up to the next run coming to it (or the horizon), at least the one
        // due now (what reaches it now has).
        const Output& output = output_state_[chip][port];
        const uint64_t next = output.coming.empty() ? kNever : output.coming.top();
        advance_output(chip, port, std::max(due.at_ps, std::min(horizon_ps_, next == kNever ? horizon_ps_ : next - 1)));
        schedule_output(chip, port);
        break;
      }
    }
  }
}

void FastFabric::wake_no_later_than(uint64_t at_ps) {
  const uint64_t now = current_time().value();
  const uint64_t wake = std::max(at_ps, now);
  if (wake < wake_at_ps_) {
    wake_at_ps_ = wake;
    wake_.notify(picoseconds(wake - now));
  }
}

void FastFabric::serve() {
  wake_at_ps_ = kNever;
  decide(current_time().value());
  if (!due_.empty()) wake_no_later_than(due_.top().at_ps);  // after the horizon: a hop from now or later
  if (!link_due_.empty()) wake_no_later_than(link_due_.top().at_ps);  // after now
}

uint64_t FastFabric::describe_outstanding(std::ostream& os, uint64_t max_lines) const {
  uint64_t shown = 0;
  for (uint32_t slot = 0; slot < messages_.size(); ++slot) {
    const Message& record = messages_[slot];
    if (record.payload == nullptr) continue;
    if (shown++ < max_lines) {
      const NvlinkExtension& ext = extension_of(*record.payload);
      os << "  " << name() << ": " << to_string(ext.opcode) << " GPU " << ext.source_gpu << "#" << ext.sequence
         << " -> GPU " << ext.target_gpu << ", ";
      if (record.unstarted > 0) {  // a multicast request, whose copies are listed as messages of their own
        os << record.unstarted << " of its packets not yet sent\n";
      } else {
        os << record.packets_left << " of its packets not yet through\n";
      }
    }
  }
  for (uint32_t index = 0; index < links_.size(); ++index) {
    const Link& link = links_[index];
    if (link.waiting == 0 || shown++ >= max_lines) continue;
    os << "  " << name() << ": GPU " << index / links_per_gpu_ << " link " << index % links_per_gpu_ << ": "
       << link.waiting << " messages' packets waiting"
       << (link.stalled() ? ", for buffer space at its switch input" : "") << "\n";
  }
  return in_flight_;
}

}  // namespace nvsvp::model
