// Firmware's log lines go through its Hal (hal.hpp): FW_LOG(hal, info, "chip " << c << " up")
// formats the line only when the Hal says a line of that level is printed.
#pragma once

#include <sstream>

#include "nvsvp/fw/hal.hpp"

#define FW_LOG(hal, level, stream_expression)                               \
  do {                                                                      \
    if ((hal).log_enabled(::nvsvp::hw::LogLevel::level)) {                  \
      std::ostringstream fw_log_line_;                                      \
      fw_log_line_ << stream_expression;                                    \
      (hal).log(::nvsvp::hw::LogLevel::level, fw_log_line_.str());          \
    }                                                                       \
  } while (false)
