// Which collective to run and how (collectives.hpp): the record the collectives' plans
// (collective_plan.hpp) and their runner share.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

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

// An all-reduce's data (the leading 16 bytes of each message): GPU g's message m is
// (g+1, m mod 2^17, 1, m div 2^17), the sum over N GPUs (N(N+1)/2, N (m mod 2^17), N,
// N (m div 2^17)). Every lane and every partial sum is a whole number below 2^24 for up to 128
// GPUs and 2^34 messages, so float adds them exactly in any order. With m itself in a lane, sums
// past 2^24 rounded by the order of the additions and a correct reduction failed its check
// (4 GiB on 64 GPUs).
inline constexpr uint64_t kAllReduceLowMessages = 1ull << 17;
inline std::array<float, 4> allreduce_input_lanes(uint32_t gpu, uint64_t message) {
  return {gpu + 1.0f, static_cast<float>(message % kAllReduceLowMessages), 1.0f,
          static_cast<float>(message / kAllReduceLowMessages)};
}
inline std::array<float, 4> allreduce_result_lanes(uint32_t gpus, uint64_t message) {
  const auto n = static_cast<float>(gpus);
  return {n * (n + 1) / 2, n * static_cast<float>(message % kAllReduceLowMessages), n,
          n * static_cast<float>(message / kAllReduceLowMessages)};
}

}  // namespace nvsvp::fw
