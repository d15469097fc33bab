// NCCL's collectives on one group of GPUs, as plain C++ behind the HAL, for calibrating the model
// against public measurements (the calibration anchors; docs/results.md has the numbers):
//   allreduce_ring  NCCL's ring: the buffer split over `channels`, each channel a ring
//                   g -> g+1 of 2(N-1) steps (reduce-scatter, then all-gather) cut into slices; a
//                   slice's step waits only for that slice's previous step from the previous GPU;
//   allreduce_nvls  per GPU its 1/N share by multimem.ld_reduce into scratch, then multimem.st of
//                   the sum, chunk by chunk with the next chunk's loads in flight;
//   allgather_ring  the ring's all-gather half alone: N-1 steps, same channels and slices;
//   allgather_nvls  each GPU multimem.st's its share once; the switch writes it into every member;
//   alltoall        each GPU writes its 1/N block for every peer to that peer, all peers at once,
//                   its own block a local copy;
//   p2p_write_oneway / p2p_write_bidir: one GPU writes a buffer into another (copy engine, no SM
//                   issue limit), or the two into each other at once.
// Sends are GPU stores: the link engines spread them over the GPU's links by address interleaving
// (docs/models/gpu.md). What issues them: the ring and all-to-all plans are SM kernels, one SM per
// channel (WorkSequence::issue_sms = channels); the NVLS plans' multimem stores are SM instructions
// on nvls_channels SMs; p2p writes are a copy engine's (issue_sms 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/fw/collective_spec.hpp"
#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

// The payload one GPU sends and receives over its links, and in how many messages (a read's
// request has no payload; a message with payload carries message_bytes).
struct GpuTraffic {
  uint64_t payload_bytes_sent = 0;
  uint64_t payload_bytes_received = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  uint64_t requests_sent = 0;      // of messages_sent, those without payload (multimem loads)
  uint64_t requests_received = 0;  // of messages_received, those without payload (the switch's
                                   // reads of this GPU's copy for a multimem load)

  bool operator==(const GpuTraffic& other) const {
    return payload_bytes_sent == other.payload_bytes_sent && payload_bytes_received == other.payload_bytes_received &&
           messages_sent == other.messages_sent && messages_received == other.messages_received;
  }
};

// What the collective's definition implies each GPU sends and receives, from the sizes alone
// (not from a plan or a simulation): e.g. a ring all-reduce sends and receives 2(N-1)/N x bytes.
std::vector<GpuTraffic> implied_traffic(uint32_t gpus, const CollectiveSpec& spec);

// nccl-tests' bandwidths (as its performance notes define them), GB/s = 1e9 B/s. Algorithm bandwidth: bytes / time
// (`bytes` as CollectiveSpec counts it). Bus bandwidth: all-reduce algBW x 2(N-1)/N, all-gather and
// all-to-all algBW x (N-1)/N; p2p: the bytes of every direction over the time (one-way = algBW,
// bidir = 2 x algBW, as p2pBandwidthLatencyTest sums a bidirectional copy).
double algorithm_bandwidth_gbps(uint64_t bytes, double time_us);
double bus_bandwidth_gbps(Collective collective, uint32_t gpus, uint64_t bytes, double time_us);
// The factor bus bandwidth = factor x algorithm bandwidth.
double bus_bandwidth_factor(Collective collective, uint32_t gpus);

// The per-GPU work of the collective. Throws std::invalid_argument for sizes that do not divide
// (see each plan's file) or a zero size.
std::vector<hw::WorkSequence> plan_collective(uint32_t gpus, const CollectiveSpec& spec);

struct CollectiveRun {
  std::string algorithm;  // to_string(collective)
  uint32_t gpus = 0;
  uint64_t bytes = 0;
  double time_us = 0.0;  // from submission to the last GPU's end
  double algorithm_bandwidth_gbps = 0.0;
  double bus_bandwidth_gbps = 0.0;
  bool values_ok = false;      // every GPU holds what the collective defines
  std::string check_message;   // the first wrong value, if any
  uint32_t counters_end = 0;   // one past the last arrival counter used
};

// Loads the inputs (each message's leading f32 lanes name where it came from), runs the plan,
// times it and checks every GPU's result. The NVLS plans create their multicast group through
// `allocator` and destroy it afterwards.
CollectiveRun run_collective(Hal& hal, MulticastAllocator& allocator, const CollectiveSpec& spec);

}  // namespace nvsvp::fw
