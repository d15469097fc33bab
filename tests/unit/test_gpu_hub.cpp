// The destination GPU's Hub (gpu_hub.hpp): bump allocation at dispatch, the same layout index at
// combine, table size, the table-entry cache (hits, misses, LRU eviction) and every error. The
// expected values are worked out by hand in the comments. No simulation.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/fw/dynamic_multicast_runtime.hpp"
#include "nvsvp/model/gpu_hub.hpp"

namespace nvsvp::model {
namespace {

using hw::MultimemStage;

template <class F>
void expect_hub_error(F&& call, HubErrorKind kind, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "no HubError " << to_string(kind);
  } catch (const HubError& e) {
    EXPECT_EQ(e.kind(), kind) << to_string(e.kind()) << ": " << e.what();
    for (const std::string& word : words) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos)
          << "message \"" << e.what() << "\" does not name " << word;
    }
  }
}

// ---- table entries and size ----

TEST(HubTable, EntryIsValidBitAnd31BitLayoutIndex) {
  EXPECT_EQ(encode_table_entry(0), 0x8000'0000u);
  EXPECT_EQ(encode_table_entry(5), 0x8000'0005u);
  EXPECT_EQ(encode_table_entry(0x7fff'ffff), 0xffff'ffffu);
  EXPECT_THROW(encode_table_entry(0x8000'0000), std::out_of_range);
  EXPECT_TRUE(table_entry_valid(0x8000'0005u));
  EXPECT_FALSE(table_entry_valid(5u));  // a zeroed table is all invalid
  EXPECT_EQ(table_entry_layout_index(0x8000'0005u), 5u);
}

TEST(HubTable, FourBytesPerTokenPerLocalExpert) {
  EXPECT_EQ(hub_table_bytes(1u << 20, 1), 4ull << 20);   // 1 M tokens, one expert: 4 MiB
  EXPECT_EQ(hub_table_bytes(1u << 20, 8), 32ull << 20);  // eight local experts (L on 32 GPUs)
  EXPECT_EQ(hub_table_bytes(262144, 8), 8ull << 20);     // L, 8192 tokens x 32 GPUs
}

// ---- the worked example ----
// Two GPUs, four experts (two per GPU), 8 tokens; experts receive {3, 2, 4, 1} tokens. The Hub of
// GPU 1 holds experts 2 and 3: expert 2's region starts at layout index 0 (4 blocks), expert 3's
// at 4 (1 block); 5 blocks in all. Dispatch blocks are 32 bytes, combine blocks 64 bytes; the
// runtime puts the dispatch object at 0x4000_0000_0000 (256 bytes) and the combine object at the
// next 2 MiB boundary, 0x4000_0020_0000 (512 bytes).
class HubExample : public ::testing::Test {
 protected:
  static constexpr uint64_t kDispatchLocal = 0x10000;
  static constexpr uint64_t kCombineLocal = 0x20000;

  void SetUp() override { SetUpHub(GpuHubParams{}); }

  void SetUpHub(const GpuHubParams& params) {
    hub = std::make_unique<GpuHub>(1, params);
    fw::DynamicMulticastRuntime runtime(2);
    const auto d = runtime.create_dynamic_multicast(32, MultimemStage::dispatch, 2);
    const auto c = runtime.create_dynamic_multicast(64, MultimemStage::combine, 2);
    dispatch = runtime.bind_dynamic_multicast(d, 8, {3, 2, 4, 1});
    combine = runtime.bind_dynamic_multicast(c, 8, {3, 2, 4, 1});
    hub->create(d);
    hub->create(c);
    hub->bind(dispatch, kDispatchLocal);
    hub->bind(combine, kCombineLocal);
  }

  HubTranslation dispatch_to(uint16_t expert, uint64_t token, uint64_t offset = 0) {
    return hub->translate(dispatch.multimem_address(token, offset), MultimemStage::dispatch, expert);
  }
  HubTranslation combine_from(uint16_t expert, uint64_t token, uint64_t offset = 0) {
    return hub->translate(combine.multimem_address(token, offset), MultimemStage::combine, expert);
  }

  std::unique_ptr<GpuHub> hub;
  hw::DynamicMulticastBinding dispatch;
  hw::DynamicMulticastBinding combine;
};

TEST_F(HubExample, RuntimePlacesObjectsAsTheExampleSays) {
  EXPECT_EQ(dispatch.multimem_base, 0x4000'0000'0000ull);
  EXPECT_EQ(combine.multimem_base, 0x4000'0020'0000ull);
  EXPECT_EQ(dispatch.local_blocks(1), 5u);
  EXPECT_EQ(combine.local_bytes(1), 5u * 64u);
  EXPECT_EQ(dispatch.multimem_address(5, 16), 0x4000'0000'0000ull + 5 * 32 + 16);
}

TEST_F(HubExample, DispatchPacksEachExpertInFirstTouchOrder) {
  // Token 5 to both local experts: expert 2 takes its first block (layout 0), expert 3 its first
  // (layout 4, after expert 2's 4 blocks).
  HubTranslation t = dispatch_to(2, 5);
  EXPECT_TRUE(t.allocated);
  EXPECT_EQ(t.algebraic_index, 5u);
  EXPECT_EQ(t.layout_index, 0u);
  EXPECT_EQ(t.local_address, kDispatchLocal);
  t = dispatch_to(3, 5);
  EXPECT_EQ(t.layout_index, 4u);
  EXPECT_EQ(t.local_address, kDispatchLocal + 4 * 32);
  // Token 1 to expert 2, second flit: layout 1, 0x10000 + 32 + 16.
  t = dispatch_to(2, 1, 16);
  EXPECT_TRUE(t.allocated);
  EXPECT_EQ(t.layout_index, 1u);
  EXPECT_EQ(t.local_address, kDispatchLocal + 48);
  // Token 5 again (its second flit): already mapped, nothing allocated.
  t = dispatch_to(2, 5, 16);
  EXPECT_FALSE(t.allocated);
  EXPECT_EQ(t.layout_index, 0u);
  EXPECT_EQ(t.local_address, kDispatchLocal + 16);
  // Token 7 to expert 2: layout 2.
  EXPECT_EQ(dispatch_to(2, 7).layout_index, 2u);
  EXPECT_EQ(hub->allocated_blocks(0, 2), 3u);
  EXPECT_EQ(hub->allocated_blocks(0, 3), 1u);
  EXPECT_EQ(hub->statistics().allocations, 4u);
  EXPECT_EQ(hub->statistics().dispatch_translations, 5u);
}

TEST_F(HubExample, CombineFindsTheLayoutIndexDispatchAllocated) {
  dispatch_to(2, 5);  // layout 0
  dispatch_to(3, 5);  // layout 4
  dispatch_to(2, 1);  // layout 1
  // Combine blocks are 64 bytes: token 1, byte 8 of expert 2 -> 0x20000 + 1 * 64 + 8.
  HubTranslation t = combine_from(2, 1, 8);
  EXPECT_FALSE(t.allocated);
  EXPECT_EQ(t.layout_index, 1u);
  EXPECT_EQ(t.local_address, kCombineLocal + 72);
  t = combine_from(3, 5);
  EXPECT_EQ(t.layout_index, 4u);
  EXPECT_EQ(t.local_address, kCombineLocal + 256);
  EXPECT_EQ(combine_from(2, 5, 63).local_address, kCombineLocal + 63);
  EXPECT_EQ(hub->statistics().allocations, 3u);  // combine allocates nothing
  EXPECT_EQ(hub->statistics().combine_translations, 3u);
}

TEST_F(HubExample, TableSizeIsTokensTimesLocalExpertsTimesFour) {
  EXPECT_EQ(hub->table_bytes(0), 8u * 2u * 4u);  // one table, shared by both objects
  EXPECT_EQ(hub->table_bytes(), 64u);
  // Entries sit at table base + (local expert * 8 + token) * 4.
  EXPECT_EQ(dispatch_to(2, 5).table_entry_address, 0x0F00'0000'0000ull + 5 * 4);
  EXPECT_EQ(dispatch_to(3, 5).table_entry_address, 0x0F00'0000'0000ull + (8 + 5) * 4);
}

TEST_F(HubExample, CapacityExceededNamesExpertAndCount) {
  dispatch_to(3, 0);  // expert 3 was bound for one token
  const HubStatistics before = hub->statistics();
  expect_hub_error([&] { dispatch_to(3, 6); }, HubErrorKind::capacity_exceeded,
                   {"expert 3", "1 tokens", "algebraic block 6"});
  // The failed access left no trace.
  EXPECT_EQ(hub->statistics().allocations, before.allocations);
  EXPECT_EQ(hub->statistics().cache_misses, before.cache_misses);
  EXPECT_EQ(hub->allocated_blocks(0, 3), 1u);
  // Re-touching the mapped token is still fine.
  EXPECT_EQ(dispatch_to(3, 0).layout_index, 4u);
}

TEST_F(HubExample, CombineOfAnUnmappedBlockIsAnError) {
  dispatch_to(2, 5);
  expect_hub_error([&] { combine_from(2, 3); }, HubErrorKind::unmapped_combine,
                   {"expert 2", "algebraic block 3"});
  // Mapped for expert 2, not for expert 3.
  expect_hub_error([&] { combine_from(3, 5); }, HubErrorKind::unmapped_combine, {"expert 3"});
  EXPECT_EQ(hub->statistics().combine_translations, 0u);
}

TEST_F(HubExample, ForeignExpertWrongStageAndStrayAddressesAreErrors) {
  expect_hub_error([&] { dispatch_to(1, 0); }, HubErrorKind::not_a_local_expert,
                   {"expert 1", "experts 2..3"});
  expect_hub_error(
      [&] { hub->translate(dispatch.multimem_address(0), MultimemStage::combine, 2); },
      HubErrorKind::stage_mismatch, {"combine packet", "dispatch object"});
  // Just past the dispatch object (256 bytes), below the combine object.
  expect_hub_error([&] { hub->translate(0x4000'0000'0100ull, MultimemStage::dispatch, 2); },
                   HubErrorKind::address_outside_objects,
                   {"0x400000000100", "object 0 at [0x400000000000, 0x400000000100)",
                    "object 1 at [0x400000200000, 0x400000200200)"});
  expect_hub_error([&] { hub->translate(0x10, MultimemStage::dispatch, 2); },
                   HubErrorKind::address_outside_objects, {"0x10 "});
  expect_hub_error([&] { hub->translate(0x4000'0020'0200ull, MultimemStage::combine, 2); },
                   HubErrorKind::address_outside_objects, {"0x400000200200"});
}

// ---- cache ----

// One token of model L: a 7392-byte fp8 block in 29 packets (offsets 0, 256, .., 7168) and a
// 14336-byte bf16 output in 56 packets. Default cache (512 entries, 8 ways).
TEST(HubCache, PacketsOfOneTokenHitAfterTheFirstAndCombineHitsDispatchsEntry) {
  fw::DynamicMulticastRuntime runtime(32);
  const auto d = runtime.create_dynamic_multicast(7392, MultimemStage::dispatch, 2);
  const auto c = runtime.create_dynamic_multicast(14336, MultimemStage::combine, 2);
  std::vector<uint32_t> per_expert(256, 64);  // 64 tokens per expert: any count >= 1 does here
  const auto dispatch = runtime.bind_dynamic_multicast(d, 8192, per_expert);
  const auto combine = runtime.bind_dynamic_multicast(c, 8192, per_expert);
  GpuHub hub(3);  // experts 24..31
  hub.create(d);
  hub.create(c);
  hub.bind(dispatch, 0x0200'0000'0000);
  hub.bind(combine, 0x0300'0000'0000);
  for (uint64_t offset = 0; offset < 7392; offset += 256) {
    hub.translate(dispatch.multimem_address(4000, offset), MultimemStage::dispatch, 27);
  }
  // 1 miss (reads a 32-byte sector, finds it invalid), 1 allocation (writes a sector), 28 hits.
  EXPECT_EQ(hub.statistics().cache_misses, 1u);
  EXPECT_EQ(hub.statistics().cache_hits, 28u);
  EXPECT_EQ(hub.statistics().allocations, 1u);
  EXPECT_EQ(hub.statistics().memory_read_bytes, 32u);
  EXPECT_EQ(hub.statistics().memory_write_bytes, 32u);
  for (uint64_t offset = 0; offset < 14336; offset += 256) {
    const HubTranslation t = hub.translate(combine.multimem_address(4000, offset), MultimemStage::combine, 27);
    EXPECT_TRUE(t.cache_hit);
    EXPECT_EQ(t.local_address, 0x0300'0000'0000ull + 3 * 64 * 14336ull + offset);  // expert 27 = local 3
  }
  EXPECT_EQ(hub.statistics().cache_hits, 28u + 56u);
  EXPECT_NEAR(hub.statistics().hit_rate(), 84.0 / 85.0, 1e-12);
  EXPECT_EQ(hub.statistics().cache_evictions, 0u);
}

// Direct-mapped, 2 entries: set = entry index mod 2. In the example, expert 2's entry of token a
// is index a, expert 3's is 8 + a; tokens 5 and 1 and expert 3's token 5 all fall in set 1.
TEST_F(HubExample, DirectMappedCacheEvictsOnConflicts) {
  GpuHubParams params;
  params.cache_entries = 2;
  params.cache_ways = 1;
  SetUpHub(params);
  EXPECT_FALSE(dispatch_to(2, 5).cache_hit);  // index 5 -> set 1: miss
  EXPECT_FALSE(dispatch_to(3, 5).cache_hit);  // index 13 -> set 1: miss, evicts 5
  EXPECT_FALSE(dispatch_to(2, 1).cache_hit);  // index 1 -> set 1: miss, evicts 13
  HubTranslation t = dispatch_to(2, 5, 16);   // index 5 again: evicted, miss, evicts 1
  EXPECT_FALSE(t.cache_hit);
  EXPECT_FALSE(t.allocated);
  EXPECT_EQ(t.memory_read_bytes, 32u);
  EXPECT_EQ(t.memory_write_bytes, 0u);
  EXPECT_TRUE(dispatch_to(2, 5, 0).cache_hit);  // now resident
  EXPECT_FALSE(dispatch_to(2, 2).cache_hit);    // index 2 -> set 0: miss, nothing to evict
  const HubStatistics& s = hub->statistics();
  EXPECT_EQ(s.cache_misses, 5u);
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.cache_evictions, 3u);
  EXPECT_EQ(s.allocations, 4u);                 // token 5 for experts 2 and 3, tokens 1, 2
  EXPECT_EQ(s.memory_read_bytes, 5u * 32u);
  EXPECT_EQ(s.memory_write_bytes, 4u * 32u);
}

// 4 entries in 2 ways: 2 sets, set = (address / 4) mod 2. Entry numbers n stand for address 4n.
TEST(TableEntryCache, LruEvictsTheLeastRecentlyUsedNotTheOldest) {
  TableEntryCache cache(4, 2);
  EXPECT_EQ(cache.sets(), 2u);
  const auto at = [](uint64_t n) { return 4 * n; };
  EXPECT_FALSE(cache.access(at(0)).hit);  // set 0: [0]
  EXPECT_FALSE(cache.access(at(2)).hit);  // set 0: [0, 2]
  EXPECT_TRUE(cache.access(at(0)).hit);   // 0 is now the most recent
  TableEntryCache::Access a = cache.access(at(4));  // full: evicts 2 (FIFO would evict 0)
  EXPECT_FALSE(a.hit);
  EXPECT_TRUE(a.evicted);
  EXPECT_EQ(a.evicted_address, at(2));
  EXPECT_TRUE(cache.contains(at(0)));
  EXPECT_FALSE(cache.contains(at(2)));
  a = cache.access(at(2));  // evicts 0 (used before 4)
  EXPECT_EQ(a.evicted_address, at(0));
  a = cache.access(at(0));  // evicts 4
  EXPECT_EQ(a.evicted_address, at(4));
  // Set 1 was never touched: an odd entry misses without evicting.
  a = cache.access(at(1));
  EXPECT_FALSE(a.hit);
  EXPECT_FALSE(a.evicted);
}

TEST(TableEntryCache, DirectMappedAndFullyAssociativeAreTheEnds) {
  TableEntryCache direct(4, 1);  // 4 sets: entries 0 and 4 share set 0
  EXPECT_FALSE(direct.access(0).hit);
  EXPECT_FALSE(direct.access(16).hit);
  EXPECT_TRUE(direct.access(16).hit);
  EXPECT_FALSE(direct.access(0).hit);   // 0 was evicted by 4
  EXPECT_FALSE(direct.access(4).evicted);  // entry 1: set 1, empty

  TableEntryCache full(4, 4);  // one set: entries 0, 2, 4, 6 all fit
  for (uint64_t n : {0, 2, 4, 6}) EXPECT_FALSE(full.access(4 * n).hit);
  EXPECT_TRUE(full.access(0).hit);
  const TableEntryCache::Access a = full.access(4 * 8);  // evicts the LRU: entry 2
  EXPECT_EQ(a.evicted_address, 8u);
  EXPECT_TRUE(full.contains(0));
}

TEST(TableEntryCache, RejectsShapesThatAreNotSetsOfWays) {
  EXPECT_THROW(TableEntryCache(0, 1), std::invalid_argument);
  EXPECT_THROW(TableEntryCache(512, 0), std::invalid_argument);
  EXPECT_THROW(TableEntryCache(512, 7), std::invalid_argument);
  EXPECT_EQ(TableEntryCache(512, 8).sets(), 64u);
}

// ---- errors of create and bind ----

hw::DynamicMulticastObject object(uint32_t id, uint32_t mapping, uint64_t block,
                                  MultimemStage stage, uint32_t shared = 2) {
  return hw::DynamicMulticastObject{id, mapping, block, stage, shared};
}

hw::DynamicMulticastBinding binding(const hw::DynamicMulticastObject& o, uint64_t base,
                                    std::vector<uint32_t> per_expert = {3, 2, 4, 1}) {
  hw::DynamicMulticastBinding b;
  b.object = o;
  b.multimem_base = base;
  b.token_count = 8;
  b.experts_per_gpu = 2;
  b.tokens_per_expert = std::move(per_expert);
  return b;
}

TEST(HubErrors, CreateAndBindRefuseWhatTheRuntimeWouldNotProduce) {
  GpuHub hub(1);
  const auto d = object(0, 0, 32, MultimemStage::dispatch);
  expect_hub_error([&] { hub.bind(binding(d, 0x1000), 0); }, HubErrorKind::unknown_object,
                   {"object 0", "never created"});
  expect_hub_error([&] { hub.create(object(9, 0, 24, MultimemStage::dispatch)); },
                   HubErrorKind::bad_descriptor, {"24 bytes", "multiple of 16"});
  hub.create(d);
  expect_hub_error([&] { hub.create(d); }, HubErrorKind::duplicate_object, {"object 0", "twice"});
  expect_hub_error([&] { hub.create(object(1, 0, 64, MultimemStage::combine, 3)); },
                   HubErrorKind::inconsistent_mapping, {"object 1", "3 regions", "mapping 0"});
  expect_hub_error([&] { hub.bind(binding(object(0, 0, 64, MultimemStage::dispatch), 0x1000), 0); },
                   HubErrorKind::descriptor_mismatch, {"64-byte", "32-byte"});
  hub.bind(binding(d, 0x1000), 0x10000);
  EXPECT_TRUE(hub.is_bound(0));
  expect_hub_error([&] { hub.bind(binding(d, 0x1000), 0x10000); }, HubErrorKind::already_bound,
                   {"object 0", "twice"});

  const auto c = object(1, 0, 64, MultimemStage::combine);
  hub.create(c);
  // Overlaps [0x1000, 0x1100) from below and from above.
  expect_hub_error([&] { hub.bind(binding(c, 0x0f00), 0); }, HubErrorKind::overlapping_objects,
                   {"[0xf00, 0x1100)", "object 0 at [0x1000, 0x1100)"});
  expect_hub_error([&] { hub.bind(binding(c, 0x10f0), 0); }, HubErrorKind::overlapping_objects,
                   {"object 0"});
  // Other counts than the dispatch object of the same mapping.
  expect_hub_error([&] { hub.bind(binding(c, 0x2000, {3, 2, 5, 1}), 0); },
                   HubErrorKind::inconsistent_mapping, {"expert 2 receives 5 tokens vs 4"});
  EXPECT_FALSE(hub.is_bound(1));
  hub.bind(binding(c, 0x2000), 0x20000);
  EXPECT_TRUE(hub.is_bound(1));
  expect_hub_error([&] { hub.table_bytes(7); }, HubErrorKind::unknown_object, {"mapping 7"});
}

TEST(HubErrors, BindingThatLeavesThisGpuOutIsAnError) {
  GpuHub hub(2);  // the binding covers 4 experts at 2 per GPU: GPUs 0 and 1
  const auto d = object(0, 0, 32, MultimemStage::dispatch, 1);
  hub.create(d);
  expect_hub_error([&] { hub.bind(binding(d, 0x1000), 0); }, HubErrorKind::gpu_not_in_binding,
                   {"GPUs 0..1"});
  expect_hub_error([&] { hub.bind(binding(d, 0x1000, {3, 2, 9, 1}), 0); },
                   HubErrorKind::bad_descriptor, {"expert 2", "9 tokens", "8 tokens"});
}

TEST(HubErrors, TranslateWithNothingBoundNamesTheAddress) {
  GpuHub hub(0);
  expect_hub_error([&] { hub.translate(0x4000'0000'0000ull, MultimemStage::dispatch, 0); },
                   HubErrorKind::address_outside_objects, {"0x400000000000", "none is bound"});
}

}  // namespace
}  // namespace nvsvp::model
