// Internal to firmware: the pieces every MoE scheme builder shares.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_layer.hpp"

namespace nvsvp::fw::detail {

// Where every token copy goes: grouped by destination, then by source GPU, then token order
// (the order a software all-to-all packs its receive buffers).
struct DispatchMap {
  std::shared_ptr<std::vector<uint64_t>> first_ptr = std::make_shared<std::vector<uint64_t>>();
  std::shared_ptr<std::vector<uint32_t>> dest_ptr = std::make_shared<std::vector<uint32_t>>();
  std::vector<uint64_t>& first = *first_ptr;  // [token]: its first copy; size tokens + 1
  std::vector<uint32_t>& dest = *dest_ptr;    // [copy]: destination GPU (ascending per token)
  std::vector<uint64_t> slot;     // [copy]: slot in the destination's dispatch_rx
  std::shared_ptr<std::vector<std::vector<uint64_t>>> received;  // [gpu][slot]: token
  std::vector<std::vector<uint64_t>> counts;                      // [source][destination]
};

DispatchMap map_dispatch(const MoeRouting& routing);

MoeBuffers make_buffers(const MoeLayerSpec& spec);

// The local experts' work on one GPU as two grouped fp8 GEMMs (GEMM-1: hidden -> 2 x moe_hidden
// for gate and up; GEMM-2: moe_hidden -> hidden), each expert's tokens (`tokens_per_local_expert`)
// in tiles of software.tile_tokens x tile_columns thread blocks; `slots` token vectors are read and
// as many outputs written. `kernel` (the functional effect) runs when GEMM-2 ends. No time with
// pure_communication.
// The phases every MoE scheme reports, in PhaseId order.
const std::vector<std::string>& moe_phase_names();

// Tokens routed to each expert, and the slice of GPU `gpu`'s experts.
std::vector<uint64_t> tokens_per_expert(const MoeRouting& routing);
std::vector<uint64_t> local_slice(const MoeRouting& routing, const std::vector<uint64_t>& per_expert, uint32_t gpu);

void append_expert_gemms(const MoeLayerSpec& spec, hw::WorkSequence& seq, hw::PhaseId phase,
                         const std::vector<uint64_t>& tokens_per_local_expert, uint64_t slots, uint32_t kernel);
// The kernel over the slots [begin, end) of each of `runs` (all of the GPU's slots when empty).
struct SlotRun {
  uint64_t begin = 0;
  uint64_t end = 0;
};
hw::Kernel expert_kernel(std::shared_ptr<const MoeLayerSpec> spec, const MoeBuffers& buffers,
                         std::shared_ptr<const std::vector<std::vector<uint64_t>>> received,
                         uint32_t gpu, std::vector<SlotRun> runs = {});

// The software all-to-all's token-count exchange on GPU `gpu`: 16 bytes to every peer, the wait
// for every peer's, then the time to turn them into offsets (software.count_exchange_ns, plus
// bookkeeping_ns_per_copy for each copy of the GPU's tokens).
void append_count_exchange(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& seq, uint32_t gpu,
                           hw::PhaseId phase);

// A software cost (software.count_exchange_ns and the like): a delay of `ns`, none when 0.
void append_software_cost(hw::WorkSequence& seq, hw::PhaseId phase, double ns);

// Appends the writes in `pending` (to `peer`, `bytes` each) as one chunk message (a software
// all-to-all sender's batch) and empties it; counts the message in the peer's expected arrivals.
void append_write_chunk(LayerPlan& plan, hw::WorkSequence& seq, hw::PhaseId phase, uint32_t peer, uint64_t bytes,
                        uint32_t counter, std::vector<hw::WriteElement>& pending);

// The home GPU's combine: sums the partials of each local token into the output buffer.
hw::Task reduce_task(const MoeLayerSpec& spec, hw::PhaseId phase, uint64_t partials, const MoeBuffers& buffers,
                     uint32_t kernel);
hw::Kernel reduce_kernel(const LayerPlan& plan, uint32_t gpu);

// Where the partial of copy `copy` (of a token whose home is `home`) lands in the home GPU.
uint64_t combine_slot_address(const LayerPlan& plan, uint32_t home, uint64_t copy);

// Schemes whose combine reads partials on other GPUs wait until every GPU has written its own:
// each GPU writes 16 bytes to every other (kBarrierBuffer) and waits for the others' writes on
// kBarrierCounter (the sequence needs kBarrierCounter + 1 counters).
constexpr uint64_t kBarrierBuffer = 0x0800'0000'0000;  // [peer]: 16 bytes, "partials written"
constexpr uint32_t kBarrierCounter = kMoeCounters;
void append_partials_barrier(LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, hw::PhaseId phase);

using SchemeBuilder = void (*)(LayerPlan& plan, const DispatchMap& map);
void build_deepep(LayerPlan& plan, const DispatchMap& map);
void build_nvls(LayerPlan& plan, const DispatchMap& map);
void build_dysharp_basic(LayerPlan& plan, const DispatchMap& map);
void build_explicit_addressing(LayerPlan& plan, const DispatchMap& map);
void build_coarse_overlap(LayerPlan& plan, const DispatchMap& map);

}  // namespace nvsvp::fw::detail
