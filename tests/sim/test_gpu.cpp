// The GPU's work executor on a small platform with exact timing (1 ns flits, 100 ns hops):
// sends and their arrival times, wait_counter completing at the N-th arrival, local copies,
// compute time, kernels running at compute end on the data that arrived, reads returning the
// peer's data over the response class, phase times, and SM-issued stores paced by issue_sms x
// sm_store_gbps without slowing the GPU's other streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <sstream>
#include <vector>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

using sc_core::sc_time;

using test::ns;

using test::Machine;

// `gpus` GPUs with one link each to one chip, exact timing.
PlatformSpec gpus_on_one_chip(uint32_t gpus) { return test::small_platform(gpus, {1}); }

// Three 256-byte writes (17 flits each) from GPU 0 to GPU 1. Hop 1 carries message i over
// [17i, 17i + 17) ns; the switch cuts through, so hop 2 carries it over [101 + 17i, 118 + 17i)
// and its tail lands at 218 + 17i ns.
TEST(Gpu, WaitCompletesWhenTheNthArrivalLands) {
  Machine m(gpus_on_one_chip(2), [](TlmHal& hal, Platform&) {
    hw::WorkSequence sender;
    for (uint64_t i = 0; i < 3; ++i) sender.tasks.push_back(hw::Task::send(0, 1, 0x100 + 256 * i, 0x8000 + 256 * i, 256, 4));
    hw::WorkSequence receiver;
    receiver.phase_names = {"first", "second", "third"};
    receiver.counters = 5;
    receiver.tasks.push_back(hw::Task::wait(0, 4, 1));
    receiver.tasks.push_back(hw::Task::wait(1, 4, 2));
    receiver.tasks.push_back(hw::Task::wait(2, 4, 3));
    hal.submit(0, std::move(sender));
    hal.submit(1, std::move(receiver));
    hal.wait_all_finished();
  });
  m.run();
  const model::Gpu& rx = m.platform.gpu(1);
  ASSERT_EQ(rx.phase_times().size(), 3u);
  EXPECT_EQ(rx.phase_times()[0].last_end, ns(218));
  EXPECT_EQ(rx.phase_times()[1].last_end, ns(235));
  EXPECT_EQ(rx.phase_times()[2].last_end, ns(252));
  EXPECT_EQ(rx.finish_time(), ns(252));
  EXPECT_EQ(rx.stats().messages_received, 3u);
  EXPECT_EQ(rx.stats().payload_bytes_received, 768u);
  EXPECT_EQ(m.platform.gpu(0).stats().messages_sent, 3u);
  EXPECT_EQ(m.platform.gpu(0).finish_time(), ns(0));  // sends are posted: the executor moves on
  const auto& up = m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats();
  EXPECT_EQ(up.wire_flits, 51u);
  EXPECT_EQ(up.busy_time, ns(51));
}

// The same three writes as one chunk (a send with 3 elements): one 51-flit message over [0, 51) on hop
// 1 and [101, 152) on hop 2, so all three arrivals land with its tail at 252 ns; each element's
// functional bytes land at its own target.
TEST(Gpu, ChunkTravelsAsOneMessageAndLandsEveryElement) {
  Machine m(gpus_on_one_chip(2), [](TlmHal& hal, Platform&) {
    hw::WorkSequence sender;
    sender.elements.push_back(hw::WriteElement{0xdead, 0xbeef});  // not this chunk's
    for (uint64_t i = 0; i < 3; ++i) {
      uint8_t data[16];
      for (int b = 0; b < 16; ++b) data[b] = static_cast<uint8_t>(10 * i + b);
      hal.memory(0).write(0x1000 * (i + 1), data, 16);  // scattered sources and targets
      sender.elements.push_back(hw::WriteElement{0x1000 * (i + 1), 0x8000 + 0x300 * (2 - i)});
    }
    sender.tasks.push_back(hw::Task::send_chunk(0, 1, 1, 3, 256, 4));
    hw::WorkSequence receiver;
    receiver.counters = 5;
    receiver.tasks.push_back(hw::Task::wait(0, 4, 1));
    receiver.tasks.push_back(hw::Task::wait(0, 4, 3));
    hal.submit(0, std::move(sender));
    hal.submit(1, std::move(receiver));
    hal.wait_all_finished();
  });
  m.run();
  const model::Gpu& rx = m.platform.gpu(1);
  EXPECT_EQ(rx.finish_time(), ns(252));
  EXPECT_EQ(rx.stats().messages_received, 1u);
  EXPECT_EQ(rx.stats().payload_bytes_received, 768u);
  EXPECT_EQ(m.platform.gpu(0).stats().messages_sent, 1u);
  EXPECT_EQ(m.platform.gpu(0).stats().tasks_done, 1u);
  EXPECT_EQ(m.platform.gpu(1).memory().write_count(0xbeef & ~0xfull), 0u);
  const auto& up = m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats();
  EXPECT_EQ(up.wire_flits, 51u);
  EXPECT_EQ(up.busy_time, ns(51));
  for (uint64_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("element " + std::to_string(i));
    const uint64_t target = 0x8000 + 0x300 * (2 - i);
    uint8_t got[16];
    m.platform.gpu(1).memory().read(target, got, 16);
    for (int b = 0; b < 16; ++b) EXPECT_EQ(got[b], 10 * i + b) << "byte " << b;
    EXPECT_EQ(m.platform.gpu(1).memory().write_count(target), 1u);
  }
}

// The functional bytes of a send land in the peer's memory, and a kernel run at the end of a
// compute task sees them; the kernel runs when the compute time is over.
TEST(Gpu, KernelRunsAtComputeEndOnArrivedData) {
  sc_time kernel_time;
  std::vector<uint8_t> seen(16);
  Machine m(gpus_on_one_chip(2), [&](TlmHal& hal, Platform&) {
    uint8_t data[16];
    for (int i = 0; i < 16; ++i) data[i] = static_cast<uint8_t>(100 + i);
    hal.memory(0).write(0x2000, data, 16);
    hw::WorkSequence sender;
    sender.tasks.push_back(hw::Task::send(0, 1, 0x2000, 0x3000, 256, 0));
    hw::WorkSequence receiver;
    receiver.kernels.push_back([&](hw::MemoryAccess& memory) {
      kernel_time = sc_core::sc_time_stamp();
      memory.read(0x3000, seen.data(), 16);
      uint8_t doubled[16];
      for (int i = 0; i < 16; ++i) doubled[i] = static_cast<uint8_t>(2 * seen[i]);
      memory.write(0x4000, doubled, 16);
    });
    receiver.tasks.push_back(hw::Task::wait(0, 0, 1));
    receiver.tasks.push_back(hw::Task::delay(0, 50.0, 0));
    hal.submit(0, std::move(sender));
    hal.submit(1, std::move(receiver));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(kernel_time, ns(218 + 50));
  EXPECT_EQ(seen[0], 100);
  EXPECT_EQ(seen[15], 115);
  uint8_t out[16];
  m.platform.gpu(1).memory().read(0x4000, out, 16);
  EXPECT_EQ(out[0], 200);
  EXPECT_EQ(out[15], 230);
  // Only the leading functional bytes travel; the rest of the 256 bytes reads as zero.
  uint8_t rest[16];
  m.platform.gpu(1).memory().read(0x3010, rest, 16);
  EXPECT_EQ(std::vector<uint8_t>(rest, rest + 16), std::vector<uint8_t>(16, 0));
  EXPECT_EQ(m.platform.gpu(1).memory().write_count(0x3000), 1u);
}

// compute time = max(flops / (peak x efficiency), bytes / HBM bandwidth) + duration_ns.
TEST(Gpu, ComputeTimeIsTheRooflinePlusFixedTime) {
  PlatformSpec spec = test::small_platform(1, {1});
  spec.gpu.fp8_tflops = 1000.0;
  spec.gpu.bf16_tflops = 500.0;
  spec.gpu.gemm_efficiency = 0.5;
  spec.gpu.hbm_gbps = 1000.0;
  hw::Task math = hw::Task::compute(0, 1e9, hw::Precision::fp8, 1'000'000);  // 2 us math, 1 us memory
  math.duration_ns = 300.0;
  const hw::Task memory = hw::Task::compute(1, 1e9, hw::Precision::fp8, 4'000'000);   // 4 us memory
  const hw::Task bf16 = hw::Task::compute(2, 1e9, hw::Precision::bf16, 0);            // 4 us math
  Machine m(spec, [&](TlmHal& hal, Platform&) {
    hw::WorkSequence s;
    s.phase_names = {"math", "memory", "bf16"};
    s.tasks = {math, memory, bf16};
    hal.submit(0, std::move(s));
    hal.wait_all_finished();
  });
  const model::Gpu& gpu = m.platform.gpu(0);
  EXPECT_EQ(gpu.compute_time(math), ns(2300));
  EXPECT_EQ(gpu.compute_time(memory), ns(4000));
  EXPECT_EQ(gpu.compute_time(bf16), ns(4000));
  EXPECT_EQ(gpu.compute_time(hw::Task::delay(0, 12.5)), sc_time(12500, sc_core::SC_PS));
  m.run();
  const auto& phases = gpu.phase_times();
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0].first_start, ns(0));
  EXPECT_EQ(phases[0].last_end, ns(2300));
  EXPECT_EQ(phases[1].first_start, ns(2300));
  EXPECT_EQ(phases[1].last_end, ns(6300));
  EXPECT_EQ(phases[2].last_end, ns(10300));
  EXPECT_EQ(gpu.stats().compute_time, ns(10300));
  EXPECT_EQ(gpu.finish_time(), ns(10300));
}

// A GEMM runs its thread blocks one per SM in waves: time = ceil(blocks / SMs) x one block's
// time on one SM (its flops over peak x efficiency / SMs), at least the memory time; a partial
// wave costs a full one, and a task limited to fewer SMs takes more waves.
TEST(Gpu, GemmRunsInWavesOfThreadBlocks) {
  PlatformSpec spec = test::small_platform(1, {1});
  spec.gpu.sms = 100;
  spec.gpu.fp8_tflops = 1000.0;
  spec.gpu.gemm_efficiency = 0.5;  // 5 TFLOP/s per SM
  spec.gpu.hbm_gbps = 1000.0;
  const double block = 5e6;  // 1 us on one SM
  const hw::Task one_wave = hw::Task::gemm(0, 100, block, hw::Precision::fp8, 0, 0);
  const hw::Task two_waves = hw::Task::gemm(0, 101, block, hw::Precision::fp8, 0, 0);
  const hw::Task on_20_sms = hw::Task::gemm(0, 100, block, hw::Precision::fp8, 0, 20);
  const hw::Task more_sms_than_the_gpu = hw::Task::gemm(0, 100, block, hw::Precision::fp8, 0, 500);
  const hw::Task memory_bound = hw::Task::gemm(0, 100, block, hw::Precision::fp8, 3'000'000, 0);  // 3 us
  Machine m(spec, [&](TlmHal& hal, Platform&) {
    hw::WorkSequence s;
    s.tasks = {one_wave, two_waves};
    hal.submit(0, std::move(s));
    hal.wait_all_finished();
  });
  const model::Gpu& gpu = m.platform.gpu(0);
  EXPECT_EQ(gpu.compute_time(one_wave), ns(1000));
  EXPECT_EQ(gpu.compute_time(two_waves), ns(2000));
  EXPECT_EQ(gpu.compute_time(on_20_sms), ns(5000));
  EXPECT_EQ(gpu.compute_time(more_sms_than_the_gpu), ns(1000));
  EXPECT_EQ(gpu.compute_time(memory_bound), ns(3000));
  m.run();
  EXPECT_EQ(gpu.finish_time(), ns(3000));
  ASSERT_EQ(gpu.compute_spans().size(), 2u);
  EXPECT_EQ(gpu.compute_spans()[1].start, ns(1000));
  EXPECT_EQ(gpu.compute_spans()[1].end, ns(3000));
}

// An expert GEMM with fp4 weights (workload.weight_dtype) runs at fp4_tflops: compute-bound it
// takes fp8_tflops / fp4_tflops of the fp8 GEMM's time (half, at twice the rate here); bound by
// HBM, its weights' bytes (fw::weight_bytes: 0.5625 a parameter against 1) set the floor.
TEST(Gpu, Fp4GemmRunsAtTheFp4PeakAndReadsFewerWeightBytes) {
  PlatformSpec spec = test::small_platform(1, {1});
  spec.gpu.sms = 100;
  spec.gpu.fp8_tflops = 1000.0;
  spec.gpu.fp4_tflops = 2000.0;
  spec.gpu.bf16_tflops = 500.0;
  spec.gpu.gemm_efficiency = 0.5;  // fp8: 5 TFLOP/s per SM
  spec.gpu.hbm_gbps = 1000.0;
  const double block = 1e7;  // fp8: 2 us on one SM
  auto gemm = [&](fw::WeightDtype dtype, uint64_t parameters) {
    return hw::Task::gemm(0, 100, block, fw::gemm_precision(dtype), fw::weight_bytes(dtype, parameters), 0);
  };
  const uint64_t few = 16'000;         // weights read in 16 ns or less: compute-bound
  const uint64_t many = 8'000'000;     // fp8: 8 us of HBM, fp4: 4.5 us, bf16: 16 us: memory-bound
  const hw::Task fp8_math = gemm(fw::WeightDtype::fp8, few);
  const hw::Task fp4_math = gemm(fw::WeightDtype::fp4, few);
  const hw::Task bf16_math = gemm(fw::WeightDtype::bf16, few);
  const hw::Task fp8_memory = gemm(fw::WeightDtype::fp8, many);
  const hw::Task fp4_memory = gemm(fw::WeightDtype::fp4, many);
  const hw::Task bf16_memory = gemm(fw::WeightDtype::bf16, many);
  Machine m(spec, [&](TlmHal& hal, Platform&) {
    hw::WorkSequence s;
    s.tasks = {fp8_math, fp4_math, fp4_memory};
    hal.submit(0, std::move(s));
    hal.wait_all_finished();
  });
  const model::Gpu& gpu = m.platform.gpu(0);
  EXPECT_EQ(gpu.compute_time(fp8_math), ns(2000));
  EXPECT_EQ(gpu.compute_time(fp4_math), gpu.compute_time(fp8_math) * (spec.gpu.fp8_tflops / spec.gpu.fp4_tflops));
  EXPECT_EQ(gpu.compute_time(fp4_math), ns(1000));
  EXPECT_EQ(gpu.compute_time(bf16_math), ns(4000));
  EXPECT_EQ(gpu.compute_time(fp8_memory), ns(8000));
  EXPECT_EQ(gpu.compute_time(fp4_memory), gpu.compute_time(fp8_memory) * 0.5625);
  EXPECT_EQ(gpu.compute_time(fp4_memory), ns(4500));
  EXPECT_EQ(gpu.compute_time(bf16_memory), ns(16000));
  m.run();
  EXPECT_EQ(gpu.finish_time(), ns(2000 + 1000 + 4500));
}

// Streams run concurrently, each on its SM group, and follow each other through the GPU's
// arrival counters: two half-GPU GEMMs on two streams end together where one stream would run
// them one after the other; a stream waiting on a counter another stream counts starts when it
// does.
TEST(Gpu, StreamsRunConcurrentlyOnTheirSmGroupsAndSignalThroughCounters) {
  PlatformSpec spec = test::small_platform(1, {1});
  spec.gpu.sms = 100;
  spec.gpu.fp8_tflops = 1000.0;
  spec.gpu.gemm_efficiency = 0.5;  // 5 TFLOP/s per SM
  const double block = 5e6;        // 1 us on one SM
  Machine m(spec, [&](TlmHal& hal, Platform& platform) {
    // Stream 0 (50 SMs): a GEMM of 50 blocks (1 us), then a local copy that counts on counter 3.
    hw::WorkSequence producer;
    producer.sms = 50;
    producer.tasks = {hw::Task::gemm(0, 50, block, hw::Precision::fp8, 0, 0),
                      hw::Task::local_copy(0, 0x100, 0x200, 16, 3)};
    // Stream 1 (50 SMs): a GEMM of 100 blocks (2 waves, 2 us) at once, then waits for stream 0's
    // signal (there by then) and runs 50 more blocks (1 us).
    hw::WorkSequence consumer;
    consumer.stream = 1;
    consumer.sms = 50;
    consumer.tasks = {hw::Task::gemm(0, 100, block, hw::Precision::fp8, 0, 0), hw::Task::wait(0, 3, 1),
                      hw::Task::gemm(0, 50, block, hw::Precision::fp8, 0, 0)};
    // Stream 2 (20 SMs): waits for the signal, then 100 blocks in 5 waves.
    hw::WorkSequence late;
    late.stream = 2;
    late.sms = 20;
    late.tasks = {hw::Task::wait(0, 3, 1), hw::Task::gemm(0, 100, block, hw::Precision::fp8, 0, 0)};
    hal.submit(0, std::move(producer));
    hal.submit(0, std::move(consumer));
    hal.submit(0, std::move(late));
    hal.wait_all_finished();
    EXPECT_EQ(hal.now_ns(), 6000.0) << "stream 2: 1 us waiting for the signal, then 5 us";
    // The GEMMs' intervals, in time order: streams 0 and 1 start together; stream 2 at the
    // signal (1 us); stream 1's second GEMM after its first (the signal came before).
    std::vector<std::pair<uint64_t, uint64_t>> spans;  // ns
    for (const model::ComputeSpan& span : platform.gpu(0).compute_spans()) {
      spans.emplace_back(span.start.value() / 1000, span.end.value() / 1000);  // ps resolution
    }
    std::sort(spans.begin(), spans.end());
    EXPECT_EQ(spans, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 1000}, {0, 2000}, {1000, 6000}, {2000, 3000}}));
  });
  m.run();
  const model::Gpu& gpu = m.platform.gpu(0);
  EXPECT_EQ(gpu.finish_time(), ns(6000));
  EXPECT_EQ(gpu.stats().tasks_done, 7u);
}

// A stream stuck on a counter is named in the stuck report with its task.
TEST(Gpu, AStuckStreamIsNamedInTheStuckReport) {
  PlatformSpec spec = test::small_platform(1, {1});
  auto& platform = *new Platform("platform", spec);
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    test::bring_up_switches(hal, platform);
    hw::WorkSequence idle;
    idle.tasks = {hw::Task::delay(0, 10.0)};
    hw::WorkSequence waiting;
    waiting.stream = 2;
    waiting.tasks = {hw::Task::wait(0, 7, 1)};
    hal.submit(0, std::move(idle));
    hal.submit(0, std::move(waiting));
    hal.wait_all_finished();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  EXPECT_FALSE(host.done());
  std::ostringstream stuck;
  EXPECT_EQ(platform.gpu(0).describe_outstanding(stuck), 1u);
  EXPECT_NE(stuck.str().find("stream 2 at task 0 (wait_counter) waiting for counter 7: 0 of 1 arrivals"),
            std::string::npos)
      << stuck.str();
}

// A local copy uses no link, takes no time and counts on the local counter.
TEST(Gpu, LocalCopyMovesDataWithoutTheFabric) {
  Machine m(gpus_on_one_chip(2), [](TlmHal& hal, Platform&) {
    const uint8_t data[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
    hal.memory(0).write(0x100, data, 16);
    hw::WorkSequence s;
    s.tasks.push_back(hw::Task::local_copy(0, 0x100, 0x200, 4096, 2));
    s.tasks.push_back(hw::Task::local_copy(0, 0x100, 0x300, 4096, 2));
    s.tasks.push_back(hw::Task::wait(0, 2, 2));
    hal.submit(0, std::move(s));
    hal.wait_all_finished();
  });
  m.run();
  const model::Gpu& gpu = m.platform.gpu(0);
  uint8_t out[16];
  gpu.memory().read(0x300, out, 16);
  EXPECT_EQ(out[0], 9);
  EXPECT_EQ(out[15], 6);
  EXPECT_EQ(gpu.memory().write_count(0x200), 1u);
  EXPECT_EQ(gpu.stats().local_copies, 2u);
  EXPECT_EQ(gpu.stats().messages_sent, 0u);
  EXPECT_EQ(m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats().wire_flits, 0u);
  EXPECT_EQ(gpu.finish_time(), ns(0));
}

// GPU 0 reads 4096 bytes of GPU 1's memory. Request (1 flit): 0 -> 101 ns at the switch, its tail
// reaches GPU 1 at 202 ns; the response (256 + 16 = 272 flits) leaves GPU 1 at 202 ns, its head
// reaches the switch at 303 ns, and its tail reaches GPU 0 at 303 + 272 + 100 = 675 ns.
TEST(Gpu, ReadReturnsThePeersDataOnTheResponseClass) {
  Machine m(gpus_on_one_chip(2), [](TlmHal& hal, Platform&) {
    const uint8_t data[16] = {0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
                              0xA8, 0xA9, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xAF};
    hal.memory(1).write(0x7000, data, 16);
    hw::WorkSequence s;
    s.tasks.push_back(hw::Task::read(0, 1, 0x7000, 0x500, 4096, 3));
    s.tasks.push_back(hw::Task::wait(0, 3, 1));
    hal.submit(0, std::move(s));
    hal.wait_all_finished();
  });
  m.run();
  uint8_t out[16];
  m.platform.gpu(0).memory().read(0x500, out, 16);
  EXPECT_EQ(out[0], 0xA0);
  EXPECT_EQ(out[15], 0xAF);
  EXPECT_EQ(m.platform.gpu(0).finish_time(), ns(675));
  const auto& request = m.platform.link(LinkDirection::gpu_to_switch, 0, 0).stats();
  EXPECT_EQ(request.messages[0], 1u);
  EXPECT_EQ(request.wire_flits, 1u);
  EXPECT_EQ(request.payload_bytes, 0u);
  const auto& response = m.platform.link(LinkDirection::gpu_to_switch, 1, 0).stats();
  EXPECT_EQ(response.messages[0], 0u);
  EXPECT_EQ(response.messages[1], 1u);
  EXPECT_EQ(response.wire_flits, 272u);
  EXPECT_EQ(response.payload_bytes, 4096u);
  EXPECT_EQ(m.platform.chip(0).stats().forwarded[1], 1u);
  // The reader received one message (the response); the peer one (the request).
  EXPECT_EQ(m.platform.gpu(0).stats().messages_received, 1u);
  EXPECT_EQ(m.platform.gpu(1).stats().messages_received, 1u);
}

// ---------------------------------------------------------------------------------------------
// SM-issued stores (WorkSequence::issue_sms): multimem instructions are SM instructions, and an
// SM issues remote stores at sm_store_gbps. Here 2 SMs at 2 GB/s each: 4 GB/s (4 bytes/ns), a
// quarter of the 1-ns-flit link's rate, so a 256-byte store (17 flits on the wire) holds its
// stream for 256 / 4 = 64 ns while the link carries it in 17 ns.
constexpr double kSmStoreGbps = 2.0;
constexpr uint16_t kIssueSms = 2;
constexpr uint64_t kStoreBytes = 256;
constexpr uint64_t kStores = 8;
constexpr double kIssueNs = kStoreBytes / (kIssueSms * kSmStoreGbps);  // 64 ns per store
constexpr double kFlightNs = 218;  // a 256-byte write issued on an idle link lands 218 ns later
constexpr double kWireNs = 17;     // its flits on a link

PlatformSpec sm_store_platform(uint32_t gpus) {
  PlatformSpec spec = gpus_on_one_chip(gpus);
  spec.gpu.sm_store_gbps = kSmStoreGbps;
  return spec;
}

// When GPU 0's stream finished and when each of GPU 1's kStores arrivals (counter 4) landed.
struct StoreRun {
  sc_time sender_finish;
  std::vector<sc_time> arrivals;
};

StoreRun arrivals_on_counter(Platform& platform, uint32_t gpu, uint32_t counter, uint64_t count) {
  StoreRun run;
  run.sender_finish = platform.gpu(0).finish_time();
  EXPECT_EQ(platform.gpu(gpu).counter_arrivals(counter), count);
  for (uint64_t n = 1; n <= std::min(count, platform.gpu(gpu).counter_arrivals(counter)); ++n) {
    const uint64_t at_ps = platform.gpu(gpu).counter_reached_ps(counter, n);
    run.arrivals.push_back(sc_time(static_cast<double>(at_ps), sc_core::SC_PS));
  }
  return run;
}

// GPU 0 sends kStores writes of kStoreBytes to GPU 1 on one stream with `issue_sms`.
StoreRun run_sends(uint16_t issue_sms) {
  Machine m(sm_store_platform(2), [issue_sms](TlmHal& hal, Platform&) {
    hw::WorkSequence sender;
    sender.issue_sms = issue_sms;
    for (uint64_t i = 0; i < kStores; ++i) {
      sender.tasks.push_back(hw::Task::send(0, 1, 0x100 + kStoreBytes * i, 0x8000 + kStoreBytes * i, kStoreBytes, 4));
    }
    hw::WorkSequence receiver;
    receiver.counters = 5;
    receiver.tasks.push_back(hw::Task::wait(0, 4, kStores));
    hal.submit(0, std::move(sender));
    hal.submit(1, std::move(receiver));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(0).stats().messages_sent, kStores);
  return arrivals_on_counter(m.platform, 1, 4, kStores);
}

// The multimem group of the tests below: multimem [64 MiB, 66 MiB) -> local [1 MiB, 3 MiB) in
// GPUs 0 and 1.
constexpr uint64_t kMultimemBase = 64ull << 20;
constexpr uint64_t kLocalBase = 1ull << 20;

// GPU 0 multimem-stores kStores values of kStoreBytes into a group of GPUs 0 and 1 on one stream
// with `issue_sms`; GPU 1's counter 4 counts its copies.
StoreRun run_multimem_stores(uint16_t issue_sms) {
  // Left to the process's end, like every module of a simulation test.
  auto& platform = *new Platform("platform", sm_store_platform(2));
  auto& hal = *new TlmHal(platform);
  auto& host = *new FirmwareHost("firmware", [&] {
    fw::MulticastAllocator allocator(hal, test::bring_up_switches(hal, platform).chips);
    allocator.create_group(kMultimemBase, 2ull << 20, kLocalBase, 0b11);
    hw::WorkSequence issuer;
    issuer.issue_sms = issue_sms;
    for (uint64_t i = 0; i < kStores; ++i) {
      issuer.tasks.push_back(hw::Task::multimem_store(0, 0x100, kMultimemBase + kStoreBytes * i, kStoreBytes, 4));
    }
    hw::WorkSequence member;
    member.tasks.push_back(hw::Task::wait(0, 4, kStores));
    hal.submit(0, std::move(issuer));
    hal.submit(1, std::move(member));
    hal.wait_all_finished();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS), sc_core::SC_EXIT_ON_STARVATION);
  std::ostringstream stuck;
  EXPECT_TRUE(host.done()) << "the firmware did not finish:\n" << (platform.describe_outstanding(stuck), stuck.str());
  EXPECT_EQ(platform.gpu(0).stats().messages_sent, kStores);
  EXPECT_EQ(platform.gpu(0).stats().multimem_errors, 0u);
  return arrivals_on_counter(platform, 1, 4, kStores);
}

// An SM-issued stream holds each store for its bytes at issue_sms x sm_store_gbps: the stream
// finishes after kStores x 64 ns = 512 ns = N B / (s rate), and the stores leave 64 ns apart, so
// the last lands one flight (218 ns) after its issue at 448 ns.
TEST(Gpu, SmIssuedSendsArePacedByTheirSms) {
  const StoreRun run = run_sends(kIssueSms);
  const double paced_ns = kStores * kStoreBytes / (kIssueSms * kSmStoreGbps);
  ASSERT_EQ(paced_ns, 512.0);
  EXPECT_EQ(run.sender_finish, ns(paced_ns));
  ASSERT_EQ(run.arrivals.size(), kStores);
  for (uint64_t i = 0; i < kStores; ++i) EXPECT_EQ(run.arrivals[i], ns(i * kIssueNs + kFlightNs)) << "store " << i;
  // The data is done one flight after the last issue: within a store's flight of N B / (s rate).
  EXPECT_EQ(run.arrivals.back(), ns(paced_ns - kIssueNs + kFlightNs));
}

// Copy-engine sends (issue_sms = 0) take no executor time: the link paces them, back to back
// 17 ns apart, and the last lands at 218 + 7 x 17 = 337 ns, well before the SM-paced 512 ns.
TEST(Gpu, SendsWithoutIssueSmsGoAtLinkSpeed) {
  const StoreRun run = run_sends(0);
  EXPECT_EQ(run.sender_finish, ns(0));
  ASSERT_EQ(run.arrivals.size(), kStores);
  for (uint64_t i = 0; i < kStores; ++i) EXPECT_EQ(run.arrivals[i], ns(kFlightNs + i * kWireNs)) << "store " << i;
  EXPECT_LT(run.arrivals.back(), ns(kStores * kIssueNs));
}

// Multimem stores are paced alike: the issuer's stream finishes at 512 ns and each member copy
// lands 64 ns after the one before (the switch's replica leaves on the member's own link, so a
// copy lands as a write would).
TEST(Gpu, SmIssuedMultimemStoresArePacedByTheirSms) {
  const StoreRun paced = run_multimem_stores(kIssueSms);
  EXPECT_EQ(paced.sender_finish, ns(kStores * kIssueNs));
  ASSERT_EQ(paced.arrivals.size(), kStores);
  for (uint64_t i = 1; i < kStores; ++i) {
    EXPECT_EQ(paced.arrivals[i] - paced.arrivals[i - 1], ns(kIssueNs)) << "store " << i;
  }
  EXPECT_EQ(paced.arrivals[0], ns(kFlightNs));
  EXPECT_EQ(paced.arrivals.back(), ns((kStores - 1) * kIssueNs + kFlightNs));
}

// A chunk's issue time counts all its writes: 3 x 256 bytes at 4 GB/s hold the stream 192 ns,
// while the chunk itself (51 flits) lands at 252 ns as without the limit.
TEST(Gpu, AnSmIssuedChunkHoldsItsStreamForAllItsWrites) {
  Machine m(sm_store_platform(2), [](TlmHal& hal, Platform&) {
    hw::WorkSequence sender;
    sender.issue_sms = kIssueSms;
    for (uint64_t i = 0; i < 3; ++i) sender.elements.push_back(hw::WriteElement{0x1000 * (i + 1), 0x8000 + 0x100 * i});
    sender.tasks.push_back(hw::Task::send_chunk(0, 1, 0, 3, kStoreBytes, 4));
    sender.tasks.push_back(hw::Task::local_copy(0, 0x10, 0x20, 0, 1));  // a signal after the hold (no bytes to issue)
    hw::WorkSequence receiver;
    receiver.counters = 5;
    receiver.tasks.push_back(hw::Task::wait(0, 4, 3));
    hal.submit(0, std::move(sender));
    hal.submit(1, std::move(receiver));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(0).finish_time(), ns(3 * kIssueNs));
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(1, 1), ns(3 * kIssueNs).value());
  EXPECT_EQ(m.platform.gpu(1).finish_time(), ns(252));
}

// A local copy is the same SMs storing into local memory (a DeepEP sender's own rank): in a stream
// with issue_sms it lands at once and holds the stream for its bytes, as a send does; a 0-byte
// copy (a signal between streams) holds nothing.
TEST(Gpu, AnSmIssuedLocalCopyHoldsItsStreamForItsBytes) {
  Machine m(sm_store_platform(1), [](TlmHal& hal, Platform&) {
    hw::WorkSequence sender;
    sender.issue_sms = kIssueSms;
    sender.counters = 3;
    sender.tasks.push_back(hw::Task::local_copy(0, 0x100, 0x8000, kStoreBytes, 1));
    sender.tasks.push_back(hw::Task::local_copy(0, 0x10, 0x20, 0, 2));  // the signal after the hold
    sender.tasks.push_back(hw::Task::local_copy(0, 0x10, 0x30, 0, 2));  // and at once after it
    hal.submit(0, std::move(sender));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(1, 1), 0u);
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(2, 1), ns(kIssueNs).value());
  EXPECT_EQ(m.platform.gpu(0).counter_reached_ps(2, 2), ns(kIssueNs).value());
  EXPECT_EQ(m.platform.gpu(0).finish_time(), ns(kIssueNs));
}

// The stores of take_ready items are held alike: two ready items of one 256-byte send each issue
// 64 ns apart, and the stream stands after them at 128 ns.
TEST(Gpu, SmIssuedStoresOfTakeReadyItemsArePacedByTheirSms) {
  Machine m(sm_store_platform(2), [](TlmHal& hal, Platform&) {
    hw::WorkSequence sender;
    sender.issue_sms = kIssueSms;
    sender.tasks = {hw::Task::take_ready(0, 2, 1),
                    hw::Task::wait(0, 3, 0), hw::Task::send(0, 1, 0x100, 0x8000, kStoreBytes, 4),
                    hw::Task::wait(0, 3, 0), hw::Task::send(0, 1, 0x100, 0x8100, kStoreBytes, 4)};
    hw::WorkSequence receiver;
    receiver.counters = 5;
    receiver.tasks.push_back(hw::Task::wait(0, 4, 2));
    hal.submit(0, std::move(sender));
    hal.submit(1, std::move(receiver));
    hal.wait_all_finished();
  });
  m.run();
  const StoreRun run = arrivals_on_counter(m.platform, 1, 4, 2);
  EXPECT_EQ(run.sender_finish, ns(2 * kIssueNs));
  ASSERT_EQ(run.arrivals.size(), 2u);
  EXPECT_EQ(run.arrivals[0], ns(kFlightNs));
  EXPECT_EQ(run.arrivals[1], ns(kIssueNs + kFlightNs));
  EXPECT_EQ(m.platform.gpu(0).taken_items().size(), 2u);
  EXPECT_EQ(m.platform.gpu(0).stats().tasks_done, 5u);
}

// Streams stay concurrent: stream 0 issuing 8 stores on 2 SMs (512 ns) does not hold up stream 1
// (1 SM: two stores of 128 ns each, then a 100 ns delay: done at 356 ns) nor stream 2 (a 200 ns
// delay from 0), and stream 0 itself is not slowed by them: it finishes at 512 ns.
TEST(Gpu, AnSmIssuedStreamDoesNotSlowTheGpusOtherStreams) {
  Machine m(sm_store_platform(2), [](TlmHal& hal, Platform& platform) {
    hw::WorkSequence broadcast;
    broadcast.phase_names = {"broadcast", "other", "compute"};
    broadcast.issue_sms = kIssueSms;
    for (uint64_t i = 0; i < kStores; ++i) {
      broadcast.tasks.push_back(hw::Task::send(0, 1, 0x100, 0x8000 + kStoreBytes * i, kStoreBytes, 4));
    }
    hw::WorkSequence other;
    other.stream = 1;
    other.issue_sms = 1;
    other.tasks = {hw::Task::send(1, 1, 0x100, 0x20000, kStoreBytes, 5),
                   hw::Task::send(1, 1, 0x100, 0x20100, kStoreBytes, 5), hw::Task::delay(1, 100.0)};
    hw::WorkSequence compute;
    compute.stream = 2;
    compute.tasks = {hw::Task::delay(2, 200.0)};
    hw::WorkSequence receiver;
    receiver.counters = 6;
    receiver.tasks = {hw::Task::wait(0, 4, kStores), hw::Task::wait(0, 5, 2)};
    hal.submit(0, std::move(broadcast));
    hal.submit(0, std::move(other));
    hal.submit(0, std::move(compute));
    hal.submit(1, std::move(receiver));
    hal.wait_all_finished();
    EXPECT_EQ(platform.gpu(0).finish_time(), ns(kStores * kIssueNs));
  });
  m.run();
  const model::Gpu& gpu = m.platform.gpu(0);
  const double one_sm_ns = kStoreBytes / (1 * kSmStoreGbps);  // 128 ns
  ASSERT_EQ(gpu.phase_times().size(), 3u);
  EXPECT_EQ(gpu.phase_times()[0].first_start, ns(0));
  EXPECT_EQ(gpu.phase_times()[0].last_end, ns(kStores * kIssueNs));
  EXPECT_EQ(gpu.phase_times()[1].first_start, ns(0));
  EXPECT_EQ(gpu.phase_times()[1].last_end, ns(2 * one_sm_ns + 100));
  EXPECT_EQ(gpu.phase_times()[2].last_end, ns(200));
  std::vector<std::pair<uint64_t, uint64_t>> spans;  // the delays' intervals, ns
  for (const model::ComputeSpan& span : gpu.compute_spans()) {
    spans.emplace_back(span.start.value() / 1000, span.end.value() / 1000);  // ps resolution
  }
  std::sort(spans.begin(), spans.end());
  EXPECT_EQ(spans, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 200}, {256, 356}}));
  EXPECT_EQ(gpu.finish_time(), ns(kStores * kIssueNs));
  EXPECT_EQ(m.platform.gpu(1).counter_arrivals(4), kStores);
  EXPECT_EQ(m.platform.gpu(1).counter_arrivals(5), 2u);
}

// Sequences submitted one after the other run in order; phases keep first start and last end.
TEST(Gpu, SequencesRunInOrderAndPhasesAreRecorded) {
  Machine m(gpus_on_one_chip(1), [](TlmHal& hal, Platform&) {
    hw::WorkSequence a;
    a.phase_names = {"setup", "work"};
    a.tasks = {hw::Task::delay(0, 100), hw::Task::delay(1, 200), hw::Task::delay(0, 300)};
    hw::WorkSequence b;
    b.tasks = {hw::Task::delay(1, 400)};
    hal.submit(0, std::move(a));
    hal.submit(0, std::move(b));
    hal.wait_all_finished();
  });
  m.run();
  const model::Gpu& gpu = m.platform.gpu(0);
  ASSERT_EQ(gpu.phase_names(), (std::vector<std::string>{"setup", "work"}));
  EXPECT_EQ(gpu.phase_times()[0].first_start, ns(0));
  EXPECT_EQ(gpu.phase_times()[0].last_end, ns(600));
  EXPECT_EQ(gpu.phase_times()[1].first_start, ns(100));
  EXPECT_EQ(gpu.phase_times()[1].last_end, ns(1000));
  EXPECT_EQ(gpu.stats().tasks_done, 4u);
  EXPECT_TRUE(gpu.finished());
  EXPECT_EQ(gpu.finish_time(), ns(1000));
}

}  // namespace
}  // namespace nvsvp::platform
