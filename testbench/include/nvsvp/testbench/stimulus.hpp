// Constrained-random command streams for the reduction unit.
//
// The generator keeps a shadow of what it has sent (which contexts are open or complete, how many
// contributions each beat still expects, which beats might have been evicted) so that it can
// (a) open, feed and complete contexts correctly, several at once and freely interleaved,
// (b) inject illegal commands of a known kind, and (c) state the status the stream must produce,
// independently of both backends. It never consults the unit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"
#include "nvsvp/testbench/random.hpp"

namespace nvsvp::testbench {

using reduction::Command;
using reduction::OpenContext;
using reduction::ReductionUnitConfig;

struct StimulusOptions {
  ReductionUnitConfig config{};
  std::uint32_t max_contributions = 32;  // contributions per beat are drawn from 1..this
  double error_probability = 0.002;      // chance that a command is an injected illegal one
  std::uint32_t max_contributions_per_context = 2048;  // bounds contributions x length_beats
};

// What the stream must do to the status, kept from the commands alone.
struct ExpectedStatus {
  std::uint32_t sticky = 0;
  std::uint64_t errors = 0;
  std::uint64_t contributions = 0;
  std::uint64_t contexts_opened = 0;
  std::uint64_t contexts_completed = 0;
};

enum class ErrorKind : std::uint8_t {
  unknown_context,
  after_completion,
  too_many_contributions,
  beat_out_of_range,
  context_busy,
  bad_open,
};
inline constexpr int error_kind_count = 6;
const char* to_string(ErrorKind kind);
std::uint32_t status_bit_of(ErrorKind kind);

// Phases change the shape of the traffic every few thousand commands: calm (few short contexts
// fed nearly in order: no eviction), busy, and pressure (many long contexts fed in random beat
// order: the buffer overflows, beats are evicted and later contributions pass through).
enum class Phase : std::uint8_t { calm, busy, pressure };
inline constexpr int phase_count = 3;
const char* to_string(Phase phase);

struct StimulusStats {
  std::uint64_t commands = 0;
  std::uint64_t opens = 0;
  std::uint64_t contributions = 0;
  std::array<std::uint64_t, error_kind_count> errors{};
  std::array<std::uint64_t, phase_count> phases{};
};

class StimulusGenerator {
 public:
  StimulusGenerator(std::uint64_t seed, const StimulusOptions& options);

  // Appends `count` commands, or fewer once draining has completed every context. For each,
  // `expected_error` receives the StatusBit it must raise, or 0 when the unit must accept it.
  void generate(std::size_t count, std::vector<Command>& commands, std::vector<std::uint32_t>& expected_error);
  void start_draining() { draining_ = true; }  // no new contexts; the open ones are finished
  bool finished() const { return draining_ && active_.empty(); }
  void clear_status(std::uint32_t mask) { expected_.sticky &= ~mask; }

  const ExpectedStatus& expected() const { return expected_; }
  const StimulusStats& stats() const { return stats_; }
  std::uint32_t sets() const { return sets_; }

 private:
  enum class ContextState : std::uint8_t { never_opened, open, complete };

  struct ActiveContext {
    OpenContext spec;
    std::uint8_t profile = 0;
    std::array<std::uint64_t, 8> anchors{};  // per-lane values for the tie and cancellation profiles
    bool scattered = false;                  // beats in random order (else nearly in order)
    std::uint32_t window = 1;                // in order: the next beat is one of the first `window`
    std::vector<std::uint32_t> order;        // beats still expecting contributions, in send order
    std::size_t head = 0;                    // order[head..] are still pending
    std::vector<std::uint16_t> remaining;    // per beat, contributions still to send
    std::vector<std::uint8_t> tainted;       // per beat: its set overflowed while it was buffered
    std::uint64_t remaining_total = 0;
    std::int64_t last_completed_beat = -1;
  };

  struct PhaseShape {
    std::uint32_t target_active = 1;
    std::uint32_t min_length = 1;
    std::uint32_t max_length = 1;
    double scattered_fraction = 0;
    std::uint32_t max_window = 1;
  };

  void new_phase();
  bool emit_open(std::vector<Command>& commands, std::vector<std::uint32_t>& expected_error);
  void emit_contribution(std::size_t active_index, std::vector<Command>& commands,
                         std::vector<std::uint32_t>& expected_error);
  bool emit_error(std::vector<Command>& commands, std::vector<std::uint32_t>& expected_error);
  bool try_error(ErrorKind kind, Command& command);
  void complete(std::size_t active_index);
  void taint(std::uint64_t key);

  OpenContext random_spec(std::uint16_t context, bool pressure);
  std::uint32_t random_length(std::uint32_t low, std::uint32_t high);
  std::uint16_t random_contributions();
  int free_context();
  int context_in_state(ContextState state);
  reduction::Beat random_operand(const ActiveContext& context);
  std::uint64_t random_float_lane(const ActiveContext& context, int lane);
  std::uint64_t random_int_lane(const ActiveContext& context);
  std::uint64_t random_float_of_class(reduction::ReduceType type, int float_class, int exponent_range);
  std::uint32_t set_of(std::uint32_t context, std::uint32_t beat) const;

  Rng rng_;
  StimulusOptions options_;
  std::uint32_t sets_ = 1;
  bool draining_ = false;

  std::vector<ContextState> state_;           // per context id
  std::vector<std::int32_t> active_slot_;     // per context id: index into active_, or -1
  std::vector<std::uint32_t> last_length_;    // per context id, of its last completed incarnation
  std::vector<ActiveContext> active_;
  std::vector<std::vector<std::uint64_t>> pending_in_set_;  // keys (context << 32 | beat) buffered
  std::uint32_t never_opened_count_ = 0;

  Phase phase_ = Phase::calm;
  PhaseShape shape_;
  std::uint64_t phase_commands_left_ = 0;

  ExpectedStatus expected_;
  StimulusStats stats_;
};

}  // namespace nvsvp::testbench
