// NCCL's collectives on one group of GPUs, as plain C++ behind the HAL, for calibrating the model
// against public measurements (issue 18's anchors; docs/results.md has the numbers):
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

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

enum class Collective {
  allreduce_ring,
  allreduce_nvls,
  allgather_ring,
  allgather_nvls,
  alltoall,
  p2p_write_oneway,
  p2p_write_bidir,
};
const char* to_string(Collective collective);
// The collective named `name` (to_string's spelling); false when there is none.
bool collective_from_string(const std::string& name, Collective& collective);
const std::vector<Collective>& all_collectives();

struct CollectiveSpec {
  Collective collective = Collective::allreduce_ring;
  // What `bytes` is, as nccl-tests counts it: all-reduce, the buffer each GPU holds; all-gather,
  // the gathered buffer (N shares); all-to-all, each GPU's send buffer (N blocks); p2p, the bytes
  // written in each direction.
  uint64_t bytes = 64ull << 20;
  uint64_t message_bytes = 4096;  // one store / load / write on the wire
  // Ring and all-to-all: NCCL's channels, one SM each (32 ring channels on 8x H100 NVSwitch:
  // assumed from NCCL's logs, "32 coll channels").
  uint32_t channels = 32;
  // Ring: a step's share of a channel goes in slices of this many bytes (at most), each pipelined
  // on its own. 512 KiB: NCCL's Simple protocol on Hopper moves a 4 MiB buffer (NCCL_BUFFSIZE) in
  // NCCL_STEPS = 8 steps of 512 KiB; a ring chunk is 4 steps cut into 2 slices, and at 256 MiB on
  // 32 channels and 8 GPUs a channel's chunk is 1 MiB, so its slices are 512 KiB.
  uint64_t slice_bytes = 512 * 1024;
  // NVLS all-reduce: the share goes in chunks of this many bytes, the loads of chunk k+1 in flight
  // while chunk k is stored (NCCL: 128 KiB chunks on Hopper); 0: all loads, then all stores.
  uint64_t chunk_bytes = 128 * 1024;
  // NVLS: the SMs that issue the multimem stores (NCCL's NVLS channels on H100: 16, assumed from
  // NCCL's logs). 0: no issue limit.
  uint32_t nvls_channels = 16;
  // false: every plan's sends cost the executor no time (the links alone pace them).
  bool sm_issue_limit = true;
  uint32_t p2p_source = 0;  // p2p: the writer (and, bidir, the other writer's peer)
  uint32_t p2p_target = 1;
  uint64_t buffer_address = 1ull << 28;   // the buffer (all-to-all: the send buffer), in every GPU
  uint64_t scratch_address = 1ull << 34;  // ring: reduce-scatter slots; nvls: the reduced share;
                                          // all-to-all: the receive buffer; p2p: the target buffer
  uint64_t multimem_base = 1ull << 40;    // nvls: the group's multimem range (2 MiB aligned)
  // The first arrival counter the sequences use. A GPU's counters keep their arrivals for the
  // whole run, so a second collective on the same GPUs must start after the first one's
  // (CollectiveRun::counters_end).
  uint32_t first_counter = 0;
};

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
