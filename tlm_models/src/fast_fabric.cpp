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
      head_flit_ps_((flit_time_fs_ + 500) / 1000) {
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
  const uint32_t slot = messages_.take();
  message.acquire();
  messages_[slot] = Message{&message, 0, count, count};
  ++in_flight_;
  const uint32_t first_link = gpu * links_per_gpu_;
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
      links_used_.push_back(packet.link);
      refuse_across_partitions(first_link + packet.link, ext);
    }
    const LinkWiring& wiring = wiring_[first_link + packet.link];
    const uint16_t output = chips_[wiring.chip]->output_for(ext.target_gpu, packet.target_address);
    shares_[share_index].packets.push_back(SharePacket{packet.bytes, packet.wire_flits, k, output});
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

void FastFabric::refuse_across_partitions(uint32_t link_index, const NvlinkExtension& ext) {
  const LinkWiring& wiring = wiring_[link_index];
  const SwitchCsr& registers = chips_[wiring.chip]->registers();
  if (!registers.partitioned() || registers.may_reach(wiring.port, ext.target_gpu)) return;
  const std::string text = "GPU " + std::to_string(ext.source_gpu) + "#" + std::to_string(ext.sequence) +
                           " writes to GPU " + std::to_string(ext.target_gpu) +
                           " across partitions: the fast fabric does not refuse it yet (simulation.fabric: packet does)";
  SC_REPORT_FATAL(name(), text.c_str());
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
  // The runs of the packets starting now, one per output.
  uint32_t runs[kMaxRunsPerShare];
  uint32_t run_count = 0;
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
    // Bit errors: the packet's corrupted attempts go first (go-back-N), its wait counted to the first.
    const uint64_t attempt = busy;
    busy += up.replay_time_ps(packet.wire_flits, start + busy);
    uint32_t r = 0;
    while (r < run_count && runs_[runs[r]].output != packet.output) ++r;
    if (r == run_count) {
      if (run_count == kMaxRunsPerShare) SC_REPORT_FATAL(name(), "more outputs towards one GPU on one chip than kMaxRunsPerShare");
      runs[run_count++] = runs_.take();
      Run& fresh = runs_[runs[r]];
      fresh = Run{};
      fresh.chip = wiring.chip;
      fresh.output = packet.output;
      fresh.traffic_class = static_cast<uint8_t>(c);
      fresh.message = share.message;
      fresh.link = link_index;
      fresh.first_offset_ps = busy;
      fresh.arrival_ps = head + busy;
      fresh.traced = outputs_[wiring.chip][packet.output]->observer() != nullptr;
      if (run_credits_.size() <= runs[r]) run_credits_.resize(runs[r] + 1);
      run_credits_[runs[r]].clear();
      if (fresh.traced) {
        if (traced_packets_.size() <= runs[r]) traced_packets_.resize(runs[r] + 1);
        traced_packets_[runs[r]].clear();
      }
    }
    Run& run = runs_[runs[r]];
    const uint64_t serialization = serialization_ps(packet.wire_flits);
    if (up_observer != nullptr) {
      const Message& record = messages_[share.message];
      up_observer->packet_sent(up, *record.payload, packet.index, record.packets, packet.wire_flits, packet.bytes,
                               picoseconds(start + attempt), picoseconds(start + busy + serialization + latency_ps_));
    }
    if (run.traced) traced_packets_[runs[r]].push_back(TracedPacket{packet.index, packet.wire_flits, packet.bytes});
    run_credits_[runs[r]].push_back(PacketCredits{static_cast<uint32_t>(need), static_cast<uint32_t>(vc)});
    run.last_offset_ps = busy;
    run.last_packet_flits = packet.wire_flits;
    run.packets++;
    run.wire_flits += packet.wire_flits;
    run.payload_bytes += packet.bytes;
    run.serialization_ps += serialization;
    const bool message_first = k == 0 && share.first_of_message;
    run.first_of_message = run.first_of_message || message_first;
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
  for (uint32_t r = 0; r < run_count; ++r) {
    const Run& run = runs_[runs[r]];
    output_state_[run.chip][run.output].coming.push(run.arrival_ps);
    push_due(Due{run.arrival_ps, next_order_++, runs[r], 0, DueKind::run});
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

void FastFabric::schedule_output(uint32_t chip, uint16_t port) {
  Output& output = output_state_[chip][port];
  output.version++;
  if (output.empty()) return;
  // When the link is free, unless no packet has arrived by then: the first to arrive.
  uint64_t head = kNever;
  for (uint32_t c = 0; c < kTrafficClasses && head > output.clock_ps; ++c) {
    for (const InputQueue& queue : output.inputs[c]) {
      head = std::min(head, queue.head_ps);
      if (head <= output.clock_ps) break;
    }
  }
  const uint64_t next = std::max(output.clock_ps, head);
  // A run arriving first decides it then (arrive()).
  if (!output.coming.empty() && output.coming.top() <= next) return;
  push_due(Due{next, next_order_++, chip << 16 | port, output.version, DueKind::output});
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

void FastFabric::arrive(uint32_t run_index) {
  const Run& run = runs_[run_index];
  const uint32_t chip = run.chip;
  const uint16_t port = run.output;
  const uint32_t input = run.link * kTrafficClasses + run.traffic_class;
  advance_output(chip, port, run.arrival_ps - 1);
  Output& output = output_state_[chip][port];
  output.coming.pop();  // this run's arrival: the first of those coming (arrivals come in time order)
  std::vector<InputQueue>& inputs = output.inputs[run.traffic_class];
  auto at = std::lower_bound(inputs.begin(), inputs.end(), input,
                             [](const InputQueue& queue, uint32_t link) { return queue.link < link; });
  runs_[run_index].next_in_queue = ~0u;
  if (at == inputs.end() || at->link != input) {
    inputs.insert(at, InputQueue{input, run_index, run_index, run.arrival_ps});
  } else {
    runs_[at->tail].next_in_queue = run_index;
    at->tail = run_index;
  }
  schedule_output(chip, port);
}

// The input whose run sends the output's next packet (see advance_output).
std::pair<std::vector<FastFabric::InputQueue>*, size_t> FastFabric::choose_input(Output& output, bool oldest_first) {
  // Round robin: the first input after the last one served (then from the lowest) whose next
  // packet has arrived when the link is free; oldest first, or none arrived: the earliest.
  // The class whose turn it is first (the two crossbars alternate at the output), then the
  // other; within a class round robin by input.
  std::vector<InputQueue>* chosen_class = nullptr;
  size_t chosen = 0;
  for (uint32_t turn = 0; turn < kTrafficClasses && !oldest_first && chosen_class == nullptr; ++turn) {
    const uint32_t traffic_class = (output.next_class + turn) % kTrafficClasses;
    std::vector<InputQueue>& inputs = output.inputs[traffic_class];
    const size_t count = inputs.size();
    if (count == 0) continue;
    const size_t first = static_cast<size_t>(
        std::upper_bound(inputs.begin(), inputs.end(), output.last_input[traffic_class],
                         [](uint32_t link, const InputQueue& queue) { return link < queue.link; }) -
        inputs.begin());
    for (size_t i = 0; i < count; ++i) {
      const size_t index = first + i < count ? first + i : first + i - count;
      if (inputs[index].head_ps <= output.clock_ps) {
        chosen_class = &inputs;
        chosen = index;
        break;
      }
    }
  }
  if (chosen_class == nullptr) {
    // The earliest head; among equals the lowest input (link, then class).
    uint64_t earliest = kNever;
    uint32_t earliest_link = ~0u;
    for (std::vector<InputQueue>& inputs : output.inputs) {
      for (size_t index = 0; index < inputs.size(); ++index) {
        const InputQueue& queue = inputs[index];
        if (queue.head_ps < earliest || (queue.head_ps == earliest && queue.link < earliest_link)) {
          earliest = queue.head_ps;
          earliest_link = queue.link;
          chosen_class = &inputs;
          chosen = index;
        }
      }
    }
  }
  return {chosen_class, chosen};
}

// Packet by packet: when the link is free, the arbiter picks among the inputs whose next packet
// has arrived (a run's packets arrive spread evenly from its first to its last); none has: the
// link waits for the first to arrive. A lone input sends its run's packets back to back.
void FastFabric::advance_output(uint32_t chip, uint16_t port, uint64_t until_ps) {
  Output& output = output_state_[chip][port];
  NvlinkPort& out = *outputs_[chip][port];
  MessageObserver* const out_observer = out.observer();
  const bool oldest_first = chip_oldest_first_[chip] != 0;
  while (!output.empty()) {
    const auto [chosen_class, chosen] = choose_input(output, oldest_first);
    std::vector<InputQueue>& inputs = *chosen_class;
    InputQueue& queue = inputs[chosen];
    const uint32_t run_index = queue.head;
    Run& run = runs_[run_index];
    if (std::max(output.clock_ps, queue.head_ps) > until_ps) return;
    // A lone input sends its run's packets back to back, as far as they start by `until_ps`.
    const bool alone = output.inputs[0].size() + output.inputs[1].size() == 1;
    const uint64_t last_serialization = serialization_ps(run.last_packet_flits);
    const uint64_t serialization = run.packets > 1 ? (run.serialization_ps - last_serialization) / (run.packets - 1) : 0;
    const uint32_t flits = run.packets > 1 ? (run.wire_flits - run.last_packet_flits) / (run.packets - 1) : 0;
    // Each packet's buffer space goes back to its link a hop after the packet left.
    const uint32_t source_index = run.link;
    Link& source = links_[source_index];
    std::deque<CreditReturn>& returns = source.returns[run.traffic_class];
    const std::vector<PacketCredits>& credits = run_credits_[run_index];
    do {
      const uint64_t head = queue.head_ps;
      const uint64_t start = std::max(output.clock_ps, head);
      if (start > until_ps) break;
      run.queueing_ps += start - head;
      run.max_wait_ps = std::max(run.max_wait_ps, start - head);
      run.sent++;
      const bool last = run.sent == run.packets;
      const uint32_t back = last ? run.wire_flits - run.returned_flits : flits;
      // Bit errors: the packet's corrupted attempts go first.
      const uint64_t replay = out.replay_time_ps(back, start);
      run.replay_ps += replay;
      const uint64_t own = last ? run.serialization_ps - serialization * (run.packets - 1) : serialization;
      output.clock_ps = start + replay + own;
      run.returned_flits += back;
      if (out_observer != nullptr) {
        const TracedPacket& packet = traced_packets_[run_index][run.sent - 1];
        const Message& record = messages_[run.message];
        out_observer->packet_sent(out, *record.payload, packet.index, record.packets, packet.wire_flits, packet.bytes,
                                  picoseconds(start), picoseconds(output.clock_ps + latency_ps_));
      }
      // Its room in its VC goes back a hop after it left.
      const PacketCredits& taken = credits[run.sent - 1];
      const CreditReturn entry{output.clock_ps + latency_ps_, taken.flits, taken.vc};
      auto at = returns.end();
      while (at != returns.begin() && (at - 1)->at_ps > entry.at_ps) --at;
      returns.insert(at, entry);
      if (!last) queue.head_ps = next_head(run);
    } while (alone && run.sent < run.packets);
    output.last_input[queue.link % kTrafficClasses] = queue.link;
    output.next_class = (queue.link + 1) % kTrafficClasses;
    if (run.sent == run.packets) {
      if (run.next_in_queue != ~0u) {
        queue.head = run.next_in_queue;
        queue.head_ps = next_head(runs_[queue.head]);
      } else {
        inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(chosen));
      }
      finish_run(run_index, output.clock_ps);
    }
    // The space back may let a link waiting for it go on (it may start runs: `run` is not used
    // after this).
    if (source.stalled() && source.wake_ps == kNever) advance_link(source_index, horizon_ps_ + latency_ps_);
  }
}

// The run's packets are through: counted on the output's link, and its message lands with its
// last packet.
void FastFabric::finish_run(uint32_t run_index, uint64_t end) {
  const Run run = runs_[run_index];
  runs_.give(run_index);
  Message& record = messages_[run.message];
  const TrafficClass traffic_class = extension_of(*record.payload).traffic_class;
  outputs_[run.chip][run.output]->record_transfer(traffic_class, run.first_of_message ? 1 : 0, run.packets,
                                                  run.wire_flits, run.payload_bytes,
                                                  run.serialization_ps + run.replay_ps, end,
                                                  run.queueing_ps, run.max_wait_ps);
  chips_[run.chip]->count_forwarded(traffic_class, run.packets, run.wire_flits);
  record.landing_ps = std::max(record.landing_ps, end + latency_ps_);
  record.packets_left -= run.packets;
  if (record.packets_left == 0) land(run.message);
}

void FastFabric::land(uint32_t slot) {
  Message& record = messages_[slot];
  tlm::tlm_generic_payload& message = *record.payload;
  const sc_core::sc_time landing = picoseconds(record.landing_ps);
  const uint32_t destination = extension_of(message).target_gpu;
  extension_of(message).tail_arrival = landing;
  record.payload = nullptr;
  messages_.give(slot);
  --in_flight_;
  gpus_[destination]->land(message, landing);
  message.release();
}

uint64_t FastFabric::describe_outstanding(std::ostream& os, uint64_t max_lines) const {
  uint64_t shown = 0;
  for (uint32_t slot = 0; slot < messages_.size(); ++slot) {
    const Message& record = messages_[slot];
    if (record.payload == nullptr) continue;
    if (shown++ < max_lines) {
      const NvlinkExtension& ext = extension_of(*record.payload);
      os << "  " << name() << ": " << to_string(ext.opcode) << " GPU " << ext.source_gpu << "#" << ext.sequence
         << " -> GPU " << ext.target_gpu << ", " << record.packets_left << " of its packets not yet through\n";
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
