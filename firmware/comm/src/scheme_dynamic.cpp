// The dynamic multimem schemes (docs/background/dynamic_multimem.md,
// docs/background/token_centric_fusion.md). Phases in sequence (`dysharp-basic`,
// `explicit-addressing-basic`):
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
// `dysharp-basic` names targets by expert ID (the Hub translates); `explicit-addressing-basic`
// carries a full destination address per target in request and response (the layout is then
// fixed by firmware: an expert's tokens in token order).
// With token-centric fusion (build_dynamic_fused below): `dysharp`, `dysharp-comet` (the fusion's
// pieces as two kernels, COMET's overlap) and `explicit-addressing`.
#include <algorithm>
#include <limits>
#include <stdexcept>

#include "moe_plan.hpp"
#include "nvsvp/fw/dynamic_multicast_runtime.hpp"
#include "nvsvp/fw/moe_data.hpp"

namespace nvsvp::fw::detail {

namespace {

// A run of layout blocks of one expert's region.
struct BlockRun {
  uint64_t first = 0;
  uint64_t blocks = 0;
  uint32_t expert = 0;  // whose weights (MoeRouting::weights_of_copy)
};

// The experts' outputs: for every block of each run, its expert's output (weighted) into the
// same block of the partial buffer.
hw::Kernel dynamic_expert_kernel(const MoeBuffers& buffers, std::vector<BlockRun> runs) {
  return [buffers, runs = std::move(runs)](hw::MemoryAccess& memory) {
    constexpr size_t kBytes = 2 * kLanes;
    std::vector<uint8_t> data;
    for (const BlockRun& run : runs) {
      data.resize(run.blocks * kBytes);
      memory.read_strided(buffers.dispatch_rx + run.first * buffers.dispatch_stride, buffers.dispatch_stride,
                          run.blocks, kBytes, data.data());
      ExpertSum expert;
      expert.add(run.expert);
      for (uint64_t b = 0; b < run.blocks; ++b) {
        uint8_t* raw = data.data() + b * kBytes;
        pack_lanes(expert.of(unpack_lanes(raw)), raw);
      }
      memory.write_strided(buffers.partial + run.first * buffers.combine_stride, buffers.combine_stride, run.blocks,
                           kBytes, data.data());
    }
  };
}

// A notification names one token: 4 bytes of token index.
constexpr uint64_t kNotificationBytes = 4;

// What both forms of a dynamic scheme share: the objects (two regions sharing one mapping, bound
// with the counts the gate knows before dispatch), each expert's region in its GPU, the layout
// when firmware fixes it (explicit addressing), and every token's target lists.
struct DynamicSetup {
  hw::DynamicMulticastBinding dispatch;
  hw::DynamicMulticastBinding combine;
  std::vector<uint64_t> expert_loads;
  std::vector<uint64_t> region_start;  // [expert]: its first layout block in its GPU
  // [local token]: index of its store's target list in its home's sequence (its load's follows
  // at + top_k with explicit addressing, else the same list).
  std::vector<std::vector<uint32_t>> list_of;
};

// `arrival_order_layout`: explicit addressing lays an expert's tokens out in the order they are
// expected to arrive (local token index, then home) instead of token order.
DynamicSetup set_up_dynamic(LayerPlan& plan, hw::DynamicAddressing addressing, bool arrival_order_layout) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const MoeBuffers& b = plan.buffers;
  const uint32_t gpus = routing.gpus;
  const uint32_t per_gpu = routing.experts_per_gpu();
  const uint64_t tokens = routing.tokens();
  const bool explicit_addresses = addressing == hw::DynamicAddressing::explicit_addresses;
  DynamicSetup setup;
  setup.expert_loads = tokens_per_expert(routing);
  // Each expert receives each token at most once, so its load fits the binding's 32 bits.
  const std::vector<uint32_t> loads(setup.expert_loads.begin(), setup.expert_loads.end());
  DynamicMulticastRuntime runtime(gpus);
  const hw::DynamicMulticastObject dispatch_object =
      runtime.create_dynamic_multicast(b.dispatch_stride, hw::MultimemStage::dispatch, 2);
  const hw::DynamicMulticastObject combine_object =
      runtime.create_dynamic_multicast(b.combine_stride, hw::MultimemStage::combine, 2);
  setup.dispatch = runtime.bind_dynamic_multicast(dispatch_object, tokens, loads);
  setup.combine = runtime.bind_dynamic_multicast(combine_object, tokens, loads);
  plan.dynamic_objects.push_back(DynamicObjectRequest{setup.dispatch, b.dispatch_rx});
  plan.dynamic_objects.push_back(DynamicObjectRequest{setup.combine, b.partial});
  plan.dispatch_per_expert = true;
  plan.combine_reduced_in_switch = true;

  setup.region_start.assign(routing.experts, 0);
  for (uint32_t e = 0; e < routing.experts; ++e) {
    setup.region_start[e] = e % per_gpu == 0 ? 0 : setup.region_start[e - 1] + loads[e - 1];
  }
  if (explicit_addresses) {
    auto layout = std::make_shared<std::vector<uint32_t>>(routing.expert_ids.size());
    std::vector<uint64_t> next(setup.region_start);
    auto place = [&](uint64_t t) {
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        (*layout)[t * routing.top_k + k] = static_cast<uint32_t>(next[routing.experts_of(t)[k]]++);
      }
    };
    for (uint64_t i = 0; i < tokens; ++i) {
      place(arrival_order_layout ? (i % gpus) * routing.tokens_per_gpu + i / gpus : i);
    }
    plan.explicit_layout = layout;
  }

  std::vector<uint32_t> order(routing.top_k);  // a token's targets: remote first, then local
  setup.list_of.resize(gpus);
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = plan.sequences[g];
    const uint64_t first_token = static_cast<uint64_t>(g) * routing.tokens_per_gpu;
    seq.targets.reserve(static_cast<size_t>(routing.tokens_per_gpu) * routing.top_k);
    if (explicit_addresses) seq.target_addresses.reserve(2 * static_cast<size_t>(routing.tokens_per_gpu) * routing.top_k);
    std::vector<uint32_t>& list_of = setup.list_of[g];
    list_of.resize(routing.tokens_per_gpu);
    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      const uint16_t* experts = routing.experts_of(t);
      uint32_t n = 0;
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        if (experts[k] / per_gpu != g) order[n++] = k;
      }
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        if (experts[k] / per_gpu == g) order[n++] = k;
      }
      if (seq.targets.size() > std::numeric_limits<uint32_t>::max() - 2 * routing.top_k) {
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
  }
  return setup;
}

// What every GPU's links deliver: a dispatch copy and a load per (token, remote destination),
// and the home one result per token with a remote destination.
void expect_dynamic_arrivals(LayerPlan& plan, const DispatchMap& map) {
  const MoeRouting& routing = plan.spec->routing;
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
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

hw::Task store_of(const LayerPlan& plan, const DynamicSetup& setup, uint32_t gpu, uint64_t t, hw::DynamicAddressing addressing,
                  hw::PhaseId phase) {
  const MoeLayerSpec& spec = *plan.spec;
  const uint64_t local = t % spec.routing.tokens_per_gpu;
  return hw::Task::dynamic_store(phase, plan.buffers.input + local * plan.buffers.dispatch_stride,
                                 setup.dispatch.multimem_address(t), vector_bytes(spec.dispatch_dtype, spec.model.hidden),
                                 setup.list_of[gpu][local], static_cast<uint16_t>(spec.routing.top_k), addressing,
                                 kDispatchCounter);
}

hw::Task load_of(const LayerPlan& plan, const DynamicSetup& setup, uint32_t gpu, uint64_t t, hw::DynamicAddressing addressing,
                 hw::PhaseId phase) {
  const MoeLayerSpec& spec = *plan.spec;
  const uint64_t local = t % spec.routing.tokens_per_gpu;
  const bool explicit_addresses = addressing == hw::DynamicAddressing::explicit_addresses;
  return hw::Task::dynamic_ld_reduce(phase, setup.combine.multimem_address(t),
                                     plan.buffers.output + local * plan.buffers.combine_stride,
                                     vector_bytes(spec.combine_dtype, spec.model.hidden),
                                     setup.list_of[gpu][local] + (explicit_addresses ? spec.routing.top_k : 0),
                                     static_cast<uint16_t>(spec.routing.top_k), addressing, hw::MultimemOp::add,
                                     hw::MultimemType::bf16, kCombineCounter);
}

void build_dynamic(LayerPlan& plan, const DispatchMap& map, hw::DynamicAddressing addressing) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const MoeBuffers& b = plan.buffers;
  const uint32_t gpus = routing.gpus;
  const uint32_t per_gpu = routing.experts_per_gpu();
  const DynamicSetup setup = set_up_dynamic(plan, addressing, false);

  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = start_sequence(plan, g, kBarrierCounter + 1);
    const uint64_t first_token = static_cast<uint64_t>(g) * routing.tokens_per_gpu;
    seq.tasks.reserve(2 * routing.tokens_per_gpu + gpus + 8);
    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      seq.tasks.push_back(store_of(plan, setup, g, t, addressing, kDispatchPhase));
    }
    const uint64_t local_blocks = setup.dispatch.local_blocks(g);
    seq.tasks.push_back(hw::Task::wait(kDispatchPhase, kDispatchCounter, local_blocks));

    const std::vector<uint64_t> region_blocks = local_slice(routing, setup.expert_loads, g);
    std::vector<BlockRun> runs;
    for (uint32_t j = 0; j < per_gpu; ++j) {
      runs.push_back(BlockRun{setup.region_start[g * per_gpu + j], region_blocks[j], routing.weights_of_copy(g * per_gpu + j)});
    }
    seq.kernels.push_back(dynamic_expert_kernel(b, std::move(runs)));
    append_expert_gemms(spec, seq, kExpertsPhase, region_blocks, local_blocks, static_cast<uint32_t>(seq.kernels.size() - 1));

    append_partials_barrier(plan, seq, g, kCombinePhase);

    for (uint64_t t = first_token; t < first_token + routing.tokens_per_gpu; ++t) {
      seq.tasks.push_back(load_of(plan, setup, g, t, addressing, kCombinePhase));
    }
    seq.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, routing.tokens_per_gpu));
  }
  expect_dynamic_arrivals(plan, map);
}

// The first block of `tile` (of GPU g) in its expert's region.
uint64_t first_block(const DynamicSetup& setup, const MoeRouting& routing, uint32_t g, const FusedTile& tile) {
  return setup.region_start[g * routing.experts_per_gpu() + tile.expert] + tile.first;
}

// GPU g's tables on its dispatch stream: tile-status entries by the block a copy lands in,
// output-readiness entries by the token a notification names.
FusedCounters install_fused_tables(const LayerPlan& plan, const DynamicSetup& setup,
                                   const std::array<hw::WorkSequence*, 4>& streams, uint32_t g, const FusedTiles& tiles) {
  const FusedCounters counters = install_fused_counters(plan, streams, tiles.tiles.size(), 0);
  const uint64_t local_blocks = setup.dispatch.local_blocks(g);
  hw::CounterMap arrivals;
  arrivals.base = plan.buffers.dispatch_rx;
  arrivals.stride = plan.buffers.dispatch_stride;
  arrivals.entries = local_blocks;
  arrivals.counters.assign(local_blocks, 0);
  arrivals.first.resize(local_blocks + 1);
  for (uint64_t i = 0; i <= local_blocks; ++i) arrivals.first[i] = static_cast<uint32_t>(i);
  for (uint32_t t = 0; t < counters.tiles; ++t) {
    const uint64_t first = first_block(setup, plan.spec->routing, g, tiles.tiles[t]);
    for (uint64_t m = 0; m < tiles.tiles[t].tokens; ++m) arrivals.counters[first + m] = kFirstTileCounter + t;
  }
  hw::CounterMap readiness;
  readiness.base = kReadinessTable;
  readiness.entries = plan.spec->routing.tokens_per_gpu;
  readiness.first_counter = counters.first_ready;
  hw::WorkSequence& dispatch = *streams[kDispatchGroup];
  dispatch.counter_maps.push_back(std::move(arrivals));
  dispatch.counter_maps.push_back(std::move(readiness));
  return counters;
}

// Per tile: its expert's output over its blocks, then the notification of its tokens' homes.
std::vector<TileWork> dynamic_tile_work(const LayerPlan& plan, const DynamicSetup& setup,
                                        const std::array<hw::WorkSequence*, 4>& streams, uint32_t g,
                                        const FusedTiles& tiles, hw::DynamicAddressing addressing) {
  const MoeRouting& routing = plan.spec->routing;
  const uint32_t per_gpu = routing.experts_per_gpu();
  if (addressing == hw::DynamicAddressing::explicit_addresses) {
    // Firmware's token-ID table: the token of each of this GPU's layout blocks.
    hw::WorkSequence& gemm2 = *streams[kGemm2Group];
    gemm2.block_tokens.assign(setup.dispatch.local_blocks(g), 0);
    for (uint64_t i = 0; i < routing.expert_ids.size(); ++i) {
      if (routing.expert_ids[i] / per_gpu == g) gemm2.block_tokens[(*plan.explicit_layout)[i]] = static_cast<uint32_t>(i / routing.top_k);
    }
  }
  std::vector<TileWork> work;
  work.reserve(tiles.tiles.size());
  for (const FusedTile& tile : tiles.tiles) {
    const uint64_t first = first_block(setup, routing, g, tile);
    work.push_back(TileWork{
        dynamic_expert_kernel(plan.buffers, {BlockRun{first, tile.tokens, routing.weights_of_copy(g * per_gpu + tile.expert)}}),
        hw::Task::notify_tokens(kCombinePhase, setup.dispatch.multimem_base, static_cast<uint32_t>(first), tile.tokens,
                                addressing, kReadinessTable, kNotificationBytes, kNotifyCounter)});
  }
  return work;
}

// Token-centric fusion over dynamic multimem
// (docs/background/token_centric_fusion.md#the-fused-pipeline). Four executor streams per GPU (the
// SM groups of one persistent kernel):
//   dispatch: one dymultimem.st per token, as dysharp-basic;
//   GEMM-1:   takes tiles as their tokens land. A tile is software.tile_tokens consecutive layout
//             blocks of one expert's region; the Hub fills a region in arrival order, so a tile's
//             blocks are that expert's next arrivals (with explicit addressing, firmware lays
//             each region out in expected arrival order). Every block that lands counts on its
//             tile's tile-status entry;
//   GEMM-2:   takes tiles as their GEMM-1 ends (with `comet`, after all of GEMM-1 and the kernel
//             boundary), then notifies the tile's tokens at their homes (the token-ID table:
//             notify_tokens);
//   combine:  takes tokens as their output-readiness entry counts top_k notifications, and issues
//             each one's dymultimem.ld_reduce.
void build_dynamic_fused(LayerPlan& plan, const DispatchMap& map, hw::DynamicAddressing addressing, bool comet) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeRouting& routing = spec.routing;
  const uint32_t per_gpu = routing.experts_per_gpu();
  const FusedSmGroups sms = fused_sm_groups(spec, comet);
  const auto streams = make_fused_streams(plan, sms, kFirstTileCounter);
  const DynamicSetup setup = set_up_dynamic(plan, addressing, true);

  for (uint32_t g = 0; g < routing.gpus; ++g) {
    const TokenRange own = own_tokens(routing, g);
    hw::WorkSequence& dispatch = *streams[g][kDispatchGroup];
    dispatch.tasks.reserve(routing.tokens_per_gpu);
    for (uint64_t t = own.begin; t < own.end; ++t) {
      dispatch.tasks.push_back(store_of(plan, setup, g, t, addressing, kDispatchPhase));
    }

    const FusedTiles tiles = plan_fused_tiles(spec, local_slice(routing, setup.expert_loads, g));
    const FusedCounters counters = install_fused_tables(plan, setup, streams[g], g, tiles);
    append_tile_pipeline(spec, streams[g], tiles, counters, 1, comet,
                         dynamic_tile_work(plan, setup, streams[g], g, tiles, addressing));

    // The combine group takes the tokens as they become ready.
    hw::WorkSequence& combine = *streams[g][kCombineGroup];
    combine.tasks.reserve(2 * routing.tokens_per_gpu + 3);
    append_second_kernel_wait(combine, comet);
    combine.tasks.push_back(hw::Task::take_ready(kCombinePhase, routing.tokens_per_gpu, 1));
    for (uint64_t t = own.begin; t < own.end; ++t) {
      combine.tasks.push_back(
          hw::Task::wait(kCombinePhase, counters.first_ready + static_cast<uint32_t>(t - own.begin), routing.top_k));
      combine.tasks.push_back(load_of(plan, setup, g, t, addressing, kCombinePhase));
    }
    combine.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, routing.tokens_per_gpu));
  }
  // The target lists live in the dispatch stream's sequence; the combine stream's loads need them.
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    streams[g][kCombineGroup]->targets = streams[g][kDispatchGroup]->targets;
    streams[g][kCombineGroup]->target_addresses = streams[g][kDispatchGroup]->target_addresses;
  }
  expect_dynamic_arrivals(plan, map);
  for (uint64_t i = 0; i < routing.expert_ids.size(); ++i) {
    const uint32_t home = routing.home_of_token(i / routing.top_k);
    if (routing.expert_ids[i] / per_gpu != home) plan.expected_notifications[home]++;
  }
}

}  // namespace

void build_dysharp_basic(LayerPlan& plan, const DispatchMap& map) {
  build_dynamic(plan, map, hw::DynamicAddressing::algebraic);
}

void build_explicit_addressing_basic(LayerPlan& plan, const DispatchMap& map) {
  build_dynamic(plan, map, hw::DynamicAddressing::explicit_addresses);
}

void build_dysharp_comet(LayerPlan& plan, const DispatchMap& map) {
  build_dynamic_fused(plan, map, hw::DynamicAddressing::algebraic, true);
}

void build_dysharp(LayerPlan& plan, const DispatchMap& map) {
  build_dynamic_fused(plan, map, hw::DynamicAddressing::algebraic, false);
}

void build_explicit_addressing(LayerPlan& plan, const DispatchMap& map) {
  build_dynamic_fused(plan, map, hw::DynamicAddressing::explicit_addresses, false);
}

}  // namespace nvsvp::fw::detail
