// Regression tests for lost wake-ups: a client of a WakeScheduler (a GPU link engine, a switch
// output) that has nothing to do goes to sleep without a wake; whoever gives it work must wake it
// at the earliest moment it can act, whatever state it was left in. Each test deadlocked (the
// firmware never finished) before the fix. Exact timing: 1 ns flits, 100 ns hops.
#include <gtest/gtest.h>

#include <functional>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

using sc_core::sc_time;

using test::ns;

using test::Machine;

hw::WorkSequence receive(uint32_t counter, uint64_t count) {
  hw::WorkSequence seq;
  seq.counters = counter + 1;
  seq.tasks.push_back(hw::Task::wait(0, counter, count));
  return seq;
}

// GPU 0 commits a 64 KiB write (4352 flits: the link is busy until 4352 ns) and its link engine,
// with nothing else queued, sleeps. At 100 ns a second write is queued: it must leave when the
// link frees, although the engine had no wake pending and the link was still busy.
TEST(Wakeups, SendQueuedWhileTheLinkIsBusyWithCommittedWork) {
  Machine m(test::small_platform(2, {1}), [](TlmHal& hal, Platform&) {
    hw::WorkSequence sender;
    sender.tasks.push_back(hw::Task::send(0, 1, 0x10000, 0x100000, 65536, 0));
    sender.tasks.push_back(hw::Task::delay(0, 100.0));
    sender.tasks.push_back(hw::Task::send(0, 1, 0x20000, 0x200000, 256, 0));
    hal.submit(0, std::move(sender));
    hal.submit(1, receive(0, 2));
    hal.wait_all_finished();
  });
  m.run();
  // The small write starts at 4352 ns; the switch cuts it through (head at +101 ns) and the tail
  // of its 17 flits lands 100 ns after it leaves the switch: 4352 + 101 + 17 + 100 = 4570 ns.
  EXPECT_EQ(m.platform.gpu(1).finish_time(), ns(4570));
  EXPECT_EQ(m.platform.gpu(1).stats().messages_received, 2u);
}

// One VC per class, 4096 flits deep, so a VC holds several messages in order. At 50 ns GPU 0
// sends X (to GPU 1) then Y (to GPU 2) into the same input VC (ready at 151 and 185 ns). X waits
// behind a 64 KiB write W from GPU 4 that the output to GPU 1 took at 101 ns; W also holds GPU 1's
// only receive VC until its credits return at 4653 ns. Y waits behind X. Meanwhile the output to
// GPU 2 carries a 16 KiB write from GPU 3 and goes idle at 1189 ns, long before Y becomes the head
// of its VC. When X leaves, Y must wake the idle output although Y arrived before that output's
// last busy period ended.
TEST(Wakeups, HeadOfLineMessageWakesAnOutputThatWentIdleEarlier) {
  PlatformSpec spec = test::small_platform(5, {1});
  spec.switch_chip.vcs_per_class = 1;
  spec.switch_chip.vc_depth_flits = 4096;
  Machine m(spec, [](TlmHal& hal, Platform&) {
    hw::WorkSequence gpu0;
    gpu0.tasks.push_back(hw::Task::delay(0, 50.0));
    gpu0.tasks.push_back(hw::Task::send(0, 1, 0x100, 0x1000, 256, 0));  // X
    gpu0.tasks.push_back(hw::Task::send(0, 2, 0x200, 0x2000, 256, 0));  // Y
    hw::WorkSequence gpu3;
    gpu3.tasks.push_back(hw::Task::send(0, 2, 0x300, 0x30000, 16384, 0));  // Z: 1088 flits
    hw::WorkSequence gpu4;
    gpu4.tasks.push_back(hw::Task::send(0, 1, 0x400, 0x40000, 65536, 0));  // W: 4352 flits
    hal.submit(0, std::move(gpu0));
    hal.submit(1, receive(0, 2));
    hal.submit(2, receive(0, 2));
    hal.submit(3, std::move(gpu3));
    hal.submit(4, std::move(gpu4));
    hal.wait_all_finished();
  });
  m.run();
  // W's tail lands at 101 + 4352 + 100 = 4553 ns and its credits are back at 4653 ns: X leaves
  // then and its tail lands at 4653 + 17 + 100 = 4770 ns. X holds its input's crossbar slot for
  // 17 ns; Y leaves at 4670 ns and its tail lands at 4670 + 17 + 100 = 4787 ns.
  EXPECT_EQ(m.platform.gpu(1).finish_time(), ns(4770));
  EXPECT_EQ(m.platform.gpu(2).finish_time(), ns(4787));
}

}  // namespace
}  // namespace nvsvp::platform
