// Static multimem on the assembled platform (3 GPUs on two chips, links 2 + 1), with groups
// created by firmware through the register block: multimem.st replicated to every member
// including the issuer, multimem.red combined into every member, multimem.ld_reduce giving one
// reduced result (model, and model and RTL in lockstep), ld_reduce beyond a port's reduction
// contexts waiting instead of failing, and access control (no group, not a member): an error
// response, an error count, the interrupt, and nothing written anywhere; a ReductionMismatch of
// the `both` backend ends the run naming it.
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
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"
#include "nvsvp/reduction/reduction_factory.hpp"
#include "nvsvp/reduction/reduction_model.hpp"

namespace nvsvp::platform {
namespace {

namespace regs = hw::switch_regs;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint32_t kGpus = 3;
// The group every test creates: multimem [64 MiB, 72 MiB) -> local [1 MiB, 9 MiB) in each member.
constexpr uint64_t kMultimemBase = 64 * kMiB;
constexpr uint64_t kGroupSize = 8 * kMiB;
constexpr uint64_t kLocalBase = 1 * kMiB;
constexpr uint64_t kAllMembers = 0b111;

PlatformSpec multimem_platform(const std::string& reduction_backend = "model") {
  PlatformSpec spec = test::small_platform(kGpus, {2, 1});
  spec.switch_chip.reduction_backend = reduction_backend;
  return spec;
}

// A second group, when a test asks for one: multimem [72 MiB, 80 MiB) -> local [9 MiB, 17 MiB).
constexpr uint64_t kSecondMultimemBase = kMultimemBase + kGroupSize;
constexpr uint64_t kSecondLocalBase = kLocalBase + kGroupSize;

// Runs `body` as firmware after bring-up (with `contexts_per_port` reduction contexts enabled per
// port) and the creation of one group with `members` (and a second with `second_members`, unless
// 0); fails the test if the firmware does not finish within 1 ms.
void run_with_group(const PlatformSpec& spec, uint64_t members,
                    const std::function<void(TlmHal&, Platform&, fw::SwitchFabric&)>& body,
                    uint32_t contexts_per_port = fw::kAllReductionContexts, uint64_t second_members = 0) {
  // Left to the process's end, like every module of a simulation test.
  auto& platform = *new Platform("platform", spec);
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology(), contexts_per_port);
    fw::MulticastAllocator allocator(hal, fabric.report().chips);
    allocator.create_group(kMultimemBase, kGroupSize, kLocalBase, members);
    if (second_members != 0) allocator.create_group(kSecondMultimemBase, kGroupSize, kSecondLocalBase, second_members);
    body(hal, platform, fabric);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  std::ostringstream stuck;
  ASSERT_TRUE(host.done()) << "the firmware did not finish:\n" << (platform.describe_outstanding(stuck), stuck.str());
}

using test::bf16_lanes;
using test::Bytes16;
using test::chips_counter;
using test::one_task;
using test::read16;
using test::wait_for;

Bytes16 f32_lanes(const std::array<float, 4>& values) {
  Bytes16 out{};
  std::memcpy(out.data(), values.data(), 16);
  return out;
}

TEST(Multimem, StoreReachesEveryMemberIncludingTheIssuerWithExactBytes) {
  run_with_group(multimem_platform(), kAllMembers, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    constexpr uint64_t kBytes = 256;
    constexpr uint64_t kOffset = 0x40;
    const Bytes16 pattern = f32_lanes({1.5f, -2.0f, 3.25f, 4.0f});
    hal.memory(0).write(0x1000, pattern.data(), pattern.size());
    hal.submit(0, one_task(hw::Task::multimem_store(0, 0x1000, kMultimemBase + kOffset, kBytes, 0)));
    for (uint32_t g = 0; g < kGpus; ++g) hal.submit(g, wait_for(0, 1));
    hal.wait_all_finished();

    for (uint32_t g = 0; g < kGpus; ++g) {
      EXPECT_EQ(read16(hal, g, kLocalBase + kOffset), pattern) << "GPU " << g;
      EXPECT_EQ(platform.gpu(g).stats().messages_received, 1u) << "GPU " << g;
      EXPECT_EQ(platform.gpu(g).stats().payload_bytes_received, kBytes) << "GPU " << g;
    }
    EXPECT_EQ(platform.gpu(0).stats().messages_sent, 1u) << "one store leaves the issuer";
    EXPECT_EQ(platform.gpu(0).stats().payload_bytes_sent, kBytes);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), kGpus);
    // Each copy is a full write: 256 B of data in 16-byte flits plus one packet header.
    const model::LinkParams& link = platform.spec().link;
    ASSERT_LE(kBytes, link.max_packet_payload_bytes);
    const uint64_t flits_per_copy = kBytes / 16 + link.header_flits_per_packet;
    uint64_t forwarded_flits = 0;
    for (uint32_t c = 0; c < platform.switch_count(); ++c) forwarded_flits += platform.chip(c).stats().forwarded_flits[0];
    EXPECT_EQ(forwarded_flits, kGpus * flits_per_copy);
    EXPECT_EQ(fabric.service_interrupts(), 0u) << "no error";
  });
}

TEST(Multimem, RedAddsTheOperandIntoEveryMember) {
  run_with_group(multimem_platform(), kAllMembers, [](TlmHal& hal, Platform& platform, fw::SwitchFabric&) {
    constexpr uint64_t kF32Offset = 0x100;
    constexpr uint64_t kBf16Offset = 0x200;
    for (uint32_t g = 0; g < kGpus; ++g) {
      const float base = static_cast<float>(g + 1);
      const Bytes16 f32 = f32_lanes({base, 2 * base, 3 * base, -base});
      const Bytes16 bf16 = bf16_lanes({base, base, 2 * base, 2 * base, 3 * base, 3 * base, 4 * base, -base});
      hal.memory(g).write(kLocalBase + kF32Offset, f32.data(), 16);
      hal.memory(g).write(kLocalBase + kBf16Offset, bf16.data(), 16);
    }
    const Bytes16 f32_operand = f32_lanes({10, 20, 30, 40});
    const Bytes16 bf16_operand = bf16_lanes({1, 2, 3, 4, 5, 6, 7, 8});
    hal.memory(1).write(0x3000, f32_operand.data(), 16);
    hal.memory(1).write(0x3010, bf16_operand.data(), 16);
    hw::WorkSequence issuer;
    issuer.tasks.push_back(hw::Task::multimem_red(0, 0x3000, kMultimemBase + kF32Offset, 16, hw::MultimemOp::add,
                                                  hw::MultimemType::f32, 0));
    issuer.tasks.push_back(hw::Task::multimem_red(0, 0x3010, kMultimemBase + kBf16Offset, 16, hw::MultimemOp::add,
                                                  hw::MultimemType::bf16, 0));
    hal.submit(1, std::move(issuer));
    for (uint32_t g = 0; g < kGpus; ++g) hal.submit(g, wait_for(0, 2));
    hal.wait_all_finished();

    for (uint32_t g = 0; g < kGpus; ++g) {
      const float base = static_cast<float>(g + 1);
      EXPECT_EQ(read16(hal, g, kLocalBase + kF32Offset), f32_lanes({base + 10, 2 * base + 20, 3 * base + 30, 40 - base}))
          << "GPU " << g;
      EXPECT_EQ(read16(hal, g, kLocalBase + kBf16Offset),
                bf16_lanes({base + 1, base + 2, 2 * base + 3, 2 * base + 4, 3 * base + 5, 3 * base + 6, 4 * base + 7, 8 - base}))
          << "GPU " << g;
    }
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 2 * kGpus);
  });
}

// GPU g holds lanes (g+1) x (1, 2, 3, 4) (f32) and (g+1) x (1 .. 8) (bf16); the sums over the
// three GPUs are 6 x those lanes. GPU 2 loads both with ld_reduce.
void ld_reduce_returns_the_sum_once(const std::string& backend) {
  run_with_group(multimem_platform(backend), kAllMembers, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    constexpr uint64_t kF32Offset = 0x400;
    constexpr uint64_t kBf16Offset = 0x800;
    for (uint32_t g = 0; g < kGpus; ++g) {
      const float k = static_cast<float>(g + 1);
      const Bytes16 f32 = f32_lanes({k, 2 * k, 3 * k, 4 * k});
      const Bytes16 bf16 = bf16_lanes({k, 2 * k, 3 * k, 4 * k, 5 * k, 6 * k, 7 * k, 8 * k});
      hal.memory(g).write(kLocalBase + kF32Offset, f32.data(), 16);
      hal.memory(g).write(kLocalBase + kBf16Offset, bf16.data(), 16);
    }
    hw::WorkSequence issuer;
    issuer.tasks.push_back(hw::Task::multimem_ld_reduce(0, kMultimemBase + kF32Offset, 0x5000, 16, hw::MultimemOp::add,
                                                        hw::MultimemType::f32, 0));
    issuer.tasks.push_back(hw::Task::multimem_ld_reduce(0, kMultimemBase + kBf16Offset, 0x5010, 16, hw::MultimemOp::add,
                                                        hw::MultimemType::bf16, 0));
    issuer.tasks.push_back(hw::Task::wait(0, 0, 2));
    hal.submit(2, std::move(issuer));
    hal.wait_all_finished();

    EXPECT_EQ(read16(hal, 2, 0x5000), f32_lanes({6, 12, 18, 24}));
    EXPECT_EQ(read16(hal, 2, 0x5010), bf16_lanes({6, 12, 18, 24, 30, 36, 42, 48}));
    // Every member got one read per load (header only); the issuer got its own two reads and
    // exactly two results of 16 bytes each.
    for (uint32_t g = 0; g < 2; ++g) {
      EXPECT_EQ(platform.gpu(g).stats().messages_received, 2u) << "GPU " << g;
      EXPECT_EQ(platform.gpu(g).stats().payload_bytes_received, 0u) << "GPU " << g;
    }
    EXPECT_EQ(platform.gpu(2).stats().messages_received, 4u);
    EXPECT_EQ(platform.gpu(2).stats().payload_bytes_received, 32u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), 2u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::evictions), 0u);
    // Both loads reduce on chip 0 (their multimem addresses' link), one after the other: its
    // reduction buffers held 16 bytes at most and nothing at the end. The three members answer
    // each read at the same instant, and the buffer counts from the first response handed to the
    // chip to the last (switch_chip.md, "Statistics"): held for no time here.
    const model::OccupancyStatistics& buffer = platform.chip(0).reduction_occupancy();
    EXPECT_EQ(buffer.max(), 16u);
    EXPECT_EQ(buffer.level(), 0u);
    EXPECT_EQ(buffer.area_until(sc_core::sc_time_stamp().value()), 0u);
    EXPECT_EQ(platform.chip(1).reduction_occupancy().max(), 0u);
    // The members' responses end in the switch: only the two results are forwarded responses.
    uint64_t forwarded_responses = 0;
    for (uint32_t c = 0; c < platform.switch_count(); ++c) forwarded_responses += platform.chip(c).stats().forwarded[1];
    EXPECT_EQ(forwarded_responses, 2u);
    for (uint32_t c = 0; c < platform.switch_count(); ++c) {
      EXPECT_EQ(platform.chip(c).registers().reduction_contexts_in_use(), 0u) << "contexts released, chip " << c;
    }
    EXPECT_EQ(fabric.service_interrupts(), 0u) << "no error";
  });
}

TEST(Multimem, LdReduceReturnsTheReducedValueOnce) { ld_reduce_returns_the_sum_once("model"); }

TEST(Multimem, LdReduceWithModelAndRtlInLockstepReturnsTheReducedValueOnce) { ld_reduce_returns_the_sum_once("both"); }

// Every GPU holds (i, g, 1, 0) at element i; GPU 0 issues `loads` ld_reduce at once and each result
// must be the sum over GPUs 0, 1, 2: (3i, 3, 3, 0).
void issue_loads_and_check_sums(TlmHal& hal, uint32_t loads) {
  for (uint32_t g = 0; g < kGpus; ++g) {
    for (uint32_t i = 0; i < loads; ++i) {
      const Bytes16 lanes = f32_lanes({static_cast<float>(i), static_cast<float>(g), 1.0f, 0.0f});
      hal.memory(g).write(kLocalBase + 16ull * i, lanes.data(), 16);
    }
  }
  hw::WorkSequence issuer;
  for (uint32_t i = 0; i < loads; ++i) {
    issuer.tasks.push_back(hw::Task::multimem_ld_reduce(0, kMultimemBase + 16ull * i, 0x10000 + 16ull * i, 16,
                                                        hw::MultimemOp::add, hw::MultimemType::f32, 0));
  }
  issuer.tasks.push_back(hw::Task::wait(0, 0, loads));
  hal.submit(0, std::move(issuer));
  hal.wait_all_finished();
  for (uint32_t i = 0; i < loads; ++i) {
    EXPECT_EQ(read16(hal, 0, 0x10000 + 16ull * i), f32_lanes({3.0f * i, 3.0f, 3.0f, 0.0f})) << "load " << i;
  }
}

// 200 loads from one GPU at once: more than a port's 64 reduction contexts are outstanding, so
// loads wait for a context (counted) and all still return the right sums.
TEST(Multimem, LdReduceBeyondThePortsContextsWaitsAndCompletes) {
  run_with_group(multimem_platform(), kAllMembers, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    constexpr uint32_t kLoads = 200;
    issue_loads_and_check_sums(hal, kLoads);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), kLoads);
    EXPECT_GT(chips_counter(platform, &model::SwitchStats::parked_loads), 0u);
    EXPECT_EQ(fabric.service_interrupts(), 0u) << "waiting for a context is flow control, not an error";
  });
}

// The same 200 loads with bring-up enabling 2 reduction contexts per port: no port holds more
// (CONTEXTS_PEAK stays within the issuer's ports x 2 on each chip, where 64 per port let it rise
// far above), more loads wait, and all still return the right sums.
TEST(Multimem, LdReduceHoldsNoMoreContextsThanBringUpEnabled) {
  constexpr uint32_t kEnabled = 2;
  run_with_group(multimem_platform(), kAllMembers, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    constexpr uint32_t kLoads = 200;
    EXPECT_EQ(fabric.report().reduction_context_pool, (6u + 3u) * kEnabled);
    issue_loads_and_check_sums(hal, kLoads);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), kLoads);
    // GPU 0 reaches chip 0 through 2 ports and chip 1 through 1.
    const uint32_t issuer_ports[2] = {2, 1};
    for (uint32_t c = 0; c < 2; ++c) {
      const uint32_t peak = hal.read_register(c, regs::kContextsPeak);
      EXPECT_GT(peak, 0u) << "chip " << c;
      EXPECT_LE(peak, issuer_ports[c] * kEnabled) << "chip " << c;
      EXPECT_EQ(hal.read_register(c, regs::kContextsInUse), 0u) << "chip " << c;
    }
    EXPECT_GT(chips_counter(platform, &model::SwitchStats::parked_loads), kLoads / 2);
    EXPECT_EQ(fabric.service_interrupts(), 0u) << "waiting for a context is flow control, not an error";
  }, kEnabled);
}

// Checks that nothing was written: the member copies would land at kLocalBase + offset.
void expect_nothing_written(TlmHal& hal, Platform& platform, uint64_t local_address) {
  for (uint32_t g = 0; g < kGpus; ++g) {
    EXPECT_EQ(read16(hal, g, local_address), Bytes16{}) << "GPU " << g;
    EXPECT_EQ(platform.gpu(g).stats().payload_bytes_received, 0u) << "GPU " << g;
  }
  EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 0u);
}

TEST(Multimem, OperationOnAnUnconfiguredGroupIsRefused) {
  run_with_group(multimem_platform(), kAllMembers, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    const Bytes16 pattern = f32_lanes({1, 2, 3, 4});
    hal.memory(0).write(0x1000, pattern.data(), 16);
    // 128 MiB: no group covers it.
    hal.submit(0, one_task(hw::Task::multimem_store(0, 0x1000, 128 * kMiB, 16, 0)));
    hal.submit(0, wait_for(0, 1));
    hal.wait_all_finished();

    EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 1u);
    for (uint32_t g = 0; g < kGpus; ++g) EXPECT_EQ(read16(hal, g, 128 * kMiB), Bytes16{}) << "GPU " << g;
    expect_nothing_written(hal, platform, kLocalBase);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::access_errors), 1u);
    EXPECT_TRUE(fabric.wait_and_service(0.0)) << "the interrupt is up";
    ASSERT_EQ(fabric.error_log().size(), 1u);
    EXPECT_EQ(fabric.error_log()[0].bits, regs::error_group_not_configured);
  });
}

TEST(Multimem, OperationsFromANonMemberAreRefused) {
  // GPUs 0 and 1 are members; GPU 2 tries a store, a red and a ld_reduce.
  run_with_group(multimem_platform(), 0b011, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    const Bytes16 pattern = f32_lanes({1, 2, 3, 4});
    hal.memory(2).write(0x1000, pattern.data(), 16);
    hw::WorkSequence intruder;
    intruder.tasks.push_back(hw::Task::multimem_store(0, 0x1000, kMultimemBase, 16, 0));
    intruder.tasks.push_back(hw::Task::multimem_red(0, 0x1000, kMultimemBase, 16, hw::MultimemOp::add,
                                                    hw::MultimemType::f32, 0));
    intruder.tasks.push_back(hw::Task::multimem_ld_reduce(0, kMultimemBase, 0x2000, 16, hw::MultimemOp::add,
                                                          hw::MultimemType::f32, 0));
    intruder.tasks.push_back(hw::Task::wait(0, 0, 3));
    hal.submit(2, std::move(intruder));
    hal.wait_all_finished();

    EXPECT_EQ(platform.gpu(2).stats().multimem_errors, 3u);
    EXPECT_EQ(read16(hal, 2, 0x2000), Bytes16{}) << "the refused load returned no data";
    expect_nothing_written(hal, platform, kLocalBase);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::access_errors), 3u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), 0u);
    EXPECT_TRUE(fabric.wait_and_service(0.0)) << "the interrupt is up";
    uint32_t bits = 0;
    for (const fw::SwitchErrorRecord& record : fabric.error_log()) bits |= record.bits;
    EXPECT_EQ(bits, regs::error_not_a_member);
  });
}

// Partitions {GPU 0, GPU 1} and {GPU 2}, programmed after the groups were made: the first group
// (all three GPUs) spans both, the second ({0, 1}) lies within the first partition.
const std::vector<uint32_t> kPartitionOfGpu{1, 1, 2};
constexpr uint64_t kWithinFirstPartition = 0b011;

// `issue(gpu, multimem_address, counter)` makes a task of one operation. GPU 0 issues it on the
// group across partitions (refused: an error response completes its wait) and then on the group
// within its partition (served); `check_within` checks the second's effect, `prepare` (if any)
// sets memory first. A load counts at its issuer only; a store or red at every member (GPU 1 waits).
void refused_across_partitions_served_within(const std::function<hw::Task(uint64_t, uint32_t)>& issue,
                                             const std::function<void(TlmHal&, Platform&)>& check_within,
                                             const std::function<void(TlmHal&)>& prepare = {}) {
  const bool load = issue(0, 0).kind == hw::TaskKind::multimem_ld_reduce;
  run_with_group(multimem_platform(), kAllMembers, [&, load](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    if (prepare) prepare(hal);
    test::program_port_partitions(hal, platform.fabric_topology(), kPartitionOfGpu);
    const Bytes16 operand = f32_lanes({1, 2, 3, 4});
    hal.memory(0).write(0x1000, operand.data(), 16);
    hw::WorkSequence across;
    across.tasks.push_back(issue(kMultimemBase, 0));
    across.tasks.push_back(hw::Task::wait(0, 0, 1));
    hal.submit(0, std::move(across));
    hal.wait_all_finished();

    EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 1u);
    for (uint32_t g = 0; g < kGpus; ++g) {
      EXPECT_EQ(hal.memory(g).write_count(kLocalBase), 0u) << "GPU " << g;
      EXPECT_EQ(platform.gpu(g).stats().payload_bytes_received, 0u) << "GPU " << g;
    }
    EXPECT_EQ(hal.memory(0).write_count(0x2000), 0u) << "a refused load returns nothing";
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 0u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 1u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::access_errors), 0u);
    EXPECT_EQ(test::interrupts_pending(hal), regs::error_partition);
    EXPECT_TRUE(fabric.wait_and_service(0.0)) << "the interrupt is up";
    uint32_t bits = 0;
    for (const fw::SwitchErrorRecord& record : fabric.error_log()) bits |= record.bits;
    EXPECT_EQ(bits, regs::error_partition);

    hw::WorkSequence within;
    within.tasks.push_back(issue(kSecondMultimemBase, 1));
    within.tasks.push_back(hw::Task::wait(0, 1, 1));
    hal.submit(0, std::move(within));
    if (!load) hal.submit(1, wait_for(1, 1));
    hal.wait_all_finished();
    check_within(hal, platform);
    EXPECT_EQ(hal.memory(2).write_count(kSecondLocalBase), 0u) << "GPU 2 is no member";
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 1u) << "no new refusal";
    EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 1u);
  }, fw::kAllReductionContexts, kWithinFirstPartition);
}

TEST(Multimem, StoreOnAGroupAcrossPartitionsIsRefused) {
  refused_across_partitions_served_within(
      [](uint64_t address, uint32_t counter) { return hw::Task::multimem_store(0, 0x1000, address, 16, counter); },
      [](TlmHal& hal, Platform&) {
        for (uint32_t g : {0u, 1u}) {
          EXPECT_EQ(read16(hal, g, kSecondLocalBase), f32_lanes({1, 2, 3, 4})) << "GPU " << g;
          EXPECT_EQ(hal.memory(g).write_count(kSecondLocalBase), 1u) << "GPU " << g;
        }
      });
}

TEST(Multimem, RedOnAGroupAcrossPartitionsIsRefused) {
  refused_across_partitions_served_within(
      [](uint64_t address, uint32_t counter) {
        return hw::Task::multimem_red(0, 0x1000, address, 16, hw::MultimemOp::add, hw::MultimemType::f32, counter);
      },
      [](TlmHal& hal, Platform&) {
        for (uint32_t g : {0u, 1u}) {
          EXPECT_EQ(read16(hal, g, kSecondLocalBase), f32_lanes({1, 2, 3, 4})) << "GPU " << g << ": 0 + operand";
          EXPECT_EQ(hal.memory(g).write_count(kSecondLocalBase), 1u) << "GPU " << g;
        }
      });
}

TEST(Multimem, LdReduceOnAGroupAcrossPartitionsIsRefused) {
  refused_across_partitions_served_within(
      [](uint64_t address, uint32_t counter) {
        return hw::Task::multimem_ld_reduce(0, address, 0x2000, 16, hw::MultimemOp::add, hw::MultimemType::f32, counter);
      },
      [](TlmHal& hal, Platform& platform) {
        EXPECT_EQ(read16(hal, 0, 0x2000), f32_lanes({11, 22, 33, 44})) << "the two members' copies summed";
        EXPECT_EQ(hal.memory(0).write_count(0x2000), 1u) << "one result";
        EXPECT_EQ(chips_counter(platform, &model::SwitchStats::reductions), 1u);
      },
      [](TlmHal& hal) {
        const Bytes16 first = f32_lanes({1, 2, 3, 4});
        const Bytes16 second = f32_lanes({10, 20, 30, 40});
        hal.memory(0).write(kSecondLocalBase, first.data(), 16);
        hal.memory(1).write(kSecondLocalBase, second.data(), 16);
      });
}

TEST(Multimem, GroupWithMembersInTwoPartitionsServesNeitherPartition) {
  // GPU 2, alone in its partition, is a member too: its operations on the group are refused as
  // GPU 0's are; a write within GPU 2's own memory stays possible without the switch.
  run_with_group(multimem_platform(), kAllMembers, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    test::program_port_partitions(hal, platform.fabric_topology(), kPartitionOfGpu);
    const Bytes16 operand = f32_lanes({5, 6, 7, 8});
    for (uint32_t g : {0u, 2u}) {
      hal.memory(g).write(0x1000, operand.data(), 16);
      hw::WorkSequence issuer;
      issuer.tasks.push_back(hw::Task::multimem_store(0, 0x1000, kMultimemBase, 16, 0));
      issuer.tasks.push_back(hw::Task::wait(0, 0, 1));
      hal.submit(g, std::move(issuer));
    }
    hal.wait_all_finished();
    EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 1u);
    EXPECT_EQ(platform.gpu(2).stats().multimem_errors, 1u);
    for (uint32_t g = 0; g < kGpus; ++g) EXPECT_EQ(hal.memory(g).write_count(kLocalBase), 0u) << "GPU " << g;
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 2u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::replications), 0u);
    EXPECT_EQ(test::interrupts_pending(hal), regs::error_partition);
    EXPECT_TRUE(fabric.wait_and_service(0.0));
  });
}

// A backend that computes like the model but flips the lowest bit of every result beat.
class BitFlippingUnit : public reduction::ReductionUnit {
 public:
  void process(const std::vector<reduction::Command>& commands, std::vector<reduction::ResultBeat>& results) override {
    const size_t first = results.size();
    model_.process(commands, results);
    for (size_t i = first; i < results.size(); ++i) results[i].data[0] ^= 1u;
  }
  reduction::ReductionStatus status() const override { return model_.status(); }
  void clear_status(uint32_t mask) override { model_.clear_status(mask); }
  uint64_t cycles() const override { return model_.cycles(); }
  std::string backend_name() const override { return "bit-flipping"; }

 private:
  reduction::ReductionModel model_;
};

// The `both` backend's comparison failing inside the switch is a fatal error naming the mismatch:
// the process ends (in the command, the scheme's run fails and nvsvp exits 1), and no value the
// backends disagree on reaches a GPU.
TEST(MultimemDeathTest, ReductionMismatchEndsTheRunNamingIt) {
  EXPECT_DEATH(
      {
        // A fatal report must end the process here, as SystemC's default handler does (the test
        // handler would only record it).
        sc_core::sc_report_handler::set_handler([](const sc_core::sc_report& r, const sc_core::sc_actions&) {
          if (r.get_severity() >= sc_core::SC_ERROR) {
            std::cerr << r.get_msg() << std::endl;
            std::abort();
          }
        });
        auto& platform = *new Platform("platform", multimem_platform("both"));
        auto& hal = *new TlmHal(platform);
        for (uint32_t c = 0; c < platform.switch_count(); ++c) {
          const uint32_t ports = kGpus * platform.spec().links_per_chip[c];
          for (uint32_t p = 0; p < ports; ++p) {
            platform.chip(c).replace_reduction_unit(
                static_cast<uint16_t>(p),
                std::make_unique<reduction::LockstepReductionUnit>(std::make_unique<reduction::ReductionModel>(),
                                                                   std::make_unique<BitFlippingUnit>()));
          }
        }
        new FirmwareHost("firmware", [&] {
          fw::SwitchFabric fabric(hal);
          fabric.bring_up(platform.fabric_topology());
          fw::MulticastAllocator allocator(hal, fabric.report().chips);
          allocator.create_group(kMultimemBase, kGroupSize, kLocalBase, kAllMembers);
          hal.submit(0, one_task(hw::Task::multimem_ld_reduce(0, kMultimemBase, 0x2000, 16, hw::MultimemOp::add,
                                                              hw::MultimemType::f32, 0)));
          hal.wait_all_finished();
          std::cerr << "the load completed" << std::endl;
        });
        sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
      },
      "ReductionMismatch at port [0-9]+: reduction backends differ .* field data");
}

}  // namespace
}  // namespace nvsvp::platform
