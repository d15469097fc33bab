// The collectives' plans (fw/collectives.hpp): the NVLS all-reduce loads one chunk ahead of its
// stores; the ring sends chunk (g - s) of every channel to the next GPU slice by slice, each
// slice's step waiting on its own counter; all-to-all writes every peer's block; sizes that do not
// divide are refused; the bandwidth conventions, implied traffic and link bounds are nccl-tests'.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <stdexcept>
#include <vector>

#include "../common/test_support.hpp"
#include "nvsvp/fw/collectives.hpp"
#include "nvsvp/platform/collectives.hpp"

namespace nvsvp::fw {
namespace {

using hw::TaskKind;

size_t count_kind(const hw::WorkSequence& seq, TaskKind kind) {
  size_t n = 0;
  for (const hw::Task& t : seq.tasks) n += t.kind == kind ? 1 : 0;
  return n;
}

TEST(CollectivePlan, NvlsAllReduceLoadsOneChunkAheadOfTheStores) {
  CollectiveSpec spec;
  spec.collective = Collective::allreduce_nvls;
  spec.message_bytes = 4096;
  spec.bytes = 4 * 4096 * 3;  // 4 GPUs, 3 messages per share
  spec.chunk_bytes = 8192;    // chunks of 2 and 1 messages
  spec.first_counter = 10;
  const std::vector<hw::WorkSequence> plan = plan_collective(4, spec);
  ASSERT_EQ(plan.size(), 4u);
  const hw::WorkSequence& gpu2 = plan[2];
  EXPECT_EQ(gpu2.issue_sms, spec.nvls_channels) << "multimem stores are SM instructions";
  const std::vector<TaskKind> expected_kinds = {
      TaskKind::multimem_ld_reduce, TaskKind::multimem_ld_reduce,  // chunk 0
      TaskKind::multimem_ld_reduce,                                // chunk 1, ahead
      TaskKind::wait_counter,       TaskKind::multimem_store,     TaskKind::multimem_store,  // chunk 0
      TaskKind::wait_counter,       TaskKind::multimem_store,                                // chunk 1
      TaskKind::wait_counter};                                     // every share's copies
  ASSERT_EQ(gpu2.tasks.size(), expected_kinds.size());
  for (size_t i = 0; i < expected_kinds.size(); ++i) EXPECT_EQ(gpu2.tasks[i].kind, expected_kinds[i]) << "task " << i;
  const uint64_t share = 2 * 3 * 4096;  // GPU 2's share starts here
  EXPECT_EQ(gpu2.tasks[0].source_address, spec.multimem_base + share);
  EXPECT_EQ(gpu2.tasks[0].target_address, spec.scratch_address + share);
  EXPECT_EQ(gpu2.tasks[2].source_address, spec.multimem_base + share + 2 * 4096);
  EXPECT_EQ(gpu2.tasks[2].counter, 12u) << "chunk 1 counts on first_counter + 2";
  EXPECT_EQ(gpu2.tasks[3].counter, 11u);
  EXPECT_EQ(gpu2.tasks[3].arrivals, 2u);
  EXPECT_EQ(gpu2.tasks[6].counter, 12u);
  EXPECT_EQ(gpu2.tasks[6].arrivals, 1u);
  EXPECT_EQ(gpu2.tasks[4].source_address, spec.scratch_address + share);
  EXPECT_EQ(gpu2.tasks[4].target_address, spec.multimem_base + share);
  EXPECT_EQ(gpu2.tasks[8].counter, 10u);
  EXPECT_EQ(gpu2.tasks[8].arrivals, 12u) << "3 messages x 4 shares";
  EXPECT_EQ(gpu2.counters, 13u);
}

// 4 GPUs, 2 channels, 2 messages per channel chunk, 1-message slices.
CollectiveSpec small_ring(Collective collective) {
  CollectiveSpec spec;
  spec.collective = collective;
  spec.message_bytes = 4096;
  spec.channels = 2;
  spec.slice_bytes = 4096;
  spec.bytes = 4 * 2 * 4096 * 2;
  return spec;
}

TEST(CollectivePlan, RingSendsChunkGMinusStepOfEveryChannelSliceBySlice) {
  const CollectiveSpec spec = small_ring(Collective::allreduce_ring);
  const std::vector<hw::WorkSequence> plan = plan_collective(4, spec);
  const uint64_t chunk = 2 * 4096;  // one channel's share of one rank
  const hw::WorkSequence& gpu1 = plan[1];
  EXPECT_EQ(gpu1.issue_sms, 2u) << "one SM per channel";
  // 2(N-1)/N of the buffer goes out; a wait per (step, channel, slice); an add per reduce-scatter one.
  EXPECT_EQ(count_kind(gpu1, TaskKind::send), 2u * 3 * 2 * 2);
  EXPECT_EQ(count_kind(gpu1, TaskKind::wait_counter), 6u * 2 * 2);
  EXPECT_EQ(count_kind(gpu1, TaskKind::compute), 3u * 2 * 2);
  EXPECT_EQ(gpu1.counters, 6u * 2 * 2);
  // Step 0, slice 0, channel 0: chunk 1 of channel 0 into GPU 2's scratch slot 0; then channel 1,
  // whose chunks start after channel 0's four.
  EXPECT_EQ(gpu1.tasks[0].peer, 2u);
  EXPECT_EQ(gpu1.tasks[0].source_address, spec.buffer_address + 1 * chunk);
  EXPECT_EQ(gpu1.tasks[0].target_address, spec.scratch_address + 1 * chunk);
  EXPECT_EQ(gpu1.tasks[0].counter, 0u);
  EXPECT_EQ(gpu1.tasks[1].source_address, spec.buffer_address + 4 * chunk + 1 * chunk);
  EXPECT_EQ(gpu1.tasks[1].counter, 2u) << "(step 0, channel 1, slice 0)";
  EXPECT_EQ(gpu1.tasks[2].source_address, spec.buffer_address + 1 * chunk + 4096) << "slice 1";
  EXPECT_EQ(gpu1.tasks[2].counter, 1u);
  // Then the first arrival: its wait, its add, and that slice's step 1 (chunk 0) into slot 1.
  EXPECT_EQ(gpu1.tasks[4].kind, TaskKind::wait_counter);
  EXPECT_EQ(gpu1.tasks[4].counter, 0u);
  EXPECT_EQ(gpu1.tasks[4].arrivals, 1u);
  EXPECT_EQ(gpu1.tasks[5].kind, TaskKind::compute);
  EXPECT_EQ(gpu1.tasks[6].source_address, spec.buffer_address + 0 * chunk);
  EXPECT_EQ(gpu1.tasks[6].target_address, spec.scratch_address + spec.bytes + 0 * chunk);
  EXPECT_EQ(gpu1.tasks[6].counter, 4u) << "(step 1, channel 0, slice 0)";
  for (uint32_t g = 0; g < 4; ++g) {
    for (const hw::Task& t : plan[g].tasks) {
      if (t.kind != TaskKind::send) continue;
      EXPECT_EQ(t.peer, (g + 1) % 4);
      EXPECT_GE(t.source_address, spec.buffer_address);
      EXPECT_LT(t.source_address, spec.buffer_address + spec.bytes);
      const bool in_buffer = t.target_address >= spec.buffer_address && t.target_address < spec.buffer_address + spec.bytes;
      const bool in_scratch = t.target_address >= spec.scratch_address && t.target_address < spec.scratch_address + 3 * spec.bytes;
      EXPECT_TRUE(in_buffer || in_scratch) << std::hex << t.target_address;
    }
  }
}

TEST(CollectivePlan, RingAllGatherSendsEveryShareButTheNextGpusOnce) {
  const CollectiveSpec spec = small_ring(Collective::allgather_ring);
  const std::vector<hw::WorkSequence> plan = plan_collective(4, spec);
  const uint64_t share = spec.bytes / 4;
  std::map<uint64_t, int> sent;  // GPU 1's sends by target address
  for (const hw::Task& t : plan[1].tasks) {
    if (t.kind != TaskKind::send) continue;
    EXPECT_EQ(t.source_address, t.target_address) << "in place";
    sent[t.target_address]++;
  }
  EXPECT_EQ(sent.size(), 3 * share / 4096) << "its own share and those of GPUs 0 and 3, not GPU 2's";
  for (uint64_t a = spec.buffer_address + 2 * share; a < spec.buffer_address + 3 * share; a += 4096) {
    EXPECT_EQ(sent.count(a), 0u);
  }
  EXPECT_EQ(count_kind(plan[1], TaskKind::compute), 0u) << "nothing to add";
}

TEST(CollectivePlan, AllToAllWritesEveryPeersBlockIntoItsReceiveBuffer) {
  CollectiveSpec spec;
  spec.collective = Collective::alltoall;
  spec.bytes = 4 * 4096 * 3;  // 4 GPUs, 3 messages per block
  const std::vector<hw::WorkSequence> plan = plan_collective(4, spec);
  const uint64_t block = 3 * 4096;
  std::map<uint32_t, int> per_peer;
  for (const hw::Task& t : plan[2].tasks) {
    if (t.kind == TaskKind::send) {
      per_peer[t.peer]++;
      EXPECT_EQ((t.source_address - spec.buffer_address) / block, t.peer) << "its block for that peer";
      EXPECT_GE(t.target_address, spec.scratch_address + 2 * block);
      EXPECT_LT(t.target_address, spec.scratch_address + 3 * block);
    }
  }
  EXPECT_EQ(per_peer, (std::map<uint32_t, int>{{0, 3}, {1, 3}, {3, 3}}));
  EXPECT_EQ(count_kind(plan[2], TaskKind::local_copy), 3u);
  EXPECT_EQ(plan[2].tasks[0].peer, 3u) << "the peers in turn, from the next";
  EXPECT_EQ(plan[2].tasks[1].peer, 0u);
  EXPECT_EQ(plan[2].tasks.back().arrivals, 12u);
}

TEST(CollectivePlan, P2pIsACopyEngineWriteIntoThePeer) {
  CollectiveSpec spec;
  spec.collective = Collective::p2p_write_oneway;
  spec.bytes = 5 * 4096;
  spec.p2p_source = 3;
  spec.p2p_target = 1;
  const std::vector<hw::WorkSequence> plan = plan_collective(4, spec);
  EXPECT_EQ(count_kind(plan[3], TaskKind::send), 5u);
  EXPECT_EQ(plan[3].issue_sms, 0u);
  EXPECT_EQ(plan[1].tasks.size(), 1u);
  EXPECT_EQ(plan[1].tasks[0].arrivals, 5u);
  EXPECT_TRUE(plan[0].tasks.empty());
  spec.collective = Collective::p2p_write_bidir;
  EXPECT_EQ(count_kind(plan_collective(4, spec)[1], TaskKind::send), 5u);
  spec.p2p_target = 3;
  EXPECT_THROW(plan_collective(4, spec), std::invalid_argument);
}

TEST(CollectivePlan, SizesThatDoNotDivideAreRefused) {
  for (Collective c : all_collectives()) {
    CollectiveSpec spec;
    spec.collective = c;
    spec.bytes = 8 * 32 * 4096 + 16;
    EXPECT_THROW(plan_collective(8, spec), std::invalid_argument) << to_string(c);
    spec.bytes = 0;
    EXPECT_THROW(plan_collective(8, spec), std::invalid_argument) << to_string(c);
  }
  CollectiveSpec ring;
  ring.bytes = 8 * 4096;  // one message per GPU: not one per channel
  EXPECT_THROW(plan_collective(8, ring), std::invalid_argument);
  ring.bytes = 8 * 32 * 4096;
  ring.slice_bytes = 1024;  // a slice smaller than one message
  EXPECT_THROW(plan_collective(8, ring), std::invalid_argument);
}

TEST(CollectivePlan, NamesRoundTrip) {
  for (Collective c : all_collectives()) {
    Collective parsed = Collective::alltoall;
    EXPECT_TRUE(collective_from_string(to_string(c), parsed));
    EXPECT_EQ(parsed, c);
  }
  Collective unused;
  EXPECT_FALSE(collective_from_string("allreduce", unused));
}

TEST(CollectiveBandwidth, BusBandwidthIsNcclTestsConvention) {
  // 8 GPUs, 1 GB in 1000 us: algorithm bandwidth 1000 GB/s.
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbps(1'000'000'000, 1000.0), 1000.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps(Collective::allreduce_ring, 8, 1'000'000'000, 1000.0), 1750.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps(Collective::allreduce_nvls, 8, 1'000'000'000, 1000.0), 1750.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps(Collective::allgather_ring, 8, 1'000'000'000, 1000.0), 875.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps(Collective::alltoall, 8, 1'000'000'000, 1000.0), 875.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps(Collective::p2p_write_oneway, 8, 1'000'000'000, 1000.0), 1000.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_gbps(Collective::p2p_write_bidir, 8, 1'000'000'000, 1000.0), 2000.0);
}

TEST(CollectiveTraffic, ImpliedBytesFollowFromTheDefinition) {
  CollectiveSpec spec;
  spec.bytes = 8 << 20;
  spec.collective = Collective::allreduce_ring;
  EXPECT_EQ(implied_traffic(8, spec)[3].payload_bytes_sent, 14ull << 20);
  EXPECT_EQ(implied_traffic(8, spec)[3].messages_received, (14ull << 20) / 4096);
  spec.collective = Collective::allgather_nvls;
  EXPECT_EQ(implied_traffic(8, spec)[3].payload_bytes_sent, 1ull << 20);
  EXPECT_EQ(implied_traffic(8, spec)[3].payload_bytes_received, 8ull << 20) << "its own share comes back too";
  spec.collective = Collective::allreduce_nvls;
  const GpuTraffic nvls = implied_traffic(8, spec)[0];
  EXPECT_EQ(nvls.payload_bytes_sent, 9ull << 20) << "its stores and its copy for every member's loads";
  EXPECT_EQ(nvls.requests_sent, 256u);
  EXPECT_EQ(nvls.requests_received, 2048u);
  spec.collective = Collective::p2p_write_oneway;
  const std::vector<GpuTraffic> p2p = implied_traffic(8, spec);
  EXPECT_EQ(p2p[0].payload_bytes_sent, 8ull << 20);
  EXPECT_EQ(p2p[1].payload_bytes_received, 8ull << 20);
  EXPECT_EQ(p2p[2].payload_bytes_sent, 0u);
}

TEST(CollectiveTraffic, LinkBoundIsTheBusiestGpusWireBytesAtTheFlitRate) {
  const platform::Scenario scenario =
      platform::load_scenario(test::config_dir() + "/scenarios/default.yaml", {}, test::config_dir());
  CollectiveSpec spec;
  spec.bytes = 256ull << 20;
  // 18 links x 25 GB/s x 0.875, of which 256 payload bytes per 17 flits of 16 bytes.
  const double payload_rate = 18 * 25.0 * 0.875 * 256.0 / 272.0;
  spec.collective = Collective::allreduce_ring;
  EXPECT_NEAR(platform::link_bound(scenario.platform, spec).bus_bandwidth_gbps, payload_rate, 1e-6);
  spec.collective = Collective::allgather_nvls;
  EXPECT_NEAR(platform::link_bound(scenario.platform, spec).bus_bandwidth_gbps, payload_rate * 7 / 8, 1e-6);
  spec.collective = Collective::p2p_write_bidir;
  EXPECT_NEAR(platform::link_bound(scenario.platform, spec).bus_bandwidth_gbps, 2 * payload_rate, 1e-6);
}

// An all-reduce's data sums exactly in float whatever the order of the additions, for message
// indices past 2^24 and up to 128 GPUs: the 4 GiB all-reduce on 64 GPUs failed its own check
// because its sums had rounded.
TEST(CollectiveData, AllReduceSumsAreExactInAnyOrder) {
  for (uint32_t gpus : {2u, 8u, 64u, 72u, 128u}) {
    for (uint64_t message : {0ull, 1ull, (1ull << 24) + 1, (1ull << 28) + 12'345, (1ull << 34) - 1}) {
      std::array<float, 4> forward{}, backward{};
      for (uint32_t g = 0; g < gpus; ++g) {
        const std::array<float, 4> in = allreduce_input_lanes(g, message);
        const std::array<float, 4> in_reverse = allreduce_input_lanes(gpus - 1 - g, message);
        for (int lane = 0; lane < 4; ++lane) {
          forward[lane] += in[lane];
          backward[lane] += in_reverse[lane];
        }
      }
      EXPECT_EQ(forward, allreduce_result_lanes(gpus, message)) << gpus << " GPUs, message " << message;
      EXPECT_EQ(backward, forward) << gpus << " GPUs, message " << message;
    }
  }
  // Neighbouring messages stay apart at every size.
  EXPECT_NE(allreduce_input_lanes(3, (1ull << 24) + 1), allreduce_input_lanes(3, (1ull << 24) + 2));
  EXPECT_NE(allreduce_input_lanes(3, 5), allreduce_input_lanes(3, 5 + (1ull << 17)));
}

}  // namespace
}  // namespace nvsvp::fw
