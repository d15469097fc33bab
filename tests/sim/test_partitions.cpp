// Partitions in the switch chips (docs/registers.md, "Partitions"): with PORT_PARTITION
// programmed, a write or read from one partition to another, or from or to an isolated GPU, is
// refused at the switch: an access_error response to the source (a refused read's wait
// completes), the partition_errors count, error_partition and its interrupt, and nothing written
// anywhere; a write within the partition in the same run lands. The multimem and dynamic cases are
// in test_multimem.cpp and test_dynamic_multimem.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <vector>

#include <systemc>

#include "../common/multimem_support.hpp"
#include "../common/partition_support.hpp"
#include "../common/test_support.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

namespace regs = hw::switch_regs;

using test::Bytes16;
using test::chips_counter;
using test::read16;

constexpr uint32_t kPartitionedGpus = 3;
constexpr uint64_t kSource = 0x1000;
constexpr uint64_t kTarget = 0x8000;
constexpr uint64_t kReadInto = 0x9000;

// Runs `body` as firmware after bring-up and the partitions' programming (a partition id per
// GPU); fails the test if the firmware does not finish within 1 ms.
void run_partitioned(const std::vector<uint32_t>& partition_of_gpu,
                     const std::function<void(TlmHal&, Platform&, fw::SwitchFabric&)>& body) {
  auto& platform = *new Platform("platform", test::small_platform(kPartitionedGpus, {2, 1}));
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    fw::SwitchFabric fabric(hal);
    fabric.bring_up(platform.fabric_topology());
    test::program_port_partitions(hal, platform.fabric_topology(), partition_of_gpu);
    body(hal, platform, fabric);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  std::ostringstream stuck;
  ASSERT_TRUE(host.done()) << "the firmware did not finish:\n" << (platform.describe_outstanding(stuck), stuck.str());
}

const Bytes16 kPattern{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

hw::Task write_to(uint32_t peer, uint32_t counter) { return hw::Task::send(0, peer, kSource, kTarget, 16, counter); }

// The error responses were all received (they follow the refusals by a hop); then error_partition
// is what the chips have pending, and firmware's service finds only it.
void expect_partition_interrupt(TlmHal& hal, fw::SwitchFabric& fabric) {
  EXPECT_EQ(test::interrupts_pending(hal), regs::error_partition);
  EXPECT_TRUE(fabric.wait_and_service(0.0)) << "the interrupt is up";
  uint32_t bits = 0;
  for (const fw::SwitchErrorRecord& record : fabric.error_log()) bits |= record.bits;
  EXPECT_EQ(bits, regs::error_partition);
  EXPECT_EQ(test::interrupts_pending(hal), 0u) << "serviced";
}

TEST(Partitions, WriteToAnotherPartitionIsRefusedAndOneWithinItLands) {
  // {GPU 0, GPU 1} and {GPU 2}.
  run_partitioned({1, 1, 2}, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    hal.memory(0).write(kSource, kPattern.data(), 16);
    hw::WorkSequence writer;
    writer.tasks.push_back(write_to(2, 0));
    writer.tasks.push_back(write_to(1, 0));
    hal.submit(0, std::move(writer));
    hal.submit(1, test::wait_for(0, 1));
    hal.wait_all_finished();
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));  // the refused write's answer is on its way back

    EXPECT_EQ(read16(hal, 1, kTarget), kPattern);
    EXPECT_EQ(hal.memory(1).write_count(kTarget), 1u);
    EXPECT_EQ(hal.memory(2).write_count(kTarget), 0u) << "nothing written in the other partition";
    EXPECT_EQ(platform.gpu(2).stats().messages_received, 0u);
    EXPECT_EQ(platform.gpu(0).stats().access_errors, 1u);
    EXPECT_EQ(platform.gpu(0).stats().messages_received, 1u) << "the error response";
    EXPECT_EQ(platform.gpu(0).stats().payload_bytes_received, 0u) << "carries no data";
    EXPECT_EQ(platform.gpu(1).stats().access_errors, 0u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 1u);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::access_errors), 0u);
    expect_partition_interrupt(hal, fabric);
  });
}

TEST(Partitions, IsolatedGpuNeitherReachesNorIsReached) {
  // GPU 2 in no partition: its write, a write to it and a read of it are refused; the refused
  // read's wait completes without data.
  run_partitioned({1, 1, regs::kPartitionIsolated}, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    hal.memory(0).write(kSource, kPattern.data(), 16);
    hal.memory(2).write(kSource, kPattern.data(), 16);
    hw::WorkSequence first;
    first.tasks.push_back(write_to(2, 0));
    first.tasks.push_back(hw::Task::read(0, 2, kSource, kReadInto, 16, 1));
    first.tasks.push_back(hw::Task::wait(0, 1, 1));
    first.tasks.push_back(write_to(1, 0));
    hal.submit(0, std::move(first));
    hal.submit(1, test::wait_for(0, 1));
    hal.submit(2, test::one_task(write_to(0, 0)));
    hal.wait_all_finished();
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));

    EXPECT_EQ(hal.memory(1).write_count(kTarget), 1u) << "within the partition";
    EXPECT_EQ(hal.memory(0).write_count(kTarget), 0u) << "from the isolated GPU";
    EXPECT_EQ(hal.memory(2).write_count(kTarget), 0u) << "to the isolated GPU";
    EXPECT_EQ(hal.memory(0).write_count(kReadInto), 0u) << "the refused read returned nothing";
    EXPECT_EQ(platform.gpu(0).stats().access_errors, 2u);
    EXPECT_EQ(platform.gpu(2).stats().access_errors, 1u);
    EXPECT_EQ(platform.gpu(2).stats().messages_received, 1u) << "only its error response";
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 3u);
    expect_partition_interrupt(hal, fabric);
  });
}

TEST(Partitions, WithoutPartitionIdsEveryGpuReachesEveryOther) {
  // All ports 0 (reset): one partition, nothing refused.
  run_partitioned({0, 0, 0}, [](TlmHal& hal, Platform& platform, fw::SwitchFabric& fabric) {
    hal.memory(0).write(kSource, kPattern.data(), 16);
    hal.submit(0, test::one_task(write_to(2, 0)));
    hal.submit(2, test::wait_for(0, 1));
    hal.wait_all_finished();
    EXPECT_EQ(read16(hal, 2, kTarget), kPattern);
    EXPECT_EQ(chips_counter(platform, &model::SwitchStats::partition_errors), 0u);
    EXPECT_EQ(fabric.service_interrupts(), 0u);
  });
}

}  // namespace
}  // namespace nvsvp::platform
