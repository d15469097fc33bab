// The multimem reduction unit: one interface, two backends (the bit-exact C++ model and the
// Verilated RTL behind a transactor). SystemC-free, so the testbench, the `rtl-check` command and
// the switch model all drive it the same way. docs/models/reduction_unit.md is the specification.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nvsvp::reduction {

// One 16-byte beat, little-endian lanes: byte i of the beat is bits [8i+7:8i] of the RTL word.
using Beat = std::array<std::uint8_t, 16>;

enum class ReduceOp : std::uint8_t {
  add = 0,
  min = 1,   // floats: IEEE 754-2019 minimumNumber (-0 < +0); ints: signedness from the type
  max = 2,   // floats: IEEE 754-2019 maximumNumber
  bit_and = 3,
  bit_or = 4,
  bit_xor = 5,
};

enum class ReduceType : std::uint8_t {
  f32 = 0,   // 4 lanes
  f16 = 1,   // 8 lanes, accumulated in f32, rounded once when the beat completes
  bf16 = 2,  // 8 lanes, accumulated in f32, rounded once when the beat completes
  s32 = 3,   // 4 lanes
  u32 = 4,   // 4 lanes
  s64 = 5,   // 2 lanes
  u64 = 6,   // 2 lanes
};

// Opens a reduction context: `contributions` partials per beat are expected for each of
// `length_beats` beats. Commands travel in-band with contributions, so their order is defined.
struct OpenContext {
  std::uint16_t context = 0;
  std::uint16_t contributions = 0;
  ReduceOp op = ReduceOp::add;
  ReduceType type = ReduceType::f32;
  std::uint32_t length_beats = 0;
};

// One contribution (a partial result) to beat `beat` of `context`.
struct Contribution {
  std::uint16_t context = 0;
  std::uint32_t beat = 0;
  Beat data{};
};

// One input command: an OpenContext or a Contribution.
struct Command {
  enum class Kind : std::uint8_t { open_context, contribution } kind = Kind::contribution;
  OpenContext open{};
  Contribution contribution{};
};

// One output beat. `partial` is set when the beat left before all its contributions arrived (an
// eviction, or a contribution passing through after its beat was evicted); `contributions` says
// how many contributions it holds.
struct ResultBeat {
  std::uint16_t context = 0;
  std::uint32_t beat = 0;
  Beat data{};
  std::uint16_t contributions = 0;
  bool partial = false;

  bool operator==(const ResultBeat& other) const {
    return context == other.context && beat == other.beat && data == other.data &&
           contributions == other.contributions && partial == other.partial;
  }
  bool operator!=(const ResultBeat& other) const { return !(*this == other); }
};

// Sticky error status bits (set on the first occurrence, cleared only by clear_status) and the
// event counters. Every error is counted; none is silently ignored.
enum StatusBit : std::uint32_t {
  status_unknown_context = 1u << 0,         // contribution to a context that is not open
  status_after_completion = 1u << 1,        // contribution to a context that has completed
  status_too_many_contributions = 1u << 2,  // more contributions than the context expects
  status_beat_out_of_range = 1u << 3,       // beat index >= length_beats
  status_context_busy = 1u << 4,            // OpenContext on a context that is still open
  status_bad_open = 1u << 5,                // OpenContext with an invalid op/type pair or zeros
};

struct ReductionCounters {
  std::uint64_t contributions = 0;  // accepted contributions
  std::uint64_t completed_beats = 0;
  std::uint64_t evicted_beats = 0;      // partial beats pushed out because their buffer set was full
  std::uint64_t passthrough_beats = 0;  // contributions to an evicted beat, sent on unreduced
  std::uint64_t errors = 0;          // every error event, whatever its bit
  std::uint64_t contexts_opened = 0;
  std::uint64_t contexts_completed = 0;
};

struct ReductionStatus {
  std::uint32_t sticky = 0;  // StatusBit mask
  ReductionCounters counters{};
};

// Structural parameters, shared by both backends (the RTL takes them as Verilog parameters;
// the RTL library is built for the defaults).
struct ReductionUnitConfig {
  std::uint32_t buffer_bytes = 64 * 1024;
  std::uint32_t contexts = 64;
  std::uint32_t ways = 8;
  std::uint32_t context_max_beats = 1024;
};

// The transaction-level interface of the reduction unit. `process` takes commands in order and
// appends the result beats they cause, in the order the unit emits them; the output sequence and
// status depend only on the command sequence, never on timing or back-pressure.
class ReductionUnit {
 public:
  virtual ~ReductionUnit() = default;
  virtual void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) = 0;
  virtual ReductionStatus status() const = 0;
  virtual void clear_status(std::uint32_t mask) = 0;
  // Clock cycles consumed so far (the model estimates them; the RTL counts them).
  virtual std::uint64_t cycles() const = 0;
  virtual std::string backend_name() const = 0;
};

}  // namespace nvsvp::reduction
