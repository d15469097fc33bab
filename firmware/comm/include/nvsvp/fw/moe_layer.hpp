// Firmware for one MoE layer: turns the routing into per-GPU work sequences for a communication
// scheme, runs them through the HAL, and checks every token copy and every combine result.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/hw/bit_mask.hpp"
#include "nvsvp/hw/dynamic_multicast.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

// The layer's buffers, at the same addresses in every GPU.
struct MoeBuffers {
  uint64_t dispatch_stride = 0;  // one token vector in the dispatch format, 16-byte aligned
  uint64_t combine_stride = 0;   // one output vector in the combine format, 16-byte aligned
  uint64_t input = 0x0100'0000'0000;       // [local token]
  uint64_t dispatch_rx = 0x0200'0000'0000; // [slot]: tokens received for local experts
  uint64_t partial = 0x0300'0000'0000;     // [slot]: sum of the local experts' outputs
  uint64_t combine_rx = 0x0400'0000'0000;  // [copy of a local token]: its partial from that copy's GPU
  uint64_t output = 0x0500'0000'0000;      // [local token]
  uint64_t counts_tx = 0x0600'0000'0000;   // [peer]: 16 bytes, tokens sent to that peer
  uint64_t counts_rx = 0x0700'0000'0000;   // [peer]: 16 bytes, tokens that peer sends here
};

// A multicast group a scheme needs: firmware creates it at bring-up (MulticastAllocator), before
// the layer runs, with every GPU as a member.
struct MulticastGroupRequest {
  uint64_t base = 0;        // multimem address, 2 MiB aligned
  uint64_t size = 0;        // 2 MiB multiple
  uint64_t local_base = 0;  // where the range lands in every member
  hw::GpuMask members;      // bit g: GPU g
};

// A dynamic multicast object a scheme needs: bound in every GPU's Hub before the layer runs,
// its blocks packed at `local_base` in every GPU.
struct DynamicObjectRequest {
  hw::DynamicMulticastBinding binding;
  uint64_t local_base = 0;
};

// Arrival counters every scheme uses.
enum MoeCounter : uint32_t { kCountsCounter = 0, kDispatchCounter = 1, kCombineCounter = 2, kMoeCounters };

struct LayerPlan {
  std::string scheme;
  std::shared_ptr<const MoeLayerSpec> spec;
  MoeBuffers buffers;
  // received[gpu][slot]: the global token in that GPU's dispatch slot.
  std::shared_ptr<const std::vector<std::vector<uint64_t>>> received;
  // The copies of token t are copy_first[t] .. copy_first[t + 1] - 1, going to copy_dest[c]
  // (ascending). A home GPU numbers the copies of its tokens from 0 in its combine_rx.
  std::shared_ptr<const std::vector<uint64_t>> copy_first;
  std::shared_ptr<const std::vector<uint32_t>> copy_dest;
  std::vector<uint64_t> expected_link_arrivals;  // per GPU: messages its links must deliver
  uint64_t token_copies = 0;         // (token, destination GPU) pairs, local ones included
  uint64_t remote_token_copies = 0;  // of which cross the fabric
  std::vector<hw::WorkSequence> sequences;  // per GPU; moved out by run_layer
  // Overlapped schedules: per GPU, the sequences of its other executor streams (each with its
  // `stream` set), running concurrently with `sequences`; empty when the scheme uses one stream.
  std::vector<std::vector<hw::WorkSequence>> extra_sequences;
  // Fused schedules with notifications (notify_tokens): per GPU, the notifications its links
  // must deliver (their messages are not in expected_link_arrivals).
  std::vector<uint64_t> expected_notifications;
  // Static multimem schemes (nvls): the groups to create before the layer runs.
  std::vector<MulticastGroupRequest> multicast_groups;
  // The combine result of each token lands in its home's output in one piece (a switch
  // reduction), not as partials in combine_rx: verify checks that the output was written exactly
  // once instead of each partial's slot.
  bool combine_reduced_in_switch = false;
  // Dynamic multimem schemes (dysharp-basic, explicit-addressing): the dispatch and combine
  // objects (one mapping), and where each (token, expert) block lands. A token's copy for GPU d
  // is written once per local expert of d, into that expert's region of dispatch_rx; `received`
  // is then unused.
  std::vector<DynamicObjectRequest> dynamic_objects;
  bool dispatch_per_expert = false;
  // deepep's receive rings (software.recv_queue_tokens per channel and source): slots per GPU
  // of each phase's rings (0: none), declared to memory like the other buffers.
  uint64_t receive_ring_slots = 0;
  // Explicit addressing: the layout index of the i-th (token, expert) pair of the routing
  // (token-major, experts in routing order) in its expert's GPU; empty when the Hubs allocate.
  std::shared_ptr<const std::vector<uint32_t>> explicit_layout;
  // Per-expert row layouts (tutel, fastermoe): regions of rows (one of `stride` bytes each) that
  // must each have been written exactly as often as `writes[gpu][row]` says (0 or 1).
  struct RowRegion {
    uint64_t base = 0;
    uint64_t stride = 0;
    std::vector<std::vector<uint8_t>> writes;  // [gpu][row]
  };
  std::vector<RowRegion> row_regions;
  // Padding rows' bytes that cross the fabric (tutel's capacity padding), each direction (a row
  // leaves one GPU and enters another): real bytes on the wire, but not payload.
  uint64_t padding_wire_bytes = 0;
  // Figures of the scheme's plan for report.json ("plan" of the scheme's result): name, value.
  std::vector<std::pair<std::string, double>> figures;
  // The scheme's fixed software costs (count exchange, barriers, kernel boundaries: the
  // software.*_ns delays), per phase (PhaseId): the most one executor stream of a GPU spends in
  // them. Set by build_layer.
  std::vector<double> software_delay_ns;
};

struct MoeCheckResult {
  uint64_t token_copies_expected = 0;
  uint64_t token_copies_delivered = 0;
  uint64_t remote_token_copies = 0;
  uint64_t tokens_checked = 0;
  uint64_t combine_errors = 0;
  uint64_t receive_count_errors = 0;
  uint64_t notifications_expected = 0;
  uint64_t notifications_delivered = 0;
  std::vector<std::string> violations;  // the first ones, each naming token and GPU
  bool passed() const {
    return token_copies_delivered == token_copies_expected && combine_errors == 0 &&
           receive_count_errors == 0 && notifications_delivered == notifications_expected;
  }
};

// Builds the plan of `scheme` for the layer (the plan its registry entry names: a scheme may run
// another's, scheme_registry.hpp). Throws std::invalid_argument for an unknown scheme.
LayerPlan build_layer(const std::string& scheme, std::shared_ptr<const MoeLayerSpec> spec);

// The experts' two grouped GEMMs: GEMM-1 (gate and up: N = 2 x moe_hidden output columns, depth
// K = hidden) and GEMM-2 (down: N = hidden, K = moe_hidden).
enum class ExpertGemm { gemm1, gemm2 };
// One grouped fp8 GEMM of `groups` experts of `m_per_group` tokens each, output width `n`, depth
// `k`, as the task the schemes run for their expert GEMMs (each group padded to whole tiles of
// software.tile_tokens x tile_columns; its weights, inputs and outputs as the HBM floor): the GEMM
// anchors time it alone. Throws std::invalid_argument for a zero size, a GEMM-1 of odd `n` or a
// dimension over 2^32.
hw::Task grouped_expert_gemm(const SoftwareParams& software, ExpertGemm which, uint32_t groups, uint64_t m_per_group,
                             uint64_t n, uint64_t k);

// Declares the layer's buffers to every GPU's memory and loads every token's input vector into
// its home GPU (what the previous layer left there).
void load_inputs(Hal& hal, const LayerPlan& plan);

// Binds the plan's dynamic multicast objects in every GPU's Hub and tells every switch chip where
// experts live (DYN_EXPERTS_PER_GPU). Nothing for a plan without dynamic objects.
void install_dynamic_objects(Hal& hal, const LayerPlan& plan);

// What firmware does when a switch chip interrupts while a layer runs: typically
// [&] { fabric.service_interrupts(); } (SwitchFabric, switch_bringup.hpp).
using InterruptService = std::function<void()>;

// Submits every GPU's sequences (moved out of the plan) without waiting: partitions each submit
// their layer, then one wait covers them all, so that they start together.
void submit_layer(Hal& hal, LayerPlan& plan);

// Submits every GPU's sequence and waits until all have finished. With `service`, the wait is the
// runtime service loop (wait_servicing_interrupts): interrupts raised while the layer runs are
// serviced as they come. Without, interrupts wait until the caller services them.
void run_layer(Hal& hal, LayerPlan& plan, const InterruptService& service = {});

// The runtime service loop: waits until every GPU has run its work, calling `service` whenever a
// switch chip's interrupt line is high (first, when one is high and the work is done too). Throws
// std::runtime_error when a line stays high over kMaxServicesWithoutProgress services in a row at
// the same simulated time (a service that cannot clear it), rather than spinning for ever.
void wait_servicing_interrupts(Hal& hal, const InterruptService& service);
constexpr uint32_t kMaxServicesWithoutProgress = 1000;

// Checks that every token copy reached its destination exactly once with the right data, that
// every GPU received exactly the messages the plan implies, and that every combine result equals
// the reference computed directly from the routing.
MoeCheckResult verify_layer(Hal& hal, const LayerPlan& plan, size_t max_violations = 20);

}  // namespace nvsvp::fw
