// Log levels, shared by the models, the firmware (through its Hal) and the platform that sets
// them per component (`nvsvp run --log PATTERN=LEVEL`). SystemC-free: firmware includes it.
#pragma once

#include <cstdint>
#include <string_view>

namespace nvsvp::hw {

// In increasing severity; a component prints a line when the line's level is at least its own.
// `off` prints nothing (no line has that level).
enum class LogLevel : uint8_t { trace, debug, info, warn, error, off };

// What a component prints unless told otherwise: warnings and errors.
inline constexpr LogLevel kDefaultLogLevel = LogLevel::warn;

inline const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::trace: return "trace";
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
  }
  return "?";
}

// The levels a user may name, in the order to list them in a message.
inline constexpr std::string_view kLogLevelNames = "error, warn, info, debug, trace";

// Parses one of error, warn, info, debug, trace; false for anything else.
inline bool log_level_from_string(std::string_view text, LogLevel& level) {
  for (LogLevel l : {LogLevel::error, LogLevel::warn, LogLevel::info, LogLevel::debug, LogLevel::trace}) {
    if (text == to_string(l)) {
      level = l;
      return true;
    }
  }
  return false;
}

}  // namespace nvsvp::hw
