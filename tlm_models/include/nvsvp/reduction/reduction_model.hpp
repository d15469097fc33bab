// The bit-exact C++ model of the reduction unit (rtl/reduction_unit.sv): for any command sequence
// it emits the same result beats, in the same order, and reaches the same status and counters as
// the RTL. docs/models/reduction_unit.md is the specification.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduce_alu.hpp"
#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::reduction {

// The RTL's pipeline registers (in_, rd_, alu_, fin_, res_), one clock each. With an always-ready
// output the RTL takes `commands + rtl_pipeline_stages` clocks for a process() call of one or more
// commands: one clock per command to enter, then the last one drains through the stages.
inline constexpr std::uint64_t rtl_pipeline_stages = 5;

// Throws std::invalid_argument naming the parameter when the structure is not buildable: the
// buffer must hold a power-of-two number of sets of `ways` 32-byte slots, and contexts and
// context_max_beats must fit the command fields.
void validate_reduction_config(const ReductionUnitConfig& config);

// Set index of a beat: (beat + context * 61) mod sets.
inline std::uint32_t reduction_set_index(std::uint32_t context, std::uint32_t beat,
                                         std::uint32_t sets) {
  return (beat + context * 61u) & (sets - 1u);
}

class ReductionModel : public ReductionUnit {
 public:
  explicit ReductionModel(const ReductionUnitConfig& config = {});

  void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) override;
  ReductionStatus status() const override { return status_; }
  void clear_status(std::uint32_t mask) override;
  // Estimated RTL clocks with an always-ready output: commands + rtl_pipeline_stages per non-empty
  // process() call, plus one per clear_status() (the clear pulse takes a clock).
  std::uint64_t cycles() const override { return cycles_; }
  std::string backend_name() const override { return "model"; }

  // For each beat the last process() call appended, the index (in that call) of the command that
  // emitted it; names the culprit when two backends disagree.
  const std::vector<std::size_t>& last_result_sources() const { return last_result_sources_; }

  const ReductionUnitConfig& config() const { return config_; }
  std::uint32_t sets() const { return sets_; }

 private:
  enum class ContextState : std::uint8_t { never_opened, open, complete };
  enum class BeatState : std::uint8_t { idle, buffered, evicted, complete };

  struct ContextEntry {
    ContextState state = ContextState::never_opened;
    std::uint16_t contributions = 0;
    ReduceOp op = ReduceOp::add;
    ReduceType type = ReduceType::f32;
    std::uint32_t length_beats = 0;
    std::uint32_t expected = 0;  // contributions x length_beats
    std::uint32_t accepted = 0;
    std::uint32_t live_slots = 0;  // valid slots of this incarnation (not stale)
    std::vector<BeatState> beats;  // [beat < length_beats]
  };

  // A slot's fields mean something only while slot_valid_ says it holds a beat; filling it
  // writes every one. A stale slot was left behind by an earlier incarnation of its context
  // (possible only after undetectable surplus contributions to an evicted beat): it never
  // matches and leaves when evicted.
  struct Slot {
    bool stale;
    std::uint16_t context;
    std::uint32_t beat;
    std::uint16_t count;
    ReduceType type;
    Accumulator acc;
  };

  // One command; returns true and fills `result` when it emits a beat.
  bool step(const Command& command, ResultBeat& result);
  void open_context(const OpenContext& open);
  bool open_fields_valid(const OpenContext& open) const;
  bool reject(std::uint32_t status_bit);

  ReductionUnitConfig config_;
  std::uint32_t sets_ = 0;
  std::vector<ContextEntry> contexts_;
  // slot = set * ways + way. Left uninitialised: the switch builds a unit per port, and zeroing
  // its 64 KiB buffer was most of the cost of building one.
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::uint8_t> slot_valid_;    // per slot: it holds a beat
  std::vector<std::uint32_t> victim_way_;   // per set, the round-robin pointer
  ReductionStatus status_{};
  std::uint64_t cycles_ = 0;
  std::vector<std::size_t> last_result_sources_;
};

}  // namespace nvsvp::reduction
