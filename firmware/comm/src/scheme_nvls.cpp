// `nvls`: MoE dispatch and combine with static multimem, as a shipped NVSwitch offers it
// (docs/background/nvlink_nvswitch.md#static-multimem;
// docs/background/dynamic_multimem.md#why-static-multimem-does-not-fit on why it moves more bytes
// than deepep):
//   dispatch: an all-gather: every GPU multimem.st's each of its tokens into a group covering
//             every GPU's dispatch_rx, so every GPU receives every token (slot = global token);
//   experts:  the local experts over all tokens; a GPU with no expert of a token writes a zero
//             partial (its contribution to the sum);
//   barrier:  every GPU tells every other that its partials are written (16-byte writes), since
//             the loads below read them;
//   combine:  a reduce-scatter: each home GPU multimem.ld_reduce's (bf16 add) each of its tokens'
//             partials over a group covering every GPU's partial buffer; the switch returns the
//             sum straight into the output.
// The two groups are created at bring-up (LayerPlan::multicast_groups).
#include <stdexcept>
#include <string>

#include "moe_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

constexpr uint64_t kGroupGranule = 2ull << 20;  // multicast memory is bound in 2 MiB units
// Multimem ranges of the two groups (2 MiB aligned, apart from every local buffer).
constexpr uint64_t kDispatchGroupBase = 0x1000'0000'0000;
constexpr uint64_t kCombineGroupBase = 0x1100'0000'0000;

uint64_t round_up_to_granule(uint64_t bytes) { return (bytes + kGroupGranule - 1) / kGroupGranule * kGroupGranule; }

}  // namespace

void build_nvls(LayerPlan& plan, const DispatchMap& map) {
  (void)map;  // every GPU receives every token: the routing decides only the experts' work
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const MoeBuffers& b = plan.buffers;
  const uint32_t gpus = routing.gpus;
  const uint64_t tokens = routing.tokens();
  if (gpus > hw::kMaxGpus) {
    throw std::invalid_argument("nvls: a multicast group names at most " + std::to_string(hw::kMaxGpus) + " GPUs");
  }

  // Every GPU's dispatch slot s holds global token s.
  auto all_tokens = std::make_shared<std::vector<std::vector<uint64_t>>>(gpus);
  for (std::vector<uint64_t>& slots : *all_tokens) {
    slots.resize(tokens);
    for (uint64_t t = 0; t < tokens; ++t) slots[t] = t;
  }
  plan.received = all_tokens;
  plan.token_copies = tokens * gpus;
  plan.remote_token_copies = tokens * (gpus - 1);
  plan.combine_reduced_in_switch = true;
  const hw::GpuMask all_members = hw::GpuMask::first(gpus);
  plan.multicast_groups.push_back(
      MulticastGroupRequest{kDispatchGroupBase, round_up_to_granule(tokens * b.dispatch_stride), b.dispatch_rx, all_members});
  plan.multicast_groups.push_back(
      MulticastGroupRequest{kCombineGroupBase, round_up_to_granule(tokens * b.combine_stride), b.partial, all_members});

  const uint64_t token_bytes = vector_bytes(spec.dispatch_dtype, spec.model.hidden);
  const uint64_t partial_bytes = vector_bytes(spec.combine_dtype, spec.model.hidden);
  const std::vector<uint64_t> expert_loads = tokens_per_expert(routing);
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = start_sequence(plan, g, kBarrierCounter + 1);
    const uint64_t first_token = static_cast<uint64_t>(g) * routing.tokens_per_gpu;
    seq.tasks.reserve(2 * routing.tokens_per_gpu + gpus + 8);

    // Dispatch: one multicast store per local token; every token of every GPU lands here.
    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      seq.tasks.push_back(hw::Task::multimem_store(kDispatchPhase, b.input + (t - first_token) * b.dispatch_stride,
                                                   kDispatchGroupBase + t * b.dispatch_stride, token_bytes,
                                                   kDispatchCounter));
    }
    seq.tasks.push_back(hw::Task::wait(kDispatchPhase, kDispatchCounter, tokens));
    plan.expected_link_arrivals[g] += tokens;  // the copies, this GPU's own included

    // Only the tokens of a local expert are computed; the others' partials are zero.
    seq.kernels.push_back(expert_kernel(plan.spec, b, all_tokens, g));
    append_expert_gemms(spec, seq, kExpertsPhase, local_slice(routing, expert_loads, g), tokens,
                        static_cast<uint32_t>(seq.kernels.size() - 1));

    // Barrier: the loads below read every GPU's partials.
    append_partials_barrier(plan, seq, g, kCombinePhase);

    // Combine: one reducing load per local token, the sum landing in the output.
    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      seq.tasks.push_back(hw::Task::multimem_ld_reduce(kCombinePhase, kCombineGroupBase + t * b.combine_stride,
                                                       b.output + (t - first_token) * b.combine_stride, partial_bytes,
                                                       hw::MultimemOp::add, hw::MultimemType::bf16, kCombineCounter));
    }
    seq.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, routing.tokens_per_gpu));
    // Every home's loads read this GPU's partial of each of their tokens, and its own loads'
    // results come back.
    plan.expected_link_arrivals[g] += tokens + routing.tokens_per_gpu;
  }
}

}  // namespace nvsvp::fw::detail
