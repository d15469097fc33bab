// All-reduce of one f32 buffer over every GPU, for calibrating the model against NCCL's figures
// (docs/background/nvlink_nvswitch.md#nvls-all-reduce-calibration-anchor):
//   nvls: each GPU owns 1/N of the buffer; for its share it issues multimem.ld_reduce (the switch
//         sums the N copies) into a scratch area and then multimem.st of the result (the switch
//         writes it into all N buffers), chunk by chunk with the next chunk's loads in flight;
//   ring: reduce-scatter then all-gather around the ring g -> g+1 with plain writes, N-1 steps
//         each, one 1/N chunk per step.
// Plain C++ behind the HAL (docs/results.md has the numbers and how to regenerate them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

struct AllReduceSpec {
  uint64_t bytes = 64ull << 20;           // the buffer each GPU holds (a multiple of N x message_bytes)
  uint64_t message_bytes = 4096;          // one store / load / write on the wire
  // nvls: the share goes in chunks of this many bytes, the loads of chunk k+1 in flight while
  // chunk k is stored (NCCL: 128 KiB chunks on Hopper); 0: all loads, then all stores.
  uint64_t chunk_bytes = 128 * 1024;
  uint64_t buffer_address = 1ull << 28;   // the buffer, in every GPU
  uint64_t scratch_address = 1ull << 32;  // nvls: the reduced share; ring: the received chunks
  uint64_t multimem_base = 1ull << 36;    // nvls: the group's multimem range (2 MiB aligned)
  // The first arrival counter the sequences use. A GPU's counters keep their arrivals for the
  // whole run, so a second all-reduce on the same GPUs must start after the first one's
  // (AllReduceRun::counters_end).
  uint32_t first_counter = 0;
};

enum class AllReduceAlgorithm { nvls, ring };
const char* to_string(AllReduceAlgorithm algorithm);

struct AllReduceRun {
  std::string algorithm;
  uint32_t gpus = 0;
  uint64_t bytes = 0;
  double time_us = 0.0;
  double algorithm_bandwidth_gbps = 0.0;  // bytes / time
  double bus_bandwidth_gbps = 0.0;        // 2 (N-1) / N x bytes / time (NCCL's busBW)
  bool values_ok = false;                 // every GPU holds the sum afterwards
  std::string check_message;              // the first wrong value, if any
  uint32_t counters_end = 0;              // one past the last arrival counter used
};

// NCCL's bus bandwidth of an all-reduce: 2 (N-1) / N x bytes / time, in GB/s (1e9 B/s).
double allreduce_bus_bandwidth_gbps(uint32_t gpus, uint64_t bytes, double time_us);

// The per-GPU work of each algorithm. Throws std::invalid_argument when `bytes` is not a multiple
// of gpus x message_bytes or a size is zero.
std::vector<hw::WorkSequence> plan_nvls_allreduce(uint32_t gpus, const AllReduceSpec& spec);
std::vector<hw::WorkSequence> plan_ring_allreduce(uint32_t gpus, const AllReduceSpec& spec);

// Loads the inputs (message m of GPU g starts with the f32 lanes g+1, m, 1, 0), runs the
// algorithm, times it from submission to the last GPU's end, and checks that every GPU holds the
// sums (N(N+1)/2, N m, N, 0). nvls creates its multicast group through `allocator` and destroys it
// afterwards; ring does not use it.
AllReduceRun run_allreduce(Hal& hal, MulticastAllocator& allocator, AllReduceAlgorithm algorithm,
                           const AllReduceSpec& spec);

}  // namespace nvsvp::fw
