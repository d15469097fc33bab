// The pieces every scheme's plan is built from: the layer's buffers, where each token copy goes,
// the experts' GEMMs and kernels, the software all-to-all's messages and the combine's reduction
// (declared in moe_plan.hpp); the fused schedules' tiles and SM groups are in fused_pipeline.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "moe_plan.hpp"
#include "nvsvp/fw/moe_data.hpp"

namespace nvsvp::fw::detail {

// ---- The plan: buffers, where every token copy goes, the sequences -------------------------------

namespace {
uint64_t align16(uint64_t bytes) { return (bytes + 15) / 16 * 16; }
}  // namespace

MoeBuffers make_buffers(const MoeLayerSpec& spec) {
  MoeBuffers b;
  b.dispatch_stride = align16(vector_bytes(spec.dispatch_dtype, spec.model.hidden));
  b.combine_stride = align16(vector_bytes(spec.combine_dtype, spec.model.hidden));
  return b;
}

DispatchMap map_dispatch(const MoeRouting& routing) {
  const uint32_t gpus = routing.gpus;
  const uint64_t tokens = routing.tokens();
  DispatchMap map;
  map.counts.assign(gpus, std::vector<uint64_t>(gpus, 0));
  map.first.resize(tokens + 1);

  // Pass 1: destinations of every token, and counts per (source, destination).
  std::vector<uint32_t> dests;
  for (uint64_t t = 0; t < tokens; ++t) {
    map.first[t] = map.dest.size();
    destination_gpus(routing, t, dests);
    const uint32_t home = routing.home_of_token(t);
    for (uint32_t d : dests) {
      map.dest.push_back(d);
      map.counts[home][d]++;
    }
  }
  map.first[tokens] = map.dest.size();

  // Pass 2: slots, grouped by source within each destination.
  std::vector<std::vector<uint64_t>> next(gpus, std::vector<uint64_t>(gpus, 0));
  map.received = std::make_shared<std::vector<std::vector<uint64_t>>>(gpus);
  for (uint32_t d = 0; d < gpus; ++d) {
    uint64_t offset = 0;
    for (uint32_t s = 0; s < gpus; ++s) {
      next[s][d] = offset;
      offset += map.counts[s][d];
    }
    (*map.received)[d].resize(offset);
  }
  map.slot.resize(map.dest.size());
  for (uint64_t t = 0; t < tokens; ++t) {
    const uint32_t home = routing.home_of_token(t);
    for (uint64_t c = map.first[t]; c < map.first[t + 1]; ++c) {
      const uint32_t d = map.dest[c];
      const uint64_t slot = next[home][d]++;
      map.slot[c] = slot;
      (*map.received)[d][slot] = t;
    }
  }
  return map;
}

std::vector<uint64_t> first_slot_of_source(const DispatchMap& map, uint32_t gpu) {
  std::vector<uint64_t> first(map.counts.size(), 0);
  for (size_t s = 1; s < first.size(); ++s) first[s] = first[s - 1] + map.counts[s - 1][gpu];
  return first;
}

LayerPlan start_plan(const std::string& scheme, std::shared_ptr<const MoeLayerSpec> spec, const DispatchMap& map) {
  const MoeRouting& routing = spec->routing;
  LayerPlan plan;
  plan.scheme = scheme;
  plan.buffers = make_buffers(*spec);
  plan.sequences.resize(routing.gpus);
  plan.expected_link_arrivals.assign(routing.gpus, 0);
  plan.expected_notifications.assign(routing.gpus, 0);
  plan.received = map.received;
  plan.copy_first = map.first_ptr;
  plan.copy_dest = map.dest_ptr;
  plan.token_copies = map.dest.size();
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    for (uint64_t c = map.first[t]; c < map.first[t + 1]; ++c) {
      plan.remote_token_copies += map.dest[c] != routing.home_of_token(t);
    }
  }
  plan.spec = std::move(spec);
  return plan;
}

TokenRange own_tokens(const MoeRouting& routing, uint32_t gpu) {
  const uint64_t begin = static_cast<uint64_t>(gpu) * routing.tokens_per_gpu;
  return TokenRange{begin, begin + routing.tokens_per_gpu};
}

uint64_t copy_to(const DispatchMap& map, uint64_t token, uint32_t gpu) {
  uint64_t copy = map.first[token];
  while (map.dest[copy] != gpu) ++copy;
  return copy;
}

uint64_t copies_of_home(const LayerPlan& plan, uint32_t home) {
  const TokenRange tokens = own_tokens(plan.spec->routing, home);
  return (*plan.copy_first)[tokens.end] - (*plan.copy_first)[tokens.begin];
}

uint64_t combine_slot_address(const LayerPlan& plan, uint32_t home, uint64_t copy) {
  const uint64_t first_of_home = (*plan.copy_first)[static_cast<uint64_t>(home) * plan.spec->routing.tokens_per_gpu];
  return plan.buffers.combine_rx + (copy - first_of_home) * plan.buffers.combine_stride;
}

std::vector<std::vector<uint64_t>> copies_between(const LayerPlan& plan) {
  const MoeRouting& routing = plan.spec->routing;
  std::vector<std::vector<uint64_t>> copies(routing.gpus, std::vector<uint64_t>(routing.gpus, 0));
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    for (uint64_t c = (*plan.copy_first)[t]; c < (*plan.copy_first)[t + 1]; ++c) {
      copies[routing.home_of_token(t)][(*plan.copy_dest)[c]]++;
    }
  }
  return copies;
}

const std::vector<std::string>& moe_phase_names() {
  static const std::vector<std::string> names{"dispatch", "experts", "combine", "shared_expert", "broadcast"};
  return names;
}

hw::WorkSequence& start_sequence(LayerPlan& plan, uint32_t gpu, uint32_t counters) {
  hw::WorkSequence& seq = plan.sequences[gpu];
  seq.phase_names = moe_phase_names();
  seq.counters = counters;
  return seq;
}

// ---- The experts ---------------------------------------------------------------------------------

std::vector<uint64_t> tokens_per_expert(const MoeRouting& routing) {
  std::vector<uint64_t> counts(routing.experts, 0);
  for (uint16_t e : routing.expert_ids) counts[e]++;
  return counts;
}

std::vector<uint64_t> local_slice(const MoeRouting& routing, const std::vector<uint64_t>& per_expert, uint32_t gpu) {
  const uint32_t per = routing.experts_per_gpu();
  return {per_expert.begin() + static_cast<ptrdiff_t>(gpu) * per,
          per_expert.begin() + static_cast<ptrdiff_t>(gpu + 1) * per};
}

uint64_t first_gemm_columns(const MoeLayerSpec& spec) {
  return spec.pass == LayerPass::backward ? spec.model.moe_hidden : 2ull * spec.model.moe_hidden;
}

ExpertGemms expert_gemms(const MoeLayerSpec& spec, hw::PhaseId phase, uint64_t tile_rows, uint32_t busy_experts,
                         uint64_t slots, uint32_t kernel) {
  hw::Task::check_kernel_index(kernel);
  if (spec.pure_communication) return ExpertGemms{hw::Task::delay(phase, 0.0), hw::Task::delay(phase, 0.0, kernel)};
  const MoeModel& m = spec.model;
  const uint64_t tile = spec.software.tile_tokens;
  const uint64_t columns = spec.software.tile_columns;
  auto blocks = [&](uint64_t output_columns) { return tile_rows * ((output_columns + columns - 1) / columns); };
  auto block_flops = [&](uint64_t depth) { return 2.0 * static_cast<double>(tile * columns * depth); };
  const uint64_t up_weights = weight_bytes(spec.weight_dtype, 2ull * m.hidden * m.moe_hidden) * busy_experts;
  const uint64_t down_weights = weight_bytes(spec.weight_dtype, 1ull * m.hidden * m.moe_hidden) * busy_experts;
  const uint64_t vectors_in = slots * vector_bytes(spec.dispatch_dtype, m.hidden);
  const uint64_t vectors_out = slots * vector_bytes(spec.combine_dtype, m.hidden);
  const hw::Precision precision = gemm_precision(spec.weight_dtype);
  if (spec.pass == LayerPass::backward) {
    // Memory: the weights, the gradients in, the intermediate gradients (bf16) between the two
    // GEMMs, the input gradients out. SwiGLU's own backward (elementwise) is not timed.
    const uint64_t intermediate = slots * m.moe_hidden * kActivationBytes;
    return ExpertGemms{hw::Task::gemm(phase, blocks(m.moe_hidden), block_flops(m.hidden), precision,
                                      down_weights + vectors_in + intermediate, 0),
                       hw::Task::gemm(phase, blocks(m.hidden), block_flops(2ull * m.moe_hidden), precision,
                                      up_weights + 2 * intermediate + vectors_out, 0, kernel)};
  }
  // Memory: the weights of the experts that have tokens, the tokens read (GEMM-1), the
  // outputs written (GEMM-2).
  return ExpertGemms{hw::Task::gemm(phase, blocks(2ull * m.moe_hidden), block_flops(m.hidden), precision,
                                    up_weights + vectors_in, 0),
                     hw::Task::gemm(phase, blocks(m.hidden), block_flops(m.moe_hidden), precision,
                                    down_weights + vectors_out, 0, kernel)};
}

namespace {

// The experts' tiles on one GPU: each expert's tokens padded to whole tiles.
struct PaddedTiles {
  uint64_t tile_rows = 0;
  uint32_t busy_experts = 0;
};

PaddedTiles padded_tiles(const MoeLayerSpec& spec, const std::vector<uint64_t>& tokens_per_local_expert) {
  const uint64_t tile = spec.software.tile_tokens;
  PaddedTiles tiles;
  for (uint64_t tokens : tokens_per_local_expert) {
    tiles.tile_rows += (tokens + tile - 1) / tile;
    tiles.busy_experts += tokens > 0;
  }
  return tiles;
}

}  // namespace

std::optional<WeightGradientGemms> weight_gradient_gemms(const MoeLayerSpec& spec, hw::PhaseId phase,
                                                         const std::vector<uint64_t>& tokens_per_local_expert,
                                                         bool persistent) {
  const PaddedTiles padded = padded_tiles(spec, tokens_per_local_expert);
  const uint64_t tile_rows = padded.tile_rows;
  const uint32_t busy_experts = padded.busy_experts;
  const uint64_t slots = std::accumulate(tokens_per_local_expert.begin(), tokens_per_local_expert.end(), uint64_t{0});
  if (spec.pass != LayerPass::backward || tile_rows == 0 || busy_experts == 0) return std::nullopt;
  if (spec.pure_communication) return WeightGradientGemms{hw::Task::delay(phase, 0.0), hw::Task::delay(phase, 0.0)};
  const MoeModel& m = spec.model;
  const uint64_t columns = spec.software.tile_columns;
  // A block is one output tile of one expert's weight gradient, as deep as that expert's padded
  // tokens; the blocks are given the experts' mean depth, which keeps the FLOPs exact.
  const double mean_depth = static_cast<double>(tile_rows * spec.software.tile_tokens) / busy_experts;
  auto tiles_of = [&](uint64_t rows, uint64_t cols) {
    return busy_experts * ((rows + columns - 1) / columns) * ((cols + columns - 1) / columns);
  };
  const double block_flops = 2.0 * static_cast<double>(columns * columns) * mean_depth;
  const hw::Precision precision = gemm_precision(spec.weight_dtype);
  // Memory: the output gradients and saved inputs each projection's gradient is the product of,
  // and its fp32 gradients accumulated.
  const uint64_t down_bytes = slots * (vector_bytes(spec.dispatch_dtype, m.hidden) + m.moe_hidden * kActivationBytes) +
                              kGradientAccumulationBytes * m.hidden * m.moe_hidden * busy_experts;
  const uint64_t gate_up_bytes = slots * (2ull * m.moe_hidden + m.hidden) * kActivationBytes +
                                 kGradientAccumulationBytes * 2ull * m.hidden * m.moe_hidden * busy_experts;
  WeightGradientGemms gradients{
      hw::Task::gemm(phase, tiles_of(m.hidden, m.moe_hidden), block_flops, precision, down_bytes, 0),
      hw::Task::gemm(phase, tiles_of(m.hidden, 2ull * m.moe_hidden), block_flops, precision, gate_up_bytes, 0)};
  gradients.down.persistent = gradients.gate_up.persistent = persistent;
  return gradients;
}

namespace {

// The experts' GEMMs over `tokens_per_local_expert`, each expert padded to whole tiles.
ExpertGemms padded_expert_gemms(const MoeLayerSpec& spec, hw::PhaseId phase,
                                const std::vector<uint64_t>& tokens_per_local_expert, uint64_t slots, uint32_t kernel) {
  const PaddedTiles tiles = padded_tiles(spec, tokens_per_local_expert);
  return expert_gemms(spec, phase, tiles.tile_rows, tiles.busy_experts, slots, kernel);
}

}  // namespace

void append_expert_gemms(const MoeLayerSpec& spec, hw::WorkSequence& seq, hw::PhaseId phase,
                         const std::vector<uint64_t>& tokens_per_local_expert, uint64_t slots, uint32_t kernel) {
  const PaddedTiles tiles = padded_tiles(spec, tokens_per_local_expert);
  const ExpertGemms gemms = expert_gemms(spec, phase, tiles.tile_rows, tiles.busy_experts, slots, kernel);
  const auto gradients = weight_gradient_gemms(spec, phase, tokens_per_local_expert, false);
  if (spec.pure_communication) {
    seq.tasks.push_back(gemms.gemm2);  // one delay of no time suffices
    return;
  }
  seq.tasks.push_back(gemms.gemm1);
  if (gradients) seq.tasks.push_back(gradients->down);
  seq.tasks.push_back(gemms.gemm2);
  if (gradients) seq.tasks.push_back(gradients->gate_up);
}

hw::Kernel expert_kernel(std::shared_ptr<const MoeLayerSpec> spec, const MoeBuffers& buffers,
                         std::shared_ptr<const std::vector<std::vector<uint64_t>>> received,
                         uint32_t gpu, std::vector<SlotRun> runs) {
  if (runs.empty()) runs.push_back(SlotRun{0, (*received)[gpu].size()});
  return [spec, buffers, received, gpu, runs](hw::MemoryAccess& memory) {
    const MoeRouting& routing = spec->routing;
    const std::vector<uint64_t>& slots = (*received)[gpu];
    const uint32_t per = routing.experts_per_gpu();
    const uint32_t first_expert = gpu * per;
    constexpr size_t kBytes = 2 * kLanes;
    std::vector<uint8_t> data;  // the received tokens, then the partials
    for (const SlotRun& run : runs) {
      const uint64_t count = run.end - run.begin;
      data.resize(count * kBytes);
      memory.read_strided(buffers.dispatch_rx + run.begin * buffers.dispatch_stride, buffers.dispatch_stride, count,
                          kBytes, data.data());
      for (uint64_t s = 0; s < count; ++s) {
        ExpertSum local;
        const uint16_t* experts = routing.experts_of(slots[run.begin + s]);
        for (uint32_t k = 0; k < routing.top_k; ++k) {
          if (experts[k] - first_expert < per) local.add(routing.weights_of_copy(experts[k]));  // the experts on this GPU
        }
        uint8_t* raw = data.data() + s * kBytes;
        pack_lanes(local.of(unpack_lanes(raw)), raw);
      }
      memory.write_strided(buffers.partial + run.begin * buffers.combine_stride, buffers.combine_stride, count, kBytes,
                           data.data());
    }
  };
}

// ---- The software all-to-all and the home's combine ----------------------------------------------

void append_software_cost(hw::WorkSequence& seq, hw::PhaseId phase, double ns) {
  if (ns > 0.0) seq.tasks.push_back(hw::Task::delay(phase, ns));
}

namespace {

// 16 bytes from `gpu` to every peer p (from tx + 16 x p, landing at rx + 16 x gpu), each counted
// on `counter` at p, then the wait for every peer's.
void append_peer_exchange(LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, hw::PhaseId phase, uint64_t tx,
                          uint64_t rx, uint32_t counter) {
  const uint32_t gpus = plan.spec->routing.gpus;
  for (uint32_t p = 0; p < gpus; ++p) {
    if (p == gpu) continue;
    seq.tasks.push_back(hw::Task::send(phase, p, tx + 16ull * p, rx + 16ull * gpu, 16, counter));
    plan.expected_link_arrivals[p]++;
  }
  seq.tasks.push_back(hw::Task::wait(phase, counter, gpus - 1));
}

}  // namespace

void append_count_exchange(LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, hw::PhaseId phase) {
  const SoftwareParams& software = plan.spec->software;
  append_peer_exchange(plan, seq, gpu, phase, plan.buffers.counts_tx, plan.buffers.counts_rx, kCountsCounter);
  const uint64_t copies = copies_of_home(plan, gpu);
  append_software_cost(seq, phase, software.count_exchange_ns + software.bookkeeping_ns_per_copy * static_cast<double>(copies));
}

void append_partials_barrier(LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, hw::PhaseId phase) {
  append_peer_exchange(plan, seq, gpu, phase, kBarrierBuffer, kBarrierBuffer, kBarrierCounter);
}

void append_write_chunk(LayerPlan& plan, hw::WorkSequence& seq, hw::PhaseId phase, uint32_t peer, uint64_t bytes,
                        uint32_t counter, std::vector<hw::WriteElement>& pending) {
  if (seq.elements.size() + pending.size() > std::numeric_limits<uint32_t>::max()) {
    throw std::length_error("more than 2^32 chunk elements in one sequence");
  }
  seq.tasks.push_back(hw::Task::send_chunk(phase, peer, static_cast<uint32_t>(seq.elements.size()),
                                           static_cast<uint16_t>(pending.size()), bytes, counter));
  seq.elements.insert(seq.elements.end(), pending.begin(), pending.end());
  plan.expected_link_arrivals[peer]++;
  pending.clear();
}

uint64_t flag_seen_after_ps(const SoftwareParams& software) {
  return static_cast<uint64_t>(std::llround((software.fence_ns + software.flag_poll_ns) * 1000.0));
}

namespace {

// The chunk of dispatch copies in `batch` to `peer` (emptied), with `flags` their readiness flags
// after it as one more message.
void append_dispatch_chunk(LayerPlan& plan, hw::WorkSequence& seq, hw::PhaseId phase, uint32_t peer, uint64_t bytes,
                           uint32_t counter, std::vector<hw::WriteElement>& batch, bool flags) {
  const MoeBuffers& b = plan.buffers;
  std::vector<hw::WriteElement> flag_writes;
  if (flags) {
    flag_writes.reserve(batch.size());
    for (const hw::WriteElement& data : batch) {
      const uint64_t slot = (data.target_address - b.dispatch_rx) / b.dispatch_stride;
      flag_writes.push_back(hw::WriteElement{kFlagSource, kDispatchFlags + hw::kCounterEntryBytes * slot});
    }
  }
  append_write_chunk(plan, seq, phase, peer, bytes, counter, batch);
  if (flags) append_write_chunk(plan, seq, phase, peer, kFlagBytes, kNotifyCounter, flag_writes);
}

}  // namespace

void append_software_dispatch(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& seq, uint32_t home,
                              TokenRange tokens, hw::PhaseId phase, uint32_t counter, bool flags,
                              ReceiveRings* rings) {
  const MoeLayerSpec& spec = *plan.spec;
  const MoeBuffers& b = plan.buffers;
  const uint32_t chunk = spec.software.chunk_tokens;
  const uint64_t token_bytes = vector_bytes(spec.dispatch_dtype, spec.model.hidden);
  const uint32_t gpus = spec.routing.gpus;
  // DeepEP's channels: each owns a contiguous share of the tokens and batches its own chunks per
  // destination; the channels run side by side, so their tokens leave interleaved.
  const uint64_t count = tokens.end - tokens.begin;
  const uint64_t channels = std::max<uint64_t>(1, std::min<uint64_t>(software_channels(spec.software), count));
  const uint64_t per_channel = count == 0 ? 0 : (count + channels - 1) / channels;
  std::vector<std::vector<hw::WriteElement>> pending(channels * gpus);  // [channel][destination]
  const uint64_t first_token = own_tokens(spec.routing, home).begin;
  for (uint64_t i = 0; i < per_channel; ++i) {
    for (uint64_t channel = 0; channel < channels; ++channel) {
      if (channel * per_channel + i >= count) continue;  // the last channel's share is shorter
      const uint64_t t = tokens.begin + channel * per_channel + i;
      const uint64_t source = b.input + (t - first_token) * b.dispatch_stride;
      for (uint64_t c = map.first[t]; c < map.first[t + 1]; ++c) {
        const uint32_t d = map.dest[c];
        const uint64_t target = b.dispatch_rx + map.slot[c] * b.dispatch_stride;
        if (d == home) {
          seq.tasks.push_back(hw::Task::local_copy(phase, source, target, token_bytes, counter));
          if (flags) {
            seq.tasks.push_back(hw::Task::local_copy(
                phase, kFlagSource, kDispatchFlags + hw::kCounterEntryBytes * map.slot[c], kFlagBytes, kNotifyCounter));
          }
          continue;
        }
        std::vector<hw::WriteElement>& batch = pending[channel * gpus + d];
        batch.push_back(hw::WriteElement{source, target});
        if (batch.size() < chunk) continue;
        if (rings != nullptr) {
          rings->append_chunk(seq, phase, home, static_cast<uint32_t>(channel), d, token_bytes, batch);
        } else {
          append_dispatch_chunk(plan, seq, phase, d, token_bytes, counter, batch, flags);
        }
      }
    }
  }
  for (uint64_t i = 0; i < pending.size(); ++i) {
    if (pending[i].empty()) continue;
    const auto peer = static_cast<uint32_t>(i % gpus);
    if (rings != nullptr) {
      rings->append_chunk(seq, phase, home, static_cast<uint32_t>(i / gpus), peer, token_bytes, pending[i]);
    } else {
      append_dispatch_chunk(plan, seq, phase, peer, token_bytes, counter, pending[i], flags);
    }
  }
}

PartialSender::PartialSender(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& seq, uint32_t gpu,
                             ReceiveRings* rings)
    : plan_(plan),
      map_(map),
      seq_(seq),
      gpu_(gpu),
      bytes_(vector_bytes(plan.spec->combine_dtype, plan.spec->model.hidden)),
      chunk_(plan.spec->software.chunk_tokens),
      rings_(rings) {}

void PartialSender::send(uint64_t slot) {
  const uint64_t token = (*map_.received)[gpu_][slot];
  const uint32_t home = plan_.spec->routing.home_of_token(token);
  const uint64_t source = plan_.buffers.partial + slot * plan_.buffers.combine_stride;
  const uint64_t target = combine_slot_address(plan_, home, copy_to(map_, token, gpu_));
  if (home == gpu_) {
    seq_.tasks.push_back(hw::Task::local_copy(kCombinePhase, source, target, bytes_, kCombineCounter));
    return;
  }
  const MoeRouting& routing = plan_.spec->routing;
  const uint32_t channel =
      rings_ == nullptr ? 0
                        : dispatch_channel(plan_.spec->software, routing.tokens_per_gpu, token % routing.tokens_per_gpu);
  if (home != home_ || channel != channel_) flush();  // a chunk goes to one home (and ring)
  home_ = home;
  channel_ = channel;
  pending_.push_back(hw::WriteElement{source, target});
  if (pending_.size() == chunk_) flush();
}

void PartialSender::flush() {
  if (pending_.empty()) return;
  if (rings_ != nullptr) {
    rings_->append_chunk(seq_, kCombinePhase, gpu_, channel_, home_, bytes_, pending_);
  } else {
    append_write_chunk(plan_, seq_, kCombinePhase, home_, bytes_, kCombineCounter, pending_);
  }
}

// The home GPU's sum of the partials of each local token into the output buffer.
hw::Task partial_sum_task(const MoeLayerSpec& spec, hw::PhaseId phase, uint64_t partials, const MoeBuffers& buffers,
                          uint32_t kernel) {
  if (spec.pure_communication) return hw::Task::delay(phase, 0.0, kernel);
  return hw::Task::compute(phase, 0.0, hw::Precision::bf16, partials * buffers.combine_stride, kernel);
}

hw::Kernel home_sum_kernel(const LayerPlan& plan, uint32_t gpu) {
  return [spec = plan.spec, buffers = plan.buffers, first = plan.copy_first, gpu](hw::MemoryAccess& memory) {
    const MoeRouting& routing = spec->routing;
    const uint64_t begin = static_cast<uint64_t>(gpu) * routing.tokens_per_gpu;
    const uint64_t end = begin + routing.tokens_per_gpu;
    const uint64_t base = (*first)[begin];
    constexpr size_t kBytes = 2 * kLanes;
    // This GPU's tokens' partials sit in combine_rx in copy order, so they are read at once.
    std::vector<uint8_t> partials(((*first)[end] - base) * kBytes);
    memory.read_strided(buffers.combine_rx, buffers.combine_stride, (*first)[end] - base, kBytes, partials.data());
    std::vector<uint8_t> outputs(routing.tokens_per_gpu * kBytes);
    for (uint64_t t = begin; t < end; ++t) {
      Lanes sum{};
      for (uint64_t c = (*first)[t]; c < (*first)[t + 1]; ++c) {
        const Lanes partial = unpack_lanes(partials.data() + (c - base) * kBytes);
        for (int l = 0; l < kLanes; ++l) sum[l] += partial[l];
      }
      pack_lanes(sum, outputs.data() + (t - begin) * kBytes);
    }
    memory.write_strided(buffers.output, buffers.combine_stride, routing.tokens_per_gpu, kBytes, outputs.data());
  };
}

void append_home_combine(LayerPlan& plan, hw::WorkSequence& seq, uint32_t home) {
  seq.tasks.push_back(hw::Task::wait(kCombinePhase, kCombineCounter, copies_of_home(plan, home)));
  append_home_sum(plan, seq, home);
}

void append_home_sum(LayerPlan& plan, hw::WorkSequence& seq, uint32_t home) {
  const uint64_t partials = copies_of_home(plan, home);
  append_software_cost(seq, kCombinePhase, plan.spec->software.sync_ns);
  seq.kernels.push_back(home_sum_kernel(plan, home));
  seq.tasks.push_back(partial_sum_task(*plan.spec, kCombinePhase, partials, plan.buffers,
                                       static_cast<uint32_t>(seq.kernels.size() - 1)));
}

}  // namespace nvsvp::fw::detail

namespace nvsvp::fw {

hw::Task grouped_expert_gemm(const SoftwareParams& software, ExpertGemm which, uint32_t groups, uint64_t m_per_group,
                             uint64_t n, uint64_t k) {
  constexpr uint64_t kMaxDimension = std::numeric_limits<uint32_t>::max();
  if (groups == 0 || m_per_group == 0 || n == 0 || k == 0 || n > kMaxDimension || k > kMaxDimension) {
    throw std::invalid_argument("grouped GEMM: every size must be between 1 and 2^32 - 1");
  }
  if (which == ExpertGemm::gemm1 && n % 2 != 0) {
    throw std::invalid_argument("grouped GEMM: GEMM-1's output width (2 x moe_hidden) must be even");
  }
  MoeLayerSpec spec;
  spec.software = software;
  // The model dimensions that give this GEMM its shape.
  spec.model.hidden = static_cast<uint32_t>(which == ExpertGemm::gemm1 ? k : n);
  spec.model.moe_hidden = static_cast<uint32_t>(which == ExpertGemm::gemm1 ? n / 2 : k);
  const std::vector<uint64_t> tokens(groups, m_per_group);
  const detail::ExpertGemms gemms =
      detail::padded_expert_gemms(spec, 0, tokens, groups * m_per_group, hw::Task::kNoKernel);
  return which == ExpertGemm::gemm1 ? gemms.gemm1 : gemms.gemm2;
}

}  // namespace nvsvp::fw
