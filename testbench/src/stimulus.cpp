#include "nvsvp/testbench/stimulus.hpp"

#include <algorithm>
#include <stdexcept>

#include "nvsvp/testbench/lanes.hpp"

namespace nvsvp::testbench {

using reduction::Beat;
using reduction::Contribution;
using reduction::ReduceOp;
using reduction::ReduceType;

namespace {

// Operand profiles, chosen per context. Floats: what the lanes look like.
enum FloatProfile : std::uint8_t {
  float_mixed,         // mostly normal, a few of every special class
  float_specials,      // every class equally often
  float_overflow,      // the top binades: sums overflow to infinity
  float_ties,          // a lane anchor plus/minus half its ulp: rounding ties
  float_cancellation,  // +-anchor: exact zero sums and their signs
  float_tiny,          // subnormals and the smallest normals: subnormal results
  float_normals,       // ordinary values only
  float_profile_count
};
enum IntProfile : std::uint8_t { int_mixed, int_extremes, int_small, int_random, int_profile_count };

// Float classes as generated (the coverage classifies the produced value, not this intent).
enum FloatClass { fc_zero, fc_subnormal, fc_normal, fc_inf, fc_nan };
// Exponent ranges of generated normals.
enum ExponentRange { exp_mid, exp_wide, exp_top, exp_bottom };

}  // namespace

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::unknown_context: return "unknown_context";
    case ErrorKind::after_completion: return "after_completion";
    case ErrorKind::too_many_contributions: return "too_many_contributions";
    case ErrorKind::beat_out_of_range: return "beat_out_of_range";
    case ErrorKind::context_busy: return "context_busy";
    case ErrorKind::bad_open: return "bad_open";
  }
  return "?";
}

std::uint32_t status_bit_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::unknown_context: return reduction::status_unknown_context;
    case ErrorKind::after_completion: return reduction::status_after_completion;
    case ErrorKind::too_many_contributions: return reduction::status_too_many_contributions;
    case ErrorKind::beat_out_of_range: return reduction::status_beat_out_of_range;
    case ErrorKind::context_busy: return reduction::status_context_busy;
    case ErrorKind::bad_open: return reduction::status_bad_open;
  }
  return 0;
}

const char* to_string(Phase phase) {
  switch (phase) {
    case Phase::calm: return "calm";
    case Phase::busy: return "busy";
    case Phase::pressure: return "pressure";
  }
  return "?";
}

StimulusGenerator::StimulusGenerator(std::uint64_t seed, const StimulusOptions& options)
    : rng_(seed), options_(options) {
  const ReductionUnitConfig& config = options_.config;
  if (config.ways == 0 || config.contexts == 0 || config.context_max_beats == 0 ||
      config.buffer_bytes < 32 * config.ways || options_.max_contributions == 0) {
    throw std::invalid_argument("StimulusGenerator: empty unit structure or max_contributions == 0");
  }
  sets_ = config.buffer_bytes / 32 / config.ways;
  state_.assign(config.contexts, ContextState::never_opened);
  active_slot_.assign(config.contexts, -1);
  last_length_.assign(config.contexts, 0);
  pending_in_set_.resize(sets_);
  never_opened_count_ = config.contexts;
  new_phase();
}

std::uint32_t StimulusGenerator::set_of(std::uint32_t context, std::uint32_t beat) const {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(beat) + static_cast<std::uint64_t>(context) * 61u) %
                                    sets_);
}

void StimulusGenerator::new_phase() {
  static const std::uint32_t phase_weights[] = {35, 35, 30};
  phase_ = static_cast<Phase>(rng_.weighted(phase_weights));
  ++stats_.phases[static_cast<std::size_t>(phase_)];
  const std::uint32_t contexts = options_.config.contexts;
  const std::uint32_t max_beats = options_.config.context_max_beats;
  auto cap = [&](std::uint32_t v) { return std::max<std::uint32_t>(1, std::min(v, contexts - contexts / 8)); };
  // Calm: a few short contexts nearly in order (no eviction). Busy: more and longer ones. Pressure:
  // many contexts in random beat order, some 4000 beats buffered against 2048 slots: about half
  // of the beats are evicted.
  switch (phase_) {
    case Phase::calm:
      shape_ = {cap(static_cast<std::uint32_t>(rng_.between(1, 4))), 1, std::min<std::uint32_t>(32, max_beats), 0.1, 4};
      break;
    case Phase::busy:
      shape_ = {cap(static_cast<std::uint32_t>(rng_.between(4, 16))), 1, std::min<std::uint32_t>(128, max_beats), 0.4, 32};
      break;
    case Phase::pressure:
      shape_ = {cap(static_cast<std::uint32_t>(rng_.between(16, 48))), std::min<std::uint32_t>(32, max_beats),
                std::min<std::uint32_t>(256, max_beats), 0.9, 64};
      break;
  }
  phase_commands_left_ = rng_.between(1000, 20000);
}

std::uint32_t StimulusGenerator::random_length(std::uint32_t low, std::uint32_t high) {
  // Log-uniform: short contexts as often as long ones, per power of two.
  int low_log = 0;
  while ((2ull << low_log) <= low) ++low_log;
  int high_log = low_log;
  while ((2ull << high_log) <= high) ++high_log;
  const int k = static_cast<int>(rng_.between(static_cast<std::uint64_t>(low_log), static_cast<std::uint64_t>(high_log)));
  const std::uint64_t from = std::max<std::uint64_t>(low, 1ull << k);
  const std::uint64_t to = std::min<std::uint64_t>(high, (2ull << k) - 1);
  return static_cast<std::uint32_t>(from <= to ? rng_.between(from, to) : low);
}

std::uint16_t StimulusGenerator::random_contributions() {
  // The coverage bins: 1, 2, 3-4, 5-8, 9+; each bin equally likely.
  const std::uint32_t max = options_.max_contributions;
  static const std::uint32_t bin_low[] = {1, 2, 3, 5, 9};
  static const std::uint32_t bin_high[] = {1, 2, 4, 8, 0xFFFF};
  std::uint32_t bins = 0;
  while (bins < 5 && bin_low[bins] <= max) ++bins;
  const std::size_t bin = rng_.below(bins);
  return static_cast<std::uint16_t>(rng_.between(bin_low[bin], std::min(bin_high[bin], max)));
}

OpenContext StimulusGenerator::random_spec(std::uint16_t context, bool pressure) {
  const auto& pairs = legal_op_types();
  const OpType pair = pairs[rng_.below(pairs.size())];
  OpenContext spec;
  spec.context = context;
  spec.op = pair.op;
  spec.type = pair.type;
  spec.contributions = random_contributions();
  if (pressure && spec.contributions == 1 && options_.max_contributions >= 2) spec.contributions = 2;
  spec.length_beats = random_length(shape_.min_length, shape_.max_length);
  // Pressure contexts are smaller, so that there are many of them (every op, type and count).
  const std::uint32_t budget = pressure ? options_.max_contributions_per_context / 4 : options_.max_contributions_per_context;
  const std::uint32_t cap = std::max<std::uint32_t>(1, budget / spec.contributions);
  spec.length_beats = std::max<std::uint32_t>(1, std::min(spec.length_beats, cap));
  return spec;
}

int StimulusGenerator::free_context() {
  const auto contexts = static_cast<std::uint32_t>(state_.size());
  for (int attempt = 0; attempt < 8; ++attempt) {
    const auto id = static_cast<std::uint32_t>(rng_.below(contexts));
    if (state_[id] != ContextState::open) return static_cast<int>(id);
  }
  const auto start = static_cast<std::uint32_t>(rng_.below(contexts));
  for (std::uint32_t i = 0; i < contexts; ++i) {
    const std::uint32_t id = (start + i) % contexts;
    if (state_[id] != ContextState::open) return static_cast<int>(id);
  }
  return -1;
}

int StimulusGenerator::context_in_state(ContextState state) {
  const auto contexts = static_cast<std::uint32_t>(state_.size());
  const auto start = static_cast<std::uint32_t>(rng_.below(contexts));
  for (std::uint32_t i = 0; i < contexts; ++i) {
    const std::uint32_t id = (start + i) % contexts;
    if (state_[id] == state) return static_cast<int>(id);
  }
  return -1;
}

void StimulusGenerator::generate(std::size_t count, std::vector<Command>& commands,
                                 std::vector<std::uint32_t>& expected_error) {
  std::size_t produced = 0;
  while (produced < count) {
    if (phase_commands_left_-- == 0) new_phase();
    if (rng_.chance(options_.error_probability) && emit_error(commands, expected_error)) {
      ++produced;
      continue;
    }
    // With no context open the only useful step is to open one (always possible: the phase
    // targets leave free context ids).
    const bool want_open = !draining_ && active_.size() < shape_.target_active &&
                           (active_.empty() || rng_.chance(0.05));
    if (want_open && emit_open(commands, expected_error)) {
      ++produced;
      continue;
    }
    if (active_.empty()) return;  // draining, and every context has completed
    emit_contribution(rng_.below(active_.size()), commands, expected_error);
    ++produced;
  }
}

bool StimulusGenerator::emit_open(std::vector<Command>& commands, std::vector<std::uint32_t>& expected_error) {
  const int id = free_context();
  if (id < 0) return false;
  ActiveContext context;
  context.spec = random_spec(static_cast<std::uint16_t>(id), phase_ == Phase::pressure);
  const bool is_float_type = is_float(context.spec.type);
  // Under pressure, mostly the profiles that mix every operand class, so that evicted beats of
  // every class turn up; otherwise any profile.
  if (phase_ == Phase::pressure && rng_.chance(0.75)) {
    const bool first = rng_.coin();
    context.profile = is_float_type ? static_cast<std::uint8_t>(first ? float_mixed : float_specials)
                                    : static_cast<std::uint8_t>(first ? int_mixed : int_extremes);
  } else {
    context.profile = static_cast<std::uint8_t>(
        rng_.below(is_float_type ? static_cast<std::uint64_t>(float_profile_count)
                                 : static_cast<std::uint64_t>(int_profile_count)));
  }
  if (is_float_type) {
    for (auto& anchor : context.anchors) anchor = random_float_of_class(context.spec.type, fc_normal, exp_mid);
  }
  context.scattered = rng_.chance(shape_.scattered_fraction);
  context.window = static_cast<std::uint32_t>(rng_.between(1, shape_.max_window));
  const std::uint32_t length = context.spec.length_beats;
  context.order.resize(length);
  for (std::uint32_t beat = 0; beat < length; ++beat) context.order[beat] = beat;
  if (context.scattered) rng_.shuffle(context.order);
  context.remaining.assign(length, context.spec.contributions);
  context.tainted.assign(length, 0);
  context.remaining_total = static_cast<std::uint64_t>(length) * context.spec.contributions;

  if (state_[static_cast<std::size_t>(id)] == ContextState::never_opened) --never_opened_count_;
  state_[static_cast<std::size_t>(id)] = ContextState::open;
  active_slot_[static_cast<std::size_t>(id)] = static_cast<std::int32_t>(active_.size());
  Command command;
  command.kind = Command::Kind::open_context;
  command.open = context.spec;
  active_.push_back(std::move(context));
  commands.push_back(command);
  expected_error.push_back(0);
  ++expected_.contexts_opened;
  ++stats_.opens;
  ++stats_.commands;
  return true;
}

void StimulusGenerator::emit_contribution(std::size_t active_index, std::vector<Command>& commands,
                                          std::vector<std::uint32_t>& expected_error) {
  ActiveContext& context = active_[active_index];
  const std::size_t pending = context.order.size() - context.head;
  const std::size_t pick =
      context.head + rng_.below(context.scattered ? pending : std::min<std::size_t>(context.window, pending));
  const std::uint32_t beat = context.order[pick];
  const std::uint16_t contributions = context.spec.contributions;
  std::uint16_t& remaining = context.remaining[beat];

  // Shadow of the buffer's occupancy, for knowing which beats cannot have been evicted. Every
  // buffered beat is in pending_in_set_ (evicted ones too, so the count never underestimates):
  // a new beat arriving at a set that may be full may evict any of them.
  if (contributions > 1) {
    const std::uint32_t set = set_of(context.spec.context, beat);
    const std::uint64_t key = (static_cast<std::uint64_t>(context.spec.context) << 32) | beat;
    auto& pending_keys = pending_in_set_[set];
    if (remaining == contributions) {
      if (pending_keys.size() >= options_.config.ways) {
        for (const std::uint64_t other : pending_keys) taint(other);
      }
      pending_keys.push_back(key);
    }
    if (remaining == 1) pending_keys.erase(std::find(pending_keys.begin(), pending_keys.end(), key));
  }

  Command command;
  command.kind = Command::Kind::contribution;
  command.contribution.context = context.spec.context;
  command.contribution.beat = beat;
  command.contribution.data = random_operand(context);
  commands.push_back(command);
  expected_error.push_back(0);
  ++expected_.contributions;
  ++stats_.contributions;
  ++stats_.commands;

  --context.remaining_total;
  if (--remaining == 0) {
    context.last_completed_beat = beat;
    if (context.scattered) {
      std::swap(context.order[pick], context.order.back());
      context.order.pop_back();
    } else {
      for (std::size_t j = pick; j > context.head; --j) context.order[j] = context.order[j - 1];
      ++context.head;
    }
  }
  if (context.remaining_total == 0) complete(active_index);
}

void StimulusGenerator::taint(std::uint64_t key) {
  const auto id = static_cast<std::uint32_t>(key >> 32);
  const std::int32_t slot = active_slot_[id];
  if (slot >= 0) active_[static_cast<std::size_t>(slot)].tainted[static_cast<std::uint32_t>(key)] = 1;
}

void StimulusGenerator::complete(std::size_t active_index) {
  const std::uint16_t id = active_[active_index].spec.context;
  state_[id] = ContextState::complete;
  last_length_[id] = active_[active_index].spec.length_beats;
  active_slot_[id] = -1;
  if (active_index + 1 != active_.size()) {
    active_[active_index] = std::move(active_.back());
    active_slot_[active_[active_index].spec.context] = static_cast<std::int32_t>(active_index);
  }
  active_.pop_back();
  ++expected_.contexts_completed;
}

bool StimulusGenerator::emit_error(std::vector<Command>& commands, std::vector<std::uint32_t>& expected_error) {
  const auto first = static_cast<int>(rng_.below(error_kind_count));
  for (int i = 0; i < error_kind_count; ++i) {
    const auto kind = static_cast<ErrorKind>((first + i) % error_kind_count);
    Command command;
    if (!try_error(kind, command)) continue;
    commands.push_back(command);
    expected_error.push_back(status_bit_of(kind));
    expected_.sticky |= status_bit_of(kind);
    ++expected_.errors;
    ++stats_.errors[static_cast<std::size_t>(kind)];
    ++stats_.commands;
    return true;
  }
  return false;
}

bool StimulusGenerator::try_error(ErrorKind kind, Command& command) {
  const std::uint32_t contexts = options_.config.contexts;
  command.kind = Command::Kind::contribution;
  command.contribution.data = Beat{};
  for (auto& byte : command.contribution.data) byte = static_cast<std::uint8_t>(rng_.next());
  switch (kind) {
    case ErrorKind::unknown_context: {
      int id = -1;
      if (never_opened_count_ > 0 && rng_.coin()) id = context_in_state(ContextState::never_opened);
      if (id < 0) id = static_cast<int>(rng_.between(contexts, 0xFFFF));  // beyond the context table
      command.contribution.context = static_cast<std::uint16_t>(id);
      command.contribution.beat = static_cast<std::uint32_t>(rng_.below(16));
      return true;
    }
    case ErrorKind::after_completion: {
      const int id = context_in_state(ContextState::complete);
      if (id < 0) return false;
      command.contribution.context = static_cast<std::uint16_t>(id);
      command.contribution.beat = static_cast<std::uint32_t>(rng_.below(last_length_[static_cast<std::size_t>(id)]));
      return true;
    }
    case ErrorKind::too_many_contributions: {
      // Only to a beat certainly complete: all its contributions sent and never at risk of eviction
      // (an evicted beat takes further contributions as passthrough).
      if (active_.empty()) return false;
      const ActiveContext& context = active_[rng_.below(active_.size())];
      auto certainly_complete = [&](std::int64_t beat) {
        return beat >= 0 && context.remaining[static_cast<std::size_t>(beat)] == 0 &&
               context.tainted[static_cast<std::size_t>(beat)] == 0;
      };
      std::int64_t beat = context.last_completed_beat;
      for (int attempt = 0; attempt < 8 && !certainly_complete(beat); ++attempt) {
        beat = static_cast<std::int64_t>(rng_.below(context.spec.length_beats));
      }
      if (!certainly_complete(beat)) return false;
      command.contribution.context = context.spec.context;
      command.contribution.beat = static_cast<std::uint32_t>(beat);
      return true;
    }
    case ErrorKind::beat_out_of_range: {
      if (active_.empty()) return false;
      const ActiveContext& context = active_[rng_.below(active_.size())];
      const std::uint32_t length = context.spec.length_beats;
      command.contribution.context = context.spec.context;
      switch (rng_.below(3)) {
        case 0: command.contribution.beat = length; break;
        case 1: command.contribution.beat = 0xFFFFFFFFu; break;
        default: command.contribution.beat = static_cast<std::uint32_t>(rng_.between(length, 0xFFFFFFFFu)); break;
      }
      return true;
    }
    case ErrorKind::context_busy: {
      if (active_.empty()) return false;
      const std::uint16_t id = active_[rng_.below(active_.size())].spec.context;
      command.kind = Command::Kind::open_context;
      command.open = random_spec(id, false);
      return true;
    }
    case ErrorKind::bad_open: {
      const int id = free_context();
      if (id < 0) return false;
      command.kind = Command::Kind::open_context;
      command.open = random_spec(static_cast<std::uint16_t>(id), false);
      const std::uint32_t max_beats = options_.config.context_max_beats;
      switch (rng_.below(6)) {
        case 0: command.open.contributions = 0; break;
        case 1: command.open.length_beats = 0; break;
        case 2:
          command.open.length_beats = rng_.coin() ? max_beats + 1
                                                  : static_cast<std::uint32_t>(rng_.between(max_beats + 1, 0xFFFFFFFFu));
          break;
        case 3: command.open.op = static_cast<ReduceOp>(rng_.between(6, 7)); break;
        case 4: command.open.type = static_cast<ReduceType>(7); break;
        default: {
          // A bitwise operation on a float type.
          static const ReduceType floats[] = {ReduceType::f32, ReduceType::f16, ReduceType::bf16};
          command.open.op = static_cast<ReduceOp>(rng_.between(3, 5));
          command.open.type = floats[rng_.below(3)];
          break;
        }
      }
      return true;
    }
  }
  return false;
}

Beat StimulusGenerator::random_operand(const ActiveContext& context) {
  Beat beat{};
  const ReduceType type = context.spec.type;
  const bool float_type = is_float(type);
  for (int lane = 0; lane < lane_count(type); ++lane) {
    set_lane(beat, type, lane, float_type ? random_float_lane(context, lane) : random_int_lane(context));
  }
  return beat;
}

std::uint64_t StimulusGenerator::random_float_of_class(ReduceType type, int float_class, int exponent_range) {
  const FloatFormat f = float_format(type);
  const bool negative = rng_.coin();
  const std::uint64_t top = f.exp_all_ones() - 1;  // largest normal exponent field
  switch (float_class) {
    case fc_zero: return f.encode(negative, 0, 0);
    case fc_subnormal: {
      static const std::uint32_t shapes[] = {1, 1, 3};  // smallest, largest, any
      switch (rng_.weighted(shapes)) {
        case 0: return f.encode(negative, 0, 1);
        case 1: return f.encode(negative, 0, f.frac_mask());
        default: return f.encode(negative, 0, rng_.between(1, f.frac_mask()));
      }
    }
    case fc_inf: return f.encode(negative, f.exp_all_ones(), 0);
    case fc_nan: {
      const std::uint64_t payload = rng_.below(f.frac_mask() + 1);
      const std::uint64_t fraction = rng_.coin() ? (payload | f.quiet_bit()) : ((payload & ~f.quiet_bit()) | 1);
      return f.encode(negative, f.exp_all_ones(), fraction);
    }
    default: break;
  }
  std::uint64_t exponent = 0;
  const auto bias = static_cast<std::uint64_t>(f.bias());
  switch (exponent_range) {
    case exp_mid: exponent = rng_.between(bias - std::min<std::uint64_t>(12, bias - 1), bias + 12); break;
    case exp_wide: exponent = rng_.between(1, top); break;
    case exp_top: exponent = top - rng_.below(3); break;
    default: exponent = rng_.between(1, 3); break;
  }
  static const std::uint32_t fraction_shapes[] = {1, 1, 6};  // zero, all ones, random
  std::uint64_t fraction = 0;
  switch (rng_.weighted(fraction_shapes)) {
    case 0: fraction = 0; break;
    case 1: fraction = f.frac_mask(); break;
    default: fraction = rng_.below(f.frac_mask() + 1); break;
  }
  return f.encode(negative, exponent, fraction);
}

std::uint64_t StimulusGenerator::random_float_lane(const ActiveContext& context, int lane) {
  const ReduceType type = context.spec.type;
  const FloatFormat f = float_format(type);
  const std::uint64_t anchor = context.anchors[static_cast<std::size_t>(lane)];
  switch (context.profile) {
    case float_mixed: {
      static const std::uint32_t weights[] = {4, 4, 84, 4, 4};
      const auto c = static_cast<int>(rng_.weighted(weights));
      return random_float_of_class(type, c, rng_.coin() ? exp_mid : exp_wide);
    }
    case float_specials: {
      static const std::uint32_t weights[] = {20, 20, 20, 20, 20};
      const auto c = static_cast<int>(rng_.weighted(weights));
      return random_float_of_class(type, c, exp_wide);
    }
    case float_overflow: {
      static const std::uint32_t weights[] = {5, 0, 85, 5, 5};
      const auto c = static_cast<int>(rng_.weighted(weights));
      return random_float_of_class(type, c, exp_top) & (rng_.chance(0.85) ? ~f.sign_bit() : ~0ull);
    }
    case float_ties: {
      // Half an ulp of the anchor (exponent field e - frac_bits - 1): anchor + half ulp is a tie.
      const std::uint64_t e = f.exponent_of(anchor);
      const auto shift = static_cast<std::uint64_t>(f.frac_bits) + 1;
      const bool negative = rng_.chance(0.3);
      static const std::uint32_t shapes[] = {35, 40, 10, 15};
      switch (rng_.weighted(shapes)) {
        case 0: return anchor;
        case 1:
          if (e > shift) return f.encode(negative, e - shift, rng_.coin() ? 0 : f.quiet_bit());  // 1 or 1.5 half-ulps
          return f.encode(negative, 0, 1);
        case 2:
          if (e > shift - 1) return f.encode(negative, e - shift + 1, 0);  // one ulp
          return f.encode(negative, 0, 1);
        default: return random_float_of_class(type, fc_normal, exp_mid);
      }
    }
    case float_cancellation: {
      static const std::uint32_t shapes[] = {70, 15, 15};
      switch (rng_.weighted(shapes)) {
        case 0: return rng_.coin() ? anchor : (anchor ^ f.sign_bit());
        case 1: return random_float_of_class(type, fc_zero, exp_mid);
        default: return f.encode(rng_.coin(), f.exponent_of(anchor), rng_.below(f.frac_mask() + 1));
      }
    }
    case float_tiny: {
      static const std::uint32_t weights[] = {15, 50, 35, 0, 0};
      const auto c = static_cast<int>(rng_.weighted(weights));
      return random_float_of_class(type, c, exp_bottom);
    }
    default: return random_float_of_class(type, fc_normal, exp_mid);
  }
}

std::uint64_t StimulusGenerator::random_int_lane(const ActiveContext& context) {
  const ReduceType type = context.spec.type;
  const int bits = lane_bytes(type) * 8;
  const std::uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  const bool is_signed = type == ReduceType::s32 || type == ReduceType::s64;
  static const std::uint32_t profiles[int_profile_count][4] = {
      {10, 35, 40, 15},  // mixed: zero, small, large, extreme
      {10, 15, 15, 60},  // extremes
      {20, 80, 0, 0},    // small
      {0, 0, 100, 0},    // random bits
  };
  std::uint32_t weights[4];
  std::copy(std::begin(profiles[context.profile]), std::end(profiles[context.profile]), weights);
  switch (rng_.weighted(weights)) {
    case 0: return 0;
    case 1: {
      const std::uint64_t magnitude = rng_.between(1, 255);
      return (is_signed && rng_.coin()) ? ((~magnitude + 1) & mask) : magnitude;
    }
    case 2: return rng_.next() & mask;
    default: {
      const std::uint64_t offset = rng_.below(4);
      if (!is_signed) return mask - offset;
      const std::uint64_t sign = 1ull << (bits - 1);
      return rng_.coin() ? (sign - 1 - offset) : (sign + offset);  // near the maximum or the minimum
    }
  }
}

}  // namespace nvsvp::testbench
