// Masks of GPUs and of switch ports wider than one 64-bit word: a GB200 NVL72 switch chip has 72
// ports and its multicast groups up to 72 members. One type for both, told apart by a tag so that
// a port mask is never passed where GPU members are meant. SystemC-free (firmware uses it).
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "nvsvp/hw/hex_text.hpp"

namespace nvsvp::hw {

// The fabric's widths: what a route entry, a group's members and LINK_DOWN_PORTS can name.
inline constexpr uint32_t kMaxGpus = 128;
inline constexpr uint32_t kMaxPortsPerChip = 128;

template <uint32_t Bits, class Tag>
class BitMask {
 public:
  static constexpr uint32_t kBits = Bits;
  static constexpr uint32_t kWords64 = (Bits + 63) / 64;
  static constexpr uint32_t kWords32 = (Bits + 31) / 32;

  constexpr BitMask() = default;
  // Implicit from one word, so that masks below 64 bits read as they always did (0b101).
  constexpr BitMask(uint64_t low) : words_{low} {}  // NOLINT(google-explicit-constructor)

  // Bits [0, n). Throws std::out_of_range for n > Bits.
  static BitMask first(uint32_t n) {
    if (n > Bits) throw std::out_of_range("bit mask: " + std::to_string(n) + " bits, at most " + std::to_string(Bits));
    BitMask mask;
    for (uint32_t w = 0; w < kWords64 && n > 64 * w; ++w) {
      const uint32_t in_word = n - 64 * w;
      mask.words_[w] = in_word >= 64 ? ~0ull : (1ull << in_word) - 1;
    }
    return mask;
  }

  // False beyond the mask: a lookup of a bit the hardware cannot hold finds nothing.
  constexpr bool test(uint32_t i) const { return i < Bits && ((words_[i / 64] >> (i % 64)) & 1u) != 0; }
  // Throws std::out_of_range for i >= Bits: a GPU or port is named, never dropped.
  BitMask& set(uint32_t i, bool on = true) {
    if (i >= Bits) throw std::out_of_range("bit mask: bit " + std::to_string(i) + " of " + std::to_string(Bits));
    const uint64_t bit = 1ull << (i % 64);
    words_[i / 64] = on ? (words_[i / 64] | bit) : (words_[i / 64] & ~bit);
    return *this;
  }

  uint32_t count() const {
    uint32_t n = 0;
    for (uint64_t w : words_) n += static_cast<uint32_t>(__builtin_popcountll(w));
    return n;
  }
  constexpr bool any() const {
    for (uint64_t w : words_) {
      if (w != 0) return true;
    }
    return false;
  }
  constexpr bool none() const { return !any(); }
  // The lowest set bit; Bits when none is set.
  uint32_t lowest() const {
    for (uint32_t w = 0; w < kWords64; ++w) {
      if (words_[w] != 0) return 64 * w + static_cast<uint32_t>(__builtin_ctzll(words_[w]));
    }
    return Bits;
  }
  // No bit at or above n (a mask checked against a chip's ports or a fabric's GPUs).
  bool fits(uint32_t n) const { return n >= Bits || (*this & ~first(n)).none(); }

  // 32-bit words, word w holding bits 32w .. 32w+31: how registers expose a mask.
  uint32_t word32(uint32_t w) const {
    check_word32(w);
    return static_cast<uint32_t>(words_[w / 2] >> (32 * (w % 2)));
  }
  void set_word32(uint32_t w, uint32_t value) {
    check_word32(w);
    const uint32_t shift = 32 * (w % 2);
    words_[w / 2] = (words_[w / 2] & ~(0xffffffffull << shift)) | (uint64_t{value} << shift);
  }
  constexpr uint64_t word64(uint32_t w) const { return words_.at(w); }

  // The set bits, ascending.
  class iterator {
   public:
    iterator(const BitMask& mask, uint32_t word) : mask_(mask), word_(word), rest_(word < kWords64 ? mask.words_[word] : 0) {
      skip_empty();
    }
    uint32_t operator*() const { return 64 * word_ + static_cast<uint32_t>(__builtin_ctzll(rest_)); }
    iterator& operator++() {
      rest_ &= rest_ - 1;
      skip_empty();
      return *this;
    }
    bool operator!=(const iterator& other) const { return word_ != other.word_ || rest_ != other.rest_; }

   private:
    void skip_empty() {
      while (rest_ == 0 && word_ < kWords64) {
        if (++word_ < kWords64) rest_ = mask_.words_[word_];
      }
    }
    const BitMask& mask_;
    uint32_t word_;
    uint64_t rest_;
  };
  iterator begin() const { return iterator(*this, 0); }
  iterator end() const { return iterator(*this, kWords64); }

  friend constexpr BitMask operator|(BitMask a, const BitMask& b) {
    for (uint32_t w = 0; w < kWords64; ++w) a.words_[w] |= b.words_[w];
    return a;
  }
  friend constexpr BitMask operator&(BitMask a, const BitMask& b) {
    for (uint32_t w = 0; w < kWords64; ++w) a.words_[w] &= b.words_[w];
    return a;
  }
  friend constexpr BitMask operator~(BitMask a) {
    for (uint64_t& w : a.words_) w = ~w;
    return a;
  }
  BitMask& operator|=(const BitMask& b) { return *this = *this | b; }
  BitMask& operator&=(const BitMask& b) { return *this = *this & b; }
  friend constexpr bool operator==(const BitMask& a, const BitMask& b) { return a.words_ == b.words_; }
  friend constexpr bool operator!=(const BitMask& a, const BitMask& b) { return !(a == b); }

 private:
  static void check_word32(uint32_t w) {
    if (w >= kWords32) throw std::out_of_range("bit mask: word " + std::to_string(w) + " of " + std::to_string(kWords32));
  }
  std::array<uint64_t, kWords64> words_{};
};

struct GpuBits;
struct PortBits;
using GpuMask = BitMask<kMaxGpus, GpuBits>;            // bit g: GPU g
using PortMask = BitMask<kMaxPortsPerChip, PortBits>;  // bit p: port p of one chip

// "0x..." as hex_text gives for one word (the same text below 2^64), for messages and logs.
template <uint32_t Bits, class Tag>
std::string hex_text(const BitMask<Bits, Tag>& mask) {
  uint32_t top = BitMask<Bits, Tag>::kWords64;
  while (top > 1 && mask.word64(top - 1) == 0) --top;
  std::string text = hex_text(mask.word64(top - 1));
  for (uint32_t w = top - 1; w-- > 0;) {
    const std::string word = hex_text(mask.word64(w)).substr(2);
    text += std::string(16 - word.size(), '0') + word;
  }
  return text;
}

}  // namespace nvsvp::hw
