#include "nvsvp/model/gpu_link_engines.hpp"

#include <algorithm>
#include <stdexcept>

#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

using sc_core::sc_time;

// A chunk's writes are bits of a 64-bit mask: check_chunk bounds them by the functional bytes a
// payload holds, at least 16 per write.
static_assert(hw::kMaxFunctionalBytesPerMessage / 16 <= 64, "a chunk's writes must fit TxItem::chunk_mask");

GpuLinkEngines::GpuLinkEngines(const char* owner, const GpuParams& params, const LinkParams& link, uint32_t gpu_id,
                               uint32_t links, PayloadPool& pool, GpuMemory& memory, WakeScheduler& scheduler,
                               GpuStats& stats)
    : owner_(owner),
      link_params_(link),
      gpu_id_(gpu_id),
      interleave_bytes_(params.interleave_bytes),
      functional_bytes_(params.functional_bytes),
      load_window_bytes_(params.load_bytes_in_flight_per_link),
      vc_by_destination_(params.tx_vc_choice == "destination"),
      chunk_per_write_(params.chunk_links == "per_write"),
      chunk_least_loaded_(params.chunk_links == "least_loaded"),
      fabric_interleave_(params.link_interleave == "fabric_address"),
      packet_fabric_(params.packet_fabric),
      sm_packet_bytes_(params.sm_store_packet_bytes),
      copy_engine_packet_bytes_(params.copy_engine_packet_bytes),
      flit_ps_(static_cast<uint64_t>(link.flit_time_ps())),
      lookahead_(picoseconds(to_picoseconds(params.tx_lookahead_ns))),
      pool_(pool),
      memory_(memory),
      scheduler_(scheduler),
      stats_(stats),
      engines_(links),
      ports_(links, nullptr) {}

void GpuLinkEngines::attach(uint32_t link, NvlinkPort* port) {
  ports_[link] = port;
  port->set_sender(&scheduler_, link);
  // Every link of a GPU reaches a switch input with the same VCs (one preset for all chips).
  if (link != 0 && port->vcs() != vcs_) SC_REPORT_FATAL(owner_, "the GPU's links reach inputs with unequal VC counts");
  vcs_ = port->vcs();
  engines_[link].queues.resize(static_cast<size_t>(kGroups) * (vcs_ + 1));
}

void TxQueue::grow() {
  constexpr size_t kInitialItems = 16;
  std::vector<TxItem> larger(items_.empty() ? kInitialItems : 2 * items_.size());
  for (size_t i = 0; i < size_; ++i) larger[i] = items_[(head_ + i) & (items_.size() - 1)];
  items_.swap(larger);
  head_ = 0;
}

TxItem GpuLinkEngines::request_item(const hw::WorkSequence& sequence, const hw::Task& task) const {
  TxItem item;
  switch (task.kind) {
    case hw::TaskKind::read: item.opcode = Opcode::read; break;
    case hw::TaskKind::multimem_store: item.opcode = Opcode::multimem_store; break;
    case hw::TaskKind::multimem_red: item.opcode = Opcode::multimem_red; break;
    case hw::TaskKind::multimem_ld_reduce: item.opcode = Opcode::multimem_ld_reduce; break;
    case hw::TaskKind::dynamic_store: item.opcode = Opcode::dynamic_store; break;
    case hw::TaskKind::dynamic_ld_reduce: item.opcode = Opcode::dynamic_ld_reduce; break;
    default: item.opcode = Opcode::write; break;
  }
  // A multimem request names the switch, not a GPU; the issuer puts itself as the peer.
  const bool multimem = item.opcode == Opcode::multimem_store || item.opcode == Opcode::multimem_red ||
                        item.opcode == Opcode::multimem_ld_reduce || item.opcode == Opcode::dynamic_store ||
                        item.opcode == Opcode::dynamic_ld_reduce;
  item.peer = multimem ? gpu_id_ : task.peer;
  item.for_switch = multimem;
  item.stream = static_cast<uint8_t>(sequence.stream);
  item.counter = task.counter;
  item.bytes = task.bytes;
  item.reduce_op = static_cast<uint8_t>(task.reduce_op);
  item.reduce_type = static_cast<uint8_t>(task.reduce_type);
  // Wire sizes as for plain writes and reads: a load carries no payload on the way out.
  const bool load = item.opcode == Opcode::read || item.opcode == Opcode::multimem_ld_reduce ||
                    item.opcode == Opcode::dynamic_ld_reduce;
  item.wire_flits = link_params_.wire_flits(load ? 0 : task.bytes);
  if (task.kind != hw::TaskKind::send || task.chunk_writes == 0) {
    item.source_address = task.source_address;
    item.target_address = task.target_address;
  } else {
    // The chunk's writes keep their own packets: wire size is the sum of theirs.
    item.chunk = &sequence.elements[task.first_write];
    item.chunk_writes = task.chunk_writes;
    item.chunk_mask = all_chunk_writes(task.chunk_writes);
    item.source_address = item.chunk[0].source_address;
    item.target_address = item.chunk[0].target_address;
    item.bytes *= task.chunk_writes;
    item.wire_flits *= task.chunk_writes;
  }
  item.not_before = current_time();
  return item;
}

void GpuLinkEngines::enqueue_send(const hw::WorkSequence& sequence, const hw::Task& task) {
  const TxItem item = request_item(sequence, task);
  if (fast_fabric_ != nullptr) {
    send_to_fast_fabric(item, sequence.issue_sms > 0 ? sm_packet_bytes_ : copy_engine_packet_bytes_);
  } else if (packet_fabric_) {
    enqueue_packets(item, sequence.issue_sms > 0 ? sm_packet_bytes_ : copy_engine_packet_bytes_);
  } else if (item.chunk != nullptr && item.chunk_writes > 1 && chunk_per_write_) {
    enqueue_chunk(item);
  } else if (item.chunk != nullptr && item.chunk_writes > 1 && chunk_least_loaded_) {
    enqueue(least_loaded_link(item), TrafficClass::request, item);
  } else {
    enqueue(peer_link_for(item.peer, item.target_address), TrafficClass::request, item);
  }
}

// The packets as enqueue_packets cuts them, in order, each with its link; the message itself as it
// lands (its sizes the whole message's), numbered and timed as launch() does.
void GpuLinkEngines::send_to_fast_fabric(const TxItem& message, uint32_t packet_bytes) {
  fast_fabric_->catch_up();  // before fast_packets_ is filled: a message landing meanwhile may answer through it
  const bool load = message.opcode == Opcode::read || is_multimem_load(message.opcode);
  TxItem probe = cut(message, packet_bytes);  // set_packet fills every packet field anew
  fast_packets_.resize(probe.packet_count);
  uint32_t wire_flits = 0;
  for (uint32_t k = 0; k < probe.packet_count; ++k) {
    FastPacket& packet = fast_packets_[k];
    packet.link = set_packet(probe, k);
    packet.target_address = load ? probe.source_address : probe.target_address;  // the address its header names
    packet.wire_flits = probe.wire_flits;
    packet.bytes = load ? 0 : static_cast<uint32_t>(probe.bytes);  // a read's request carries none
    wire_flits += probe.wire_flits;
  }
  TxItem whole = message;
  whole.wire_flits = wire_flits;
  tlm::tlm_generic_payload& payload = pool_.acquire();
  fill_message(payload, whole);
  NvlinkExtension& ext = extension_of(payload);
  ext.sequence = number_message();
  ext.issue_time = message.not_before;
  ext.hop_ready = message.not_before;
  ext.issuer_link = static_cast<uint8_t>(fast_packets_[0].link);
  ext.packet_bytes = packet_bytes;
  stats_.messages_sent++;
  stats_.payload_bytes_sent += ext.payload_bytes;
  fast_fabric_->send_message(gpu_id_, message.stream, payload, fast_packets_.data(), probe.packet_count);
  payload.release();  // the fabric holds its own reference
}

void GpuLinkEngines::send_response_to_fast_fabric(const TxItem& response) {
  fast_fabric_->catch_up();  // as send_to_fast_fabric
  tlm::tlm_generic_payload& payload = *response.payload;
  NvlinkExtension& ext = extension_of(payload);
  const uint64_t bytes = ext.payload_bytes;
  const uint32_t packet_bytes = ext.packet_bytes != 0 ? ext.packet_bytes : link_params_.max_packet_payload_bytes;
  const uint64_t count = bytes == 0 ? 1 : (bytes + packet_bytes - 1) / packet_bytes;
  fast_packets_.resize(count);
  uint32_t wire_flits = 0;
  for (uint64_t k = 0; k < count; ++k) {
    FastPacket& packet = fast_packets_[k];
    const uint64_t offset = k * packet_bytes;
    packet.bytes = static_cast<uint32_t>(std::min<uint64_t>(packet_bytes, bytes - offset));
    packet.target_address = ext.target_address + offset;
    packet.link = peer_link_for(ext.target_gpu, packet.target_address);
    packet.wire_flits = link_params_.wire_flits(packet.bytes, packet_bytes);
    wire_flits += packet.wire_flits;
  }
  ext.wire_flits = wire_flits;
  ext.sequence = number_message();
  ext.issue_time = response.not_before;
  ext.hop_ready = response.not_before;
  stats_.messages_sent++;
  stats_.payload_bytes_sent += ext.payload_bytes;
  fast_fabric_->send_message(gpu_id_, kExecutorStreams, payload, fast_packets_.data(), static_cast<uint32_t>(count));
  payload.release();  // the receiver's reference: the fabric holds its own
}

void GpuLinkEngines::refuse_on_fast_fabric(const TxItem& message) const {
  const std::string text = std::string("the fast fabric does not move ") + to_string(message.opcode) +
                           " messages yet (simulation.fabric: packet or message does)";
  SC_REPORT_FATAL(owner_, text.c_str());
}

void GpuLinkEngines::enqueue_multimem(const hw::WorkSequence& sequence, const hw::Task& task) {
  enqueue_for_switch(request_item(sequence, task));
}

void GpuLinkEngines::enqueue_for_switch(const TxItem& item) {
  if (fast_fabric_ != nullptr) {
    // Stores and reds so far: the chips' loads and the dynamic trims are not on it yet.
    if (item.opcode != Opcode::multimem_store && item.opcode != Opcode::multimem_red) refuse_on_fast_fabric(item);
    send_to_fast_fabric(item, sm_packet_bytes_);
    return;
  }
  if (packet_fabric_) {
    enqueue_packets(item, sm_packet_bytes_);  // multimem instructions are an SM's
  } else {
    // Interleaved by the multimem address: the chip that link reaches serves it.
    enqueue(link_for(is_multimem_load(item.opcode) ? item.source_address : item.target_address),
            TrafficClass::request, item);
  }
}

void GpuLinkEngines::enqueue_read(const hw::WorkSequence& sequence, const hw::Task& task) {
  const TxItem item = request_item(sequence, task);
  if (fast_fabric_ != nullptr) {
    send_to_fast_fabric(item, sequence.issue_sms > 0 ? sm_packet_bytes_ : copy_engine_packet_bytes_);
    return;
  }
  if (packet_fabric_) {
    enqueue_packets(item, sequence.issue_sms > 0 ? sm_packet_bytes_ : copy_engine_packet_bytes_);
  } else {
    enqueue(peer_link_for(item.peer, item.source_address), TrafficClass::request, item);
  }
}

// The chunk's writes grouped by the link each one's target address interleaves to, one message
// per link used, in the order of each link's first write.
void GpuLinkEngines::enqueue_chunk(const TxItem& whole) {
  const uint64_t write_bytes = whole.bytes / whole.chunk_writes;
  const uint32_t write_flits = whole.wire_flits / whole.chunk_writes;
  uint32_t links[64];
  uint64_t masks[64];
  uint32_t used = 0;
  for (uint32_t i = 0; i < whole.chunk_writes; ++i) {
    const uint32_t link = peer_link_for(whole.peer, whole.chunk[i].target_address);
    uint32_t u = 0;
    while (u < used && links[u] != link) ++u;
    if (u == used) {
      links[used] = link;
      masks[used++] = 0;
    }
    masks[u] |= 1ull << i;
  }
  for (uint32_t u = 0; u < used; ++u) {
    TxItem part = whole;
    const auto first = static_cast<uint32_t>(__builtin_ctzll(masks[u]));
    part.chunk_mask = masks[u];
    part.chunk_writes = static_cast<uint32_t>(__builtin_popcountll(masks[u]));
    part.bytes = write_bytes * part.chunk_writes;
    part.wire_flits = write_flits * part.chunk_writes;
    part.source_address = whole.chunk[first].source_address;
    part.target_address = whole.chunk[first].target_address;
    enqueue(links[u], TrafficClass::request, part);
  }
}

uint32_t GpuLinkEngines::least_loaded_link(const TxItem& whole) const {
  const sc_time& now = current_time();
  uint32_t best = peer_link_for(whole.peer, whole.chunk[0].target_address);
  uint64_t best_load = ~0ull;
  for (uint32_t i = 0; i < whole.chunk_writes; ++i) {
    const uint32_t link = peer_link_for(whole.peer, whole.chunk[i].target_address);
    const sc_time& busy = ports_[link]->busy_until();
    const uint64_t load = engines_[link].queued_flits * flit_ps_ + (busy > now ? (busy - now).value() : 0);
    if (load < best_load) {
      best = link;
      best_load = load;
    }
  }
  return best;
}

void GpuLinkEngines::enqueue(uint32_t link, TrafficClass traffic_class, const TxItem& item) {
  if (fast_fabric_ != nullptr) {
    if (item.opcode != Opcode::read_response || item.payload == nullptr) refuse_on_fast_fabric(item);
    send_response_to_fast_fabric(item);
    return;
  }
  if (disabled_links_ != 0 && enabled_[link] == 0) {  // predictable: links are rarely out of use
    link = substitute_link(link, item);
    if (link == kNoLink && item.opcode == Opcode::member_read_response) {
      // A member's response for a switch chip that no link in use reaches: the chip lost the
      // load it belongs to, which its issuer re-issues (docs/models/gpu.md#links-out-of-use).
      responses_dropped_++;
      item.payload->release();
      return;
    }
    if (link == kNoLink) {
      // No link of the GPU is in use: the message waits for one to come back into use (firmware
      // waits a bounded time for that, then ends the run: docs/firmware.md#link-down-recovery).
      stranded_.emplace_back(traffic_class, item);
      return;
    }
    messages_moved_++;
  }
  place(link, traffic_class, item);
}

uint32_t GpuLinkEngines::substitute_link(uint32_t link, const TxItem& item) const {
  const auto links = static_cast<uint32_t>(engines_.size());
  uint32_t same_chip[64];
  uint32_t any[64];
  uint32_t same_count = 0;
  uint32_t any_count = 0;
  for (uint32_t l = 0; l < links && l < 64; ++l) {
    if (enabled_[l] == 0) continue;
    any[any_count++] = l;
    if (!chip_of_link_.empty() && chip_of_link_[l] == chip_of_link_[link]) same_chip[same_count++] = l;
  }
  // A hash of the address at a coarser granule than link_for's, so that the addresses of one
  // link spread evenly over the substitutes.
  const uint64_t address = item.target_address;
  if (same_count > 0) return same_chip[interleave_way(address, interleave_bytes_ * links, same_count)];
  // A member's read response must reach the chip that asked (a load re-issued whole may go
  // anywhere).
  if (item.opcode == Opcode::member_read_response) return kNoLink;
  if (any_count == 0) return kNoLink;  // every link of the GPU is out of use
  return any[interleave_way(address, interleave_bytes_ * links, any_count)];
}

void GpuLinkEngines::set_link_enabled(uint32_t link, bool enabled) {
  if (link >= engines_.size()) SC_REPORT_FATAL(owner_, "set_link_enabled: no such link");
  if (engines_.size() > 64) SC_REPORT_FATAL(owner_, "links out of use: at most 64 links per GPU");
  if (enabled_.empty()) enabled_.assign(engines_.size(), 1);
  if ((enabled_[link] != 0) == enabled) return;
  enabled_[link] = enabled ? 1 : 0;
  if (enabled) {
    --disabled_links_;
    // What waited for a link in use leaves, in the order it came, on the links in use now.
    std::vector<std::pair<TrafficClass, TxItem>> stranded;
    stranded.swap(stranded_);
    for (const auto& [traffic_class, item] : stranded) enqueue(link, traffic_class, item);
    return;
  }
  ++disabled_links_;
  // Its queued messages move, each group's in order; loads already sent come back to it
  // (load_returned names the link they left on).
  LinkEngine& engine = engines_[link];
  for (uint32_t group = 0; group < kGroups; ++group) {
    const TrafficClass traffic_class = group == kExecutorStreams ? TrafficClass::response : TrafficClass::request;
    for (uint32_t q = 0; q <= vcs_; ++q) {
      TxQueue& queue = engine.queues[group * (vcs_ + 1) + q];
      while (!queue.empty()) {
        const TxItem item = queue.front();
        queue.pop_front();
        engine.queued--;
        engine.queued_flits -= item.wire_flits;
        enqueue(link, traffic_class, item);
      }
    }
    engine.active[group] = 0;
  }
}

void GpuLinkEngines::hold_lost(TrafficClass traffic_class, const TxItem& item) {
  lost_.emplace_back(traffic_class, item);
}

void GpuLinkEngines::release_lost_load(uint8_t issuer_link, uint64_t bytes) {
  LinkEngine& engine = engines_.at(issuer_link);
  if (engine.load_bytes_in_flight < bytes) SC_REPORT_FATAL(owner_, "a lost load for more bytes than its link has in flight");
  engine.load_bytes_in_flight -= bytes;
  if (engine.queued > 0) scheduler_.wake_at(issuer_link, current_time());
}

uint64_t GpuLinkEngines::reissue_lost() {
  std::vector<std::pair<TrafficClass, TxItem>> lost;
  lost.swap(lost_);
  for (auto& [traffic_class, item] : lost) {
    item.not_before = std::max(item.not_before, current_time());
    // A load goes on the link of the address it reads, like a new one (link_for, then links in use).
    const bool load = item.opcode == Opcode::read || is_multimem_load(item.opcode);
    const uint64_t address = load ? item.source_address : item.target_address;
    const bool to_peer =
        item.opcode == Opcode::read || item.opcode == Opcode::write || item.opcode == Opcode::read_response;
    enqueue(to_peer ? peer_link_for(item.peer, address) : link_for(address), traffic_class, item);
  }
  operations_reissued_ += lost.size();
  return lost.size();
}

void GpuLinkEngines::place(uint32_t link, TrafficClass traffic_class, const TxItem& item) {
  LinkEngine& engine = engines_[link];
  const uint32_t group = traffic_class == TrafficClass::response ? kExecutorStreams : item.stream;
  const uint32_t q = vc_by_destination_ && !item.for_switch ? item.peer % vcs_ : vcs_;
  engine.queues[group * (vcs_ + 1) + q].push_back(item);
  engine.active[group] |= 1u << q;
  engine.queued++;
  engine.queued_flits += item.wire_flits;
  // Served when the item may leave and the link can take it (within the lookahead); the scheduler
  // keeps an earlier wake if the engine already has one.
  const sc_time busy_until = ports_[link]->busy_until();
  const sc_time link_ready = busy_until > lookahead_ ? busy_until - lookahead_ : sc_core::SC_ZERO_TIME;
  scheduler_.wake_at(link, std::max({item.not_before, link_ready, current_time()}));
}

// Credits the engine waits for wake it through the port.
void GpuLinkEngines::serve_link(uint32_t link) {
  LinkEngine& engine = engines_[link];
  NvlinkPort* port = ports_[link];
  const sc_time now = current_time();
  while (engine.queued > 0) {
    const sc_time free_at = port->busy_until();
    if (free_at > now + lookahead_) {
      scheduler_.wake_at(link, free_at - lookahead_);
      return;
    }
    sc_time next_ready = never();
    bool launched = false;
    // Streams round robin, then the stream's non-empty queues round robin from after the last
    // one served.
    for (uint32_t i = 0; i < kGroups && !launched; ++i) {
      const uint32_t group = engine.next_group + i < kGroups ? engine.next_group + i : engine.next_group + i - kGroups;
      const uint32_t active = engine.active[group];
      if (active == 0) continue;
      const uint32_t start = engine.next_queue[group];
      // The queues from `start` on, then those before it.
      for (uint32_t pass = 0; pass < 2 && !launched; ++pass) {
        uint32_t bits = pass == 0 ? active & (~0u << start) : active & ~(~0u << start);
        while (bits != 0 && !launched) {
          const auto q = static_cast<uint32_t>(__builtin_ctz(bits));
          bits &= bits - 1;
          launched = try_head(link, engine, group, q, now, next_ready);
        }
      }
    }
    if (!launched) {
      if (next_ready != never()) scheduler_.wake_at(link, next_ready);
      return;
    }
  }
}

inline bool GpuLinkEngines::try_head(uint32_t link, LinkEngine& engine, uint32_t group, uint32_t q,
                                     const sc_time& now, sc_time& next_ready) {
  TxQueue& queue = engine.queues[group * (vcs_ + 1) + q];
  const TxItem& item = queue.front();
  if (item.not_before > now) {
    next_ready = std::min(next_ready, item.not_before);
    return false;
  }
  if (is_multimem_load(item.opcode) && engine.load_bytes_in_flight > 0 &&
      engine.load_bytes_in_flight + item.bytes > load_window_bytes_) {
    return false;  // woken by load_returned
  }
  NvlinkPort* port = ports_[link];
  // A link down (or about to go down under this message) sends nothing: firmware moves its
  // messages to other links, or the link comes back up and wakes the engine.
  if (port->has_faults() && !port->carries(item.wire_flits)) return false;
  const TrafficClass traffic_class = group == kExecutorStreams ? TrafficClass::response : TrafficClass::request;
  int vc = -1;
  if (q == vcs_) {
    vc = port->allocate_vc(traffic_class, item.wire_flits);
  } else if (port->has_credits(traffic_class, static_cast<uint16_t>(q), item.wire_flits)) {
    vc = static_cast<int>(q);
  }
  if (vc < 0) {
    port->wait_for_credits(traffic_class);
    return false;
  }
  const TxItem committed = item;
  if (committed.link_packets > 1) {
    // The packet fabric: the item stays at the head for its message's next packet on this link.
    TxItem& head = queue.front();
    engine.queued_flits -= head.wire_flits;
    advance_to_next_packet(head);
    engine.queued_flits += head.wire_flits;
  } else {
    queue.pop_front();
    if (queue.empty()) engine.active[group] &= ~(1u << q);
    engine.queued--;
    engine.queued_flits -= committed.wire_flits;
  }
  engine.next_group = group + 1 < kGroups ? group + 1 : 0;
  engine.next_queue[group] = static_cast<uint8_t>(q + 1 <= vcs_ ? q + 1 : 0);
  launch(link, committed, static_cast<uint16_t>(vc));
  return true;
}

inline void GpuLinkEngines::fill_message(tlm::tlm_generic_payload& payload, const TxItem& item) {
  NvlinkExtension& ext = extension_of(payload);
  const bool load = item.opcode == Opcode::read || item.opcode == Opcode::multimem_ld_reduce ||
                    item.opcode == Opcode::dynamic_ld_reduce;
  // A load names the address it reads; its result lands at the item's target (return_address).
  make_request(ext, item.opcode, gpu_id_, item.peer, item.counter, load ? item.source_address : item.target_address,
               item.wire_flits);
  ext.reduce_op = item.reduce_op;
  ext.reduce_type = item.reduce_type;
  ext.targets = item.targets;
  ext.target_addresses = item.target_addresses;
  ext.target_count = item.target_count;
  ext.issuer_targets = item.issuer_targets;
  ext.count_per_expert = item.count_per_expert;
  ext.notification = item.notification;
  ext.packet_index = item.packet_index;
  ext.packet_count = item.packet_count;
  // The packet fabric: only packet 0 carries the message's functional bytes.
  const uint64_t message_bytes = item.packet_count > 1 ? item.message_bytes : item.bytes;
  if (!load && item.packet_index != 0) {
    ext.payload_bytes = item.bytes;
    ext.chunk_writes = item.chunk_writes;
    ext.chunk = item.chunk;
    ext.chunk_mask = item.chunk_mask;
    payload.set_data_length(0);
    payload.set_command(tlm::TLM_WRITE_COMMAND);
  } else if (!load) {
    ext.payload_bytes = item.bytes;
    if (item.chunk == nullptr) {
      const auto n = static_cast<unsigned>(std::min<uint64_t>(message_bytes, functional_bytes_));
      memory_.read(item.source_address, payload.get_data_ptr(), n);
      payload.set_data_length(n);
    } else {
      ext.chunk_writes = item.chunk_writes;
      ext.chunk = item.chunk;
      ext.chunk_mask = item.chunk_mask;
      const auto n = static_cast<unsigned>(std::min<uint64_t>(message_bytes / item.chunk_writes, functional_bytes_));
      uint8_t* data = payload.get_data_ptr();
      for (uint64_t bits = item.chunk_mask; bits != 0; bits &= bits - 1, data += functional_bytes_) {
        memory_.read(item.chunk[__builtin_ctzll(bits)].source_address, data, n);
      }
      payload.set_data_length(item.chunk_writes * functional_bytes_);
    }
    payload.set_command(tlm::TLM_WRITE_COMMAND);
  } else {
    ext.read_bytes = item.bytes;
    ext.return_address = item.target_address;
    payload.set_command(tlm::TLM_READ_COMMAND);
  }
  payload.set_address(ext.target_address);
  if (item.opcode == Opcode::dynamic_store || item.opcode == Opcode::dynamic_ld_reduce) {
    // The first flit's address field: multimem address, stage, target count
    // (docs/models/dynamic_multimem.md).
    DynamicFirstFlit flit;
    flit.multimem_address = ext.target_address;
    flit.stage = item.opcode == Opcode::dynamic_store ? hw::MultimemStage::dispatch : hw::MultimemStage::combine;
    flit.target_count = item.target_count;
    try {
      payload.set_address(encode_first_flit(flit));
    } catch (const std::out_of_range& e) {
      SC_REPORT_FATAL(owner_, e.what());
    }
  }
}

void GpuLinkEngines::launch(uint32_t link, const TxItem& item, uint16_t vc) {
  tlm::tlm_generic_payload* payload = item.payload;
  if (payload == nullptr) {
    payload = &pool_.acquire();
    fill_message(*payload, item);
  }
  NvlinkExtension& ext = extension_of(*payload);
  if (is_multimem_load(item.opcode)) engines_[link].load_bytes_in_flight += item.bytes;
  ext.vc = vc;
  // The link a load leaves on, where its result is counted back. A message sent again as it was
  // (a lost copy or result) keeps its own: a result names its load's link.
  if (item.payload == nullptr || is_multimem_load(item.opcode)) ext.issuer_link = static_cast<uint8_t>(link);
  // A packet keeps its message's number (a prepared one too: a read's response packets, a lost
  // packet sent again), by which its receiver gathers the message.
  if (item.payload == nullptr) {
    ext.sequence = item.packet_count > 1 ? item.sequence : next_sequence_number_++;
  } else if (ext.packet_count == 1) {
    ext.sequence = next_sequence_number_++;
  }
  // Injected when it entered the queue and might leave (docs/models/gpu.md, "Statistics").
  ext.issue_time = item.not_before;
  ext.hop_ready = item.not_before;
  if (ext.packet_index == 0) stats_.messages_sent++;
  stats_.payload_bytes_sent += ext.payload_bytes;
  ports_[link]->send(*payload);
  payload->release();  // the port holds its own reference
}

void GpuLinkEngines::load_returned(const NvlinkExtension& ext) {
  const uint32_t link = ext.issuer_link;
  LinkEngine& engine = engines_[link];
  if (engine.load_bytes_in_flight < ext.load_bytes) {
    SC_REPORT_FATAL(owner_, "a multimem load result for more bytes than its link has in flight");
  }
  engine.load_bytes_in_flight -= ext.load_bytes;
  if (engine.queued > 0) scheduler_.wake_at(link, current_time());
}

uint64_t GpuLinkEngines::queued_messages() const {
  uint64_t queued = 0;
  for (const LinkEngine& engine : engines_) queued += engine.queued;
  return queued;
}

}  // namespace nvsvp::model
