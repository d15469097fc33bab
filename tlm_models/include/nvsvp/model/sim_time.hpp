// Times as integer picoseconds: the models build sc_time from a count of the kernel's time unit
// (1 ps, SystemC's default resolution, which the platform checks) instead of from doubles.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include <systemc>

namespace nvsvp::model {

// sc_time::from_value() is a library call (it also marks the resolution fixed, which
// require_picosecond_resolution() has done by elaboration's end); the models build a time several
// times per message, so the value is stored directly. sc_time is exactly one count of the unit.
inline sc_core::sc_time picoseconds(uint64_t ps) {
  static_assert(sizeof(sc_core::sc_time) == sizeof(uint64_t), "sc_time is one 64-bit count");
  sc_core::sc_time t;
  std::memcpy(static_cast<void*>(&t), &ps, sizeof ps);
  return t;
}

inline uint64_t to_picoseconds(double nanoseconds) {
  return static_cast<uint64_t>(std::llround(nanoseconds * 1000.0));
}

// The current simulation time. sc_time_stamp() is a library call, and the compiler keeps
// sc_get_curr_simcontext() out of line (it may create the context); the models ask for the time
// several times per message, when the context exists.
inline const sc_core::sc_time& current_time() {
  sc_core::sc_simcontext* context = sc_core::sc_curr_simcontext;
  if (__builtin_expect(context == nullptr, 0)) context = sc_core::sc_get_curr_simcontext();
  return context->time_stamp();
}

// Call during elaboration: the models assume 1 ps resolution.
inline void require_picosecond_resolution(const char* who) {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS)) {
    SC_REPORT_FATAL(who, "nvsvp models need SystemC's time resolution to be 1 ps");
  }
}

// sc_max_time() is a library call; models compare against it in inner loops.
inline const sc_core::sc_time& never() {
  static const sc_core::sc_time t = sc_core::sc_max_time();
  return t;
}

}  // namespace nvsvp::model
