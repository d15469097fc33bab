// GPU and port masks in a switch chip's registers: `words` consecutive 32-bit words from the
// first word's offset (docs/registers.md). The only way firmware reads or writes one, so that no
// caller hand-computes mask offsets or forgets the upper words.
#pragma once

#include <cstdint>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/hw/bit_mask.hpp"

namespace nvsvp::fw {

// Words 0 .. words-1 of `mask`; words at most Mask::kWords32 (std::out_of_range beyond).
template <class Mask>
void write_mask(Hal& hal, uint32_t chip, uint32_t first_word_offset, const Mask& mask, uint32_t words) {
  for (uint32_t w = 0; w < words; ++w) hal.write_register(chip, first_word_offset + 4 * w, mask.word32(w));
}

// The mask words 0 .. words-1 hold; the bits of the words not read are 0.
template <class Mask>
Mask read_mask(Hal& hal, uint32_t chip, uint32_t first_word_offset, uint32_t words) {
  Mask mask;
  for (uint32_t w = 0; w < words; ++w) mask.set_word32(w, hal.read_register(chip, first_word_offset + 4 * w));
  return mask;
}

}  // namespace nvsvp::fw
