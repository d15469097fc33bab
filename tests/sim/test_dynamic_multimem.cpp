// Dynamic multimem on the assembled platform (3 GPUs on two chips, links 2 + 1; 2 experts per
// GPU, so experts 0-1 live on GPU 0, 2-3 on GPU 1, 4-5 on GPU 2), with the objects made by the
// firmware runtime and bound in every Hub: dymultimem.st trimmed to one copy per GPU and written
// once per target expert, the issuer's own experts served without a link, dymultimem.ld_reduce
// answered once per GPU and summed once (model, and model and RTL in lockstep), explicit
// addressing, refusals, a full reduction buffer passing partials on, and the link engines'
// window of loads in flight.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <systemc>

#include "../common/multimem_support.hpp"
#include "../common/partition_support.hpp"
#include "../common/test_support.hpp"
#include "nvsvp/fw/dynamic_multicast_runtime.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

namespace regs = hw::switch_regs;

constexpr uint32_t kGpus = 3;
constexpr uint32_t kExpertsPerGpu = 2;
constexpr uint64_t kTokens = 8;             // algebraic blocks of each object
constexpr uint64_t kDispatchBlock = 256;    // one token in the dispatch format
constexpr uint64_t kCombineBlock = 16;      // one output: 8 bf16 lanes
constexpr uint64_t kDispatchLocal = 1ull << 20;  // where every GPU packs its dispatch blocks
constexpr uint64_t kCombineLocal = 4ull << 20;   // and its partials
constexpr uint64_t kSource = 0x1000;             // the issuer's token
constexpr uint64_t kResult = 0x5000;             // where a load's result lands

PlatformSpec dynamic_platform(const std::string& reduction_backend = "model") {
  PlatformSpec spec = test::small_platform(kGpus, {2, 1});
  spec.switch_chip.reduction_backend = reduction_backend;
  return spec;
}

struct Objects {
  hw::DynamicMulticastBinding dispatch;
  hw::DynamicMulticastBinding combine;
};

using test::Bytes16;
using test::chips_counter;
using test::read16;
using test::wait_for;

// (1 .. 8) x scale in bf16.
Bytes16 bf16_lanes(float scale) {
  std::array<float, 8> values;
  for (size_t i = 0; i < 8; ++i) values[i] = scale * static_cast<float>(i + 1);
  return test::bf16_lanes(values);
}

uint64_t forwarded_flits(Platform& platform, model::TrafficClass traffic_class) {
  uint64_t sum = 0;
  for (uint32_t c = 0; c < platform.switch_count(); ++c) {
    sum += platform.chip(c).stats().forwarded_flits[static_cast<size_t>(traffic_class)];
  }
  return sum;
}

// Runs `body` as firmware after bring-up and the binding of a dispatch and a combine object
// (sharing one mapping; every expert bound for all kTokens tokens); `program_switches` false
// leaves DYN_EXPERTS_PER_GPU at 0.
void run_dynamic(const PlatformSpec& spec, const std::function<void(TlmHal&, Platform&, fw::SwitchFabric&, const Objects&)>& body,
                 bool program_switches = true, uint64_t combine_block = kCombineBlock) {
  auto& platform = *new Platform("platform", spec);
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&, program_switches, combine_block] {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology());
    fw::DynamicMulticastRuntime runtime(kGpus);
    const auto d = runtime.create_dynamic_multicast(kDispatchBlock, hw::MultimemStage::dispatch, 2);
    const auto c = runtime.create_dynamic_multicast(combine_block, hw::MultimemStage::combine, 2);
    const std::vector<uint32_t> tokens_per_expert(kGpus * kExpertsPerGpu, static_cast<uint32_t>(kTokens));
    const Objects objects{runtime.bind_dynamic_multicast(d, kTokens, tokens_per_expert),
                          runtime.bind_dynamic_multicast(c, kTokens, tokens_per_expert)};
    for (uint32_t g = 0; g < kGpus; ++g) {
      hal.bind_dynamic_object(g, objects.dispatch, kDispatchLocal);
      hal.bind_dynamic_object(g, objects.combine, kCombineLocal);
    }
    if (program_switches) {
      for (uint32_t chip = 0; chip < hal.switch_count(); ++chip) {
        hal.write_register(chip, regs::kDynamicExpertsPerGpu, kExpertsPerGpu);
      }
    }
    body(hal, platform, fabric, objects);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  std::ostringstream stuck;
  ASSERT_TRUE(host.done()) << "the firmware did not finish:\n" << (platform.describe_outstanding(stuck), stuck.str());
}

// A sequence of one dynamic task and its target list.
hw::WorkSequence dynamic_task(const hw::Task& task, const std::vector<uint16_t>& targets,
                              const std::vector<uint64_t>& addresses = {}) {
  hw::WorkSequence sequence;
  sequence.targets = targets;
  sequence.target_addresses = addresses;
  sequence.tasks.push_back(task);
  return sequence;
}

hw::Task store(uint64_t token, const Objects& objects, uint16_t targets,
               hw::DynamicAddressing addressing = hw::DynamicAddressing::algebraic) {
  return hw::Task::dynamic_store(0, kSource, objects.dispatch.multimem_address(token), kDispatchBlock, 0, targets,
                                 addressing, 0);
}

hw::Task load(uint64_t token, const Objects& objects, uint16_t targets, uint64_t bytes = kCombineBlock) {
  return hw::Task::dynamic_ld_reduce(0, objects.combine.multimem_address(token), kResult, bytes, 0, targets,
                                     hw::DynamicAddressing::algebraic, hw::MultimemOp::add, hw::MultimemType::bf16, 1);
}

// Where GPU `gpu`'s Hub put `expert`'s copy of `token` (fails the test if nowhere).
uint64_t block_of(TlmHal& hal, uint32_t gpu, uint64_t multimem_address, uint16_t expert) {
  uint64_t local = 0;
  EXPECT_TRUE(hal.dynamic_local_address(gpu, multimem_address, expert, local))
      << "GPU " << gpu << " holds no block for expert " << expert;
  return local;
}

// Each target expert's output of a token, (expert + offset) x (1 .. 8), where the combine
// object at `combine_address` maps it on the expert's GPU.
void write_partials(TlmHal& hal, uint64_t combine_address, const std::vector<uint16_t>& experts, float offset) {
  for (uint16_t expert : experts) {
    const uint32_t gpu = expert / kExpertsPerGpu;
    const Bytes16 partial = bf16_lanes(static_cast<float>(expert) + offset);
    hal.memory(gpu).write(block_of(hal, gpu, combine_address, expert), partial.data(), 16);
  }
}

TEST(DynamicMultimem, StoreIsTrimmedToOneCopyPerGpuAndWrittenOncePerTargetExpert) {
  run_dynamic(dynamic_platform(), [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric, const Objects& o) {
    const Bytes16 token = bf16_lanes(3.0f);
    hal.memory(0).write(kSource, token.data(), 16);
    // Experts 3 and 2 on GPU 1, 5 on GPU 2.
    hal.submit(0, dynamic_task(store(5, o, 3), {3, 2, 5}));
    hal.submit(1, wait_for(0, 2));
    hal.submit(2, wait_for(0, 1));
    hal.wait_all_finished();

    const uint64_t address = o.dispatch.multimem_address(5);
    // Each expert's region starts after the earlier local experts' (8 blocks each); first touch
    // allocates the region's first block.
    EXPECT_EQ(block_of(hal, 1, address, 2), kDispatchLocal);
    EXPECT_EQ(block_of(hal, 1, address, 3), kDispatchLocal + kTokens * kDispatchBlock);
    EXPECT_EQ(block_of(hal, 2, address, 5), kDispatchLocal + kTokens * kDispatchBlock);
    for (const auto& [gpu, expert] : std::vector<std::pair<uint32_t, uint16_t>>{{1, 2}, {1, 3}, {2, 5}}) {
      const uint64_t block = block_of(hal, gpu, address, expert);
      EXPECT_EQ(read16(hal, gpu, block), token) << "GPU " << gpu << " expert " << expert;
      EXPECT_EQ(hal.memory(gpu).write_count(block), 1u) << "GPU " << gpu << " expert " << expert;
    }
    uint64_t unused = 0;
    EXPECT_FALSE(hal.dynamic_local_address(1, address, 4, unused)) << "expert 4 is not GPU 1's";
    EXPECT_FALSE(hal.dynamic_local_address(2, address, 4, unused)) << "expert 4 was not a target";
    EXPECT_EQ(platform.gpu(1).hub().statistics().allocations, 2u);
    EXPECT_EQ(platform.gpu(2).hub().statistics().allocations, 1u);

    // One request out of the issuer, one copy into each target GPU, none back to the issuer.
    EXPECT_EQ(platform.gpu(0).stats().messages_sent, 1u);
    EXPECT_EQ(platform.gpu(0).stats().messages_received, 0u);
    EXPECT_EQ(platform.gpu(1).stats().messages_received, 1u);
    EXPECT_EQ(platform.gpu(2).stats().messages_received, 1u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 2u);
    // Wire sizes: the request lists 3 targets, each copy only its own (2 and 1).
    const model::LinkParams& link = platform.spec().link;
    EXPECT_EQ(forwarded_flits(platform, model::TrafficClass::request),
              model::dynamic_wire_flits(link, 2, kDispatchBlock) + model::dynamic_wire_flits(link, 1, kDispatchBlock));
    uint64_t sent_flits = 0;
    for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) sent_flits += platform.link(LinkDirection::gpu_to_switch, 0, l).stats().wire_flits;
    EXPECT_EQ(sent_flits, model::dynamic_wire_flits(link, 3, kDispatchBlock));
    EXPECT_EQ(fabric.service_interrupts(), 0u) << "no error";
  });
}

TEST(DynamicMultimem, IssuersOwnExpertsAreWrittenByItsHubWithoutALink) {
  run_dynamic(dynamic_platform(), [](TlmHal& hal, Platform& platform, fw::SwitchFabric&, const Objects& o) {
    const Bytes16 token = bf16_lanes(5.0f);
    hal.memory(0).write(kSource, token.data(), 16);
    // Expert 4 on GPU 2, then GPU 0's own experts 1 and 0 (the list's end).
    hw::WorkSequence issuer = dynamic_task(store(2, o, 3), {4, 1, 0});
    issuer.tasks.push_back(hw::Task::wait(0, 0, 2));  // the two local blocks count at the issuer
    hal.submit(0, std::move(issuer));
    hal.submit(2, wait_for(0, 1));
    hal.wait_all_finished();

    const uint64_t address = o.dispatch.multimem_address(2);
    for (uint16_t expert : {0, 1}) {
      const uint64_t block = block_of(hal, 0, address, expert);
      EXPECT_EQ(read16(hal, 0, block), token) << "expert " << expert;
    }
    EXPECT_EQ(read16(hal, 2, block_of(hal, 2, address, 4)), token);
    EXPECT_EQ(platform.gpu(0).stats().messages_received, 0u);
    EXPECT_EQ(platform.gpu(1).stats().messages_received, 0u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 1u);
    const model::LinkParams& link = platform.spec().link;
    EXPECT_EQ(forwarded_flits(platform, model::TrafficClass::request), model::dynamic_wire_flits(link, 1, kDispatchBlock))
        << "the request carries only the remote target";
  });
}

// Token 6 goes to experts 2, 3 (GPU 1), 4 (GPU 2) and 1 (the issuer, GPU 0); every expert's
// partial is (e + 1) x (1 .. 8) in bf16, so the load returns (3 + 4 + 5 + 2) x (1 .. 8).
void load_returns_the_sum_of_every_target_once(const std::string& backend) {
  run_dynamic(dynamic_platform(backend), [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric, const Objects& o) {
    const std::vector<uint16_t> targets{2, 3, 4, 1};
    hw::WorkSequence dispatch = dynamic_task(store(6, o, 4), targets);
    hal.submit(0, std::move(dispatch));
    hal.submit(1, wait_for(0, 2));
    hal.submit(2, wait_for(0, 1));
    hal.wait_all_finished();
    // The experts' outputs, where the combine object maps them (the dispatch's layout).
    write_partials(hal, o.combine.multimem_address(6), targets, 1.0f);
    const uint64_t sent_before = platform.gpu(1).stats().messages_sent;
    hw::WorkSequence issuer = dynamic_task(load(6, o, 4), targets);
    issuer.tasks.push_back(hw::Task::wait(0, 1, 1));
    hal.submit(0, std::move(issuer));
    hal.wait_all_finished();

    EXPECT_EQ(read16(hal, 0, kResult), bf16_lanes(14.0f));
    EXPECT_EQ(hal.memory(0).write_count(kResult), 1u) << "one result";
    EXPECT_EQ(platform.gpu(1).stats().messages_sent - sent_before, 1u) << "GPU 1 answers once for its two experts";
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), 1u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::evictions), 0u);
    // Hub: the combine found every entry the dispatch made (no unmapped block), and GPU 1's two
    // lookups hit the cache the dispatch filled.
    EXPECT_EQ(platform.gpu(1).hub().statistics().combine_translations, 2u);
    EXPECT_GT(platform.gpu(1).hub().statistics().cache_hits, 0u);
    EXPECT_EQ(fabric.service_interrupts(), 0u);
  });
}

TEST(DynamicMultimem, LoadReturnsTheSumOfEveryTargetOnce) { load_returns_the_sum_of_every_target_once("model"); }

TEST(DynamicMultimem, LoadWithModelAndRtlInLockstepReturnsTheSumOnce) { load_returns_the_sum_of_every_target_once("both"); }

// Per-expert arrival counters (docs/background/token_centric_fusion.md#the-fused-pipeline): each
// block counts on the counter base plus its expert's local index, at the destinations and at the
// issuer alike; the base alone counts nothing more.
TEST(DynamicMultimem, StoreCanCountArrivalsPerTargetExpert) {
  run_dynamic(dynamic_platform(), [](TlmHal& hal, Platform& platform, fw::SwitchFabric&, const Objects& o) {
    const Bytes16 token = bf16_lanes(2.0f);
    hal.memory(0).write(kSource, token.data(), 16);
    constexpr uint32_t kBase = 10;
    hw::WorkSequence issuer;
    issuer.targets = {3, 2, 5, 4, 1, 0};  // GPU 1: experts 3, 2; GPU 2: 5, 4; GPU 0 (issuer): 1, 0
    issuer.tasks.push_back(hw::Task::dynamic_store(0, kSource, o.dispatch.multimem_address(4), kDispatchBlock, 0, 6,
                                                   hw::DynamicAddressing::algebraic, kBase, true));
    issuer.tasks.push_back(hw::Task::wait(0, kBase + 1, 1));
    hal.submit(0, std::move(issuer));
    hal.submit(1, wait_for(kBase + 1, 1));
    hal.submit(2, wait_for(kBase + 1, 1));
    hal.wait_all_finished();
    for (uint32_t g = 0; g < kGpus; ++g) {
      EXPECT_EQ(platform.gpu(g).counter_arrivals(kBase), 1u) << "GPU " << g << ": its first local expert";
      EXPECT_EQ(platform.gpu(g).counter_arrivals(kBase + 1), 1u) << "GPU " << g << ": its second local expert";
      EXPECT_EQ(platform.gpu(g).counter_arrivals(kBase + 2), 0u) << "GPU " << g;
    }
  });
}

TEST(DynamicMultimem, ExplicitAddressingWritesWhereTheListSaysWithoutTheHub) {
  run_dynamic(dynamic_platform(), [](TlmHal& hal, Platform& platform, fw::SwitchFabric&, const Objects& o) {
    const Bytes16 token = bf16_lanes(7.0f);
    hal.memory(0).write(kSource, token.data(), 16);
    const std::vector<uint64_t> addresses{0x9000, 0xA000, 0xB000};
    hal.submit(0, dynamic_task(store(1, o, 3, hw::DynamicAddressing::explicit_addresses), {2, 3, 4}, addresses));
    hal.submit(1, wait_for(0, 2));
    hal.submit(2, wait_for(0, 1));
    hal.wait_all_finished();
    EXPECT_EQ(read16(hal, 1, 0x9000), token);
    EXPECT_EQ(read16(hal, 1, 0xA000), token);
    EXPECT_EQ(read16(hal, 2, 0xB000), token);
    for (uint32_t g = 0; g < kGpus; ++g) {
      EXPECT_EQ(platform.gpu(g).hub().statistics().dispatch_translations, 0u) << "GPU " << g;
    }
    const model::LinkParams& link = platform.spec().link;
    EXPECT_EQ(forwarded_flits(platform, model::TrafficClass::request),
              model::explicit_wire_flits(link, 2, kDispatchBlock) + model::explicit_wire_flits(link, 1, kDispatchBlock));
  });
}

// The chip refuses what it cannot serve: an error response (the issuer's wait completes), the
// access error count, bad_target in ERROR_STATUS, and nothing written anywhere.
void expect_refused(const std::vector<uint16_t>& targets, bool program_switches) {
  run_dynamic(
      dynamic_platform(),
      [&targets](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric, const Objects& o) {
        const Bytes16 token = bf16_lanes(1.0f);
        hal.memory(0).write(kSource, token.data(), 16);
        hw::WorkSequence issuer = dynamic_task(store(3, o, static_cast<uint16_t>(targets.size())), targets);
        issuer.tasks.push_back(hw::Task::wait(0, 0, 1));
        hal.submit(0, std::move(issuer));
        hal.wait_all_finished();
        EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 1u);
        for (uint32_t g = 0; g < kGpus; ++g) {
          EXPECT_EQ(platform.gpu(g).hub().statistics().allocations, 0u) << "GPU " << g;
          if (g > 0) {
            EXPECT_EQ(platform.gpu(g).stats().messages_received, 0u) << "GPU " << g;
          }
        }
        EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 0u);
        EXPECT_EQ(chips_counter(platform, &model::SwitchStats::access_errors), 1u);
        EXPECT_TRUE(fabric.wait_and_service(0.0)) << "the interrupt is up";
        uint32_t bits = 0;
        for (const fw::SwitchErrorRecord& record : fabric.error_log()) bits |= record.bits;
        EXPECT_EQ(bits, regs::error_bad_target);
      },
      program_switches);
}

TEST(DynamicMultimem, RequestIsRefusedWhenTheSwitchWasNotToldWhereExpertsLive) { expect_refused({2, 4}, false); }

TEST(DynamicMultimem, RequestNamingAnExpertTwiceIsRefused) { expect_refused({2, 4, 2}, true); }

TEST(DynamicMultimem, RequestNamingAnExpertOfAGpuWithoutARouteIsRefused) {
  expect_refused({2, 7}, true);  // expert 7 would be on GPU 3
}

// A 256-byte reduction buffer cannot hold a 2 KB partial: the first of the two answers goes on
// to the issuer as it is (an eviction), the second follows as the result, and the issuer adds
// them. The result is still exact and lands once; the extra message is counted as traffic.
// Partitions {GPU 0, GPU 1} and {GPU 2}: experts 0 .. 3 in the first, 4 and 5 in the second.
const std::vector<uint32_t> kPartitionOfGpu{1, 1, 2};

// A refusal for crossing partitions: one multimem_error at GPU 0, counted as a partition error
// (not an access error), error_partition pending and then serviced.
void expect_partition_refusal(TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
  EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 1u);
  EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 1u);
  EXPECT_EQ(chips_counter(platform, &model::SwitchStats::access_errors), 0u);
  EXPECT_EQ(platform.gpu(2).stats().messages_received, 0u) << "nothing reached the other partition";
  EXPECT_EQ(test::interrupts_pending(hal), regs::error_partition);
  EXPECT_TRUE(fabric.wait_and_service(0.0)) << "the interrupt is up";
  uint32_t bits = 0;
  for (const fw::SwitchErrorRecord& record : fabric.error_log()) bits |= record.bits;
  EXPECT_EQ(bits, regs::error_partition);
}

TEST(DynamicMultimem, StoreWithATargetInAnotherPartitionIsRefusedAndOneWithinItLands) {
  run_dynamic(dynamic_platform(), [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric, const Objects& o) {
    test::program_port_partitions(hal, platform.fabric_topology(), kPartitionOfGpu);
    const Bytes16 token = bf16_lanes(2.0f);
    hal.memory(0).write(kSource, token.data(), 16);
    // Token 5 to experts 2 (GPU 1) and 4 (GPU 2, the other partition): refused as a whole.
    hw::WorkSequence across = dynamic_task(store(5, o, 2), {2, 4});
    across.tasks.push_back(hw::Task::wait(0, 0, 1));  // the error response completes it
    hal.submit(0, std::move(across));
    hal.wait_all_finished();
    uint64_t unused = 0;
    EXPECT_FALSE(hal.dynamic_local_address(1, o.dispatch.multimem_address(5), 2, unused)) << "nothing written on GPU 1";
    EXPECT_EQ(platform.gpu(1).stats().messages_received, 0u);
    for (uint32_t g = 0; g < kGpus; ++g) EXPECT_EQ(platform.gpu(g).hub().statistics().allocations, 0u) << "GPU " << g;
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 0u);
    expect_partition_refusal(hal, platform, fabric);

    // Token 6 to experts 2 and 3, both on GPU 1: within the partition, it lands once each.
    hal.submit(0, dynamic_task(store(6, o, 2), {2, 3}));
    hal.submit(1, wait_for(0, 2));
    hal.wait_all_finished();
    for (uint16_t expert : {2, 3}) {
      const uint64_t block = block_of(hal, 1, o.dispatch.multimem_address(6), expert);
      EXPECT_EQ(read16(hal, 1, block), token) << "expert " << expert;
      EXPECT_EQ(hal.memory(1).write_count(block), 1u) << "expert " << expert;
    }
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 1u) << "no new refusal";
  });
}

TEST(DynamicMultimem, LoadWithATargetInAnotherPartitionIsRefusedAndOneWithinItReduces) {
  run_dynamic(dynamic_platform(), [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric, const Objects& o) {
    // Dispatch token 6 to experts 2, 3 (GPU 1) and 4 (GPU 2) before the partitions exist, so that
    // every target has a partial to read.
    const std::vector<uint16_t> targets{2, 3, 4};
    hal.submit(0, dynamic_task(store(6, o, 3), targets));
    hal.submit(1, wait_for(0, 2));
    hal.submit(2, wait_for(0, 1));
    hal.wait_all_finished();
    write_partials(hal, o.combine.multimem_address(6), targets, 1.0f);
    const uint64_t received_by_2 = platform.gpu(2).stats().messages_received;
    test::program_port_partitions(hal, platform.fabric_topology(), kPartitionOfGpu);

    constexpr uint64_t kRefusedResult = kResult + 0x100;
    hw::Task across = load(6, o, 2);
    across.target_address = kRefusedResult;
    hw::WorkSequence issuer = dynamic_task(across, {2, 4});
    issuer.tasks.push_back(hw::Task::wait(0, 1, 1));  // the error response completes it
    hal.submit(0, std::move(issuer));
    hal.wait_all_finished();
    EXPECT_EQ(hal.memory(0).write_count(kRefusedResult), 0u) << "no result";
    EXPECT_EQ(read16(hal, 0, kRefusedResult), Bytes16{});
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), 0u);
    EXPECT_EQ(platform.gpu(1).stats().messages_received, 1u) << "only the dispatch: no member read";
    EXPECT_EQ(platform.gpu(2).stats().messages_received, received_by_2) << "no member read";
    EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 1u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 1u);
    EXPECT_EQ(test::interrupts_pending(hal), regs::error_partition);
    EXPECT_TRUE(fabric.wait_and_service(0.0));

    // Experts 2 and 3 only: (3 + 4) x (1 .. 8), once.
    hw::WorkSequence within = dynamic_task(load(6, o, 2), {2, 3});
    within.tasks.push_back(hw::Task::wait(0, 1, 2));
    hal.submit(0, std::move(within));
    hal.wait_all_finished();
    EXPECT_EQ(read16(hal, 0, kResult), bf16_lanes(7.0f));
    EXPECT_EQ(hal.memory(0).write_count(kResult), 1u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 1u) << "no new refusal";
  });
}

TEST(DynamicMultimem, FullReductionBufferPassesPartialsOnAndTheResultStaysExact) {
  PlatformSpec spec = dynamic_platform();
  spec.switch_chip.reduction_buffer_bytes = 256;
  static constexpr uint64_t kBigPartial = 2048;
  run_dynamic(
      spec,
      [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric, const Objects& o) {
        const std::vector<uint16_t> targets{2, 4};
        hal.submit(0, dynamic_task(store(0, o, 2), targets));
        hal.submit(1, wait_for(0, 1));
        hal.submit(2, wait_for(0, 1));
        hal.wait_all_finished();
        write_partials(hal, o.combine.multimem_address(0), targets, 0.0f);
        hw::WorkSequence issuer = dynamic_task(load(0, o, 2, kBigPartial), targets);
        issuer.tasks.push_back(hw::Task::wait(0, 1, 1));
        hal.submit(0, std::move(issuer));
        hal.wait_all_finished();

        EXPECT_EQ(read16(hal, 0, kResult), bf16_lanes(6.0f));
        EXPECT_EQ(hal.memory(0).write_count(kResult), 1u);
        EXPECT_EQ(chips_counter(platform, &model::SwitchStats::evictions), 1u);
        EXPECT_EQ(chips_counter(platform, &model::SwitchStats::evicted_partial_bytes), kBigPartial);
        EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), 1u);
        EXPECT_EQ(platform.gpu(0).stats().partials_received, 1u);
        EXPECT_EQ(platform.gpu(0).stats().messages_received, 2u) << "the passed-on partial and the result";
        EXPECT_EQ(hal.received_messages(0), 1u) << "the HAL's count leaves passed-on partials out";
        EXPECT_EQ(fabric.service_interrupts(), 0u) << "an eviction is no error";
      },
      true, kBigPartial);
}

// With room for one 16-byte result per link, three loads on the same link go one after another:
// each waits for the previous result, so the last result comes two round trips after the first
// (were they sent together, it would follow within nanoseconds).
TEST(DynamicMultimem, LoadsBeyondTheLinkWindowWaitForResults) {
  PlatformSpec spec = dynamic_platform();
  spec.gpu.load_bytes_in_flight_per_link = 16;
  run_dynamic(spec, [](TlmHal& hal, Platform& platform, fw::SwitchFabric&, const Objects& o) {
    // Tokens 0, 1, 2 on expert 2; their combine addresses are 16 bytes apart, so within one
    // interleave granule: one link.
    hw::WorkSequence dispatch;
    dispatch.targets = {2, 2, 2};
    for (uint32_t t = 0; t < 3; ++t) {
      dispatch.tasks.push_back(hw::Task::dynamic_store(0, kSource, o.dispatch.multimem_address(t), kDispatchBlock, t, 1,
                                                       hw::DynamicAddressing::algebraic, 0));
    }
    hal.submit(0, std::move(dispatch));
    hal.submit(1, wait_for(0, 3));
    hal.wait_all_finished();
    ASSERT_EQ(platform.gpu(0).link_for(o.combine.multimem_address(0)), platform.gpu(0).link_for(o.combine.multimem_address(2)));

    const double start = hal.now_ns();
    hw::WorkSequence issuer;
    issuer.targets = {2, 2, 2};
    for (uint32_t t = 0; t < 3; ++t) {
      issuer.tasks.push_back(hw::Task::dynamic_ld_reduce(0, o.combine.multimem_address(t), kResult + 16 * t, 16, t, 1,
                                                         hw::DynamicAddressing::algebraic, hw::MultimemOp::add,
                                                         hw::MultimemType::bf16, 1));
    }
    issuer.tasks.push_back(hw::Task::wait(0, 1, 1));
    hal.submit(0, std::move(issuer));
    hal.wait_all_finished();
    const double first = hal.now_ns() - start;
    hal.submit(0, wait_for(1, 3));
    hal.wait_all_finished();
    const double last = hal.now_ns() - start;
    EXPECT_GE(last, 2.0 * first) << "first result after " << first << " ns, last after " << last << " ns";
  });
}

}  // namespace
}  // namespace nvsvp::platform
