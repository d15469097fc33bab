// Per-component logging for the models. Each model owns a ComponentLog; whoever assembles the
// models (the platform) names it and sets its level, and sets the one sink every line goes to.
// A call site costs one compare of a byte while its level is off: NVSVP_LOG formats nothing
// unless the line will be printed. Lines carry the simulated time and the component's name.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include <systemc>

#include "nvsvp/hw/log_level.hpp"

namespace nvsvp::model {

// Where printed lines go. Without one, lines go to stderr as "<time> ns [<level>] <component>: <message>".
using LogSink = void (*)(hw::LogLevel level, std::string_view component, const sc_core::sc_time& now,
                         std::string_view message);
void set_log_sink(LogSink sink);

// Formats a line the way the default sink prints it (the platform's sink prints the same).
std::string format_log_line(hw::LogLevel level, std::string_view component, const sc_core::sc_time& now,
                            std::string_view message);

class ComponentLog {
 public:
  bool on(hw::LogLevel level) const { return level >= level_; }
  hw::LogLevel level() const { return level_; }
  const std::string& component() const { return component_; }
  // The component's name in the lines (the platform's names: switch_0, gpu_3, ...) and its level.
  void configure(std::string component, hw::LogLevel level) {
    component_ = std::move(component);
    level_ = level;
  }
  // Prints `message` at `level` with the current simulated time (callers check on() first).
  void write(hw::LogLevel level, std::string_view message) const;

 private:
  hw::LogLevel level_ = hw::kDefaultLogLevel;
  std::string component_;
};

}  // namespace nvsvp::model

// NVSVP_LOG(log, debug, "route to " << gpu): `log` is a ComponentLog; the stream expression is
// evaluated only when the line is printed.
#define NVSVP_LOG(log, level, stream_expression)                                   \
  do {                                                                             \
    if ((log).on(::nvsvp::hw::LogLevel::level)) {                                  \
      std::ostringstream nvsvp_log_line_;                                          \
      nvsvp_log_line_ << stream_expression;                                        \
      (log).write(::nvsvp::hw::LogLevel::level, nvsvp_log_line_.str());            \
    }                                                                              \
  } while (false)
