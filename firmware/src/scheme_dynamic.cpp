// The dynamic multimem schemes (dysharp.md §2, §4), phases in sequence:
//   dispatch: each home GPU issues one dymultimem.st per token with the token's experts as
//             targets (the experts on other GPUs first, its own last); the switch sends one copy
//             per destination GPU with the list trimmed to it; every destination writes the
//             token into each target expert's region (the Hub allocates the block on first
//             touch); the home's own experts are written by its Hub without a link;
//   experts:  each local expert over its region (its output, already weighted, into the same
//             layout block of the partial buffer);
//   barrier:  every GPU tells every other that its partials are written (the loads read them);
//   combine:  one dymultimem.ld_reduce per token (bf16 add): each destination sums its experts'
//             partials and answers once; the switch adds the answers and returns one result,
//             to which the home adds its own experts' partials.
// `dysharp-basic` names targets by expert ID (the Hub translates); `explicit-addressing` carries
// a full destination address per target in request and response (the layout is then fixed by
// firmware: an expert's tokens in token order).
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "moe_plan.hpp"
#include "nvsvp/fw/dynamic_multicast_runtime.hpp"
#include "nvsvp/fw/moe_data.hpp"

namespace nvsvp::fw::detail {

namespace {

// The local experts' outputs: for every block of expert e's region of dispatch_rx, e's output
// (weighted) into the same block of the partial buffer.
hw::Kernel dynamic_expert_kernel(const MoeBuffers& buffers, std::vector<uint64_t> region_blocks,
                                 uint32_t first_expert) {
  return [buffers, region_blocks = std::move(region_blocks), first_expert](hw::MemoryAccess& memory) {
    constexpr size_t kBytes = 2 * kLanes;
    uint64_t start = 0;
    std::vector<uint8_t> data;
    for (uint32_t j = 0; j < region_blocks.size(); ++j) {
      const uint64_t blocks = region_blocks[j];
      data.resize(blocks * kBytes);
      memory.read_strided(buffers.dispatch_rx + start * buffers.dispatch_stride, buffers.dispatch_stride, blocks,
                          kBytes, data.data());
      ExpertSum expert;
      expert.add(first_expert + j);
      for (uint64_t b = 0; b < blocks; ++b) {
        uint8_t* raw = data.data() + b * kBytes;
        pack_lanes(expert.of(unpack_lanes(raw)), raw);
      }
      memory.write_strided(buffers.partial + start * buffers.combine_stride, buffers.combine_stride, blocks, kBytes,
                           data.data());
      start += blocks;
    }
  };
}

void build_dynamic(LayerPlan& plan, const DispatchMap& map, hw::DynamicAddressing addressing) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const MoeBuffers& b = plan.buffers;
  const uint32_t gpus = routing.gpus;
  const uint32_t per_gpu = routing.experts_per_gpu();
  const uint64_t tokens = routing.tokens();
  const bool explicit_addresses = addressing == hw::DynamicAddressing::explicit_addresses;
  enum Phase : hw::PhaseId { kDispatch, kExperts, kCombine };

  // The runtime calls of dysharp.md §2: two regions sharing one mapping, bound with the counts
  // the gate knows before dispatch.
  const std::vector<uint64_t> expert_loads = tokens_per_expert(routing);
  // Each expert receives each token at most once, so its load fits the binding's 32 bits.
  const std::vector<uint32_t> tokens_per_expert(expert_loads.begin(), expert_loads.end());
  DynamicMulticastRuntime runtime(gpus);
  const hw::DynamicMulticastObject dispatch_object =
      runtime.create_dynamic_multicast(b.dispatch_stride, hw::MultimemStage::dispatch, 2);
  const hw::DynamicMulticastObject combine_object =
      runtime.create_dynamic_multicast(b.combine_stride, hw::MultimemStage::combine, 2);
  const hw::DynamicMulticastBinding dispatch = runtime.bind_dynamic_multicast(dispatch_object, tokens, tokens_per_expert);
  const hw::DynamicMulticastBinding combine = runtime.bind_dynamic_multicast(combine_object, tokens, tokens_per_expert);
  plan.dynamic_objects.push_back(DynamicObjectRequest{dispatch, b.dispatch_rx});
  plan.dynamic_objects.push_back(DynamicObjectRequest{combine, b.partial});
  plan.dispatch_per_expert = true;
  plan.combine_reduced_in_switch = true;

  // Each expert's region in its GPU: after the GPU's earlier experts' regions.
  std::vector<uint64_t> region_start(routing.experts, 0);
  for (uint32_t e = 0; e < routing.experts; ++e) {
    region_start[e] = e % per_gpu == 0 ? 0 : region_start[e - 1] + tokens_per_expert[e - 1];
  }
  // Explicit addressing: firmware fixes the layout (an expert's tokens in token order).
  if (explicit_addresses) {
    auto layout = std::make_shared<std::vector<uint32_t>>(routing.expert_ids.size());
    std::vector<uint64_t> next(region_start);
    for (uint64_t i = 0; i < routing.expert_ids.size(); ++i) {
      (*layout)[i] = static_cast<uint32_t>(next[routing.expert_ids[i]]++);
    }
    plan.explicit_layout = layout;
  }

  const uint64_t token_bytes = vector_bytes(spec.dispatch_dtype, spec.model.hidden);
  const uint64_t partial_bytes = vector_bytes(spec.combine_dtype, spec.model.hidden);
  std::vector<uint32_t> order(routing.top_k);  // a token's targets: remote first, then local
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = plan.sequences[g];
    seq.phase_names = moe_phase_names();
    seq.counters = kBarrierCounter + 1;
    const uint64_t first_token = static_cast<uint64_t>(g) * routing.tokens_per_gpu;
    seq.tasks.reserve(2 * routing.tokens_per_gpu + gpus + 8);
    seq.targets.reserve(static_cast<size_t>(routing.tokens_per_gpu) * routing.top_k);
    if (explicit_addresses) seq.target_addresses.reserve(2 * static_cast<size_t>(routing.tokens_per_gpu) * routing.top_k);

    // Target lists: one per token, shared by its store and its load (explicit addressing needs
    // two, as the addresses differ).
    std::vector<uint32_t> list_of(routing.tokens_per_gpu);
    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      const uint16_t* experts = routing.experts_of(t);
      uint32_t n = 0;
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        if (experts[k] / per_gpu != g) order[n++] = k;
      }
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        if (experts[k] / per_gpu == g) order[n++] = k;
      }
      if (seq.targets.size() > std::numeric_limits<uint32_t>::max() - routing.top_k) {
        throw std::length_error("dynamic multimem: more than 2^32 targets in one sequence");
      }
      list_of[t - first_token] = static_cast<uint32_t>(seq.targets.size());
      for (uint32_t k : order) {
        seq.targets.push_back(experts[k]);
        if (explicit_addresses) {
          const uint64_t layout = (*plan.explicit_layout)[t * routing.top_k + k];
          seq.target_addresses.push_back(b.dispatch_rx + layout * b.dispatch_stride);
        }
      }
      if (explicit_addresses) {
        // The load's list: the same experts, their partials' addresses.
        for (uint32_t k : order) {
          seq.targets.push_back(experts[k]);
          const uint64_t layout = (*plan.explicit_layout)[t * routing.top_k + k];
          seq.target_addresses.push_back(b.partial + layout * b.combine_stride);
        }
      }
    }

    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      seq.tasks.push_back(hw::Task::dynamic_store(kDispatch, b.input + (t - first_token) * b.dispatch_stride,
                                                  dispatch.multimem_address(t), token_bytes, list_of[t - first_token],
                                                  static_cast<uint16_t>(routing.top_k), addressing, kDispatchCounter));
    }
    const uint64_t local_blocks = dispatch.local_blocks(g);
    seq.tasks.push_back(hw::Task::wait(kDispatch, kDispatchCounter, local_blocks));

    const std::vector<uint64_t> region_blocks = local_slice(routing, expert_loads, g);
    seq.kernels.push_back(dynamic_expert_kernel(b, region_blocks, g * per_gpu));
    append_expert_gemms(spec, seq, kExperts, region_blocks, local_blocks, static_cast<uint32_t>(seq.kernels.size() - 1));

    append_partials_barrier(plan, seq, g, kCombine);

    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      const uint32_t list = list_of[t - first_token] + (explicit_addresses ? routing.top_k : 0);
      seq.tasks.push_back(hw::Task::dynamic_ld_reduce(kCombine, combine.multimem_address(t),
                                                      b.output + (t - first_token) * b.combine_stride, partial_bytes,
                                                      list, static_cast<uint16_t>(routing.top_k), addressing,
                                                      hw::MultimemOp::add, hw::MultimemType::bf16, kCombineCounter));
    }
    seq.tasks.push_back(hw::Task::wait(kCombine, kCombineCounter, routing.tokens_per_gpu));
  }

  // What every GPU's links deliver: a dispatch copy and a load per (token, remote destination),
  // and the home one result per token with a remote destination.
  for (uint64_t t = 0; t < tokens; ++t) {
    const uint32_t home = routing.home_of_token(t);
    bool remote = false;
    for (uint64_t c = map.first[t]; c < map.first[t + 1]; ++c) {
      if (map.dest[c] == home) continue;
      plan.expected_link_arrivals[map.dest[c]] += 2;
      remote = true;
    }
    plan.expected_link_arrivals[home] += remote ? 1 : 0;
  }
}

}  // namespace

void build_dysharp_basic(LayerPlan& plan, const DispatchMap& map) {
  build_dynamic(plan, map, hw::DynamicAddressing::algebraic);
}

void build_explicit_addressing(LayerPlan& plan, const DispatchMap& map) {
  build_dynamic(plan, map, hw::DynamicAddressing::explicit_addresses);
}

}  // namespace nvsvp::fw::detail
