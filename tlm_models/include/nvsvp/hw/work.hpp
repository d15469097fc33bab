// The work descriptors a GPU's work executor runs: the contract between firmware, which builds
// the sequences, and the GPU model, which executes them. SystemC-free on purpose.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/hw/memory_access.hpp"

namespace nvsvp::hw {

enum class TaskKind : uint8_t {
  send,          // remote write of `bytes` from local `source_address` to `peer`'s `target_address`;
                 // the peer's counter `counter` counts its arrival. With `chunk_writes` k > 0 it is a
                 // chunk: k writes of `bytes` each (WorkSequence::elements[first_write ..
                 // first_write + k)) travelling as one message, each counting one arrival
  read,          // remote read of `bytes` at `peer`'s `source_address` into local `target_address`;
                 // the local counter `counter` counts the response's arrival
  local_copy,    // copy within this GPU's memory (no link is used); local counter `counter` counts it
                 // (0 bytes: only the count, a signal from one executor stream to another). With
                 // `chunk_writes` k > 0: k copies of `bytes` each (elements as a send's chunk)
  wait_counter,  // block until local counter `counter` has counted `arrivals` arrivals
  compute,       // busy for the GPU's time of `flops` and `memory_bytes` of memory traffic plus
                 // `duration_ns`, then run kernel `kernel` (if any) on local memory
  gemm,          // a (grouped) GEMM as thread blocks: `thread_blocks` blocks of `flops_per_block`
                 // each, one block per SM at a time on `sms` SMs (0: the stream's group), in waves;
                 // `memory_bytes` of memory traffic set a floor; then kernel `kernel` (if any); see Task::persistent
  // Static multimem (docs/background/nvlink_nvswitch.md#static-multimem). `target_address` /
  // `source_address` that name a multimem address must lie in a multicast group the switches hold.
  multimem_store,      // `bytes` from local `source_address` to multimem `target_address`: the
                       // switch writes one copy into every member (the issuer included); each
                       // member's counter `counter` counts its copy's arrival
  multimem_red,        // as multimem_store, but every member combines the operand into its copy
                       // with `reduce_op` / `reduce_type` instead of overwriting it
  multimem_ld_reduce,  // load of `bytes` at multimem `source_address`: the switch reads every
                       // member's copy and reduces them with `reduce_op` / `reduce_type`; the one
                       // result lands at local `target_address` and local counter `counter`
                       // counts it
  // Dynamic multimem (docs/background/dynamic_multimem.md): one token to a list of target experts,
  // `target_count` of them from WorkSequence::targets[first_target] on, the issuer's own experts last
  // (its Hub serves them without a link). `addressing` says what the packet carries per target.
  dynamic_store,      // dymultimem.st: `bytes` from local `source_address` to multimem
                      // `target_address` (an algebraic block of a bound dispatch object); every
                      // target's GPU writes it into that expert's region and its counter `counter`
                      // counts one arrival per local target; with `count_per_expert`, each block counts on
                      // counter + its expert's local index instead (per-expert arrival counters,
                      // docs/background/token_centric_fusion.md#the-fused-pipeline)
  dynamic_ld_reduce,  // dymultimem.ld_reduce: load of `bytes` at multimem `source_address` (a
                      // combine object) from every target, summed with `reduce_op` /
                      // `reduce_type` in the switch; the result lands at local `target_address`
                      // and local counter `counter` counts it
  // The token-ID table of token-centric fusion
  // (docs/background/token_centric_fusion.md#hardware-tables): notify the home GPU of every token
  // the Hub placed in layout blocks [first_block, first_block + blocks) of the dynamic object at
  // multimem `source_address`: a write of `bytes` to the token's entry of the home's
  // output-readiness table (`target_address` + 16 x the token's local index), counted on the home's
  // counter `counter`. A home's notifications travel together (as many per message as one payload
  // holds); this GPU's own tokens are notified without a link. Token t's home is t / (tokens per
  // GPU): the all-gathered tensor is laid out home by home. With explicit addressing the layout is
  // firmware's and so is the token-ID table: WorkSequence::block_tokens.
  notify_tokens,
  // The next `items` items, each a wait_counter followed by `tasks_per_item` tasks (no waits), run in the
  // order their waits are satisfied instead of program order: an SM group of a persistent kernel
  // polling its table and taking whatever is ready
  // (docs/background/token_centric_fusion.md#one-persistent-kernel-four-sm-groups). One item at a
  // time: its tasks in order, a compute task holding the stream for its time. At most one pending
  // item may wait on a counter.
  take_ready,
};

// What a dynamic multimem packet names per target (docs/background/dynamic_multimem.md#the-packet).
enum class DynamicAddressing : uint8_t {
  algebraic = 0,  // 16-bit expert IDs; each destination's Hub translates the algebraic index
  explicit_addresses = 1,  // a full 64-bit destination address per target, request and response
};

// The reduction of multimem_red / multimem_ld_reduce. The numeric values are the reduction
// unit's encodings (nvsvp/reduction/reduction_unit.hpp ReduceOp / ReduceType), kept apart so that
// firmware sees only nvsvp/hw; the models static_assert that they agree.
enum class MultimemOp : uint8_t { add = 0, min = 1, max = 2, bit_and = 3, bit_or = 4, bit_xor = 5 };
enum class MultimemType : uint8_t { f32 = 0, f16 = 1, bf16 = 2, s32 = 3, u32 = 4, s64 = 5, u64 = 6 };

// fp4: NVFP4, both operands 4-bit e2m1 with one fp8 e4m3 scale per 16 values.
enum class Precision : uint8_t { fp8, bf16, fp4 };

// The real data one message carries: each of its writes' leading functional bytes together.
constexpr uint32_t kMaxFunctionalBytesPerMessage = 1024;

// The executor records per phase the first start and last end of its tasks (for reports).
using PhaseId = uint8_t;

// One write of a chunk: where its bytes come from and where they land in the peer.
struct WriteElement {
  uint64_t source_address = 0;
  uint64_t target_address = 0;
};

// One task of a work sequence. Build it with the static functions below (one per kind); read it
// through the field names of its kind. A field that only some kinds use shares its storage with
// the fields of other kinds (the anonymous unions), each under its own name, so that a name means
// one thing and a task still takes 72 bytes: a layer holds millions of tasks, and the speed work
// sized the executor's task walks by that (docs/performance.md).
struct Task {
  static constexpr uint16_t kNoKernel = 0xffff;
  static constexpr uint32_t kMaxKernels = kNoKernel;  // kernel indices are below this

  TaskKind kind = TaskKind::compute;
  PhaseId phase = 0;
  Precision precision = Precision::fp8;    // compute / gemm
  MultimemOp reduce_op = MultimemOp::add;  // multimem_red / multimem_ld_reduce / dynamic_ld_reduce
  union {
    uint16_t chunk_writes = 0;  // send / local_copy: 0 for one write; k > 0 for a chunk of k writes (as
                                // DeepEP-class libraries batch tokens per destination), listed
                                // in WorkSequence::elements from first_write on
    uint16_t target_count;      // dynamic_store / dynamic_ld_reduce: targets, from first_target on
    uint16_t sms;               // gemm: the SMs its blocks run on (0: the stream's group)
    uint16_t tasks_per_item;    // take_ready: the tasks after each item's wait
  };
  uint16_t kernel = kNoKernel;  // compute / gemm: index into WorkSequence::kernels
  uint32_t peer = 0;            // send / read: the other GPU
  uint32_t counter = 0;         // the arrival counter: the receiver's (send, multimem and dynamic
                                // stores, notify_tokens), or this GPU's (read, loads, local_copy,
                                // wait_counter)
  union {
    uint32_t first_write = 0;  // send (a chunk): its first write in WorkSequence::elements
    uint32_t first_target;     // dynamic_store / dynamic_ld_reduce: first in WorkSequence::targets
    uint32_t first_block;      // notify_tokens: the first layout block notified
  };
  MultimemType reduce_type = MultimemType::f32;  // with reduce_op
  DynamicAddressing addressing = DynamicAddressing::algebraic;  // dynamic_* / notify_tokens
  // gemm: the SMs belong to a persistent kernel that keeps them busy with whatever tiles are
  // ready, several at once: the blocks take their share of the group, blocks / SMs block times
  // (less than one for a tile narrower than the group), with no partial last wave.
  bool persistent = false;
  bool count_per_expert = false;  // dynamic_store: each block counts on counter + its expert's
                                  // local index (per-expert arrival counters)
  union {
    uint64_t bytes = 0;     // send (per write of a chunk) / read / local_copy / multimem / dynamic /
                            // notify_tokens: payload bytes, what is timed
    uint64_t memory_bytes;  // compute / gemm: memory traffic, a floor on the time
  };
  union {
    uint64_t arrivals = 0;   // wait_counter: arrivals to wait for
    uint64_t thread_blocks;  // gemm: thread blocks
    uint64_t blocks;         // notify_tokens: layout blocks notified
    uint64_t items;          // take_ready: the items that follow
  };
  uint64_t source_address = 0;  // where the data comes from: local (send, local_copy, stores), the
                                // peer's (read), a multimem address (loads), the dynamic object
                                // (notify_tokens)
  uint64_t target_address = 0;  // where it lands: the peer's (send), local (read, local_copy,
                                // loads), a multimem address (stores), the readiness table
                                // (notify_tokens)
  union {
    double flops = 0.0;      // compute
    double flops_per_block;  // gemm
  };
  double duration_ns = 0.0;  // compute: fixed time on top of the work

  static void check_kernel_index(uint32_t kernel) {
    if (kernel != kNoKernel && kernel >= kMaxKernels) {
      throw std::length_error("work sequence: kernel index " + std::to_string(kernel) +
                              " (at most " + std::to_string(kMaxKernels) + " kernels per sequence)");
    }
  }

  static Task send(PhaseId phase, uint32_t peer, uint64_t source, uint64_t target, uint64_t bytes,
                   uint32_t counter) {
    Task t;
    t.kind = TaskKind::send;
    t.phase = phase;
    t.peer = peer;
    t.source_address = source;
    t.target_address = target;
    t.bytes = bytes;
    t.counter = counter;
    return t;
  }
  // A chunk of `writes` writes of `bytes` each to `peer`, starting at `first_write` of the
  // sequence's element list.
  static Task send_chunk(PhaseId phase, uint32_t peer, uint32_t first_write, uint16_t writes,
                         uint64_t bytes, uint32_t counter) {
    Task t;
    t.kind = TaskKind::send;
    t.phase = phase;
    t.peer = peer;
    t.first_write = first_write;
    t.chunk_writes = writes;
    t.bytes = bytes;
    t.counter = counter;
    return t;
  }
  static Task local_copy(PhaseId phase, uint64_t source, uint64_t target, uint64_t bytes,
                         uint32_t counter) {
    Task t;
    t.kind = TaskKind::local_copy;
    t.phase = phase;
    t.source_address = source;
    t.target_address = target;
    t.bytes = bytes;
    t.counter = counter;
    return t;
  }
  // `writes` local copies of `bytes` each, from `first_write` of the sequence's element list.
  static Task local_chunk(PhaseId phase, uint32_t first_write, uint16_t writes, uint64_t bytes, uint32_t counter) {
    Task t = send_chunk(phase, 0, first_write, writes, bytes, counter);
    t.kind = TaskKind::local_copy;
    return t;
  }
  static Task wait(PhaseId phase, uint32_t counter, uint64_t arrivals) {
    Task t;
    t.kind = TaskKind::wait_counter;
    t.phase = phase;
    t.counter = counter;
    t.arrivals = arrivals;
    return t;
  }
  static Task read(PhaseId phase, uint32_t peer, uint64_t remote_source, uint64_t local_target,
                   uint64_t bytes, uint32_t counter) {
    Task t = send(phase, peer, remote_source, local_target, bytes, counter);
    t.kind = TaskKind::read;
    return t;
  }
  // Static multimem: see TaskKind. The multimem address is the target of a store / red and the
  // source of a ld_reduce.
  static Task multimem_store(PhaseId phase, uint64_t local_source, uint64_t multimem_target,
                             uint64_t bytes, uint32_t member_counter) {
    Task t = send(phase, 0, local_source, multimem_target, bytes, member_counter);
    t.kind = TaskKind::multimem_store;
    return t;
  }
  static Task multimem_red(PhaseId phase, uint64_t local_operand, uint64_t multimem_target,
                           uint64_t bytes, MultimemOp op, MultimemType type, uint32_t member_counter) {
    Task t = send(phase, 0, local_operand, multimem_target, bytes, member_counter);
    t.kind = TaskKind::multimem_red;
    t.reduce_op = op;
    t.reduce_type = type;
    return t;
  }
  static Task multimem_ld_reduce(PhaseId phase, uint64_t multimem_source, uint64_t local_target,
                                 uint64_t bytes, MultimemOp op, MultimemType type, uint32_t counter) {
    Task t = send(phase, 0, multimem_source, local_target, bytes, counter);
    t.kind = TaskKind::multimem_ld_reduce;
    t.reduce_op = op;
    t.reduce_type = type;
    return t;
  }
  // Dynamic multimem: see TaskKind. `first_target` / `targets` index WorkSequence::targets.
  static Task dynamic_store(PhaseId phase, uint64_t local_source, uint64_t multimem_target, uint64_t bytes,
                            uint32_t first_target, uint16_t targets, DynamicAddressing addressing,
                            uint32_t counter, bool count_per_expert = false) {
    Task t = send(phase, 0, local_source, multimem_target, bytes, counter);
    t.kind = TaskKind::dynamic_store;
    t.count_per_expert = count_per_expert;
    t.first_target = first_target;
    t.target_count = targets;
    t.addressing = addressing;
    return t;
  }
  static Task dynamic_ld_reduce(PhaseId phase, uint64_t multimem_source, uint64_t local_target, uint64_t bytes,
                                uint32_t first_target, uint16_t targets, DynamicAddressing addressing,
                                MultimemOp op, MultimemType type, uint32_t counter) {
    Task t = send(phase, 0, multimem_source, local_target, bytes, counter);
    t.kind = TaskKind::dynamic_ld_reduce;
    t.first_target = first_target;
    t.target_count = targets;
    t.addressing = addressing;
    t.reduce_op = op;
    t.reduce_type = type;
    return t;
  }
  static Task notify_tokens(PhaseId phase, uint64_t dynamic_object_address, uint32_t first_block, uint64_t blocks,
                            DynamicAddressing addressing, uint64_t readiness_table, uint64_t bytes, uint32_t counter) {
    Task t = send(phase, 0, dynamic_object_address, readiness_table, bytes, counter);
    t.kind = TaskKind::notify_tokens;
    t.addressing = addressing;
    t.first_block = first_block;
    t.blocks = blocks;
    return t;
  }
  static Task take_ready(PhaseId phase, uint64_t items, uint16_t tasks_per_item) {
    Task t;
    t.kind = TaskKind::take_ready;
    t.phase = phase;
    t.items = items;
    t.tasks_per_item = tasks_per_item;
    return t;
  }
  static Task compute(PhaseId phase, double flops, Precision precision, uint64_t memory_bytes,
                      uint32_t kernel = kNoKernel) {
    check_kernel_index(kernel);
    Task t;
    t.kind = TaskKind::compute;
    t.phase = phase;
    t.flops = flops;
    t.precision = precision;
    t.memory_bytes = memory_bytes;
    t.kernel = static_cast<uint16_t>(kernel);
    return t;
  }
  static Task gemm(PhaseId phase, uint64_t blocks, double flops_per_block, Precision precision, uint64_t memory_bytes,
                   uint16_t sms, uint32_t kernel = kNoKernel) {
    Task t = compute(phase, flops_per_block, precision, memory_bytes, kernel);
    t.kind = TaskKind::gemm;
    t.thread_blocks = blocks;
    t.sms = sms;
    return t;
  }
  static Task delay(PhaseId phase, double duration_ns, uint32_t kernel = kNoKernel) {
    check_kernel_index(kernel);
    Task t;
    t.kind = TaskKind::compute;
    t.phase = phase;
    t.duration_ns = duration_ns;
    t.kernel = static_cast<uint16_t>(kernel);
    return t;
  }
};

// Arrival counters a GPU has (indices 0 .. kMaxArrivalCounters - 1).
constexpr uint32_t kMaxArrivalCounters = 1u << 20;

// Bytes of one entry of a table of arrival counters in memory (see CounterMap).
constexpr uint64_t kCounterEntryBytes = 16;

// The hardware tables of token-centric fusion
// (docs/background/token_centric_fusion.md#hardware-tables) whose entries are arrival counters. A
// GPU holds a fixed number of entries of each; beyond them, entries spill to memory.
enum class CounterTable : uint8_t {
  none = 0,
  tile_status = 1,       // per GEMM tile: the arrivals of its tokens
  output_readiness = 2,  // per token at its home: the notifications of its finished experts
};
constexpr uint32_t kCounterTables = 3;

// Arrival counting by where a write lands (the receiving side of a fused kernel updating its
// tables): a write into [base, base + entries x stride) counts one arrival on each counter of its
// entry i: counters[first[i] .. first[i + 1]), or, when `first` is empty, first_counter + i. This
// is on top of the count on the message's own counter. Writes of chunks, single writes, local
// copies and dynamic multimem writes all count. With seen_after_ps > 0 a write counts that much
// after it landed: software readiness flags, which the reader sees only when its poll comes round.
struct CounterMap {
  uint64_t base = 0;
  uint64_t stride = kCounterEntryBytes;
  uint64_t entries = 0;
  uint64_t seen_after_ps = 0;
  uint32_t first_counter = 0;
  std::vector<uint32_t> first;
  std::vector<uint32_t> counters;
};

// Counters [first_counter, first_counter + counters) are the entries of hardware table `table`:
// an entry is taken at its first arrival and given back when a wait on it completes.
struct CounterTableRange {
  CounterTable table = CounterTable::none;
  uint32_t first_counter = 0;
  uint32_t counters = 0;
};

// A kernel's functional effect on local memory, run when its compute task ends.
using Kernel = std::function<void(MemoryAccess&)>;

struct WorkSequence {
  std::vector<Task> tasks;
  std::vector<WriteElement> elements;  // the writes of the chunks among the tasks
  // The target lists of the dynamic tasks: expert IDs and, for explicit addressing, the address
  // in the target's GPU where its copy lands (dynamic_store) or its partial is read
  // (dynamic_ld_reduce), at the same index.
  std::vector<uint16_t> targets;
  std::vector<uint64_t> target_addresses;
  std::vector<Kernel> kernels;
  std::vector<std::string> phase_names;  // indexed by PhaseId
  uint32_t counters = 0;                 // number of arrival counters the sequence uses
  // Fused schedules: the GPU's counting by landing address and its table-held counters (they
  // stay in force for every later sequence of the GPU).
  std::vector<CounterMap> counter_maps;
  std::vector<CounterTableRange> counter_tables;
  // notify_tokens with explicit addressing: the token in each layout block of this GPU.
  std::vector<uint32_t> block_tokens;
  // The executor stream it runs on: a GPU runs its streams concurrently, each in order (an SM
  // group each, as the groups of a persistent kernel); `sms` is the group's size, the SMs its
  // GEMMs run on (0: all of the GPU's). Streams share the GPU's arrival counters, so one
  // stream's wait can follow another's progress.
  uint32_t stream = 0;
  uint16_t sms = 0;
  // Streams of one GPU whose sequences name the same sm_pool (> 0; each with its own `sms`) lend
  // each other their SMs: while a member computes nothing, its SMs serve the persistent GEMMs the
  // other members run (the GEMM-1 and GEMM-2 groups of a fused kernel, whose SMs take any ready
  // tile). 0: the stream keeps its SMs.
  uint16_t sm_pool = 0;
  // SMs that issue this stream's remote stores (multimem_store, multimem_red, dynamic_store, and
  // send tasks when the stream has issue_sms > 0): each such task holds the stream for its payload
  // bytes (all elements of a chunk) / (issue_sms x gpu.sm_store_gbps) before the next task of the
  // stream starts; 0: no limit (copy engines, or SMs that keep up with the links). Multimem
  // instructions are SM instructions: only an SM group can issue them, at a limited rate.
  uint16_t issue_sms = 0;
};

}  // namespace nvsvp::hw

static_assert(sizeof(nvsvp::hw::Task) == 72, "a task should stay 72 bytes");
