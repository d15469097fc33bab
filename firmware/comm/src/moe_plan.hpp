// Internal to firmware: the pieces every MoE scheme builder shares (defined in moe_planning.cpp)
// and the builders the scheme registry (scheme_registry.cpp) names.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_layer.hpp"

namespace nvsvp::fw::detail {

// ---- The plan: buffers, where every token copy goes, the sequences --------------------------------

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
// [source]: the first slot of the copies from `source` in GPU `gpu`'s dispatch_rx.
std::vector<uint64_t> first_slot_of_source(const DispatchMap& map, uint32_t gpu);

MoeBuffers make_buffers(const MoeLayerSpec& spec);

// The plan every builder starts from: its buffers, the copy lists and counts of `map`, one empty
// sequence and no expected arrivals per GPU.
LayerPlan start_plan(const std::string& scheme, std::shared_ptr<const MoeLayerSpec> spec, const DispatchMap& map);

// Tokens by global index, [begin, end); own_tokens: GPU `gpu`'s own (it is their home).
struct TokenRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};
TokenRange own_tokens(const MoeRouting& routing, uint32_t gpu);

// The copy of `token` that goes to GPU `gpu` (the token must have one there).
uint64_t copy_to(const DispatchMap& map, uint64_t token, uint32_t gpu);
// The copies of GPU `home`'s tokens: the partials its combine sums.
uint64_t copies_of_home(const LayerPlan& plan, uint32_t home);
// Where the partial of copy `copy` (of a token whose home is `home`) lands in the home GPU.
uint64_t combine_slot_address(const LayerPlan& plan, uint32_t home, uint64_t copy);
// copies[source][destination]: the token copies `source` sends to `destination` (from the plan's
// copy lists): what the count exchange tells each peer, and what the check expects it to read.
std::vector<std::vector<uint64_t>> copies_between(const LayerPlan& plan);

// The phases every MoE scheme reports, in PhaseId order; the last two belong to the replication
// phase before the layer (replication_phase.hpp).
const std::vector<std::string>& moe_phase_names();
enum MoePhase : hw::PhaseId { kDispatchPhase, kExpertsPhase, kCombinePhase, kSharedExpertPhase, kBroadcastPhase };

// GPU `gpu`'s sequence (plan.sequences), with the MoE phases and `counters` arrival counters.
hw::WorkSequence& start_sequence(LayerPlan& plan, uint32_t gpu, uint32_t counters);

// ---- The experts ---------------------------------------------------------------------------------

// Tokens routed to each expert, and the slice of GPU `gpu`'s experts.
std::vector<uint64_t> tokens_per_expert(const MoeRouting& routing);
std::vector<uint64_t> local_slice(const MoeRouting& routing, const std::vector<uint64_t>& per_expert, uint32_t gpu);

// The two grouped GEMMs of the experts' chain from their input vectors to their output vectors,
// over `tile_rows` tiles of software.tile_tokens rows of `busy_experts` experts, `slots` token
// vectors in and out; the kernel runs when the second ends. Forward: GEMM-1 hidden -> 2 x
// moe_hidden (gate and up), GEMM-2 moe_hidden -> hidden (down). Backward, the data gradients in
// reverse: the first hidden -> moe_hidden (through the down projection), the second 2 x moe_hidden
// -> hidden (through gate and up). Delays of no time with pure_communication.
struct ExpertGemms {
  hw::Task gemm1;
  hw::Task gemm2;
};
ExpertGemms expert_gemms(const MoeLayerSpec& spec, hw::PhaseId phase, uint64_t tile_rows, uint32_t busy_experts,
                         uint64_t slots, uint32_t kernel);
// The output columns of the chain's first GEMM (the thread blocks a tile of it makes).
uint64_t first_gemm_columns(const MoeLayerSpec& spec);

// A backward pass's weight gradients over the experts' tokens (`tokens_per_local_expert`, each
// padded to whole tiles): per projection one grouped GEMM over all of its tokens at once (thread
// blocks over the weight's output tiles, each as deep as the experts' mean padded tokens), reading
// the saved activations and the output gradients and accumulating into fp32 gradients. The down
// projection's can run once its data gradient ran, gate and up's once theirs did. `persistent` as
// the data gradients they follow. None in a forward pass; delays of no time with pure_communication.
struct WeightGradientGemms {
  hw::Task down;
  hw::Task gate_up;
};
std::optional<WeightGradientGemms> weight_gradient_gemms(const MoeLayerSpec& spec, hw::PhaseId phase,
                                                         const std::vector<uint64_t>& tokens_per_local_expert,
                                                         bool persistent);

// The local experts' work on one GPU as the two grouped GEMMs above (precision and weight bytes
// of spec.weight_dtype), each expert's tokens (`tokens_per_local_expert`) padded to whole tiles of
// software.tile_tokens x tile_columns thread blocks; `slots` token vectors are read and as many
// outputs written. `kernel` (the functional effect) runs when the second GEMM ends. Backward, each
// projection's weight gradient follows its data gradient, as autograd computes both before the
// layer's gradient moves on.
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

// ---- The software all-to-all and the home's combine ----------------------------------------------

// A software cost (software.count_exchange_ns and the like): a delay of `ns`, none when 0.
void append_software_cost(hw::WorkSequence& seq, hw::PhaseId phase, double ns);

// The software all-to-all's token-count exchange on GPU `gpu`: 16 bytes to every peer, the wait
// for every peer's, then the time to turn them into offsets (software.count_exchange_ns, plus
// bookkeeping_ns_per_copy for each copy of the GPU's tokens).
void append_count_exchange(LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, hw::PhaseId phase);

// Schemes whose combine reads partials on other GPUs wait until every GPU has written its own:
// each GPU writes 16 bytes to every other (kBarrierBuffer) and waits for the others' writes on
// kBarrierCounter (the sequence needs kBarrierCounter + 1 counters).
constexpr uint64_t kBarrierBuffer = 0x0800'0000'0000;  // [peer]: 16 bytes, "partials written"
constexpr uint32_t kBarrierCounter = kMoeCounters;
void append_partials_barrier(LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, hw::PhaseId phase);

// Appends the writes in `pending` (to `peer`, `bytes` each) as one chunk message (a software
// all-to-all sender's batch) and empties it; counts the message in the peer's expected arrivals.
void append_write_chunk(LayerPlan& plan, hw::WorkSequence& seq, hw::PhaseId phase, uint32_t peer, uint64_t bytes,
                        uint32_t counter, std::vector<hw::WriteElement>& pending);

// Software readiness flags (`fusion-only`, `comet`: a software token-centric kernel without the
// hardware tables, docs/background/token_centric_fusion.md#software-readiness-flags): after a
// token copy's data, a fence and one kFlagBytes write per copy where the receiver polls, counted
// on kNotifyCounter there: kDispatchFlags + 16 x slot at dispatch, the home's kReadinessTable +
// 16 x local token at combine. A data chunk's flags travel as one chunk message right after it.
constexpr uint64_t kFlagBytes = 4;
constexpr uint64_t kDispatchFlags = 0x0E00'0000'0000;
constexpr uint64_t kFlagSource = 0x0F00'0000'0000;  // what a flag carries (never written)
// When a polling reader sees a flag after it landed: the fence's fixed cost (the sender's flag
// goes out once its data is delivered; the receiver's entry also counts the data's landing, the
// delivery the fence waits for) and the poll (software.fence_ns + software.flag_poll_ns).
uint64_t flag_seen_after_ps(const SoftwareParams& software);

// DeepEP's receive rings (receive_rings.cpp): per receiver, channel and source a ring of
// software.recv_queue_tokens token slots at `ring_base` (+ stride per slot). append_chunk puts a
// sender's chunk (`batch`: its writes' sources and final targets, emptied) into the ring behind
// its tail, first waiting, while it would not fit, for the heads the receiver sends back (on the
// sender's counters); append_copy_out gives the receiver's SMs one take_ready over its chunks,
// each copied out of the ring to its final targets (counted on `final_counter`) in ring order,
// and every quarter ring the head back to the sender. Counters from `first_counter` to end_counter().
class ReceiveRings {
 public:
  ReceiveRings(LayerPlan& plan, uint64_t ring_base, uint64_t stride, uint32_t final_counter, uint32_t first_counter);
  void append_chunk(hw::WorkSequence& seq, hw::PhaseId phase, uint32_t sender, uint32_t channel, uint32_t peer,
                    uint64_t bytes, std::vector<hw::WriteElement>& batch);
  void append_copy_out(hw::WorkSequence& receiver, uint32_t gpu, hw::PhaseId phase, uint64_t bytes);
  uint32_t end_counter() const;
  uint64_t slots() const;  // of one GPU's rings

 private:
  static constexpr size_t kNoChunk = ~size_t{0};
  static constexpr uint32_t kNoCounter = ~0u;
  struct Chunk {
    uint32_t sender;
    uint32_t channel;
    uint32_t counter;       // at the receiver: the chunk's writes (and the previous chunk's copy-out)
    uint32_t next_counter;  // the ring's next chunk's
    size_t first_copy;      // in copies_[receiver]
    uint32_t tokens;
    bool after_previous;
    bool head;  // its copy-out sends the ring's head back
  };
  struct Ring {  // one (sender, channel, receiver)
    uint64_t tail = 0;
    std::vector<uint64_t> ends;  // tokens written after each chunk
    uint64_t waited = 0;         // heads the sender has waited for
    size_t last_chunk = kNoChunk;
  };
  LayerPlan& plan_;
  uint32_t gpus_;
  uint32_t channels_;
  uint32_t ring_tokens_;
  uint32_t head_every_ = 1;  // chunks of a ring per head sent back
  uint64_t ring_base_;
  uint64_t stride_;
  uint32_t final_counter_;
  uint32_t pad_counter_;  // a ring's last copy-out signals here; nothing waits on it
  uint32_t first_head_counter_;  // at a sender: + channel x GPUs + receiver
  std::vector<std::vector<Chunk>> chunks_;             // [receiver]
  std::vector<std::vector<hw::WriteElement>> copies_;  // [receiver]: ring slot -> final target
  std::vector<Ring> rings_;                            // [(sender x channels + channel) x GPUs + receiver]
  std::vector<uint32_t> next_counter_;                 // [receiver]
};
constexpr uint64_t kDispatchRings = 0x1100'0000'0000;
constexpr uint64_t kCombineRings = 0x1200'0000'0000;
// The channel of the index-th of a GPU's `tokens` tokens in the software dispatch (contiguous
// shares); the combine returns each partial on its token's channel.
uint32_t dispatch_channel(const SoftwareParams& software, uint64_t tokens, uint64_t index);

// Software all-to-all dispatch of GPU `home`'s tokens `tokens` (deepep's order): in token order,
// one copy per destination GPU into its dispatch_rx slot, a destination's chunk of
// software.chunk_tokens leaving when full and the partly filled ones after the last token; local
// copies are tasks. Every copy counts on `counter` at its destination. With `flags`, every copy is
// followed by its readiness flag (above).
// With `rings`, every remote chunk goes through them (deepep).
void append_software_dispatch(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& seq, uint32_t home,
                              TokenRange tokens, hw::PhaseId phase, uint32_t counter, bool flags = false,
                              ReceiveRings* rings = nullptr);

// The software all-to-all's combine sender on GPU `gpu`: each partial (by its slot) to its
// token's home's combine_rx, counted on kCombineCounter there; a local copy when the home is this
// GPU, else batched into chunk messages of software.chunk_tokens partials of one home. A chunk
// leaves when full, when a partial for another home follows, or at flush().
// With `rings`, a chunk holds partials of one home and channel and goes through them (deepep).
class PartialSender {
 public:
  PartialSender(LayerPlan& plan, const DispatchMap& map, hw::WorkSequence& seq, uint32_t gpu,
                ReceiveRings* rings = nullptr);
  void send(uint64_t slot);
  void flush();

 private:
  LayerPlan& plan_;
  const DispatchMap& map_;
  hw::WorkSequence& seq_;
  uint32_t gpu_;
  uint64_t bytes_;  // one partial in the combine format
  uint32_t chunk_;
  ReceiveRings* rings_;
  uint32_t home_ = 0;     // of the partials in pending_
  uint32_t channel_ = 0;  // with rings_
  std::vector<hw::WriteElement> pending_;
};

// The home GPU's combine: waits for every partial of its tokens, a software.sync_ns barrier, then
// sums them into the output buffer.
void append_home_combine(LayerPlan& plan, hw::WorkSequence& seq, uint32_t home);
// Its part after the wait, for a schedule that has already waited for every partial on counters
// of its own: the barrier (software.sync_ns) and the sum.
void append_home_sum(LayerPlan& plan, hw::WorkSequence& seq, uint32_t home);
// Its pieces: the time of summing `partials` partials (HBM traffic), and the kernel that sums
// every partial of the home's tokens into the output buffer (their functional effect).
hw::Task partial_sum_task(const MoeLayerSpec& spec, hw::PhaseId phase, uint64_t partials, const MoeBuffers& buffers,
                          uint32_t kernel = hw::Task::kNoKernel);
hw::Kernel home_sum_kernel(const LayerPlan& plan, uint32_t home);

// ---- Per-expert rows (the GShard / FastMoE layouts of tutel and fastermoe) ----------------------

// One row per (token, expert) pair, a token's experts on one GPU not sharing it (unlike deepep's one
// copy per destination GPU): the rows from `source` to `destination` grouped by the destination's
// local expert, tokens in order; with a capacity, each (source, expert) padded to `capacity` rows.
// The first row of a token on a GPU (its lowest local expert there) carries the token into its
// dispatch_rx slot and, on the way back, the copy's partial (the sum of the token's experts there)
// into its combine_rx slot; the other rows and the padding carry as many bytes into the row regions
// below (at their layout index), each written once (verify_layer checks it).
constexpr uint64_t kDispatchRowRegion = 0x2000'0000'0000;  // [layout row]: at the expert's GPU
constexpr uint64_t kCombineRowRegion = 0x2100'0000'0000;   // [layout row]: at the token's home
constexpr uint64_t kPaddingSource = 0x2200'0000'0000;      // what a padding row is read from
constexpr uint64_t kNoCopy = ~0ull;
struct ExpertRow {
  uint64_t token = 0;        // the padding rows: none (copy is kNoCopy, padding true)
  uint64_t copy = kNoCopy;   // the first row of a token on its GPU: the (token, GPU) copy it carries
  uint64_t slot = 0;         // with a copy: its slot in the GPU's dispatch_rx
  uint32_t local_expert = 0;
  bool padding = false;
};
struct ExpertRows {
  uint32_t capacity = 0;  // rows per (source, expert); 0: unpadded
  std::vector<std::vector<std::vector<ExpertRow>>> rows;  // [source][destination]
  // The layout index of rows[source][destination][0]: in the destination's dispatch row region
  // (sources in order) and in the source's combine row region (destinations in order).
  std::vector<std::vector<uint64_t>> dispatch_offset;
  std::vector<std::vector<uint64_t>> combine_offset;
  uint64_t padding_rows = 0;
  uint64_t rows_into(uint32_t destination) const;  // from every source, padding included
};
// `padded`: Tutel's dynamic capacity (capacity_factor 0): the largest (source GPU, expert) count,
// so that no token is dropped.
ExpertRows expert_rows(const DispatchMap& map, const MoeRouting& routing, bool padded);
// Declares the row regions' expected writes for the check.
void expect_row_regions(LayerPlan& plan, const ExpertRows& rows);

// Sends rows [begin, end) of rows.rows[source][destination] (dispatch: source to destination;
// `combine`: back from destination to source) as chunk messages of software.chunk_tokens rows,
// counted on `counter` at the receiver; local copies when source is destination.
struct RowRange {
  uint32_t source = 0;
  uint32_t destination = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};
void append_row_sends(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, const RowRange& range,
                      bool combine, hw::PhaseId phase, uint32_t counter);

// The pull of `ccfuser`: the destination reads rows [begin, end) of rows.rows[source][destination]
// from the source's input, one read per row (the loads of the expert GEMM's thread blocks), each
// response counted on `counter`; local copies when source is destination.
void append_row_reads(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, const RowRange& range,
                      hw::PhaseId phase, uint32_t counter);

// The GEMM work of rows [begin, end) of rows.rows[source][gpu] for each source in `ranges`: the
// tokens per local expert (padding included: padded rows are computed) and the dispatch slots
// whose first row is among them (as runs, for expert_kernel).
struct RowWork {
  std::vector<uint64_t> tokens_per_local_expert;
  uint64_t rows = 0;
  std::vector<SlotRun> first_slots;
};
RowWork row_work(const LayerPlan& plan, const ExpertRows& rows, uint32_t gpu, const std::vector<RowRange>& ranges);

// The expert kernel over `work`'s first rows, added to `seq`: its index, or hw::Task::kNoKernel
// when none of them is a first row (expert_kernel would take an empty list for all slots).
uint32_t add_row_kernel(const LayerPlan& plan, hw::WorkSequence& seq, uint32_t gpu, const RowWork& work);
// A further executor stream of GPU `gpu` (plan.sequences[gpu]'s phases and counters) on `sms` SMs.
hw::WorkSequence side_stream(const LayerPlan& plan, uint32_t gpu, uint32_t stream, uint16_t sms);

// The home's combine after rows: waits until all `rows` rows came back on kCombineCounter (its
// partials among them), then append_home_combine.
void append_row_home_combine(LayerPlan& plan, const ExpertRows& rows, hw::WorkSequence& seq, uint32_t home);

// ---- Token-centric fusion ------------------------------------------------------------------------

// Token-centric fusion (docs/background/token_centric_fusion.md), the part every fused schedule
// shares. A GPU's GEMM work is cut into tiles (software.tile_tokens rows of one local expert);
// `members` of an expert are its tokens in the order firmware expects them to arrive, and tile r
// holds members [r x tile, (r + 1) x tile). Tiles are listed in the order they are expected to be
// ready (the fraction of their expert's tokens they need, smallest first); the GEMM groups take
// them as they become ready (append_tile_pipeline).
struct FusedTile {
  uint32_t expert = 0;  // local index
  uint64_t first = 0;   // first member
  uint64_t tokens = 0;
};
struct FusedTiles {
  std::vector<FusedTile> tiles;  // in expected order of readiness
  std::vector<uint64_t> tokens_per_local_expert;  // what the tiles cover
};
FusedTiles plan_fused_tiles(const MoeLayerSpec& spec, const std::vector<uint64_t>& tokens_per_local_expert);

// The executor streams of a fused schedule on one GPU: plan.sequences[g] is the dispatch group,
// plan.extra_sequences[g] the GEMM-1, GEMM-2 and combine groups, in that order.
enum FusedStream : uint32_t { kDispatchGroup = 0, kGemm1Group = 1, kGemm2Group = 2, kCombineGroup = 3 };
// Counters after the common ones: GEMM-1 done (COMET's kernel boundary counts it), a counter
// signals count on where nothing waits, notifications and software readiness flags received, the
// second kernel started (COMET-style schedules), then the FusedCounters below.
constexpr uint32_t kGemm1DoneCounter = kBarrierCounter + 1;
constexpr uint32_t kUnwaitedCounter = kBarrierCounter + 2;
constexpr uint32_t kNotifyCounter = kBarrierCounter + 3;
constexpr uint32_t kSecondKernelCounter = kBarrierCounter + 4;
constexpr uint32_t kFirstTileCounter = kBarrierCounter + 5;
// Throws std::invalid_argument when a fused schedule needs more arrival counters per GPU than a
// GPU has (hw::kMaxArrivalCounters).
void check_counters(const char* scheme, uint64_t counters);
// Where the output-readiness table sits in every GPU (16 bytes per local token), and an address
// no counter map covers, for the 0-byte local copies that signal from one stream to another.
constexpr uint64_t kReadinessTable = 0x0900'0000'0000;
constexpr uint64_t kStreamSignal = 0x0A00'0000'0000;

struct FusedSmGroups {
  uint16_t dispatch = 0;
  uint16_t gemm1 = 0;
  uint16_t gemm2 = 0;
  uint16_t combine = 0;
  bool gemms_share_sms = false;  // the GEMM groups form one SM pool (hw::WorkSequence::sm_pool)
};
// `comet`: two kernels one after the other (dispatch + GEMM-1, then GEMM-2 + combine), each
// with software.comm_sms for communication and the rest for its GEMM; otherwise the fused
// kernel's four groups (software.fusion_*_sms), whose GEMM groups lend each other SMs with
// software.fusion_sm_lending (COMET's GEMMs run one after the other, each on all its SMs). Throws std::invalid_argument if they do not fit.
FusedSmGroups fused_sm_groups(const MoeLayerSpec& spec, bool comet);
// Makes the four streams of every GPU (phase names, counters, SMs) and returns them per GPU.
std::vector<std::array<hw::WorkSequence*, 4>> make_fused_streams(LayerPlan& plan, const FusedSmGroups& sms,
                                                                 uint32_t counters);

// The counters of GPU g's fused streams after the common ones: kFirstTileCounter + t for tile t's
// arrivals (tile-status table), then each tile's "GEMM-1 done", then each local token's
// output-readiness entry, then `extra` of the scheme's own. install_fused_counters lays them out,
// declares the two tables on the dispatch stream and sets every stream's counter count.
struct FusedCounters {
  uint32_t tiles = 0;
  uint32_t first_gemm1_done = 0;
  uint32_t first_ready = 0;
  uint32_t first_extra = 0;
};
FusedCounters install_fused_counters(const LayerPlan& plan, const std::array<hw::WorkSequence*, 4>& streams,
                                     size_t tiles, uint64_t extra);
// What is particular to tile t of a scheme: the functional kernel its GEMM-2 runs and the task
// after it (an in-switch scheme's notify_tokens, a software one's signal to its combine group).
struct TileWork {
  hw::Kernel kernel;
  hw::Task after_gemm2;
};
// GEMM-1 takes tiles as their tile-status entry has counted `arrivals_per_token` per token of the
// tile; GEMM-2 takes them as their GEMM-1 ends (with `comet`, after all of GEMM-1 and the kernel
// boundary, software.sync_ns), runs its kernel, then its after_gemm2 task. `work` is per tile.
void append_tile_pipeline(const MoeLayerSpec& spec, const std::array<hw::WorkSequence*, 4>& streams,
                          const FusedTiles& tiles, const FusedCounters& counters, uint64_t arrivals_per_token,
                          bool comet, std::vector<TileWork> work);
// With `comet`, the combine group starts with the second kernel.
void append_second_kernel_wait(hw::WorkSequence& combine, bool comet);

// ---- The scheme builders (scheme_*.cpp) ----------------------------------------------------------

// Each fills the plan start_plan made with its scheme's work.
using SchemeBuilder = void (*)(LayerPlan& plan, const DispatchMap& map);
void build_deepep(LayerPlan& plan, const DispatchMap& map);
void build_deepep_ll(LayerPlan& plan, const DispatchMap& map);
void build_nvls(LayerPlan& plan, const DispatchMap& map);
void build_dysharp_basic(LayerPlan& plan, const DispatchMap& map);
void build_explicit_addressing(LayerPlan& plan, const DispatchMap& map);
void build_tutel(LayerPlan& plan, const DispatchMap& map);
void build_fastermoe(LayerPlan& plan, const DispatchMap& map);
void build_ccfuser(LayerPlan& plan, const DispatchMap& map);
void build_explicit_addressing_basic(LayerPlan& plan, const DispatchMap& map);
void build_comet(LayerPlan& plan, const DispatchMap& map);
void build_fusion_only(LayerPlan& plan, const DispatchMap& map);
void build_dysharp_comet(LayerPlan& plan, const DispatchMap& map);
void build_dysharp(LayerPlan& plan, const DispatchMap& map);

}  // namespace nvsvp::fw::detail
