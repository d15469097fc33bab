#include "nvsvp/model/component_log.hpp"

#include <cstdio>
#include <iostream>

namespace nvsvp::model {

namespace {

void stderr_sink(hw::LogLevel level, std::string_view component, const sc_core::sc_time& now,
                 std::string_view message) {
  std::cerr << format_log_line(level, component, now, message) << '\n';
}

LogSink g_sink = &stderr_sink;

}  // namespace

void set_log_sink(LogSink sink) { g_sink = sink != nullptr ? sink : &stderr_sink; }

std::string format_log_line(hw::LogLevel level, std::string_view component, const sc_core::sc_time& now,
                            std::string_view message) {
  // One count is a picosecond (the models require it): the time prints exactly, as ns with 3 decimals.
  const uint64_t ps = now.value();
  char time[40];
  std::snprintf(time, sizeof time, "%llu.%03llu ns", static_cast<unsigned long long>(ps / 1000),
                static_cast<unsigned long long>(ps % 1000));
  std::string line = time;
  line += " [";
  line += hw::to_string(level);
  line += "] ";
  line += component;
  line += ": ";
  line += message;
  return line;
}

void ComponentLog::write(hw::LogLevel level, std::string_view message) const {
  g_sink(level, component_, sc_core::sc_time_stamp(), message);
}

}  // namespace nvsvp::model
