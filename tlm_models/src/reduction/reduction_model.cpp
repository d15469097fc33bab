#include "nvsvp/reduction/reduction_model.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace nvsvp::reduction {
namespace {

constexpr std::uint32_t slot_bytes = 32;
constexpr std::uint8_t last_op_code = static_cast<std::uint8_t>(ReduceOp::bit_xor);
constexpr std::uint8_t last_type_code = static_cast<std::uint8_t>(ReduceType::u64);

bool is_power_of_two(std::uint32_t value) { return value != 0 && (value & (value - 1)) == 0; }

}  // namespace

void validate_reduction_config(const ReductionUnitConfig& config) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("reduction unit config: " + what);
  };
  if (config.ways == 0) fail("ways must be at least 1");
  if (config.buffer_bytes == 0 || config.buffer_bytes % (slot_bytes * config.ways) != 0)
    fail("buffer_bytes (" + std::to_string(config.buffer_bytes) + ") must be a non-zero multiple of " +
         std::to_string(slot_bytes) + " x ways (" + std::to_string(slot_bytes * config.ways) + ")");
  const std::uint32_t sets = config.buffer_bytes / slot_bytes / config.ways;
  if (!is_power_of_two(sets))
    fail("buffer_bytes / 32 / ways = " + std::to_string(sets) + " sets, not a power of two");
  if (config.contexts == 0 || config.contexts > std::numeric_limits<std::uint16_t>::max() + 1u)
    fail("contexts (" + std::to_string(config.contexts) + ") must be in 1..65536");
  if (config.context_max_beats == 0)
    fail("context_max_beats must be at least 1");
}

ReductionModel::ReductionModel(const ReductionUnitConfig& config) : config_(config) {
  validate_reduction_config(config_);
  sets_ = config_.buffer_bytes / slot_bytes / config_.ways;
  contexts_.resize(config_.contexts);
  const std::size_t slots = static_cast<std::size_t>(sets_) * config_.ways;
  slots_.reset(new Slot[slots]);  // not make_unique, which would zero it
  slot_valid_.assign(slots, 0);
  victim_way_.assign(sets_, 0);
}

void ReductionModel::process(const std::vector<Command>& commands,
                             std::vector<ResultBeat>& results) {
  last_result_sources_.clear();
  ResultBeat result;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (step(commands[i], result)) {
      results.push_back(result);
      last_result_sources_.push_back(i);
    }
  }
  if (!commands.empty()) cycles_ += commands.size() + rtl_pipeline_stages;
}

void ReductionModel::clear_status(std::uint32_t mask) {
  status_.sticky &= ~mask;
  cycles_ += 1;
}

bool ReductionModel::reject(std::uint32_t status_bit) {
  status_.sticky |= status_bit;
  status_.counters.errors++;
  return false;
}

bool ReductionModel::open_fields_valid(const OpenContext& open) const {
  const auto op_code = static_cast<std::uint8_t>(open.op);
  const auto type_code = static_cast<std::uint8_t>(open.type);
  return open.context < config_.contexts && open.contributions != 0 && open.length_beats != 0 &&
         open.length_beats <= config_.context_max_beats && op_code <= last_op_code &&
         type_code <= last_type_code && op_valid_for_type(open.op, open.type);
}

void ReductionModel::open_context(const OpenContext& open) {
  if (!open_fields_valid(open)) {
    reject(status_bad_open);
    return;
  }
  ContextEntry& context = contexts_[open.context];
  if (context.state == ContextState::open) {
    reject(status_context_busy);
    return;
  }
  context.state = ContextState::open;
  context.contributions = open.contributions;
  context.op = open.op;
  context.type = open.type;
  context.length_beats = open.length_beats;
  context.expected = static_cast<std::uint32_t>(open.contributions) * open.length_beats;
  context.accepted = 0;
  context.beats.assign(open.length_beats, BeatState::idle);  // beats beyond are refused in step
  // Leftovers of an earlier incarnation turn stale; most contexts leave none, and then the
  // buffer need not be searched.
  if (context.live_slots > 0) {
    for (std::size_t i = 0; i < slot_valid_.size(); ++i) {
      if (slot_valid_[i] && slots_[i].context == open.context) slots_[i].stale = true;
    }
    context.live_slots = 0;
  }
  status_.counters.contexts_opened++;
}

bool ReductionModel::step(const Command& command, ResultBeat& result) {
  if (command.kind == Command::Kind::open_context) {
    open_context(command.open);
    return false;
  }
  const Contribution& in = command.contribution;
  if (in.context >= config_.contexts || contexts_[in.context].state == ContextState::never_opened)
    return reject(status_unknown_context);
  ContextEntry& context = contexts_[in.context];
  if (context.state == ContextState::complete) return reject(status_after_completion);
  if (in.beat >= context.length_beats) return reject(status_beat_out_of_range);
  BeatState& beat_state = context.beats[in.beat];
  if (beat_state == BeatState::complete) return reject(status_too_many_contributions);

  ReductionCounters& counters = status_.counters;
  counters.contributions++;
  if (++context.accepted == context.expected) {
    context.state = ContextState::complete;
    counters.contexts_completed++;
  }
  result.context = in.context;
  result.beat = in.beat;

  if (beat_state == BeatState::evicted) {
    counters.passthrough_beats++;
    result.data = finish(context.type, widen(context.type, in.data));
    result.contributions = 1;
    result.partial = true;
    return true;
  }
  if (context.contributions == 1) {
    beat_state = BeatState::complete;
    counters.completed_beats++;
    result.data = finish(context.type, widen(context.type, in.data));
    result.contributions = 1;
    result.partial = false;
    return true;
  }

  const std::uint32_t set = reduction_set_index(in.context, in.beat, sets_);
  const std::size_t first_slot = static_cast<std::size_t>(set) * config_.ways;
  Slot* ways = &slots_[first_slot];
  std::uint8_t* ways_valid = &slot_valid_[first_slot];
  for (std::uint32_t w = 0; w < config_.ways; ++w) {
    Slot& slot = ways[w];
    if (!ways_valid[w] || slot.stale || slot.context != in.context || slot.beat != in.beat) continue;
    slot.acc = combine(context.op, context.type, slot.acc, in.data);
    if (++slot.count < context.contributions) return false;
    ways_valid[w] = 0;
    --context.live_slots;
    beat_state = BeatState::complete;
    counters.completed_beats++;
    result.data = finish(context.type, slot.acc);
    result.contributions = slot.count;
    result.partial = false;
    return true;
  }

  // Miss: the lowest free way, or else the round-robin victim, which leaves as a partial beat.
  std::uint32_t way = 0;
  while (way < config_.ways && ways_valid[way]) ++way;
  bool evicted = false;
  if (way == config_.ways) {
    way = victim_way_[set];
    victim_way_[set] = (way + 1) % config_.ways;
    const Slot& victim = ways[way];
    // A stale victim belongs to a closed incarnation: the current beat states are not its.
    if (!victim.stale) {
      contexts_[victim.context].beats[victim.beat] = BeatState::evicted;
      --contexts_[victim.context].live_slots;
    }
    counters.evicted_beats++;
    result.context = victim.context;
    result.beat = victim.beat;
    result.data = finish(victim.type, victim.acc);
    result.contributions = victim.count;
    result.partial = true;
    evicted = true;
  }
  Slot& slot = ways[way];
  ways_valid[way] = 1;
  slot.stale = false;
  slot.context = in.context;
  slot.beat = in.beat;
  slot.count = 1;
  slot.type = context.type;
  slot.acc = widen(context.type, in.data);
  ++context.live_slots;
  beat_state = BeatState::buffered;
  return evicted;
}

}  // namespace nvsvp::reduction
