// GPU and port masks wider than one word (hw/bit_mask.hpp): bits past 64 set, tested, counted and
// iterated like the low ones; register words in order; out-of-range bits refused, not dropped.
#include <gtest/gtest.h>

#include <stdexcept>
#include <type_traits>
#include <vector>

#include "nvsvp/hw/bit_mask.hpp"

namespace nvsvp::hw {
namespace {

std::vector<uint32_t> bits_of(const GpuMask& mask) {
  std::vector<uint32_t> bits;
  for (uint32_t b : mask) bits.push_back(b);
  return bits;
}

TEST(BitMask, BitsAboveSixtyFourAreKeptTestedAndCounted) {
  GpuMask mask;
  mask.set(3).set(63).set(64).set(71).set(127);
  EXPECT_TRUE(mask.test(3));
  EXPECT_TRUE(mask.test(64));
  EXPECT_TRUE(mask.test(71));
  EXPECT_TRUE(mask.test(127));
  EXPECT_FALSE(mask.test(65));
  EXPECT_FALSE(mask.test(128));  // beyond the mask: nothing there
  EXPECT_EQ(mask.count(), 5u);
  EXPECT_EQ(mask.lowest(), 3u);
  EXPECT_EQ(bits_of(mask), (std::vector<uint32_t>{3, 63, 64, 71, 127}));
  mask.set(64, false);
  EXPECT_FALSE(mask.test(64));
  EXPECT_EQ(mask.count(), 4u);
}

TEST(BitMask, IterationSkipsEmptyWordsAndAnEmptyMaskHasNoBits) {
  EXPECT_TRUE(bits_of(GpuMask()).empty());
  EXPECT_EQ(GpuMask().lowest(), GpuMask::kBits);
  EXPECT_TRUE(GpuMask().none());
  EXPECT_EQ(bits_of(GpuMask().set(100)), (std::vector<uint32_t>{100}));
  EXPECT_EQ(GpuMask().set(100).lowest(), 100u);
}

TEST(BitMask, OneWordValuesReadAsTheyAlwaysDid) {
  const GpuMask mask = 0b1011;
  EXPECT_EQ(bits_of(mask), (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(mask.word64(0), 0b1011u);
  EXPECT_EQ(mask.word64(1), 0u);
  EXPECT_EQ(hex_text(mask), hex_text(uint64_t{0b1011}));
  EXPECT_EQ(hex_text(GpuMask(~0ull)), "0xffffffffffffffff");
  EXPECT_EQ(hex_text(GpuMask().set(64).set(0)), "0x10000000000000001");
}

TEST(BitMask, FirstNBitsAndFits) {
  const GpuMask seventy_two = GpuMask::first(72);
  EXPECT_EQ(seventy_two.count(), 72u);
  EXPECT_TRUE(seventy_two.test(71));
  EXPECT_FALSE(seventy_two.test(72));
  EXPECT_EQ(GpuMask::first(64), GpuMask(~0ull));
  EXPECT_TRUE(GpuMask::first(0).none());
  EXPECT_EQ(GpuMask::first(128).count(), 128u);
  EXPECT_THROW(GpuMask::first(129), std::out_of_range);
  EXPECT_TRUE(seventy_two.fits(72));
  EXPECT_FALSE(seventy_two.fits(71));
  EXPECT_TRUE(GpuMask().fits(0));
}

TEST(BitMask, RegisterWordsHoldThirtyTwoBitsEachLowestFirst) {
  PortMask mask;
  mask.set(0).set(33).set(70).set(127);
  EXPECT_EQ(mask.word32(0), 0x1u);
  EXPECT_EQ(mask.word32(1), 0x2u);
  EXPECT_EQ(mask.word32(2), 0x40u);
  EXPECT_EQ(mask.word32(3), 0x80000000u);
  PortMask copy;
  for (uint32_t w = 0; w < PortMask::kWords32; ++w) copy.set_word32(w, mask.word32(w));
  EXPECT_EQ(copy, mask);
  copy.set_word32(2, 0);  // a word written replaces its 32 bits only
  EXPECT_FALSE(copy.test(70));
  EXPECT_TRUE(copy.test(127));
  EXPECT_TRUE(copy.test(33));
  EXPECT_THROW(mask.word32(PortMask::kWords32), std::out_of_range);
}

TEST(BitMask, ABitBeyondTheMaskIsRefusedNotDropped) {
  GpuMask mask;
  EXPECT_THROW(mask.set(128), std::out_of_range);
  EXPECT_TRUE(mask.none());
}

TEST(BitMask, OperatorsWorkAcrossWords) {
  const GpuMask a = GpuMask().set(1).set(70);
  const GpuMask b = GpuMask().set(70).set(100);
  EXPECT_EQ(bits_of(a | b), (std::vector<uint32_t>{1, 70, 100}));
  EXPECT_EQ(bits_of(a & b), (std::vector<uint32_t>{70}));
  EXPECT_EQ((~GpuMask()).count(), 128u);
  GpuMask c = a;
  c |= b;
  c &= GpuMask().set(100);
  EXPECT_EQ(bits_of(c), (std::vector<uint32_t>{100}));
  EXPECT_NE(a, b);
}

// Port and GPU masks are different types: one cannot be handed where the other is meant.
static_assert(!std::is_convertible_v<PortMask, GpuMask>);
static_assert(!std::is_convertible_v<GpuMask, PortMask>);

}  // namespace
}  // namespace nvsvp::hw
