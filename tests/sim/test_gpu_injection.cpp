// The GPU's injection (GpuLinkEngines): a chunk's writes spread over the links by their own
// target addresses (chunk_links: per_write) and every write lands and counts once; with VCs chosen
// by destination (tx_vc_choice: destination), messages waiting for a congested destination's VC
// do not hold back a message to another destination of the same stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {
namespace {

using test::Machine;
using test::ns;

constexpr uint32_t kLinks = 8;
constexpr uint32_t kChunks = 256;
constexpr uint16_t kWrites = 6;  // DeepEP-style batch
constexpr uint64_t kWriteBytes = 2048;
constexpr uint64_t kTargetBase = 0x10'0000;
constexpr uint32_t kCounter = 1;

uint64_t target_of(uint64_t write) { return kTargetBase + write * kWriteBytes; }

// GPU 0 sends kChunks chunks of kWrites writes to GPU 1 over 8 links to one chip; GPU 1 waits for
// every write.
struct ChunkedTransfer {
  Machine machine;
  explicit ChunkedTransfer(const std::string& chunk_links)
      : machine(spec(chunk_links), [](TlmHal& hal, Platform&) {
          hw::WorkSequence sender;
          for (uint64_t w = 0; w < uint64_t{kChunks} * kWrites; ++w) {
            const uint64_t source = 0x1000 + w * kWriteBytes;
            uint8_t data[16];
            for (int b = 0; b < 16; ++b) data[b] = static_cast<uint8_t>(w * 7 + b);
            hal.memory(0).write(source, data, 16);
            sender.elements.push_back(hw::WriteElement{source, target_of(w)});
          }
          for (uint32_t c = 0; c < kChunks; ++c) {
            sender.tasks.push_back(hw::Task::send_chunk(0, 1, c * kWrites, kWrites, kWriteBytes, kCounter));
          }
          hw::WorkSequence receiver;
          receiver.counters = 2;
          receiver.tasks.push_back(hw::Task::wait(0, kCounter, uint64_t{kChunks} * kWrites));
          hal.submit(0, std::move(sender));
          hal.submit(1, std::move(receiver));
          hal.wait_all_finished();
        }) {}
  static PlatformSpec spec(const std::string& chunk_links) {
    PlatformSpec s = test::small_platform(2, {kLinks});
    s.gpu.chunk_links = chunk_links;
    return s;
  }
  uint64_t up_flits(uint32_t link) const {
    return machine.platform.link(LinkDirection::gpu_to_switch, 0, link).stats().wire_flits;
  }
};

// Every write is on the link its own target address interleaves to: per-link wire flits are
// exactly those of the writes hashing there, and balanced within 25 % of the mean (1536 writes
// over 8 links by a hash: a few percent is expected). Every write lands once and counts once; the
// firmware's count of messages is one per chunk.
TEST(GpuInjection, ChunkWritesSpreadOverLinksAndLandOnce) {
  ChunkedTransfer t("per_write");
  t.machine.run();
  const Platform& p = t.machine.platform;
  const uint32_t write_flits = p.spec().link.wire_flits(kWriteBytes);
  std::vector<uint64_t> expected(kLinks, 0);
  const uint32_t granule = p.spec().gpu.interleave_bytes;
  for (uint64_t w = 0; w < uint64_t{kChunks} * kWrites; ++w) {
    // GPU 1's memory as the fabric sees it (gpu.link_interleave: fabric_address).
    const uint64_t fabric = target_of(w) + (uint64_t{1} << model::GpuLinkEngines::kPeerApertureBits);
    expected[model::interleave_way(fabric, granule, kLinks)] += write_flits;
  }
  uint64_t total = 0;
  uint64_t most = 0;
  for (uint32_t l = 0; l < kLinks; ++l) {
    EXPECT_EQ(t.up_flits(l), expected[l]) << "link " << l;
    total += t.up_flits(l);
    most = std::max(most, t.up_flits(l));
  }
  EXPECT_EQ(total, uint64_t{kChunks} * kWrites * write_flits);
  EXPECT_LE(static_cast<double>(most), 1.25 * static_cast<double>(total) / kLinks);

  const model::GpuStats& rx = p.gpu(1).stats();
  EXPECT_GT(rx.messages_received, kChunks) << "chunks split over links";
  EXPECT_LE(rx.messages_received, uint64_t{kChunks} * std::min<uint32_t>(kWrites, kLinks));
  EXPECT_EQ(rx.messages_received - rx.chunk_parts_received, kChunks);
  EXPECT_EQ(t.machine.hal.received_messages(1), kChunks);
  EXPECT_EQ(rx.payload_bytes_received, uint64_t{kChunks} * kWrites * kWriteBytes);
  for (uint64_t w = 0; w < uint64_t{kChunks} * kWrites; ++w) {
    ASSERT_EQ(p.gpu(1).memory().write_count(target_of(w)), 1u) << "write " << w;
    uint8_t got[16];
    p.gpu(1).memory().read(target_of(w), got, 16);
    for (int b = 0; b < 16; ++b) ASSERT_EQ(got[b], static_cast<uint8_t>(w * 7 + b)) << "write " << w;
  }
  EXPECT_EQ(p.gpu(0).stats().messages_sent, rx.messages_received);
}

// The model before issue 18, still selectable by name: a chunk travels whole on its first write's
// link, one message per chunk, the same bytes.
TEST(GpuInjection, FirstWriteKeepsAChunkWhole) {
  ChunkedTransfer t("first_write");
  t.machine.run();
  const model::GpuStats& rx = t.machine.platform.gpu(1).stats();
  EXPECT_EQ(rx.messages_received, kChunks);
  EXPECT_EQ(rx.chunk_parts_received, 0u);
  EXPECT_EQ(rx.payload_bytes_received, uint64_t{kChunks} * kWrites * kWriteBytes);
  for (uint64_t w = 0; w < uint64_t{kChunks} * kWrites; ++w) {
    ASSERT_EQ(t.machine.platform.gpu(1).memory().write_count(target_of(w)), 1u) << "write " << w;
  }
}

// Four GPUs on one chip, one link each. GPUs 2 and 0 both send 16 KB writes to GPU 1, so the
// switch's output to GPU 1 is congested and GPU 0's writes wait in the chip's input; then GPU 0
// sends one 256-byte write to idle GPU 3. With VCs by destination its write takes GPU 3's VC and
// leaves at once; with any VC (round robin), GPU 0's queued writes for GPU 1 hold every VC of the
// chip's input and the write to GPU 3 waits behind them.
sc_core::sc_time idle_destination_arrival(const std::string& vc_choice) {
  PlatformSpec spec = test::small_platform(4, {1});
  spec.gpu.tx_vc_choice = vc_choice;
  spec.switch_chip.vcs_per_class = 4;
  constexpr uint64_t kBig = 16384;
  constexpr uint32_t kBigWrites = 16;
  Machine m(spec, [](TlmHal& hal, Platform&) {
    for (uint32_t g : {0u, 2u}) {
      hw::WorkSequence s;
      for (uint64_t i = 0; i < kBigWrites; ++i) {
        s.tasks.push_back(hw::Task::send(0, 1, 0x1000, 0x10'0000 + (g * kBigWrites + i) * kBig, kBig, kCounter));
      }
      if (g == 0) s.tasks.push_back(hw::Task::send(0, 3, 0x1000, 0x8000, 256, kCounter));
      hal.submit(g, std::move(s));
    }
    hw::WorkSequence congested;
    congested.counters = 2;
    congested.tasks.push_back(hw::Task::wait(0, kCounter, 2 * kBigWrites));
    hal.submit(1, std::move(congested));
    hw::WorkSequence idle;
    idle.counters = 2;
    idle.tasks.push_back(hw::Task::wait(0, kCounter, 1));
    hal.submit(3, std::move(idle));
    hal.wait_all_finished();
  });
  m.run();
  EXPECT_EQ(m.platform.gpu(1).memory().write_count(0x10'0000), 1u);
  return m.platform.gpu(3).finish_time();
}

// A 256-byte write alone: 17 flits at 1 ns per flit on each of two 100-ns hops. With VCs by
// destination it lands then, whatever waits for GPU 1.
TEST(GpuInjection, CongestedDestinationDoesNotBlockAnIdleOneWithVcsByDestination) {
  const sc_core::sc_time arrival = idle_destination_arrival("destination");
  // Behind GPU 0's writes already on its link (the engine commits within its lookahead) but not
  // behind those waiting for GPU 1's VC: within a few of its 16 KB writes (1025 ns each).
  EXPECT_LT(arrival, ns(5000));
}

// The same with any VC: the write to GPU 3 waits for GPU 0's writes to GPU 1, which drain at half
// of GPU 1's link (GPU 2 shares it): far later than with VCs by destination.
TEST(GpuInjection, CongestedDestinationBlocksAnIdleOneWithAnyVc) {
  const sc_core::sc_time arrival = idle_destination_arrival("round_robin");
  EXPECT_GT(arrival, ns(10000));
}

}  // namespace
}  // namespace nvsvp::platform
