// NCCL's ring, with channels and pipelined slices: all-reduce (reduce-scatter, then all-gather)
// and all-gather. Every channel runs the ring g -> g+1 on its own part of the buffer; at step s
// GPU g sends its chunk (g - s) mod N of each channel to the next GPU, slice by slice, and a
// slice's next step waits only for that slice to arrive from the previous GPU, so a GPU keeps
// many slices in flight (NCCL's Simple protocol does the same, bounded by its 8-step FIFO per
// channel; here the sends are bounded by nothing but the links).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "collective_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

// Where a ring's chunks lie. Chunk j of channel c starts at c x channel_stride + j x rank_stride:
// all-reduce gives each channel N consecutive chunks (NCCL's layout per loop), all-gather cuts
// each GPU's share into one piece per channel.
struct RingShape {
  uint32_t gpus = 0;
  uint32_t channels = 0;
  uint32_t steps = 0;         // 2(N-1) for all-reduce, N-1 for all-gather
  uint32_t reduce_steps = 0;  // the first steps are reduce-scatter (into scratch, then an add)
  uint64_t channel_stride = 0;
  uint64_t rank_stride = 0;
  uint64_t slot_stride = 0;     // scratch bytes per reduce-scatter step (the buffer's size)
  uint64_t slice_messages = 0;  // a slice's messages (the last slice of a chunk may have fewer)
  uint64_t chunk_messages = 0;  // one channel's chunk
  uint32_t slices = 0;          // per chunk
};

uint64_t messages_of(const RingShape& shape, uint32_t slice) {
  return std::min(shape.slice_messages, shape.chunk_messages - slice * shape.slice_messages);
}

void add_received(hw::MemoryAccess& memory, uint64_t slot, uint64_t buffer, uint64_t messages, uint64_t message_bytes) {
  for (uint64_t m = 0; m < messages; ++m) {
    const Lanes received = read_lanes(memory, slot + m * message_bytes);
    Lanes mine = read_lanes(memory, buffer + m * message_bytes);
    for (size_t l = 0; l < mine.size(); ++l) mine[l] += received[l];
    write_lanes(memory, buffer + m * message_bytes, mine);
  }
}

void append_ring_gpu(hw::WorkSequence& seq, uint32_t g, const RingShape& shape, const CollectiveSpec& spec) {
  const uint32_t n = shape.gpus;
  const uint32_t next = (g + 1) % n;
  const uint64_t message_bytes = spec.message_bytes;
  auto chunk_at_step = [&](uint32_t step) { return (g + n * shape.steps - step) % n; };  // (g - step) mod N
  auto offset = [&](uint32_t channel, uint32_t chunk, uint32_t slice) {
    return channel * shape.channel_stride + chunk * shape.rank_stride + slice * shape.slice_messages * message_bytes;
  };
  auto counter = [&](uint32_t step, uint32_t channel, uint32_t slice) {
    return spec.first_counter + (step * shape.channels + channel) * shape.slices + slice;
  };
  auto phase = [&](uint32_t step) { return step < shape.reduce_steps ? kReduce : kGather; };
  auto send_slice = [&](uint32_t step, uint32_t channel, uint32_t slice) {
    const uint64_t at = offset(channel, chunk_at_step(step), slice);
    // Reduce-scatter lands in the step's scratch slot (the receiver adds it); all-gather in place.
    const uint64_t target = step < shape.reduce_steps ? spec.scratch_address + step * shape.slot_stride + at
                                                      : spec.buffer_address + at;
    for (uint64_t m = 0; m < messages_of(shape, slice); ++m) {
      seq.tasks.push_back(hw::Task::send(phase(step), next, spec.buffer_address + at + m * message_bytes,
                                         target + m * message_bytes, message_bytes, counter(step, channel, slice)));
    }
  };
  for (uint32_t k = 0; k < shape.slices; ++k) {
    for (uint32_t c = 0; c < shape.channels; ++c) send_slice(0, c, k);
  }
  // Step r's slice arrives from the previous GPU (its chunk (g - 1 - r) = this GPU's chunk at
  // step r + 1); reduce-scatter adds it to this GPU's copy; then the slice's next step goes.
  for (uint32_t r = 0; r < shape.steps; ++r) {
    for (uint32_t k = 0; k < shape.slices; ++k) {
      for (uint32_t c = 0; c < shape.channels; ++c) {
        seq.tasks.push_back(hw::Task::wait(phase(r), counter(r, c, k), messages_of(shape, k)));
        if (r < shape.reduce_steps) {
          const uint64_t at = offset(c, chunk_at_step(r + 1), k);
          const uint64_t slot = spec.scratch_address + r * shape.slot_stride + at;
          const uint64_t buffer = spec.buffer_address + at;
          const uint64_t messages = messages_of(shape, k);
          seq.kernels.push_back([slot, buffer, messages, message_bytes](hw::MemoryAccess& memory) {
            add_received(memory, slot, buffer, messages, message_bytes);
          });
          // The add is not timed: NCCL fuses it into the copy, and the links bound the ring.
          seq.tasks.push_back(hw::Task::delay(kReduce, 0.0, static_cast<uint32_t>(seq.kernels.size() - 1)));
        }
        if (r + 1 < shape.steps) send_slice(r + 1, c, k);
      }
    }
  }
}

}  // namespace

std::vector<hw::WorkSequence> plan_ring(uint32_t gpus, const CollectiveSpec& spec) {
  if (spec.channels == 0) throw std::invalid_argument("ring: channels must be at least 1");
  if (spec.slice_bytes < spec.message_bytes) {
    throw std::invalid_argument("ring: slice_bytes (" + std::to_string(spec.slice_bytes) +
                                ") must be at least one message (" + std::to_string(spec.message_bytes) + " bytes)");
  }
  const bool reduce = spec.collective == Collective::allreduce_ring;
  RingShape shape;
  shape.gpus = gpus;
  shape.channels = spec.channels;
  shape.chunk_messages = whole_units(spec, uint64_t{gpus} * spec.channels * spec.message_bytes, "GPUs x channels x messages");
  const uint64_t chunk_bytes = shape.chunk_messages * spec.message_bytes;
  shape.steps = reduce ? 2 * (gpus - 1) : gpus - 1;
  shape.reduce_steps = reduce ? gpus - 1 : 0;
  shape.channel_stride = reduce ? gpus * chunk_bytes : chunk_bytes;
  shape.rank_stride = reduce ? chunk_bytes : spec.channels * chunk_bytes;
  shape.slot_stride = spec.bytes;
  shape.slice_messages = std::clamp<uint64_t>(spec.slice_bytes / spec.message_bytes, 1, shape.chunk_messages);
  shape.slices = static_cast<uint32_t>((shape.chunk_messages + shape.slice_messages - 1) / shape.slice_messages);
  const uint64_t kernels = uint64_t{shape.channels} * shape.reduce_steps * shape.slices;
  if (kernels >= hw::Task::kMaxKernels) {
    throw std::invalid_argument("ring: " + std::to_string(kernels) + " slice adds per GPU, at most " +
                                std::to_string(hw::Task::kMaxKernels - 1) + " (use larger slices or fewer channels)");
  }
  const uint64_t counters = spec.first_counter + uint64_t{shape.steps} * shape.channels * shape.slices;
  if (counters > hw::kMaxArrivalCounters) throw std::invalid_argument("ring: more slices than arrival counters");
  std::vector<hw::WorkSequence> sequences = empty_sequences(gpus, static_cast<uint32_t>(counters), {"reduce", "gather"});
  for (uint32_t g = 0; g < gpus; ++g) {
    sequences[g].issue_sms = issuing_sms(spec, spec.channels);  // one SM per channel
    append_ring_gpu(sequences[g], g, shape, spec);
  }
  return sequences;
}

}  // namespace nvsvp::fw::detail
