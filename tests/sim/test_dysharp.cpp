// The dynamic multimem schemes end to end on dgx-h100 (model S, top-8, few tokens), through
// run_scenario (one child process per scheme, as the command does):
//  - `dysharp-basic` moves, per link direction, exactly what the table of
//    docs/background/dynamic_multimem.md#where-the-bytes-go implies for the routing (counted
//    here from the routing alone): per token with D remote GPUs, dispatch 1 vector up and D down,
//    combine D up and 1 down; `deepep` D, D, D, D; the wire bytes follow
//    from the packet formats (target flits per packet, trimmed per GPU);
//  - `explicit-addressing-basic` the same vectors with its own wire format;
//  - the fused schedules (`dysharp`, `explicit-addressing`) the same vectors, no barrier, and
//    one 4-byte notification per (token, remote expert) each way; `fusion-only` and `comet` move
//    deepep's bytes;
//  - every scheme passes the token and combine checks with the `rtl` reduction backend, and
//    `model` and `rtl` give identical results but for host measurements;
//  - no scheme finishes faster than its ideal communication time, with compute or without
//    (pure_communication).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/remote_counts.hpp"
#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

std::string dysharp_scenario(const std::string& schemes, const std::string& backend, uint32_t tokens_per_gpu) {
  return "name: dysharp_test\n"
         "platform:\n"
         "  preset: dgx-h100\n"
         "  switch: {reduction_backend: " + backend + "}\n"
         "workload:\n"
         "  model: S\n"
         "  top_k: 8\n"
         "  tokens_per_gpu: " + std::to_string(tokens_per_gpu) + "\n"
         "  routing: {kind: uniform, seed: 21}\n"
         "schemes: [" + schemes + "]\n"
         "simulation:\n"
         "  max_time_us: 10000\n";
}

struct ScenarioRun {
  Scenario scenario;
  json report;
};

ScenarioRun run_dysharp_scenario(const test::TempDir& dir, const std::string& name, const std::string& text) {
  ScenarioRun r{load_scenario(dir.write(name + ".yaml", text), {}, test::config_dir()), {}};
  r.report = test::run_and_read_report(r.scenario, dir.path() + "/" + name);
  return r;
}

using test::result_of;

// Per link direction: payload bytes, wire flits, messages.
struct Direction {
  uint64_t payload = 0;
  uint64_t flits = 0;
  uint64_t messages = 0;
};

// What the dynamic schemes move, from the routing alone. `explicit_addresses` picks the wire
// format: target flits of expert IDs, or a full address per target in requests and responses.
std::pair<Direction, Direction> dynamic_traffic(const fw::MoeRouting& routing, uint64_t token_bytes,
                                                uint64_t partial_bytes, const model::LinkParams& link,
                                                bool explicit_addresses) {
  auto request_flits = [&](uint32_t targets, uint64_t bytes) {
    return explicit_addresses ? model::explicit_wire_flits(link, targets, bytes)
                              : model::dynamic_wire_flits(link, targets, bytes);
  };
  auto response_flits = [&](uint32_t targets) {
    return explicit_addresses ? model::explicit_wire_flits(link, targets, partial_bytes) : link.wire_flits(partial_bytes);
  };
  Direction up, down;
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    const uint32_t home = routing.home_of_token(t);
    std::map<uint32_t, uint32_t> targets_on;  // remote GPU -> its experts of t
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      const uint32_t gpu = routing.gpu_of_expert(routing.experts_of(t)[k]);
      if (gpu != home) targets_on[gpu]++;
    }
    if (targets_on.empty()) continue;  // every expert at home: no link used
    uint32_t remote_targets = 0;
    for (const auto& [gpu, n] : targets_on) remote_targets += n;
    const uint64_t d = targets_on.size();
    // Dispatch: one store up, one trimmed copy down per remote GPU.
    up.payload += token_bytes;
    up.flits += request_flits(remote_targets, token_bytes);
    up.messages += 1;
    for (const auto& [gpu, n] : targets_on) down.flits += request_flits(n, token_bytes);
    down.payload += d * token_bytes;
    down.messages += d;
    // Combine: one load up, one trimmed read down and one summed answer up per remote GPU, one
    // result down.
    up.flits += request_flits(remote_targets, 0);
    up.messages += 1;
    for (const auto& [gpu, n] : targets_on) {
      down.flits += request_flits(n, 0);
      up.flits += response_flits(n);
    }
    down.messages += d;
    up.payload += d * partial_bytes;
    up.messages += d;
    down.payload += partial_bytes;
    down.flits += link.wire_flits(partial_bytes);
    down.messages += 1;
  }
  // The barrier before the loads: 16 bytes from every GPU to every other.
  const uint64_t flags = static_cast<uint64_t>(routing.gpus) * (routing.gpus - 1);
  for (Direction* dir : {&up, &down}) {
    dir->payload += flags * 16;
    dir->flits += flags * link.wire_flits(16);
    dir->messages += flags;
  }
  return {up, down};
}

void expect_direction(const json& result, const char* direction, const Direction& expected, uint32_t flit_bytes) {
  SCOPED_TRACE(direction);
  EXPECT_EQ(result.at("payload_bytes").at(direction).get<uint64_t>(), expected.payload);
  EXPECT_EQ(result.at("traffic_bytes").at(direction).get<uint64_t>(), expected.flits * flit_bytes);
  EXPECT_EQ(result.at("messages").at(direction).get<uint64_t>(), expected.messages);
}

TEST(DysharpSchemes, TrafficPerDirectionIsWhatTheRoutingImpliesUnderTheTable) {
  test::TempDir dir;
  const ScenarioRun r = run_dysharp_scenario(
      dir, "traffic",
      dysharp_scenario("deepep, dysharp-basic, explicit-addressing-basic, dysharp, explicit-addressing, fusion-only, comet",
                    "model", 64));
  const auto layer = make_layer_spec(r.scenario);
  const fw::MoeRouting& routing = layer->routing;
  const uint64_t token_bytes = r.report.at("workload").at("dispatch_bytes_per_token").get<uint64_t>();
  const uint64_t partial_bytes = r.report.at("workload").at("combine_bytes_per_token").get<uint64_t>();
  const model::LinkParams& link = r.scenario.platform.link;

  // The table in vectors, summed over tokens: D = remote GPUs of a token.
  const auto [sum_d, tokens_with_remote, remote_experts] = test::remote_counts(routing);
  ASSERT_GT(sum_d, 2 * tokens_with_remote) << "top-8 over 8 GPUs: D well above 1, or the test shows nothing";
  const uint64_t flags = 8 * 7 * 16;

  for (const char* scheme : {"dysharp-basic", "explicit-addressing-basic"}) {
    SCOPED_TRACE(scheme);
    const json& result = result_of(r.report, scheme);
    EXPECT_TRUE(result.at("checks").at("passed").get<bool>()) << result.at("checks").dump(2);
    // dispatch up 1, combine up D; dispatch down D, combine down 1 (payload, in vectors).
    EXPECT_EQ(result.at("payload_bytes").at("gpu_to_switch").get<uint64_t>(),
              tokens_with_remote * token_bytes + sum_d * partial_bytes + flags);
    EXPECT_EQ(result.at("payload_bytes").at("switch_to_gpu").get<uint64_t>(),
              sum_d * token_bytes + tokens_with_remote * partial_bytes + flags);
    const auto [up, down] =
        dynamic_traffic(routing, token_bytes, partial_bytes, link, std::string(scheme) == "explicit-addressing-basic");
    expect_direction(result, "gpu_to_switch", up, link.flit_bytes);
    expect_direction(result, "switch_to_gpu", down, link.flit_bytes);
    EXPECT_EQ(result.at("switch").at("evictions").get<uint64_t>(), 0u);
    EXPECT_EQ(result.at("switch").at("reductions").get<uint64_t>(), tokens_with_remote);
  }
  // Fused: the same vectors without the barrier's flags, and the notifications.
  constexpr uint64_t kNotificationBytes = 4;
  for (const char* scheme : {"dysharp", "explicit-addressing"}) {
    SCOPED_TRACE(scheme);
    const json& result = result_of(r.report, scheme);
    EXPECT_TRUE(result.at("checks").at("passed").get<bool>()) << result.at("checks").dump(2);
    EXPECT_EQ(result.at("payload_bytes").at("gpu_to_switch").get<uint64_t>(),
              tokens_with_remote * token_bytes + sum_d * partial_bytes + remote_experts * kNotificationBytes);
    EXPECT_EQ(result.at("payload_bytes").at("switch_to_gpu").get<uint64_t>(),
              sum_d * token_bytes + tokens_with_remote * partial_bytes + remote_experts * kNotificationBytes);
    const json& fusion = result.at("fusion");
    EXPECT_EQ(fusion.at("notifications").get<uint64_t>(), routing.tokens() * routing.top_k);
    EXPECT_EQ(fusion.at("notifications_expected").get<uint64_t>(), remote_experts);
    EXPECT_EQ(fusion.at("notifications_delivered").get<uint64_t>(), remote_experts);
    EXPECT_GT(fusion.at("notification_messages").get<uint64_t>(), 0u);
    EXPECT_LT(fusion.at("notification_messages").get<uint64_t>(), remote_experts) << "notifications travel together";
    EXPECT_EQ(fusion.at("output_readiness").at("taken").get<uint64_t>(), routing.tokens());
    EXPECT_EQ(result.at("switch").at("reductions").get<uint64_t>(), tokens_with_remote);
  }
  // deepep: D both ways in both phases (plus its 16-byte count exchange); the software fused
  // schedules move the same and a readiness flag per remote copy each way (dispatch and combine):
  // real messages, each flag a 4-byte write with its own header on the wire.
  constexpr uint64_t kFlagBytes = 4;
  const uint64_t readiness_flags = 2 * sum_d;
  for (const char* scheme : {"deepep", "fusion-only", "comet"}) {
    const json& result = result_of(r.report, scheme);
    EXPECT_TRUE(result.at("checks").at("passed").get<bool>()) << scheme << result.at("checks").dump(2);
    const uint64_t software_flags = std::string(scheme) == "deepep" ? 0 : readiness_flags;
    for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
      EXPECT_EQ(result.at("payload_bytes").at(direction).get<uint64_t>(),
                sum_d * (token_bytes + partial_bytes) + flags + software_flags * kFlagBytes)
          << scheme << " " << direction;
    }
  }
  for (const char* scheme : {"fusion-only", "comet"}) {
    for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
      EXPECT_EQ(result_of(r.report, scheme).at("traffic_bytes").at(direction).get<uint64_t>(),
                result_of(r.report, "deepep").at("traffic_bytes").at(direction).get<uint64_t>() +
                    readiness_flags * link.wire_flits(kFlagBytes) * link.flit_bytes)
          << scheme << " " << direction << ": the flags' wire bytes on top of deepep's";
    }
  }
  // The Hub served dysharp-basic and reported its cache; explicit addressing never used it.
  const json& hub = result_of(r.report, "dysharp-basic").at("hub");
  EXPECT_EQ(hub.at("dispatch_translations").get<uint64_t>() > 0, true);
  EXPECT_GT(hub.at("cache_hit_rate").get<double>(), 0.5);
  EXPECT_LE(hub.at("cache_hit_rate").get<double>(), 1.0);
  EXPECT_TRUE(result_of(r.report, "explicit-addressing-basic").at("hub").at("cache_hit_rate").is_null());
}

const std::string kAllSchemes = test::every_scheme_list();

// Everything in a result but the host's measurements.
using test::without_host_measurements;

TEST(DysharpSchemes, EverySchemePassesWithTheRtlBackendAndMatchesTheModel) {
  test::TempDir dir;
  const std::string schemes = kAllSchemes;
  const ScenarioRun model = run_dysharp_scenario(dir, "model", dysharp_scenario(schemes, "model", 16));
  const ScenarioRun rtl = run_dysharp_scenario(dir, "rtl", dysharp_scenario(schemes, "rtl", 16));
  for (const std::string& scheme : fw::layer_scheme_names()) {
    SCOPED_TRACE(scheme);
    const json& m = result_of(model.report, scheme);
    const json& r = result_of(rtl.report, scheme);
    EXPECT_TRUE(r.at("checks").at("passed").get<bool>()) << r.at("checks").dump(2);
    EXPECT_EQ(without_host_measurements(m), without_host_measurements(r));
    EXPECT_EQ(m.at("sim").at("simulated_us"), r.at("sim").at("simulated_us"));
  }
  EXPECT_GT(result_of(rtl.report, "dysharp-basic").at("switch").at("reductions").get<uint64_t>(), 0u)
      << "the reduction units were used";
}

// No scheme beats its ideal communication time (the busiest GPU's wire time in the busier
// direction with all its links busy), with or without compute; without compute (pure
// communication) the experts take no time and every check still holds.
TEST(DysharpSchemes, NoSchemeFinishesFasterThanItsIdealCommunicationTime) {
  test::TempDir dir;
  const std::string schemes = kAllSchemes;
  const ScenarioRun with_compute = run_dysharp_scenario(dir, "compute", dysharp_scenario(schemes, "model", 32));
  const ScenarioRun pure = run_dysharp_scenario(dir, "pure", dysharp_scenario(schemes, "model", 32) + "pure_communication: true\n");
  EXPECT_TRUE(pure.report.at("scenario").at("pure_communication").get<bool>());
  for (const std::string& scheme : fw::layer_scheme_names()) {
    SCOPED_TRACE(scheme);
    for (const json* report : {&with_compute.report, &pure.report}) {
      const json& r = result_of(*report, scheme);
      EXPECT_TRUE(r.at("checks").at("passed").get<bool>()) << r.at("checks").dump(2);
      const double ideal = r.at("ideal_comm_time_us").get<double>();
      const double layer = r.at("layer_time_us").get<double>();
      EXPECT_GT(ideal, 0.0);
      EXPECT_LE(ideal, layer);
      EXPECT_DOUBLE_EQ(r.at("comm_efficiency").get<double>(), ideal / layer);
      // The ideal is the busier direction's.
      const json& parts = r.at("ideal_comm");
      EXPECT_DOUBLE_EQ(ideal, std::max(parts.at("gpu_to_switch_us").get<double>(), parts.at("switch_to_gpu_us").get<double>()));
    }
    const json& p = result_of(pure.report, scheme);
    const json& c = result_of(with_compute.report, scheme);
    // Same traffic, no expert time (the GPUs are busy only with the software costs, e.g. deepep's
    // count exchange and two barriers), and a shorter layer.
    EXPECT_EQ(p.at("traffic_bytes"), c.at("traffic_bytes"));
    const fw::SoftwareParams& software = pure.scenario.software;
    // The software costs: the all-to-all's count exchange and its barriers (deepep's two, one
    // where the baselines' pipelines end; the token-centric combines of comet and fusion-only
    // have none), and the kernel boundary of the COMET-style schedules.
    const std::map<std::string, double> software_ns{
        {"deepep", software.count_exchange_ns + 2 * software.sync_ns},
        {"deepep-ll", 2 * software.sync_ns},
        {"tutel", software.count_exchange_ns + software.sync_ns},
        {"fastermoe", software.count_exchange_ns + software.sync_ns},
        {"ccfuser", software.count_exchange_ns + software.sync_ns},
        {"comet", software.count_exchange_ns + software.sync_ns},
        {"fusion-only", software.count_exchange_ns},
        {"dysharp-comet", software.sync_ns}};
    const auto found = software_ns.find(scheme);
    const double software_us = found == software_ns.end() ? 0.0 : found->second / 1e3;
    for (const json& gpu : p.at("gpus")) EXPECT_DOUBLE_EQ(gpu.at("compute_us").get<double>(), software_us);
    // What the report lists as the scheme's fixed software costs, with and without compute.
    EXPECT_DOUBLE_EQ(p.at("software_delays_us").at("total").get<double>(), software_us);
    EXPECT_DOUBLE_EQ(c.at("software_delays_us").at("total").get<double>(), software_us);
    EXPECT_LT(p.at("layer_time_us").get<double>(), c.at("layer_time_us").get<double>());
  }
}

}  // namespace
}  // namespace nvsvp::platform
