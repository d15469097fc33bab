// FastFabric (fast_fabric.hpp), the switch side: a run reaching its output, the output's
// arbitration packet by packet (the chip's own queue of multicast copies among its inputs), the
// buffer space going back to the links, and a message landing with its last packet.
#include <algorithm>

#include "nvsvp/model/fast_fabric.hpp"
#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

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

void FastFabric::arrive(uint32_t run_index) {
  const Run& run = runs_[run_index];
  const uint32_t chip = run.chip;
  const uint16_t port = run.output;
  const uint32_t input = run.copy ? generated_input(run.traffic_class) : run.link * kTrafficClasses + run.traffic_class;
  advance_output(chip, port, run.arrival_ps - 1);
  Output& output = output_state_[chip][port];
  output.coming.pop();  // this run's arrival: the first of those coming (arrivals come in time order)
  std::vector<InputQueue>& inputs = output.inputs[run.traffic_class];
  auto at = std::lower_bound(inputs.begin(), inputs.end(), input,
                             [](const InputQueue& queue, uint32_t link) { return queue.link < link; });
  runs_[run_index].next_in_queue = ~0u;
  if (run.copy) {
    // The chip's own queue: its runs by their next packets' arrivals.
    std::vector<QueuedCopy>& own = output.own[run.traffic_class];
    own.push_back(QueuedCopy{run.arrival_ps, next_copy_order_++, run_index});
    std::push_heap(own.begin(), own.end());
    if (at == inputs.end() || at->link != input) at = inputs.insert(at, InputQueue{input, 0, 0, 0});
    at->head = own.front().run;
    at->head_ps = own.front().next_ps;
  } else if (at == inputs.end() || at->link != input) {
    inputs.insert(at, InputQueue{input, run_index, run_index, run.arrival_ps});
  } else {
    runs_[at->tail].next_in_queue = run_index;
    at->tail = run_index;
  }
  schedule_output(chip, port);
}

void FastFabric::copy_left(uint32_t held_index, uint64_t left_ps) {
  HeldPacket& held = held_[held_index];
  held.last_left_ps = std::max(held.last_left_ps, left_ps);
  if (--held.copies_left > 0) return;
  return_credits(links_[held.link], held.traffic_class,
                 CreditReturn{held.last_left_ps + latency_ps_, held.credits.flits, held.credits.vc});
  held_.give(held_index);
}

void FastFabric::return_credits(Link& link, uint32_t c, const CreditReturn& entry) {
  std::deque<CreditReturn>& returns = link.returns[c];
  auto at = returns.end();
  while (at != returns.begin() && (at - 1)->at_ps > entry.at_ps) --at;
  returns.insert(at, entry);
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
    // (The chip's own queue sends its runs' packets in order of arrival: one run of it at a time.)
    const bool alone =
        output.inputs[0].size() + output.inputs[1].size() == 1 && (!run.copy || output.own[run.traffic_class].size() == 1);
    const uint64_t last_serialization = serialization_ps(run.last_packet_flits);
    const uint64_t serialization = run.packets > 1 ? (run.serialization_ps - last_serialization) / (run.packets - 1) : 0;
    const uint32_t flits = run.packets > 1 ? (run.wire_flits - run.last_packet_flits) / (run.packets - 1) : 0;
    // Each packet's buffer space goes back to its link a hop after the packet left.
    const uint32_t source_index = run.link;
    Link& source = links_[source_index];
    const bool generated = run.copy;  // the chip's own queue: its runs' packets in order of arrival
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
      // Its room in its VC goes back a hop after it left (a copy's: after the last copy).
      if (generated) {
        const uint32_t held = run_held_[run_index][run.sent - 1];
        if (held != kNoHeld) copy_left(held, output.clock_ps);
      } else {
        const PacketCredits& taken = run_credits_[run_index][run.sent - 1];
        return_credits(source, run.traffic_class, CreditReturn{output.clock_ps + latency_ps_, taken.flits, taken.vc});
      }
      if (!last) queue.head_ps = next_head(run);
    } while (alone && run.sent < run.packets);
    output.last_input[queue.link % kTrafficClasses] = queue.link;
    output.next_class = (queue.link + 1) % kTrafficClasses;
    const bool through = run.sent == run.packets;
    if (generated) {
      // The run leaves the chip's queue, or goes back behind the copies whose next packets
      // arrive no later.
      std::vector<QueuedCopy>& own = output.own[run.traffic_class];
      std::pop_heap(own.begin(), own.end());
      if (through) {
        own.pop_back();
      } else {
        own.back() = QueuedCopy{next_head(run), next_copy_order_++, run_index};
        std::push_heap(own.begin(), own.end());
      }
      if (own.empty()) {
        inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(chosen));
      } else {
        queue.head = own.front().run;
        queue.head_ps = own.front().next_ps;
      }
    } else if (through) {
      if (run.next_in_queue != kNoRun) {
        queue.head = run.next_in_queue;
        queue.head_ps = next_head(runs_[queue.head]);
      } else {
        inputs.erase(inputs.begin() + static_cast<std::ptrdiff_t>(chosen));
      }
    }
    if (through) finish_run(run_index, output.clock_ps);
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

}  // namespace nvsvp::model
