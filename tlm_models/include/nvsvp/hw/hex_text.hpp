// A value as "0x..." in lower-case hexadecimal, for error messages about addresses and register
// values (firmware and models word them alike). SystemC-free.
#pragma once

#include <cstdint>
#include <string>

namespace nvsvp::hw {

inline std::string hex_text(uint64_t value) {
  static const char* const digits = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), digits[value & 0xf]);
    value >>= 4;
  } while (value != 0);
  return "0x" + text;
}

}  // namespace nvsvp::hw
