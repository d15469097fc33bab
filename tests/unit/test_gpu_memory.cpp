// GpuMemory: zero for unwritten bytes, exact round trips across granule boundaries, a write count
// per 16-byte granule, and declare_buffer() as a pure hint: the dense path behaves exactly like
// the sparse one, including for granules written before the declaration.
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "nvsvp/model/gpu_memory.hpp"

namespace nvsvp::model {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + 7 * i + 1);
  return v;
}

std::vector<uint8_t> read_memory(const GpuMemory& m, uint64_t address, size_t n) {
  std::vector<uint8_t> v(n, 0xAA);
  m.read(address, v.data(), n);
  return v;
}

TEST(GpuMemory, UnwrittenBytesReadZero) {
  GpuMemory m;
  EXPECT_EQ(read_memory(m, 0, 64), std::vector<uint8_t>(64, 0));
  EXPECT_EQ(read_memory(m, 0x7fff'ffff'fff0, 40), std::vector<uint8_t>(40, 0));
  EXPECT_EQ(m.write_count(12345), 0u);
  EXPECT_EQ(m.sparse_granules(), 0u);
}

TEST(GpuMemory, RoundTripAcrossGranuleBoundaries) {
  GpuMemory m;
  const auto data = pattern(45, 3);
  m.write(0x1009, data.data(), data.size());  // 0x1009 .. 0x1035: granules 0x1000, 0x1010, 0x1020, 0x1030
  EXPECT_EQ(read_memory(m, 0x1009, 45), data);
  // Neighbours of the written range stay zero.
  const auto around = read_memory(m, 0x1000, 64);
  for (size_t i = 0; i < 64; ++i) {
    const bool inside = i >= 9 && i < 9 + 45;
    EXPECT_EQ(around[i], inside ? data[i - 9] : 0) << "byte " << i;
  }
  // A partial overwrite keeps the rest of the granule.
  const uint8_t two[2] = {0xEE, 0xFF};
  m.write(0x100F, two, 2);
  const auto after = read_memory(m, 0x1009, 45);
  EXPECT_EQ(after[6], 0xEE);
  EXPECT_EQ(after[7], 0xFF);
  EXPECT_EQ(after[5], data[5]);
  EXPECT_EQ(after[8], data[8]);
}

TEST(GpuMemory, WriteCountIsPerGranule) {
  GpuMemory m;
  const auto data = pattern(20, 1);
  m.write(0x2008, data.data(), 20);  // touches granules 0x2000 and 0x2010
  EXPECT_EQ(m.write_count(0x2000), 1u);
  EXPECT_EQ(m.write_count(0x200F), 1u);
  EXPECT_EQ(m.write_count(0x2010), 1u);
  EXPECT_EQ(m.write_count(0x201F), 1u);
  EXPECT_EQ(m.write_count(0x2020), 0u);
  EXPECT_EQ(m.write_count(0x1FF0), 0u);
  m.write(0x2010, data.data(), 1);
  EXPECT_EQ(m.write_count(0x2000), 1u);
  EXPECT_EQ(m.write_count(0x2015), 2u);
  EXPECT_EQ(m.writes(), 2u);
  m.write(0x3000, data.data(), 0);  // an empty write touches nothing
  EXPECT_EQ(m.write_count(0x3000), 0u);
  EXPECT_EQ(m.writes(), 2u);
}

// read_counted() answers read() and write_count() together, dense or sparse, aligned or not.
TEST(GpuMemory, ReadCountedEqualsReadPlusWriteCount) {
  GpuMemory m;
  m.declare_buffer(0x10000, 64, 4);
  const std::vector<uint8_t> a = pattern(16, 3), b = pattern(16, 9);
  m.write(0x10040, a.data(), 16);  // dense, written twice
  m.write(0x10040, b.data(), 16);
  m.write(0x90000, a.data(), 16);  // sparse, once
  for (uint64_t address : {0x10040ull, 0x10080ull, 0x90000ull, 0x90004ull, 0x123450ull}) {
    SCOPED_TRACE(address);
    std::vector<uint8_t> got(16, 0xAA);
    const uint32_t writes = m.read_counted(address, got.data(), 16);
    EXPECT_EQ(writes, m.write_count(address));
    EXPECT_EQ(got, read_memory(m, address, 16));
  }
  std::vector<uint8_t> got(16);
  EXPECT_EQ(m.read_counted(0x10040, got.data(), 16), 2u);
  EXPECT_EQ(got, b);
  EXPECT_EQ(m.read_counted(0x10080, got.data(), 16), 0u);
  EXPECT_EQ(got, std::vector<uint8_t>(16, 0));
}

// The dense path finds an element with a multiply instead of a division: for strides of every
// kind and addresses anywhere in (and just outside) the buffer it behaves like plain sparse memory.
TEST(GpuMemory, DenseLookupAgreesWithSparseForAnyStride) {
  for (uint64_t stride : {16ull, 48ull, 7392ull, 14336ull, 65536ull, 1ull << 20, 123456784ull}) {
    SCOPED_TRACE(stride);
    GpuMemory dense, sparse;
    const uint64_t base = 0x4000'0000, elements = 1000;
    dense.declare_buffer(base, stride, elements);
    uint64_t x = 12345;
    for (int i = 0; i < 3000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const uint64_t element = (x >> 33) % (elements + 2);  // a few beyond the end
      const uint64_t address = base + element * stride + ((x >> 20) % 4) * 16 % stride;
      const std::vector<uint8_t> data = pattern(16, static_cast<uint8_t>(i));
      dense.write(address, data.data(), 16);
      sparse.write(address, data.data(), 16);
      ASSERT_EQ(read_memory(dense, address, 16), read_memory(sparse, address, 16)) << "address " << address;
      ASSERT_EQ(dense.write_count(address), sparse.write_count(address)) << "address " << address;
    }
  }
}

// The bulk forms give what element-by-element reads and writes give, on the dense path (a
// declared buffer walked at its own stride) and off it (another stride, an undeclared range).
TEST(GpuMemory, StridedAccessEqualsElementByElement) {
  GpuMemory bulk, single;
  const uint64_t base = 0x10'0000, stride = 7392, count = 50;
  bulk.declare_buffer(base, stride, count);
  single.declare_buffer(base, stride, count);
  std::vector<uint8_t> in(count * 16);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
  for (const auto& [at, step, n] : {std::tuple<uint64_t, uint64_t, uint64_t>{base + stride, stride, 30},
                                    {base, 2 * stride, 20}, {0x900'0000, 64, 40}}) {
    SCOPED_TRACE(at);
    bulk.write_strided(at, step, n, 16, in.data());
    for (uint64_t i = 0; i < n; ++i) single.write(at + i * step, in.data() + i * 16, 16);
  }
  bulk.write_strided(base, stride, 5, 16, in.data());  // some elements twice
  for (uint64_t i = 0; i < 5; ++i) single.write(base + i * stride, in.data() + i * 16, 16);
  EXPECT_EQ(bulk.writes(), single.writes());
  for (const auto& [at, step, n] : {std::tuple<uint64_t, uint64_t, uint64_t>{base, stride, count},
                                    {base, 2 * stride, 25}, {0x900'0000, 64, 45}}) {
    SCOPED_TRACE(at);
    std::vector<uint8_t> got(n * 16, 0xAA);
    std::vector<uint32_t> counts(n, 99);
    bulk.read_strided(at, step, n, 16, got.data(), counts.data());
    for (uint64_t i = 0; i < n; ++i) {
      EXPECT_EQ(std::vector<uint8_t>(got.begin() + i * 16, got.begin() + (i + 1) * 16), read_memory(single, at + i * step, 16))
          << "element " << i;
      EXPECT_EQ(counts[i], single.write_count(at + i * step)) << "element " << i;
    }
  }
}

TEST(GpuMemory, ManyGranulesSurviveTableGrowth) {
  GpuMemory m;
  for (uint64_t i = 0; i < 5000; ++i) {
    const uint64_t v = i * 0x9E3779B97F4A7C15ull;
    m.write(0x10'0000 + i * 48, &v, sizeof v);
  }
  EXPECT_EQ(m.sparse_granules(), 5000u);
  for (uint64_t i = 0; i < 5000; ++i) {
    uint64_t v = 0;
    m.read(0x10'0000 + i * 48, &v, sizeof v);
    ASSERT_EQ(v, i * 0x9E3779B97F4A7C15ull) << i;
    ASSERT_EQ(m.write_count(0x10'0000 + i * 48), 1u) << i;
  }
}

// The same sequence of operations on a memory with and without declared buffers must give the
// same reads and write counts everywhere.
TEST(GpuMemory, DeclaredBuffersBehaveLikeSparseMemory) {
  constexpr uint64_t kBase = 0x4000'0000;
  constexpr uint64_t kElement = 64;
  constexpr uint64_t kElements = 32;
  GpuMemory sparse;
  GpuMemory dense;
  // Written before the declaration: leading granule of element 3, a later granule of element 5.
  const auto early = pattern(16, 9);
  for (GpuMemory* m : {&sparse, &dense}) {
    m->write(kBase + 3 * kElement, early.data(), 16);
    m->write(kBase + 5 * kElement + 32, early.data(), 16);
  }
  dense.declare_buffer(kBase, kElement, kElements);
  // Writes covering leading granules, inner granules, element boundaries, twice-written ones, and
  // bytes just outside the buffer.
  const std::vector<std::pair<uint64_t, size_t>> writes{
      {kBase, 16},           {kBase + 3 * kElement, 16}, {kBase + kElement - 8, 24},
      {kBase + 7 * kElement + 4, 100}, {kBase + 31 * kElement, 80}, {kBase - 16, 16},
      {kBase + 9 * kElement, 16},      {kBase + 9 * kElement, 3}};
  uint8_t seed = 0;
  for (const auto& [address, length] : writes) {
    const auto data = pattern(length, seed++);
    sparse.write(address, data.data(), length);
    dense.write(address, data.data(), length);
  }
  for (uint64_t a = kBase - 64; a < kBase + kElements * kElement + 64; a += 16) {
    EXPECT_EQ(read_memory(dense, a, 16), read_memory(sparse, a, 16)) << std::hex << "address 0x" << a;
    EXPECT_EQ(dense.write_count(a), sparse.write_count(a)) << std::hex << "address 0x" << a;
  }
  // Spot checks that the comparison above is not vacuous.
  EXPECT_EQ(read_memory(dense, kBase + 5 * kElement + 32, 16), early);
  EXPECT_EQ(dense.write_count(kBase + 3 * kElement), 2u);
  EXPECT_EQ(dense.write_count(kBase + 9 * kElement), 2u);
  EXPECT_EQ(dense.write_count(kBase + 2 * kElement), 0u);
  EXPECT_EQ(read_memory(dense, kBase + 2 * kElement, 16), std::vector<uint8_t>(16, 0));
}

TEST(GpuMemory, GranulesWrittenBeforeTheDeclarationSurvive) {
  GpuMemory m;
  const auto data = pattern(16, 42);
  m.write(0x8000 + 2 * 32, data.data(), 16);  // leading granule of element 2
  m.declare_buffer(0x8000, 32, 8);
  EXPECT_EQ(read_memory(m, 0x8000 + 2 * 32, 16), data);
  EXPECT_EQ(m.write_count(0x8000 + 2 * 32), 1u);
  m.write(0x8000 + 2 * 32, data.data(), 16);
  EXPECT_EQ(m.write_count(0x8000 + 2 * 32), 2u);
}

TEST(GpuMemory, UnalignedOrOverlappingDeclarationsAreHarmless) {
  GpuMemory m;
  const auto data = pattern(16, 5);
  m.declare_buffer(0x9000, 32, 4);
  m.declare_buffer(0x9010, 32, 4);  // overlaps: ignored
  m.declare_buffer(0xA008, 24, 4);  // unaligned: ignored
  m.declare_buffer(0xB000, 32, 0);  // empty: ignored
  m.write(0x9010, data.data(), 16);
  m.write(0xA008, data.data(), 16);
  EXPECT_EQ(read_memory(m, 0x9010, 16), data);
  EXPECT_EQ(read_memory(m, 0xA008, 16), data);
  EXPECT_EQ(m.write_count(0x9010), 1u);
  EXPECT_EQ(m.write_count(0xA008), 1u);
  EXPECT_EQ(m.write_count(0xA010), 1u);
}

}  // namespace
}  // namespace nvsvp::model
