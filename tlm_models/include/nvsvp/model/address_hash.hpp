// Address interleaving over links: which of `ways` links carries the granule holding `address`.
// A hash of the granule number (not a plain modulo) so that strided buffers spread evenly,
// as the hardware's address hashing does. SystemC-free.
#pragma once

#include <cstdint>

namespace nvsvp::model {

inline uint32_t interleave_way(uint64_t address, uint32_t granule_bytes, uint32_t ways) {
  uint64_t x = address / granule_bytes;
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return static_cast<uint32_t>(x % ways);
}

}  // namespace nvsvp::model
