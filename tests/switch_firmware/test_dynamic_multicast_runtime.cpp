// The firmware runtime calls for dynamic multicast objects (dynamic_multicast_runtime.hpp):
// mappings formed in creation order, placement in the multimem space, and every refusal. Plain
// C++, no simulation.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/fw/dynamic_multicast_runtime.hpp"

namespace nvsvp::fw {
namespace {

using hw::MultimemStage;

template <class F>
void expect_refused(F&& call, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "no DynamicMulticastError";
  } catch (const DynamicMulticastError& e) {
    for (const std::string& word : words) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos)
          << "message \"" << e.what() << "\" does not name " << word;
    }
  }
}

TEST(DynamicMulticastRuntime, DispatchAndCombineShareAMappingInCreationOrder) {
  DynamicMulticastRuntime runtime(32);
  const auto dispatch = runtime.create_dynamic_multicast(7392, MultimemStage::dispatch, 2);
  const auto combine = runtime.create_dynamic_multicast(14336, MultimemStage::combine, 2);
  EXPECT_EQ(dispatch.id, 0u);
  EXPECT_EQ(combine.id, 1u);
  EXPECT_EQ(dispatch.mapping, 0u);
  EXPECT_EQ(combine.mapping, 0u);
  EXPECT_EQ(combine.block_bytes, 14336u);
  EXPECT_EQ(combine.stage, MultimemStage::combine);
  // The mapping is complete: the next object opens another one.
  const auto next = runtime.create_dynamic_multicast(7392, MultimemStage::dispatch, 1);
  EXPECT_EQ(next.mapping, 1u);
  EXPECT_EQ(runtime.mappings(), 2u);
  EXPECT_EQ(runtime.objects(), 3u);
}

// Model L on 32 GPUs, 8192 tokens each: 262144 tokens, 256 experts (8 per GPU).
//   dispatch: 262144 x 7392 bytes = 1 937 768 448 = 0x7380_0000 (exactly 924 x 2 MiB)
//   combine:  262144 x 14336 bytes = 3 758 096 384 = 0xE000_0000, from 0x4000_7380_0000
TEST(DynamicMulticastRuntime, BindPlacesObjectsOneAfterAnotherAt2MiBBoundaries) {
  DynamicMulticastRuntime runtime(32);
  const auto d = runtime.create_dynamic_multicast(7392, MultimemStage::dispatch, 2);
  const auto c = runtime.create_dynamic_multicast(14336, MultimemStage::combine, 2);
  const std::vector<uint32_t> per_expert(256, 8192);  // 262144 x 8 / 256
  const auto dispatch = runtime.bind_dynamic_multicast(d, 262144, per_expert);
  const auto combine = runtime.bind_dynamic_multicast(c, 262144, per_expert);
  EXPECT_EQ(dispatch.multimem_base, 0x4000'0000'0000ull);
  EXPECT_EQ(dispatch.multimem_bytes(), 0x7380'0000ull);
  EXPECT_EQ(combine.multimem_base, 0x4000'7380'0000ull);
  EXPECT_EQ(combine.multimem_end(), 0x4001'5380'0000ull);
  EXPECT_EQ(runtime.next_multimem_address(), 0x4001'5380'0000ull);  // already on a boundary
  EXPECT_EQ(dispatch.experts_per_gpu, 8u);
  EXPECT_EQ(dispatch.gpus(), 32u);
  EXPECT_EQ(dispatch.local_blocks(5), 8u * 8192u);
  EXPECT_EQ(combine.local_bytes(5), 8ull * 8192 * 14336);
  EXPECT_EQ(combine.object.id, 1u);

  // A small object (8 x 32 = 256 bytes) still moves the next base by a whole 2 MiB.
  const auto small = runtime.create_dynamic_multicast(32, MultimemStage::dispatch, 1);
  const auto placed = runtime.bind_dynamic_multicast(small, 8, std::vector<uint32_t>(32, 1));
  EXPECT_EQ(placed.multimem_base, 0x4001'5380'0000ull);
  EXPECT_EQ(runtime.next_multimem_address(), 0x4001'5380'0000ull + (2u << 20));
}

TEST(DynamicMulticastRuntime, RefusesBadObjects) {
  DynamicMulticastRuntime runtime(4);
  expect_refused([&] { runtime.create_dynamic_multicast(0, MultimemStage::dispatch, 2); }, {"block size 0"});
  expect_refused([&] { runtime.create_dynamic_multicast(7400, MultimemStage::dispatch, 2); },
                 {"7400", "multiple of 16"});
  expect_refused([&] { runtime.create_dynamic_multicast(32, MultimemStage::dispatch, 0); },
                 {"shared_regions 0"});
  expect_refused([&] { runtime.create_dynamic_multicast(32, MultimemStage::combine, 1); },
                 {"combine region alone"});
  EXPECT_EQ(runtime.objects(), 0u);  // nothing was created by the refused calls

  runtime.create_dynamic_multicast(32, MultimemStage::combine, 2);  // mapping 0: 1 of 2
  expect_refused([&] { runtime.create_dynamic_multicast(64, MultimemStage::dispatch, 3); },
                 {"3 regions", "mapping 0 has 1 of its 2"});
  expect_refused([&] { runtime.create_dynamic_multicast(64, MultimemStage::combine, 2); },
                 {"completes mapping 0 without a dispatch region"});
  const auto dispatch = runtime.create_dynamic_multicast(64, MultimemStage::dispatch, 2);
  EXPECT_EQ(dispatch.id, 1u);  // ids continue after refusals
  EXPECT_EQ(dispatch.mapping, 0u);
}

TEST(DynamicMulticastRuntime, RefusesBadBindings) {
  DynamicMulticastRuntime runtime(2);
  const auto d = runtime.create_dynamic_multicast(32, MultimemStage::dispatch, 2);
  expect_refused([&] { runtime.bind_dynamic_multicast(d, 8, {3, 2, 4, 1}); },
                 {"object 0", "mapping 0 has 1 of its 2 regions"});
  const auto c = runtime.create_dynamic_multicast(64, MultimemStage::combine, 2);

  hw::DynamicMulticastObject stranger = d;
  stranger.id = 5;
  expect_refused([&] { runtime.bind_dynamic_multicast(stranger, 8, {3, 2, 4, 1}); },
                 {"object 5", "unknown", "2 objects"});
  hw::DynamicMulticastObject altered = d;
  altered.block_bytes = 48;
  expect_refused([&] { runtime.bind_dynamic_multicast(altered, 8, {3, 2, 4, 1}); }, {"differs"});
  expect_refused([&] { runtime.bind_dynamic_multicast(d, 8, {3, 2, 4}); },
                 {"3 experts", "2 GPUs"});
  expect_refused([&] { runtime.bind_dynamic_multicast(d, 8, {}); }, {"0 experts"});
  expect_refused([&] { runtime.bind_dynamic_multicast(d, 0, {0, 0, 0, 0}); }, {"token count 0"});
  expect_refused([&] { runtime.bind_dynamic_multicast(d, 8, {3, 9, 4, 1}); },
                 {"expert 1", "9 tokens", "8 tokens"});
  EXPECT_EQ(runtime.next_multimem_address(), DynamicMulticastRuntime::kDefaultMultimemBase);

  runtime.bind_dynamic_multicast(d, 8, {3, 2, 4, 1});
  expect_refused([&] { runtime.bind_dynamic_multicast(d, 8, {3, 2, 4, 1}); }, {"already bound"});
  // The combine region translates through the same table: the same counts or nothing.
  expect_refused([&] { runtime.bind_dynamic_multicast(c, 16, {3, 2, 4, 1}); },
                 {"token count 16", "8"});
  expect_refused([&] { runtime.bind_dynamic_multicast(c, 8, {3, 2, 4, 1, 0, 0}); },
                 {"6 experts", "4"});
  expect_refused([&] { runtime.bind_dynamic_multicast(c, 8, {3, 2, 1, 4}); },
                 {"expert 2 receives 1 tokens here but 4"});
  EXPECT_NO_THROW(runtime.bind_dynamic_multicast(c, 8, {3, 2, 4, 1}));
}

TEST(DynamicMulticastRuntime, RefusesWhatLeavesTheAddressSpaceOrTheLayoutIndex) {
  // 2^40-byte blocks x 2^9 tokens = 2^49 bytes: more than the 48-bit multimem space.
  DynamicMulticastRuntime runtime(1);
  const auto huge = runtime.create_dynamic_multicast(1ull << 40, MultimemStage::dispatch, 1);
  expect_refused([&] { runtime.bind_dynamic_multicast(huge, 512, {1}); }, {"48-bit"});
  // One GPU packing 2^31 blocks (two experts of 2^30) overflows the 31-bit layout index.
  const auto many = runtime.create_dynamic_multicast(16, MultimemStage::dispatch, 1);
  expect_refused([&] { runtime.bind_dynamic_multicast(many, 1u << 30, {1u << 30, 1u << 30}); },
                 {"GPU 0", "2147483648 blocks", "31 bits"});
  EXPECT_NO_THROW(runtime.bind_dynamic_multicast(many, 1u << 30, {1u << 30, (1u << 30) - 1}));
}

TEST(DynamicMulticastRuntime, RefusesBadConstruction) {
  expect_refused([] { DynamicMulticastRuntime(0); }, {"0 GPUs"});
  expect_refused([] { DynamicMulticastRuntime(8, 0x1000); }, {"2 MiB"});
  expect_refused([] { DynamicMulticastRuntime(8, 1ull << 48); }, {"2^48"});
}

TEST(DynamicMulticastBinding, MultimemAddressIsBasePlusIndexTimesBlockPlusOffset) {
  hw::DynamicMulticastBinding b;
  b.object.block_bytes = 7392;
  b.multimem_base = 0x4000'0000'0000;
  b.token_count = 10;
  EXPECT_EQ(b.multimem_address(0), 0x4000'0000'0000ull);
  EXPECT_EQ(b.multimem_address(3, 256), 0x4000'0000'0000ull + 3 * 7392 + 256);
  EXPECT_THROW(b.multimem_address(10), std::out_of_range);
  EXPECT_THROW(b.multimem_address(0, 7392), std::out_of_range);
}

}  // namespace
}  // namespace nvsvp::fw
