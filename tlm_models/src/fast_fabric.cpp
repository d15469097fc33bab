#include "nvsvp/model/fast_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

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
  chip_latency_ps_.push_back(to_picoseconds(chip.params().latency_ns));
  output_free_ps_.emplace_back(chip.params().ports, 0);
  outputs_.emplace_back(chip.params().ports, nullptr);
}

void FastFabric::attach_gpu(Gpu& gpu, std::vector<LinkWiring> links) {
  if (gpu.id() != gpus_.size()) SC_REPORT_FATAL(name(), "GPUs attached out of order");
  for (const LinkWiring& wiring : links) {
    if (wiring.chip >= chips_.size() || wiring.port >= outputs_[wiring.chip].size()) {
      SC_REPORT_FATAL(name(), "a GPU link wired to a chip or port that was not attached");
    }
    outputs_[wiring.chip][wiring.port] = wiring.down;
  }
  gpus_.push_back(&gpu);
  link_free_ps_.emplace_back(links.size(), 0);
  if (links.size() > shares_.size()) shares_.resize(links.size());
  links_.push_back(std::move(links));
  gpu.attach_fast_fabric(this);
}

FastFabric::Run& FastFabric::run_for(LinkShare& share, uint32_t chip, uint16_t output, uint32_t message) {
  for (uint32_t i = 0; i < share.runs; ++i) {
    Run& run = runs_[share.run_index[i]];
    if (run.output == output) return run;
  }
  if (share.runs == kMaxRunsPerLink) SC_REPORT_FATAL(name(), "more outputs towards one GPU on one chip than kMaxRunsPerLink");
  share.run_index[share.runs++] = static_cast<uint32_t>(runs_.size());
  Run& run = runs_.emplace_back();
  run.message = message;
  run.chip = chip;
  run.output = output;
  return run;
}

void FastFabric::send_message(uint32_t gpu, tlm::tlm_generic_payload& message, const FastPacket* packets,
                              uint32_t count) {
  const NvlinkExtension& ext = extension_of(message);
  const uint64_t now = current_time().value();
  const TrafficClass traffic_class = ext.traffic_class;
  uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(messages_.size());
    messages_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  Message& record = messages_[slot];
  message.acquire();
  record = Message{&message, 0, 0, gpu, ext.target_gpu};
  ++in_flight_;

  // Each link's packets go back to back from when the link is free, in the message's order; each
  // packet's head reaches its chip a hop later and is routed by its own address.
  std::vector<LinkWiring>& wiring = links_[gpu];
  std::vector<uint64_t>& link_free = link_free_ps_[gpu];
  runs_.clear();
  for (uint32_t k = 0; k < count; ++k) {
    const FastPacket& packet = packets[k];
    LinkShare& share = shares_[packet.link];
    if (share.packets == 0) {
      share.start_ps = std::max(now, link_free[packet.link]);
      links_used_.push_back(packet.link);
    }
    const uint64_t start = share.start_ps + share.busy_ps;
    const uint64_t serialization = serialization_ps(packet.wire_flits);
    share.queueing_ps += start - now;
    share.last_wait_ps = start - now;
    share.busy_ps += serialization;
    share.packets++;
    share.wire_flits += packet.wire_flits;
    share.payload_bytes += packet.bytes;
    const LinkWiring& link = wiring[packet.link];
    const uint64_t head = start + latency_ps_ + head_flit_ps_ + chip_latency_ps_[link.chip];
    Run& run = run_for(share, link.chip, chips_[link.chip]->output_for(ext.target_gpu, packet.target_address), slot);
    if (run.packets == 0) {
      run.head_arrival_ps = head;
      run.first_of_message = k == 0;
    }
    run.last_head_arrival_ps = head;
    run.last_packet_flits = packet.wire_flits;
    run.packets++;
    run.wire_flits += packet.wire_flits;
    run.payload_bytes += packet.bytes;
    run.serialization_ps += serialization;
  }
  for (const uint32_t link : links_used_) {
    LinkShare& share = shares_[link];
    const uint64_t end = share.start_ps + share.busy_ps;
    link_free[link] = end;
    wiring[link].up->record_transfer(traffic_class, link == packets[0].link ? 1 : 0, share.packets, share.wire_flits,
                                     share.payload_bytes, share.busy_ps, end, share.queueing_ps, share.last_wait_ps);
    share = LinkShare{};
  }
  links_used_.clear();
  uint64_t earliest = ~0ull;
  for (Run& run : runs_) {
    run.order = next_order_++;
    earliest = std::min(earliest, run.head_arrival_ps);
    pending_.push(run);
  }
  record.runs_left = static_cast<uint32_t>(runs_.size());
  // Served once the first run is ready (never before a hop from now: nothing made later arrives
  // sooner).
  if (earliest < wake_at_ps_) {
    wake_at_ps_ = earliest;
    wake_.notify(picoseconds(earliest - now));
  }
}

// Every run whose head has reached its chip by a hop from now is known now (a run made later
// leaves its GPU no sooner than now), so the runs ready by then are sent in order of arrival.
void FastFabric::serve() {
  const uint64_t now = current_time().value();
  wake_at_ps_ = ~0ull;
  const uint64_t horizon = now + latency_ps_;
  while (!pending_.empty() && pending_.top().head_arrival_ps <= horizon) {
    const Run run = pending_.top();
    pending_.pop();
    forward(run);
  }
  if (!pending_.empty()) {
    wake_at_ps_ = pending_.top().head_arrival_ps;
    wake_.notify(picoseconds(wake_at_ps_ - now));
  }
}

// The output takes the run once it is free and the run's head has arrived; its packets leave back
// to back, the last no sooner than it arrives (cut-through at the link rate).
void FastFabric::forward(const Run& run) {
  uint64_t& free = output_free_ps_[run.chip][run.output];
  const uint64_t start = std::max(run.head_arrival_ps, free);
  const uint64_t end = std::max(start + run.serialization_ps, run.last_head_arrival_ps + serialization_ps(run.last_packet_flits));
  free = end;
  const Message& message = messages_[run.message];
  const TrafficClass traffic_class = extension_of(*message.payload).traffic_class;
  const uint64_t wait = start - run.head_arrival_ps;
  outputs_[run.chip][run.output]->record_transfer(traffic_class, run.first_of_message ? 1 : 0, run.packets,
                                                  run.wire_flits, run.payload_bytes, run.serialization_ps, end,
                                                  wait * run.packets, wait);
  chips_[run.chip]->count_forwarded(traffic_class, run.packets, run.wire_flits);
  Message& record = messages_[run.message];
  record.landing_ps = std::max(record.landing_ps, end + latency_ps_);
  if (--record.runs_left == 0) land(run.message);
}

void FastFabric::land(uint32_t slot) {
  Message& record = messages_[slot];
  tlm::tlm_generic_payload& message = *record.payload;
  extension_of(message).tail_arrival = picoseconds(record.landing_ps);
  gpus_[record.destination]->land(message, picoseconds(record.landing_ps));
  message.release();
  record.payload = nullptr;
  free_slots_.push_back(slot);
  --in_flight_;
}

uint64_t FastFabric::describe_outstanding(std::ostream& os, uint64_t max_lines) const {
  uint64_t shown = 0;
  for (const Message& record : messages_) {
    if (record.payload == nullptr) continue;
    if (shown++ < max_lines) {
      const NvlinkExtension& ext = extension_of(*record.payload);
      os << "  " << name() << ": " << to_string(ext.opcode) << " GPU " << record.source << "#" << ext.sequence
         << " -> GPU " << record.destination << ", " << record.runs_left << " runs still to leave the switch\n";
    }
  }
  return in_flight_;
}

}  // namespace nvsvp::model
