// DeepEP's bounded receive rings (deepep; declared in moe_plan.hpp). DeepEP's intranode normal
// kernels give every (channel, source rank) pair a ring of num_max_nvl_chunked_recv_tokens token
// slots in the receiver's buffer (software.recv_queue_tokens). A sending warp writes a chunk into
// the ring behind the tail and publishes the new tail; a receiving warp copies each token of the
// ring out into the packed receive tensor, in order, and publishes the new head, which the sender
// waits on while its next chunk would not fit. The same structure carries the combine back.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {
constexpr uint64_t kHeadBytes = 4;  // a head index
constexpr uint64_t kHeadSource = 0x1400'0000'0000;
constexpr uint64_t kHeadArea = 0x1500'0000'0000;  // [channel x GPUs + receiver]: its head
}  // namespace

ReceiveRings::ReceiveRings(LayerPlan& plan, uint64_t ring_base, uint64_t stride, uint32_t final_counter,
                           uint32_t first_counter)
    : plan_(plan),
      gpus_(plan.spec->routing.gpus),
      channels_(software_channels(plan.spec->software)),
      ring_tokens_(plan.spec->software.recv_queue_tokens),
      ring_base_(ring_base),
      stride_(stride),
      final_counter_(final_counter),
      pad_counter_(first_counter),
      first_head_counter_(first_counter + 1),
      chunks_(gpus_),
      copies_(gpus_),
      rings_(static_cast<size_t>(gpus_) * channels_ * gpus_),
      next_counter_(gpus_, first_counter + 1 + channels_ * gpus_) {
  if (ring_tokens_ < plan.spec->software.chunk_tokens) {
    throw std::invalid_argument("software.recv_queue_tokens (" + std::to_string(ring_tokens_) +
                                ") must hold at least one chunk (software.chunk_tokens = " +
                                std::to_string(plan.spec->software.chunk_tokens) + ")");
  }
  // A ring never holds more than one channel's share of a source's tokens: a larger one is the same.
  const uint32_t tokens = plan.spec->routing.tokens_per_gpu;
  ring_tokens_ = std::min(ring_tokens_, std::max(1u, (tokens + channels_ - 1) / channels_));
  // The receiver publishes its head every quarter ring (a sender then still has three quarters of
  // it in flight, and never waits for a head that needs its own next chunk).
  head_every_ = std::max(1u, ring_tokens_ / plan.spec->software.chunk_tokens / 4);
}

uint64_t ReceiveRings::slots() const { return static_cast<uint64_t>(channels_) * gpus_ * ring_tokens_; }

void ReceiveRings::append_chunk(hw::WorkSequence& seq, hw::PhaseId phase, uint32_t sender, uint32_t channel,
                                uint32_t peer, uint64_t bytes, std::vector<hw::WriteElement>& batch) {
  Ring& ring = rings_[(static_cast<size_t>(sender) * channels_ + channel) * gpus_ + peer];
  const uint64_t tokens = batch.size();
  // Room: the receiver must have copied out all but ring_tokens_ - tokens of what was written.
  if (ring.tail + tokens > ring_tokens_) {
    const uint64_t consumed = ring.tail + tokens - ring_tokens_;
    const auto chunks = static_cast<uint64_t>(
        std::lower_bound(ring.ends.begin(), ring.ends.end(), consumed) - ring.ends.begin() + 1);
    const uint64_t heads = (chunks + head_every_ - 1) / head_every_;
    if (heads > ring.waited) {
      seq.tasks.push_back(hw::Task::wait(phase, first_head_counter_ + channel * gpus_ + peer, heads));
      ring.waited = heads;
    }
  }
  if (next_counter_[peer] == std::numeric_limits<uint32_t>::max()) throw std::length_error("receive rings: counters");
  const uint32_t counter = next_counter_[peer]++;
  std::vector<Chunk>& chunks = chunks_[peer];
  // The receiving warp copies a ring out in order: the previous chunk's copy-out also counts here.
  const bool after_previous = ring.last_chunk != kNoChunk;
  if (after_previous) chunks[ring.last_chunk].next_counter = counter;
  ring.last_chunk = chunks.size();
  const bool head = ring.ends.size() % head_every_ == head_every_ - 1;
  chunks.push_back(Chunk{sender, channel, counter, kNoCounter, copies_[peer].size(), static_cast<uint32_t>(tokens),
                         after_previous, head});
  std::vector<hw::WriteElement> into_ring;
  into_ring.reserve(tokens);
  const uint64_t ring_first = (static_cast<uint64_t>(channel) * gpus_ + sender) * ring_tokens_;
  for (const hw::WriteElement& write : batch) {
    const uint64_t slot = ring_base_ + (ring_first + ring.tail % ring_tokens_) * stride_;
    into_ring.push_back(hw::WriteElement{write.source_address, slot});
    copies_[peer].push_back(hw::WriteElement{slot, write.target_address});
    ++ring.tail;
  }
  ring.ends.push_back(ring.tail);
  append_write_chunk(plan_, seq, phase, peer, bytes, counter, into_ring);
  batch.clear();
}

void ReceiveRings::append_copy_out(hw::WorkSequence& receiver, uint32_t gpu, hw::PhaseId phase, uint64_t bytes) {
  const std::vector<Chunk>& chunks = chunks_[gpu];
  // Each item: the chunk's wait, its tokens' copies out of the ring (one local chunk), the signal
  // to the ring's next chunk, the head back to the sender.
  receiver.tasks.reserve(receiver.tasks.size() + 4 * chunks.size() + 1);
  receiver.tasks.push_back(hw::Task::take_ready(phase, chunks.size(), 3));
  for (const Chunk& chunk : chunks) {
    if (receiver.elements.size() + chunk.tokens > std::numeric_limits<uint32_t>::max()) {
      throw std::length_error("receive rings: more than 2^32 copies in one sequence");
    }
    const auto first = static_cast<uint32_t>(receiver.elements.size());
    receiver.elements.insert(receiver.elements.end(), copies_[gpu].begin() + static_cast<ptrdiff_t>(chunk.first_copy),
                             copies_[gpu].begin() + static_cast<ptrdiff_t>(chunk.first_copy + chunk.tokens));
    receiver.tasks.push_back(hw::Task::wait(phase, chunk.counter, chunk.tokens + (chunk.after_previous ? 1 : 0)));
    receiver.tasks.push_back(hw::Task::local_chunk(phase, first, static_cast<uint16_t>(chunk.tokens), bytes, final_counter_));
    const uint32_t next = chunk.next_counter == kNoCounter ? pad_counter_ : chunk.next_counter;
    receiver.tasks.push_back(hw::Task::local_copy(phase, kStreamSignal, kStreamSignal, 0, next));
    if (!chunk.head) {
      receiver.tasks.push_back(hw::Task::local_copy(phase, kStreamSignal, kStreamSignal, 0, pad_counter_));
      continue;
    }
    receiver.tasks.push_back(hw::Task::send(phase, chunk.sender, kHeadSource,
                                            kHeadArea + hw::kCounterEntryBytes * (chunk.channel * gpus_ + gpu),
                                            kHeadBytes, first_head_counter_ + chunk.channel * gpus_ + gpu));
    plan_.expected_link_arrivals[chunk.sender]++;
  }
}

uint32_t ReceiveRings::end_counter() const { return *std::max_element(next_counter_.begin(), next_counter_.end()); }

uint32_t dispatch_channel(const SoftwareParams& software, uint64_t tokens, uint64_t index) {
  const uint64_t channels = std::max<uint64_t>(1, std::min<uint64_t>(software_channels(software), tokens));
  const uint64_t per_channel = (tokens + channels - 1) / channels;
  return static_cast<uint32_t>(index / per_channel);
}

}  // namespace nvsvp::fw::detail
