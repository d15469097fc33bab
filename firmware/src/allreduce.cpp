#include "nvsvp/fw/allreduce.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace nvsvp::fw {

namespace {

constexpr uint64_t kGroupGranule = 2ull << 20;  // multicast memory is bound in 2 MiB units
// Counters of the all-reduce sequences.
// Relative to AllReduceSpec::first_counter.
constexpr uint32_t kNvlsStoreCounter = 0;      // store copies landing here (every share)
constexpr uint32_t kNvlsFirstLoadCounter = 1;  // then one per chunk: this GPU's ld_reduce results
constexpr uint32_t kRingFirstCounter = 0;      // ring: one per step (reduce-scatter, then all-gather)

enum Phase : hw::PhaseId { kReduce, kGather };

using Lanes = std::array<float, 4>;

uint64_t messages_per_share(uint32_t gpus, const AllReduceSpec& spec) {
  if (gpus == 0 || spec.message_bytes == 0 || spec.bytes == 0 || spec.bytes % (gpus * spec.message_bytes) != 0) {
    std::ostringstream msg;
    msg << "all-reduce: " << spec.bytes << " bytes is not a positive multiple of " << gpus << " GPUs x "
        << spec.message_bytes << "-byte messages";
    throw std::invalid_argument(msg.str());
  }
  return spec.bytes / gpus / spec.message_bytes;
}

std::vector<hw::WorkSequence> empty_sequences(uint32_t gpus, uint32_t counters) {
  std::vector<hw::WorkSequence> sequences(gpus);
  for (hw::WorkSequence& seq : sequences) {
    seq.phase_names = {"reduce", "gather"};
    seq.counters = counters;
  }
  return sequences;
}

Lanes read_lanes(const hw::MemoryAccess& memory, uint64_t address) {
  Lanes lanes;
  memory.read(address, lanes.data(), sizeof lanes);
  return lanes;
}

void write_lanes(hw::MemoryAccess& memory, uint64_t address, const Lanes& lanes) {
  memory.write(address, lanes.data(), sizeof lanes);
}

}  // namespace

const char* to_string(AllReduceAlgorithm algorithm) {
  return algorithm == AllReduceAlgorithm::nvls ? "nvls" : "ring";
}

double allreduce_bus_bandwidth_gbps(uint32_t gpus, uint64_t bytes, double time_us) {
  return 2.0 * (gpus - 1) / gpus * static_cast<double>(bytes) / (time_us * 1e-6) / 1e9;
}

std::vector<hw::WorkSequence> plan_nvls_allreduce(uint32_t gpus, const AllReduceSpec& spec) {
  const uint64_t per_share = messages_per_share(gpus, spec);
  const uint64_t share_bytes = per_share * spec.message_bytes;
  // Messages per chunk (at least one; the whole share when chunking is off).
  const uint64_t per_chunk = spec.chunk_bytes == 0 ? per_share
                                                   : std::max<uint64_t>(1, std::min(per_share, spec.chunk_bytes / spec.message_bytes));
  const uint64_t chunks = (per_share + per_chunk - 1) / per_chunk;
  // Each chunk's loads count on a counter of their own, so that waiting for chunk k means its
  // own results have landed (results of different chunks may arrive in any order).
  const uint32_t base = spec.first_counter;
  const uint32_t store_counter = base + kNvlsStoreCounter;
  std::vector<hw::WorkSequence> sequences = empty_sequences(gpus, static_cast<uint32_t>(base + kNvlsFirstLoadCounter + chunks));
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = sequences[g];
    const uint64_t share = g * share_bytes;
    auto messages_of = [&](uint64_t chunk) { return std::min(per_chunk, per_share - chunk * per_chunk); };
    auto load_chunk = [&](uint64_t chunk) {
      for (uint64_t m = chunk * per_chunk; m < chunk * per_chunk + messages_of(chunk); ++m) {
        const uint64_t offset = share + m * spec.message_bytes;
        seq.tasks.push_back(hw::Task::multimem_ld_reduce(kReduce, spec.multimem_base + offset,
                                                         spec.scratch_address + offset, spec.message_bytes,
                                                         hw::MultimemOp::add, hw::MultimemType::f32,
                                                         static_cast<uint32_t>(base + kNvlsFirstLoadCounter + chunk)));
      }
    };
    load_chunk(0);
    for (uint64_t chunk = 0; chunk < chunks; ++chunk) {
      if (chunk + 1 < chunks) load_chunk(chunk + 1);
      seq.tasks.push_back(hw::Task::wait(kReduce, static_cast<uint32_t>(base + kNvlsFirstLoadCounter + chunk), messages_of(chunk)));
      for (uint64_t m = chunk * per_chunk; m < chunk * per_chunk + messages_of(chunk); ++m) {
        const uint64_t offset = share + m * spec.message_bytes;
        seq.tasks.push_back(hw::Task::multimem_store(kGather, spec.scratch_address + offset, spec.multimem_base + offset,
                                                     spec.message_bytes, store_counter));
      }
    }
    // Every share's stores land in every member, this GPU's buffer included.
    seq.tasks.push_back(hw::Task::wait(kGather, store_counter, per_share * gpus));
  }
  return sequences;
}

std::vector<hw::WorkSequence> plan_ring_allreduce(uint32_t gpus, const AllReduceSpec& spec) {
  const uint64_t per_share = messages_per_share(gpus, spec);
  const uint64_t share_bytes = per_share * spec.message_bytes;
  const uint32_t steps = gpus - 1;
  const uint32_t first = spec.first_counter + kRingFirstCounter;
  std::vector<hw::WorkSequence> sequences = empty_sequences(gpus, first + 2 * steps);
  auto chunk_of = [gpus](int64_t index) { return static_cast<uint32_t>(((index % gpus) + gpus) % gpus); };
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = sequences[g];
    const uint32_t next = (g + 1) % gpus;
    // Reduce-scatter: at step s, GPU g sends its partial of chunk g - s into the next GPU's
    // scratch slot s and adds the chunk g - 1 - s it received from the previous GPU into its own.
    for (uint32_t s = 0; s < steps; ++s) {
      const uint64_t send_chunk = chunk_of(static_cast<int64_t>(g) - s) * share_bytes;
      for (uint64_t m = 0; m < per_share; ++m) {
        const uint64_t offset = m * spec.message_bytes;
        seq.tasks.push_back(hw::Task::send(kReduce, next, spec.buffer_address + send_chunk + offset,
                                           spec.scratch_address + s * share_bytes + offset, spec.message_bytes,
                                           first + s));
      }
      seq.tasks.push_back(hw::Task::wait(kReduce, first + s, per_share));
      const uint64_t own_chunk = chunk_of(static_cast<int64_t>(g) - 1 - s) * share_bytes;
      const uint64_t slot = spec.scratch_address + s * share_bytes;
      const uint64_t buffer = spec.buffer_address + own_chunk;
      const uint64_t message_bytes = spec.message_bytes;
      seq.kernels.push_back([slot, buffer, per_share, message_bytes](hw::MemoryAccess& memory) {
        for (uint64_t m = 0; m < per_share; ++m) {
          const Lanes received = read_lanes(memory, slot + m * message_bytes);
          Lanes mine = read_lanes(memory, buffer + m * message_bytes);
          for (size_t l = 0; l < mine.size(); ++l) mine[l] += received[l];
          write_lanes(memory, buffer + m * message_bytes, mine);
        }
      });
      // The add is not timed: NCCL fuses it into the copy kernel, and the links bound the ring.
      seq.tasks.push_back(hw::Task::delay(kReduce, 0.0, static_cast<uint32_t>(seq.kernels.size() - 1)));
    }
    // All-gather: GPU g now holds the full sum of chunk g + 1; at step s it sends chunk g + 1 - s
    // into the next GPU's buffer and receives chunk g - s.
    for (uint32_t s = 0; s < steps; ++s) {
      const uint64_t send_chunk = chunk_of(static_cast<int64_t>(g) + 1 - s) * share_bytes;
      for (uint64_t m = 0; m < per_share; ++m) {
        const uint64_t address = spec.buffer_address + send_chunk + m * spec.message_bytes;
        seq.tasks.push_back(hw::Task::send(kGather, next, address, address, spec.message_bytes,
                                           first + steps + s));
      }
      seq.tasks.push_back(hw::Task::wait(kGather, first + steps + s, per_share));
    }
  }
  return sequences;
}

AllReduceRun run_allreduce(Hal& hal, MulticastAllocator& allocator, AllReduceAlgorithm algorithm,
                           const AllReduceSpec& spec) {
  const uint32_t gpus = hal.gpu_count();
  const uint64_t messages = spec.bytes / spec.message_bytes;
  std::vector<hw::WorkSequence> sequences = algorithm == AllReduceAlgorithm::nvls ? plan_nvls_allreduce(gpus, spec)
                                                                                  : plan_ring_allreduce(gpus, spec);
  for (uint32_t g = 0; g < gpus; ++g) {
    for (uint64_t m = 0; m < messages; ++m) {
      write_lanes(hal.memory(g), spec.buffer_address + m * spec.message_bytes,
                  Lanes{static_cast<float>(g + 1), static_cast<float>(m), 1.0f, 0.0f});
    }
  }
  MulticastGroupHandle group;
  const bool multicast = algorithm == AllReduceAlgorithm::nvls;
  if (multicast) {
    const uint64_t size = (spec.bytes + kGroupGranule - 1) / kGroupGranule * kGroupGranule;
    const uint64_t all_members = gpus >= 64 ? ~0ull : (1ull << gpus) - 1;
    group = allocator.create_group(spec.multimem_base, size, spec.buffer_address, all_members);
  }
  const uint32_t counters_end = sequences.empty() ? spec.first_counter : sequences[0].counters;
  const double start_ns = hal.now_ns();
  for (uint32_t g = 0; g < gpus; ++g) hal.submit(g, std::move(sequences[g]));
  hal.wait_all_finished();
  const double end_ns = hal.now_ns();
  if (multicast) allocator.destroy_group(group);

  AllReduceRun run;
  run.algorithm = to_string(algorithm);
  run.gpus = gpus;
  run.bytes = spec.bytes;
  run.time_us = (end_ns - start_ns) / 1000.0;
  run.algorithm_bandwidth_gbps = static_cast<double>(spec.bytes) / (run.time_us * 1e-6) / 1e9;
  run.bus_bandwidth_gbps = allreduce_bus_bandwidth_gbps(gpus, spec.bytes, run.time_us);
  run.counters_end = counters_end;
  run.values_ok = true;
  const float n = static_cast<float>(gpus);
  for (uint32_t g = 0; g < gpus && run.values_ok; ++g) {
    for (uint64_t m = 0; m < messages; ++m) {
      const Lanes expected{n * (n + 1) / 2, n * static_cast<float>(m), n, 0.0f};
      const Lanes got = read_lanes(hal.memory(g), spec.buffer_address + m * spec.message_bytes);
      if (got != expected) {
        std::ostringstream msg;
        msg << run.algorithm << ": GPU " << g << " message " << m << " holds (" << got[0] << ", " << got[1] << ", "
            << got[2] << ", " << got[3] << "), expected (" << expected[0] << ", " << expected[1] << ", "
            << expected[2] << ", " << expected[3] << ")";
        run.check_message = msg.str();
        run.values_ok = false;
        break;
      }
    }
  }
  return run;
}

}  // namespace nvsvp::fw
