// What firmware knows of an MoE layer: the model shape, the wire formats and the routing the gate
// decided. Plain data; SystemC-free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/hw/params.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

enum class DataType : uint8_t { fp8, bf16, fp32 };

const char* to_string(DataType type);
bool parse_data_type(const std::string& text, DataType& type);

// Bytes of one hidden vector on the wire. fp8 carries one 4-byte scale per 128 values
// (DeepSeek-V3 practice).
uint64_t vector_bytes(DataType type, uint32_t hidden);

// The format of the experts' weights (routed and shared), and so of their GEMMs.
enum class WeightDtype : uint8_t { fp8, fp4, bf16 };

const char* to_string(WeightDtype type);
bool parse_weight_dtype(const std::string& text, WeightDtype& type);

// HBM bytes of `parameters` weights: fp4 (NVFP4) is 4 bits a value plus one fp8 scale per 16
// values (0.5625 bytes), fp8 one byte (its per-block scales left out, as before fp4 came), bf16 two.
uint64_t weight_bytes(WeightDtype type, uint64_t parameters);

// Bytes of one bf16 activation value: the vectors between a layer's parts and the saved
// activations a backward pass reads.
inline constexpr uint64_t kActivationBytes = 2;
// Bytes moved per parameter when a weight gradient is accumulated: its fp32 gradient read and
// written (assumed: gradients accumulate in fp32 across micro batches, as mixed-precision training
// keeps them).
inline constexpr uint64_t kGradientAccumulationBytes = 8;

// The GEMM precision weights of `type` run at: fp4 weights make an NVFP4 GEMM (the activations
// quantized to fp4 too, as TensorRT-LLM's NVFP4 MoE does), fp8 an fp8 GEMM, bf16 a bf16 GEMM.
hw::Precision gemm_precision(WeightDtype type);

// A layer's attention: multi-head with grouped key/value heads (`mha`), or DeepSeek-V3's
// multi-head latent attention (`mla`: queries and keys/values through low-rank projections).
// Empty kind: not given (a model that only names its MoE layer).
struct AttentionShape {
  std::string kind;
  uint32_t head_dim = 0;          // mha: per head; 0 means hidden / heads
  uint32_t kv_heads = 0;          // mha: key/value heads; 0 means heads (no grouping)
  uint32_t q_lora_rank = 0;       // mla: the queries' low-rank dimension
  uint32_t kv_lora_rank = 0;      // mla: the keys' and values' compressed dimension
  uint32_t qk_nope_head_dim = 0;  // mla: per head, the query/key part without rotary embedding
  uint32_t qk_rope_head_dim = 0;  // mla: per head, the rotary part (shared by the heads for keys)
  uint32_t v_head_dim = 0;        // mla: per head, the values
};

struct MoeModel {
  std::string name;
  uint32_t hidden = 0;
  uint32_t moe_hidden = 0;
  uint32_t heads = 0;
  uint32_t sequence_length = 0;
  uint32_t experts = 0;
  uint32_t top_k = 0;  // the model's default
  uint32_t shared_experts = 0;  // experts every token goes through on its home GPU (no routing)
  // The model around its MoE layers, for a step of the whole model (0: not given): its
  // transformer layers, the first `dense_layers` of them with a dense FFN of `dense_hidden`
  // instead of experts, and the vocabulary of its output head.
  uint32_t layers = 0;
  uint32_t dense_layers = 0;
  uint32_t dense_hidden = 0;
  uint32_t vocab = 0;
  AttentionShape attention;

  // Multiply-adds of one token through one expert (GEMM-1 gate+up, GEMM-2 down), as FLOPs.
  double expert_flops_per_token() const { return 6.0 * hidden * moe_hidden; }
};

// The gate's decisions: for every token, top_k distinct experts. Tokens are numbered globally,
// token = home_gpu * tokens_per_gpu + local index; experts are placed contiguously,
// expert e lives on GPU e / (experts / gpus).
struct MoeRouting {
  uint32_t gpus = 0;
  uint32_t experts = 0;
  uint32_t top_k = 0;
  uint32_t tokens_per_gpu = 0;
  std::vector<uint16_t> expert_ids;  // [token * top_k + k]
  // With hot-expert replication (expert_replication.hpp) the IDs above name expert copies, and
  // copy c computes with the weights of expert weights_of[c]; empty: every ID is its own expert.
  std::vector<uint16_t> weights_of;

  uint64_t tokens() const { return static_cast<uint64_t>(gpus) * tokens_per_gpu; }
  uint32_t experts_per_gpu() const { return experts / gpus; }
  uint32_t gpu_of_expert(uint32_t expert) const { return expert / experts_per_gpu(); }
  uint32_t home_of_token(uint64_t token) const { return static_cast<uint32_t>(token / tokens_per_gpu); }
  const uint16_t* experts_of(uint64_t token) const { return &expert_ids[token * top_k]; }
  uint32_t weights_of_copy(uint32_t expert) const { return weights_of.empty() ? expert : weights_of[expert]; }
};

// The GPUs holding at least one of `token`'s experts, ascending, each once (one copy each).
void destination_gpus(const MoeRouting& routing, uint64_t token, std::vector<uint32_t>& out);

// How the software all-to-all libraries (DeepEP class) move tokens. Parameters of the firmware,
// read from the scenario's `software` section.
struct SoftwareParams {
  // Tokens a sender batches per destination before publishing them (one message on the links).
  // DeepEP's recommended intranode configuration uses 6 (num_max_nvl_chunked_send_tokens).
  uint32_t chunk_tokens = 6;
  // The expert GEMMs' tiling: a thread block computes tile_tokens rows (tokens) by tile_columns
  // output columns; each expert's tokens are padded to whole tiles. 128 x 128 is the study's tile
  // (docs/background/token_centric_fusion.md#the-fused-pipeline) and a common Hopper fp8 GEMM tile.
  uint32_t tile_tokens = 128;
  uint32_t tile_columns = 128;
  // The SMs of the software all-to-all's kernels: DeepEP's default for its normal kernels
  // (Buffer.num_sms = 20), half of them sending, one per channel (software_channels below);
  // overlapped schedules keep them while GEMMs run.
  uint32_t comm_sms = 20;
  // The NCCL all-to-all of `tutel` and `fastermoe` (docs/background/baselines.md): its channels,
  // one SM each, issuing its stores (the calibrated all-to-all's 32, CollectiveSpec::channels,
  // docs/calibration.md#nccls-collectives); they keep their SMs while the experts compute.
  uint32_t nccl_channels = 32;
  // Tutel's pipelining degree (a2a_ffn_overlap_degree): the all-to-all and the experts cut into
  // this many chunks of the capacity; 0: Tutel's adaptive choice, every degree of 1, 2, 4, 8 tried
  // and the fastest kept (the platform simulates each, docs/decisions.md).
  uint32_t tutel_degree = 0;
  // FasterMoE's pipeline granularity (`fastermoe`): GPUs per group of its smart schedule, whose
  // steps exchange with one group at a time. FastMoE's default (FMOE_FASTER_GROUP_SIZE unset: 4,
  // the smart_schedule source of github laekov/fastmoe); capped at the GPUs.
  uint32_t fastermoe_group_size = 4;
  // Software costs of the software all-to-all (deepep and the schemes on its all-to-all; tutel and fastermoe), on top of the traffic
  // they cause (the count exchange's messages are simulated): turning the exchanged token counts
  // into receive offsets (assumed: one small kernel, 5 us), the barrier that ends dispatch and
  // combine (assumed: a kernel boundary with a cross-GPU flag, 5 us each), and per token copy the
  // sender's index and metadata work (0 by default: not measured; a knob for studies).
  double count_exchange_ns = 5000.0;
  double sync_ns = 5000.0;
  double bookkeeping_ns_per_copy = 0.0;
  // Token-centric fusion
  // (docs/background/token_centric_fusion.md#one-persistent-kernel-four-sm-groups): the SM groups
  // of the one persistent kernel (assumed: the communication groups as DeepEP's 20 SMs split in
  // two; the GEMM groups share the rest in proportion to their work, GEMM-1 doing twice GEMM-2's
  // FLOPs).
  uint32_t fusion_dispatch_sms = 10;
  uint32_t fusion_gemm1_sms = 75;
  uint32_t fusion_gemm2_sms = 37;
  uint32_t fusion_combine_sms = 10;
  // The fused kernel's GEMM-1 and GEMM-2 groups lend each other their SMs while one has no ready
  // tile: the SMs of one persistent kernel take whatever tile is ready
  // (docs/background/token_centric_fusion.md#one-persistent-kernel-four-sm-groups). false: each
  // group keeps its SMs.
  bool fusion_sm_lending = true;
  // A software token-centric kernel's readiness flags (fusion-only, comet), without the hardware
  // tile tracker (docs/background/token_centric_fusion.md#software-readiness-flags): the fixed
  // cost of the system-scope fence between a copy's data and its flag, beyond the data's delivery
  // (assumed: no public figure for fence.sc.sys on Hopper; the acknowledgement's way back, two
  // 250-ns hops), and the delay until a polling SM group sees a flag that landed (assumed: about
  // one local memory round trip).
  double fence_ns = 500.0;
  double flag_poll_ns = 300.0;
  // DeepEP's receive rings (deepep): tokens each (channel, source rank) ring of a receiver holds
  // (num_max_nvl_chunked_recv_tokens, 256 in DeepEP's intranode configurations); a sender waits
  // while its chunk would not fit behind what the receiver has not yet copied out. 0: no rings
  // (the copies land in the packed buffers directly), the default until the tests that pin
  // deepep's plan and traffic follow (issue 19).
  uint32_t recv_queue_tokens = 0;

  template <class Visitor>
  void visit(Visitor& v) {
    v("chunk_tokens", chunk_tokens,
      "tokens batched per destination into one message (DeepEP: num_max_nvl_chunked_send_tokens); "
      "1 sends every token copy as its own message",
      hw::between(1, 64));
    v("tile_tokens", tile_tokens, "rows (tokens) of one expert GEMM thread block; experts pad to whole tiles",
      hw::between(1, 65536));
    v("tile_columns", tile_columns, "output columns of one expert GEMM thread block", hw::between(1, 65536));
    v("comm_sms", comm_sms,
      "SMs of the software all-to-all's kernels: half send (one per channel, each issuing stores at "
      "gpu.sm_store_gbps), half receive; overlapped schedules keep them while GEMMs run; 0: a copy engine",
      hw::between(0, 65535));
    v("nccl_channels", nccl_channels,
      "tutel and fastermoe: NCCL all-to-all channels, one SM each issuing stores at gpu.sm_store_gbps; "
      "they keep their SMs while the experts compute",
      hw::between(1, 65535));
    v("tutel_degree", tutel_degree,
      "tutel: pipelining degree (chunks of the capacity); 0 tries 1, 2, 4 and 8 and keeps the fastest",
      hw::between(0, 64));
    v("fastermoe_group_size", fastermoe_group_size,
      "fastermoe: GPUs per group of the smart schedule (FastMoE's FMOE_FASTER_GROUP_SIZE, 4); each step "
      "exchanges with one group",
      hw::between(1, 1024));
    v("count_exchange_ns", count_exchange_ns,
      "software all-to-all: time to turn the exchanged token counts into offsets before dispatch, ns",
      hw::between(0.0, 1e9));
    v("sync_ns", sync_ns, "software all-to-all: the barrier that ends dispatch and combine, ns each",
      hw::between(0.0, 1e9));
    v("bookkeeping_ns_per_copy", bookkeeping_ns_per_copy,
      "software all-to-all: the sender's index and metadata work per token copy, ns", hw::between(0.0, 1e6));
    v("fusion_dispatch_sms", fusion_dispatch_sms, "fused kernel: SMs of the dispatch group", hw::between(1, 65535));
    v("fusion_gemm1_sms", fusion_gemm1_sms, "fused kernel: SMs of the GEMM-1 group", hw::between(1, 65535));
    v("fusion_gemm2_sms", fusion_gemm2_sms, "fused kernel: SMs of the GEMM-2 group", hw::between(1, 65535));
    v("fusion_combine_sms", fusion_combine_sms, "fused kernel: SMs of the combine group", hw::between(1, 65535));
    v("fusion_sm_lending", fusion_sm_lending,
      "fused kernel: the GEMM-1 and GEMM-2 groups lend each other their SMs while one has no ready tile", hw::Range{});
    v("fence_ns", fence_ns,
      "software token-centric kernels (fusion-only, comet): fixed cost of the fence between a copy's data and its "
      "readiness flag, beyond the data's delivery, ns",
      hw::between(0.0, 1e6));
    v("flag_poll_ns", flag_poll_ns,
      "software token-centric kernels: delay until a polling SM group sees a readiness flag that landed, ns",
      hw::between(0.0, 1e6));
    v("recv_queue_tokens", recv_queue_tokens,
      "deepep: tokens of each (channel, source) receive ring (DeepEP: num_max_nvl_chunked_recv_tokens, 256); "
      "at least chunk_tokens (else exit 2); 0: no rings",
      hw::between(0, 1u << 24));
  }
};

// DeepEP's intranode kernels split their SMs in two halves, a sending and a receiving SM per
// channel: the channels of the software all-to-all, and the SMs that issue its stores (0 when
// comm_sms is 0: a copy engine, unlimited by SM issue).
inline uint32_t software_channels(const SoftwareParams& software) { return std::max(1u, software.comm_sms / 2); }
inline uint16_t software_sender_sms(const SoftwareParams& software) {
  return static_cast<uint16_t>(std::min<uint32_t>(software.comm_sms / 2, 0xFFFF));
}

// Which pass of the layer a plan runs. The backward pass moves and computes the gradients
// (docs/firmware.md#the-backward-pass): its dispatch carries each token's output gradient from its
// home to its experts (the gradient of the combine), the experts compute their data gradients in
// reverse order (down projection first, then gate and up) and their weight gradients, and its
// combine sums each token's input gradients at home (the gradient of the dispatch). Every scheme
// builds both passes with the same planner: what is fused, multicast or reduced in the switch
// forward is so backward too.
enum class LayerPass : uint8_t { forward, backward };

const char* to_string(LayerPass pass);
bool parse_layer_pass(const std::string& text, LayerPass& pass);

struct ReplicationDecision;  // replication_phase.hpp

struct MoeLayerSpec {
  SoftwareParams software;
  MoeModel model;
  uint32_t top_k = 0;
  uint32_t tokens_per_gpu = 0;
  LayerPass pass = LayerPass::forward;
  DataType dispatch_dtype = DataType::fp8;   // on the wire home -> experts (backward: output gradients)
  DataType combine_dtype = DataType::bf16;   // on the wire experts -> home (backward: input gradients)
  WeightDtype weight_dtype = WeightDtype::fp8;  // the routed and shared experts' weights
  MoeRouting routing;
  bool pure_communication = false;  // compute tasks take no time (their kernels still run)
  uint32_t gpu_sms = 132;            // the GPUs' SMs (device properties firmware may query)
  uint32_t shared_experts = 0;       // computed on every GPU before the dispatch (replication_phase.hpp)
  // Hot-expert replication: what was decided; `routing` is then over expert copies. Null: none.
  std::shared_ptr<const ReplicationDecision> replication;
};

}  // namespace nvsvp::fw
