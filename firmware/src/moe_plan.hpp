// Internal to firmware: the pieces every MoE scheme builder shares.
#pragma once

#include <cstdint>
#include <memory>
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

// The expert computation on `gpu`: for each received token, the sum of its local experts'
// outputs into the partial buffer. Timed as fp8 GEMMs over the token-expert pairs (no time with
// pure_communication).
hw::Task expert_task(const MoeLayerSpec& spec, hw::PhaseId phase, uint64_t slots,
                     uint64_t token_expert_pairs, uint32_t kernel);
hw::Kernel expert_kernel(std::shared_ptr<const MoeLayerSpec> spec, const MoeBuffers& buffers,
                         std::shared_ptr<const std::vector<std::vector<uint64_t>>> received,
                         uint32_t gpu);

// The home GPU's combine: sums the partials of each local token into the output buffer.
hw::Task reduce_task(const MoeLayerSpec& spec, hw::PhaseId phase, uint64_t partials, const MoeBuffers& buffers,
                     uint32_t kernel);
hw::Kernel reduce_kernel(const LayerPlan& plan, uint32_t gpu);

// Where the partial of copy `copy` (of a token whose home is `home`) lands in the home GPU.
uint64_t combine_slot_address(const LayerPlan& plan, uint32_t home, uint64_t copy);

// Token-expert pairs of `token` served by `gpu`.
uint32_t local_experts(const MoeRouting& routing, uint64_t token, uint32_t gpu);

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

}  // namespace nvsvp::fw::detail
