// Hot-expert replication end to end (docs/background/hot_expert_replication.md): the broadcast
// methods move an expert's weights from its owner to the replicas' GPUs while the shared expert
// computes, and the layer then runs on the re-routed tokens. Comparisons need several simulations;
// each runs in a child process of the test's own (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/fw/expert_replication.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/platform/routing_generator.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

std::string replication_scenario(const std::string& replication, uint32_t tokens_per_gpu = 64,
                          const std::string& routing = "{kind: uniform, seed: 3}", const std::string& schemes = "[deepep]") {
  return "name: replication_test\n"
         "platform: dgx-h100\n"
         "workload:\n"
         "  model: S\n"
         "  tokens_per_gpu: " + std::to_string(tokens_per_gpu) + "\n"
         "  shared_experts: 1\n"
         "  routing: " + routing + "\n"
         "schemes: " + schemes + "\n"
         "replication: " + replication + "\n";
}

// One broadcast: GPU `owner`'s first expert to a fixed group of `group_size` (by default the one
// that holds the owner) in slot 0, by `method`; the layer runs deepep on the tokens re-routed over
// the copies.
json run_one_broadcast(const std::string& method, uint32_t group_size, uint32_t owner = 0, int group_index = -1,
                       uint32_t broadcast_sms = 8) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(
      dir.write("s.yaml", replication_scenario("{policy: iser, broadcast: " + method + ", groups: [" +
                                        std::to_string(group_size) + "], slots_per_gpu: 1, chunk_bytes: 4096, "
                                        "broadcast_sms: " + std::to_string(broadcast_sms) + "}")),
      {}, test::config_dir());
  const fw::MoeRouting original = generate_routing(scenario.workload, scenario.platform.gpus);
  auto layer = std::make_shared<fw::MoeLayerSpec>(*make_layer_spec(scenario));
  auto decision = std::make_shared<fw::ReplicationDecision>(*layer->replication);
  const uint32_t per_gpu = original.experts_per_gpu();
  fw::ReplicaPlacement placement;
  placement.expert = owner * per_gpu;
  placement.owner = owner;
  placement.group = group_index >= 0 ? static_cast<uint32_t>(group_index) : owner / group_size;
  placement.slot = 0;
  const fw::FixedGroup& group = decision->groups.at(placement.group);
  for (uint32_t g = group.first_gpu; g < group.first_gpu + group.size; ++g) {
    if (g != owner) placement.replica_gpus.push_back(g);
  }
  decision->schedule.replicas = {placement};
  fw::ReplicatedRouting rerouted = fw::reroute_tokens(original, decision->schedule.replicas, 1, fw::TokenSplit::even);
  decision->load_after = rerouted.gpu_load;
  layer->routing = std::move(rerouted.routing);
  layer->routing.weights_of = std::move(rerouted.weights_of);
  layer->replication = decision;
  return run_scheme_in_child(scenario, "deepep", layer).result;
}

constexpr uint64_t kExpertBytes = 3ull * 2048 * 512;  // model S, fp8 (hot_expert_replication.md#sizes-and-skew)
// Small chunks for a small expert: links are chosen by hashing addresses, so a few dozen chunks
// would load a GPU's 18 links unevenly (the hardware interleaves 256-byte granules).
constexpr uint64_t kChunkBytes = 4096;

// `at` throws on a missing key, which fails the test instead of crashing it.
uint64_t owner_bytes(const json& result, uint32_t owner = 0) {
  for (const json& o : result.at("replication").at("owners")) {
    if (o.at("gpu").get<uint32_t>() == owner) return o.at("bytes_sent").get<uint64_t>();
  }
  return 0;
}

void expect_complete(const json& result, uint32_t replicas) {
  ASSERT_FALSE(result.contains("error")) << result["error"];
  EXPECT_TRUE(result["checks"]["passed"].get<bool>()) << result["checks"].dump();
  EXPECT_EQ(result["checks"]["weight_chunks_expected"].get<uint64_t>(), replicas * (kExpertBytes / kChunkBytes));
  EXPECT_EQ(result["checks"]["weight_chunks_landed"].get<uint64_t>(), replicas * (kExpertBytes / kChunkBytes));
  // The broadcast ends when its last chunk lands, after at least the expert's bytes on a link,
  // and the dispatch waits for it and for the shared expert (the phase ends in a barrier).
  const json& rep = result.at("replication");
  EXPECT_GT(rep.at("broadcast_time_us").get<double>(), kExpertBytes / 394e3);
  EXPECT_GE(result.at("phases").at("dispatch").at("start_us").get<double>(),
            std::max(rep.at("broadcast_time_us").get<double>(), rep.at("shared_expert_time_us").get<double>()));
}

TEST(Replication, MulticastAndMultiportOwnersSendTheExpertOnceWhateverTheGroupSize) {
  for (const char* method : {"multicast", "multiport"}) {
    for (uint32_t size : {2u, 4u, 8u}) {
      const json result = run_one_broadcast(method, size);
      SCOPED_TRACE(std::string(method) + " to a group of " + std::to_string(size));
      expect_complete(result, size - 1);
      EXPECT_EQ(owner_bytes(result), kExpertBytes);
    }
  }
}

TEST(Replication, PointToPointOwnersSendOneCopyPerReplica) {
  for (uint32_t size : {2u, 4u, 8u}) {
    const json result = run_one_broadcast("p2p", size);
    SCOPED_TRACE("group of " + std::to_string(size));
    expect_complete(result, size - 1);
    EXPECT_EQ(owner_bytes(result), (size - 1) * kExpertBytes);
  }
}

TEST(Replication, RingOwnersSendOnceAndEveryMemberButTheLastForwards) {
  const json result = run_one_broadcast("ring", 4, 1);  // owner 1 in group 0-3: chain 1 -> 2 -> 3 -> 0
  expect_complete(result, 3);
  const json& sent = result.at("replication").at("bytes_sent");
  EXPECT_EQ(sent[1].get<uint64_t>(), kExpertBytes);
  EXPECT_EQ(sent[2].get<uint64_t>(), kExpertBytes);
  EXPECT_EQ(sent[3].get<uint64_t>(), kExpertBytes);
  EXPECT_EQ(sent[0].get<uint64_t>(), 0u);
}

// Multiport exists to lift the cap of the owner's injection. With 4 broadcast SMs (4 x
// gpu.sm_store_gbps = 132 GB/s, well below the owner's 18 links) the owner's multicast is capped
// by its SMs and multiport, whose members issue in parallel, finishes first. (With the default 8
// SMs at the calibrated 33 GB/s each, 264 GB/s, this small expert goes faster by the owner's own
// multicast: docs/calibration.md#what-the-calibration-moved.)
TEST(Replication, MultiportFinishesBeforeMulticastWhenTheOwnersSmsCapIt) {
  for (uint32_t size : {2u, 4u, 8u}) {
    const json multicast = run_one_broadcast("multicast", size, 0, -1, 4);
    const json multiport = run_one_broadcast("multiport", size, 0, -1, 4);
    ASSERT_FALSE(multicast.contains("error") || multiport.contains("error"));
    const double single = multicast.at("replication").at("broadcast_time_us").get<double>();
    const double spread = multiport.at("replication").at("broadcast_time_us").get<double>();
    EXPECT_LT(spread, single) << "group of " << size;
    EXPECT_GT(spread, 0.0);
  }
}

TEST(Replication, MulticastFromOutsideTheGroupGoesThroughOneRelayMember) {
  // Owner 0, group 4-7: the owner cannot issue to a group it is not in, so it hands each chunk to
  // the first member, which multicasts it; the owner still sends the expert once.
  const json result = run_one_broadcast("multicast", 4, 0, 1);
  expect_complete(result, 4);
  const json& sent = result.at("replication").at("bytes_sent");
  EXPECT_EQ(owner_bytes(result), kExpertBytes);
  EXPECT_EQ(sent[4].get<uint64_t>(), kExpertBytes);  // the relay's multicast
  for (uint32_t g : {1u, 2u, 3u, 5u, 6u, 7u}) EXPECT_EQ(sent[g].get<uint64_t>(), 0u) << "GPU " << g;
}

TEST(Replication, IserLevelsAZipfLayerAndTheLayerStillChecks) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(
      dir.write("s.yaml", replication_scenario("{policy: iser, broadcast: multiport, slots_per_gpu: 2}", 4096,
                                        "{kind: zipf, exponent: 1.2, seed: 5}", "[deepep, dysharp-basic, dysharp]")),
      {}, test::config_dir());
  const json report = test::run_and_read_report(scenario, dir.path() + "/out");
  ASSERT_EQ(report.at("results").size(), 3u);
  for (const json& r : report.at("results")) {
    SCOPED_TRACE(r.at("scheme").get<std::string>());
    const json& rep = r.at("replication");
    EXPECT_TRUE(r.at("checks").at("passed").get<bool>());
    EXPECT_GT(rep.at("replicas").size(), 0u);
    EXPECT_LT(rep.at("max_mean_after").get<double>(), rep.at("max_mean_before").get<double>());
    EXPECT_GT(rep.at("excess_load_removed").get<double>(), 0.0);
    EXPECT_GT(rep.at("weight_chunks_expected").get<uint64_t>(), 0u);
    EXPECT_GT(rep.at("shared_expert_time_us").get<double>(), 0.0);
    EXPECT_GE(r.at("phases").at("dispatch").at("start_us").get<double>(),
              std::max(rep.at("broadcast_time_us").get<double>(), rep.at("shared_expert_time_us").get<double>()));
  }
}

TEST(Replication, MultiportFromOutsideTheGroupScattersTheWholeExpert) {
  // Owner 0, group 4-7: every chunk is scattered to a member, which multicasts it.
  const json result = run_one_broadcast("multiport", 4, 0, 1);
  expect_complete(result, 4);
  const json& sent = result.at("replication").at("bytes_sent");
  EXPECT_EQ(owner_bytes(result), kExpertBytes);
  uint64_t members = 0;
  for (uint32_t g : {4u, 5u, 6u, 7u}) {
    EXPECT_EQ(sent[g].get<uint64_t>(), kExpertBytes / 4) << "GPU " << g;  // its quarter of the chunks
    members += sent[g].get<uint64_t>();
  }
  EXPECT_EQ(members, kExpertBytes);
}

TEST(Replication, ALastChunkShorterThanTheOthersLandsToo) {
  // 3 MiB in chunks of 40000 bytes: 78 chunks and one of 25728; every one is checked.
  test::TempDir dir;
  const Scenario scenario = load_scenario(
      dir.write("s.yaml", replication_scenario("{policy: iser, broadcast: ring, slots_per_gpu: 2, chunk_bytes: 40000}", 4096,
                                        "{kind: zipf, exponent: 1.0, seed: 5}")),
      {}, test::config_dir());
  const json report = test::run_and_read_report(scenario, dir.path() + "/out");
  const json& rep = report.at("results").at(0).at("replication");
  ASSERT_GT(rep.at("replicas").size(), 0u);
  uint64_t replica_gpus = 0;
  for (const json& r : rep.at("replicas")) replica_gpus += r.at("gpus").size();
  EXPECT_EQ(rep.at("weight_chunks_expected").get<uint64_t>(), replica_gpus * 79);
  EXPECT_EQ(rep.at("weight_chunks_landed"), rep.at("weight_chunks_expected"));
}

TEST(Replication, StaticReplicasAreResidentAndBalanceFromTheAverageLoads) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(
      dir.write("s.yaml", replication_scenario("{policy: static, slots_per_gpu: 2}", 1024, "{kind: zipf, exponent: 1.0, seed: 5}",
                                        "[deepep, dysharp]")),
      {}, test::config_dir());
  const json report = test::run_and_read_report(scenario, dir.path() + "/out");
  ASSERT_EQ(report.at("results").size(), 2u);
  for (const json& r : report.at("results")) {
    SCOPED_TRACE(r.at("scheme").get<std::string>());
    const json& rep = r.at("replication");
    EXPECT_TRUE(r.at("checks").at("passed").get<bool>());
    EXPECT_GT(rep.at("replicas").size(), 0u);  // no budget: placed whatever the shared expert's time
    EXPECT_LT(rep.at("max_mean_after").get<double>(), rep.at("max_mean_before").get<double>());
    EXPECT_EQ(rep.at("weight_chunks_expected").get<uint64_t>(), 0u);  // nothing is broadcast
    EXPECT_EQ(rep.at("broadcast_time_us").get<double>(), 0.0);
    EXPECT_FALSE(r.at("phases").contains("broadcast"));
  }
}

}  // namespace
}  // namespace nvsvp::platform
