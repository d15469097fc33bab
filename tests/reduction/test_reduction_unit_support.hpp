// Shared by the reduction unit tests: command and beat builders, and a random command stream
// generator (interleaved contexts, eviction pressure, injected errors).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::reduction::test {

inline Command open_command(std::uint16_t context, std::uint16_t contributions, ReduceOp op,
                            ReduceType type, std::uint32_t length_beats) {
  Command command;
  command.kind = Command::Kind::open_context;
  command.open = OpenContext{context, contributions, op, type, length_beats};
  return command;
}

// An OpenContext with raw op/type codes, for the invalid ones.
inline Command open_command_raw(std::uint16_t context, std::uint16_t contributions,
                                std::uint8_t op_code, std::uint8_t type_code,
                                std::uint32_t length_beats) {
  return open_command(context, contributions, static_cast<ReduceOp>(op_code),
                      static_cast<ReduceType>(type_code), length_beats);
}

inline Command contribution(std::uint16_t context, std::uint32_t beat, const Beat& data) {
  Command command;
  command.kind = Command::Kind::contribution;
  command.contribution = Contribution{context, beat, data};
  return command;
}

inline Beat u32_beat(std::uint32_t l0, std::uint32_t l1, std::uint32_t l2, std::uint32_t l3) {
  const std::array<std::uint32_t, 4> lanes{l0, l1, l2, l3};
  Beat beat{};
  for (int lane = 0; lane < 4; ++lane)
    for (int byte = 0; byte < 4; ++byte)
      beat[4 * lane + byte] = static_cast<std::uint8_t>(lanes[lane] >> (8 * byte));
  return beat;
}

// The same value in all four 32-bit lanes.
inline Beat u32_splat(std::uint32_t value) { return u32_beat(value, value, value, value); }

inline Beat u64_beat(std::uint64_t l0, std::uint64_t l1) {
  return u32_beat(static_cast<std::uint32_t>(l0), static_cast<std::uint32_t>(l0 >> 32),
                  static_cast<std::uint32_t>(l1), static_cast<std::uint32_t>(l1 >> 32));
}

inline Beat f32_beat(float l0, float l1, float l2, float l3) {
  const std::array<float, 4> lanes{l0, l1, l2, l3};
  std::array<std::uint32_t, 4> bits{};
  std::memcpy(bits.data(), lanes.data(), sizeof bits);
  return u32_beat(bits[0], bits[1], bits[2], bits[3]);
}

inline Beat u16_splat(std::uint16_t value) {
  Beat beat{};
  for (int lane = 0; lane < 8; ++lane) {
    beat[2 * lane] = static_cast<std::uint8_t>(value);
    beat[2 * lane + 1] = static_cast<std::uint8_t>(value >> 8);
  }
  return beat;
}

inline ResultBeat result_beat(std::uint16_t context, std::uint32_t beat, const Beat& data,
                              std::uint16_t contributions, bool partial) {
  ResultBeat result;
  result.context = context;
  result.beat = beat;
  result.data = data;
  result.contributions = contributions;
  result.partial = partial;
  return result;
}

// A random command stream for default-structure units. Contexts open with random op, type,
// contribution count and length; every context's N x length contributions arrive in random
// order, interleaved with the other open contexts; a fraction of commands are errors (unknown or
// out-of-range contexts, beats out of range, surplus contributions, bad or busy opens).
struct RandomStreamOptions {
  std::uint32_t contexts = 64;        // context indices used (the unit has 64)
  std::uint32_t max_open = 16;        // contexts open at once
  std::uint32_t max_length = 64;      // beats per context: 1..max_length
  std::uint32_t max_contributions = 4;
  double error_rate = 0.02;
};

class RandomCommandStream {
 public:
  RandomCommandStream(std::uint64_t seed, const RandomStreamOptions& options)
      : random_(seed), options_(options), pending_(options.contexts), lengths_(options.contexts) {}

  std::vector<Command> next(std::size_t count) {
    std::vector<Command> commands;
    commands.reserve(count);
    while (commands.size() < count) commands.push_back(one());
    return commands;
  }

 private:
  std::uint32_t below(std::uint32_t bound) {
    return std::uniform_int_distribution<std::uint32_t>(0, bound - 1)(random_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(random_) < p; }

  Beat random_data() {
    Beat beat{};
    for (auto& byte : beat) byte = static_cast<std::uint8_t>(below(256));
    return beat;
  }

  Command open_new(std::uint32_t context) {
    const std::uint16_t n = static_cast<std::uint16_t>(1 + below(options_.max_contributions));
    const std::uint32_t length = 1 + below(options_.max_length);
    ReduceType type = static_cast<ReduceType>(below(7));
    ReduceOp op = static_cast<ReduceOp>(below(type <= ReduceType::bf16 ? 3 : 6));
    std::vector<std::uint32_t>& beats = pending_[context];
    beats.clear();
    for (std::uint32_t b = 0; b < length; ++b)
      for (std::uint16_t i = 0; i < n; ++i) beats.push_back(b);
    std::shuffle(beats.begin(), beats.end(), random_);
    open_.push_back(context);
    lengths_[context] = length;
    return open_command(static_cast<std::uint16_t>(context), n, op, type, length);
  }

  Command error() {
    switch (below(6)) {
      case 0:  // a context index the unit does not have
        return contribution(static_cast<std::uint16_t>(64 + below(1000)), 0, random_data());
      case 1:  // a beat out of range (or an unknown context, if it never opened)
      {
        const std::uint32_t context = below(options_.contexts);
        return contribution(static_cast<std::uint16_t>(context), lengths_[context] + below(4),
                            random_data());
      }
      case 2:  // surplus contribution to a random beat: too many, after completion or unknown
      {
        const std::uint32_t context = below(options_.contexts);
        return contribution(static_cast<std::uint16_t>(context),
                            below(lengths_[context] == 0 ? 1 : lengths_[context]), random_data());
      }
      case 3:  // bad open: zero length or a bitwise op on a float type
        return chance(0.5) ? open_command(static_cast<std::uint16_t>(below(options_.contexts)), 2,
                                          ReduceOp::add, ReduceType::u32, 0)
                           : open_command(static_cast<std::uint16_t>(below(options_.contexts)), 2,
                                          ReduceOp::bit_xor, ReduceType::bf16, 4);
      case 4:  // bad open: unknown codes
        return open_command_raw(static_cast<std::uint16_t>(below(options_.contexts)), 1,
                                static_cast<std::uint8_t>(6 + below(250)), 0, 1);
      default:  // open of a context that may be busy
        return open_command(static_cast<std::uint16_t>(below(options_.contexts)), 1,
                            ReduceOp::add, ReduceType::s64, 1);
    }
  }

  Command one() {
    if (chance(options_.error_rate)) return error();
    // Open another context while there is room and a closed one to take.
    if (open_.size() < options_.max_open && (open_.empty() || chance(0.05))) {
      for (std::uint32_t tries = 0; tries < 8; ++tries) {
        const std::uint32_t context = below(options_.contexts);
        if (pending_[context].empty() &&
            std::find(open_.begin(), open_.end(), context) == open_.end())
          return open_new(context);
      }
    }
    const std::size_t pick = below(static_cast<std::uint32_t>(open_.size()));
    const std::uint32_t context = open_[pick];
    std::vector<std::uint32_t>& beats = pending_[context];
    const std::uint32_t beat = beats.back();
    beats.pop_back();
    if (beats.empty()) open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(pick));
    return contribution(static_cast<std::uint16_t>(context), beat, random_data());
  }

  std::mt19937_64 random_;
  RandomStreamOptions options_;
  std::vector<std::vector<std::uint32_t>> pending_;  // per context, beats still to contribute
  std::vector<std::uint32_t> open_;                  // contexts with pending contributions
  std::vector<std::uint32_t> lengths_;  // per context, the length of its last open
};

}  // namespace nvsvp::reduction::test

namespace nvsvp::reduction {

// gtest prints result beats readably (found by argument-dependent lookup).
inline void PrintTo(const ResultBeat& beat, std::ostream* stream) {
  std::ostream& out = *stream;
  out << "{context " << beat.context << ", beat " << beat.beat << ", data";
  for (int i = 15; i >= 0; --i) {
    static const char* digits = "0123456789abcdef";
    if (i % 4 == 3) out << ' ';
    out << digits[beat.data[i] >> 4] << digits[beat.data[i] & 15];
  }
  out << ", contributions " << beat.contributions << ", partial " << beat.partial << "}";
}

}  // namespace nvsvp::reduction
