// Firmware's recovery from link_down and chip_down (docs/firmware.md#link-down-recovery) against
// a mocked HAL. Behind the mock, a small register file per chip answers bring-up and the service:
// identity, ERROR_STATUS (write 1 to clear), LINK_DOWN_PORTS, the route entries, CHIP_CONTROL,
// and a dead chip reading all ones and losing writes; the GPUs' link state is a mask per GPU.
// The fabric: 3 GPUs, GPU g cabled to chip 0 ports 2g (its link 0) and 2g+1 (link 1) and to
// chip 1 port g (link 2). The tests: a link down with another port to its GPU, one that retires
// its chip, a dead chip, a link back up, a GPU with no link left, two events in one service, and
// a service with nothing changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "../common/mock_hal.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {
namespace {

namespace regs = hw::switch_regs;

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::NiceMock;

constexpr uint32_t kGpus = 3;

struct FakeChip {
  uint32_t ports = 0;
  bool dead = false;
  uint32_t error_status = 0;
  hw::PortMask link_down_ports;
  std::map<uint32_t, uint32_t> written;  // the RW registers: routes, INT_ENABLE, CONTEXTS_ENABLED
  uint32_t flushes = 0;
};

struct Write {
  uint32_t chip;
  uint32_t offset;
  uint32_t value;
  bool operator==(const Write& other) const {
    return std::tie(chip, offset, value) == std::tie(other.chip, other.offset, other.value);
  }
};

class LinkRecoveryTest : public ::testing::Test {
 protected:
  LinkRecoveryTest() : chips_(2), gpu_links_down_(kGpus, 0) {
    chips_[0].ports = 6;
    chips_[1].ports = 3;
    ON_CALL(hal_, switch_count()).WillByDefault(Invoke([this] { return static_cast<uint32_t>(chips_.size()); }));
    ON_CALL(hal_, now_ns()).WillByDefault(Invoke([this] { return now_ns_ += 10.0; }));
    ON_CALL(hal_, read_register(_, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset) {
      ++reads_[chip];
      return read(chip, offset);
    }));
    ON_CALL(hal_, write_register(_, _, _)).WillByDefault(Invoke([this](uint32_t chip, uint32_t offset, uint32_t value) {
      writes_.push_back(Write{chip, offset, value});
      FakeChip& c = chips_.at(chip);
      if (c.dead) return;  // lost
      if (offset == regs::kErrorStatus) {
        c.error_status &= ~value;
      } else if (offset == regs::kChipControl) {
        c.flushes += (value & regs::kChipControlFlush) != 0;
      } else {
        c.written[offset] = value;
      }
    }));
    ON_CALL(hal_, gpu_links_down(_)).WillByDefault(Invoke([this](uint32_t gpu) { return gpu_links_down_.at(gpu); }));
    ON_CALL(hal_, set_gpu_link_enabled(_, _, _)).WillByDefault(Invoke([this](uint32_t gpu, uint32_t link, bool on) {
      link_changes_.push_back(std::make_tuple(gpu, link, on));
    }));
    ON_CALL(hal_, reissue_lost_operations(_)).WillByDefault(Invoke([this](uint32_t gpu) {
      reissued_for_.push_back(gpu);
      return uint64_t{gpu + 1};
    }));
    fabric_.bring_up(topology());
    writes_.clear();
    reads_.clear();
  }

  static FabricTopology topology() {
    FabricTopology t;
    t.gpus = kGpus;
    t.switch_chips = 2;
    for (uint32_t g = 0; g < kGpus; ++g) {
      t.cables.push_back(SwitchCable{g, 0, static_cast<uint16_t>(2 * g), 0});
      t.cables.push_back(SwitchCable{g, 0, static_cast<uint16_t>(2 * g + 1), 1});
      t.cables.push_back(SwitchCable{g, 1, static_cast<uint16_t>(g), 2});
    }
    return t;
  }

  uint32_t read(uint32_t chip, uint32_t offset) {
    const FakeChip& c = chips_.at(chip);
    if (c.dead) return regs::kDeadChipRead;
    switch (offset) {
      case regs::kId: return regs::kIdValue;
      case regs::kVersion: return regs::kVersionValue;
      case regs::kChipIndex: return chip;
      case regs::kPortCount: return c.ports;
      case regs::kMulticastSlots: return 4;
      case regs::kReductionContexts: return 8;
      case regs::kRouteEntries: return 16;
      case regs::kErrorStatus: return c.error_status;
      default: break;
    }
    if (offset >= regs::kLinkDownPorts && offset < regs::link_down_ports_word(regs::kMaskWords)) {
      return c.link_down_ports.word32((offset - regs::kLinkDownPorts) / 4);
    }
    const auto found = c.written.find(offset);
    return found == c.written.end() ? 0 : found->second;
  }

  // Chip `chip`'s port `port` goes down (or up) as the chip and the GPU at its other end see it.
  void set_link(uint32_t chip, uint32_t port, bool down) {
    const SwitchCable cable = cable_at(chip, port);
    FakeChip& c = chips_.at(chip);
    c.link_down_ports.set(port, down);
    c.error_status |= regs::error_link_state;
    gpu_links_down_[cable.gpu] = down ? gpu_links_down_[cable.gpu] | (1ull << cable.gpu_link)
                                      : gpu_links_down_[cable.gpu] & ~(1ull << cable.gpu_link);
  }
  static SwitchCable cable_at(uint32_t chip, uint32_t port) {
    for (const SwitchCable& cable : topology().cables) {
      if (cable.chip == chip && cable.port == port) return cable;
    }
    ADD_FAILURE() << "no cable at chip " << chip << " port " << port;
    return SwitchCable{};
  }
  hw::PortMask route(uint32_t chip, uint32_t gpu) {
    FakeChip& c = chips_.at(chip);
    hw::PortMask mask;
    for (uint32_t w = 0; w < regs::kMaskWords; ++w) mask.set_word32(w, c.written[regs::route_word(gpu, w)]);
    return mask;
  }
  std::vector<Write> writes_to(uint32_t chip) const {
    std::vector<Write> out;
    for (const Write& w : writes_) {
      if (w.chip == chip) out.push_back(w);
    }
    return out;
  }

  std::vector<FakeChip> chips_;
  std::vector<uint64_t> gpu_links_down_;
  double now_ns_ = 0.0;
  std::vector<Write> writes_;
  std::map<uint32_t, int> reads_;  // by chip
  std::vector<std::tuple<uint32_t, uint32_t, bool>> link_changes_;
  std::vector<uint32_t> reissued_for_;
  NiceMock<test::MockHal> hal_;
  SwitchFabric fabric_{hal_};
};

TEST_F(LinkRecoveryTest, BringUpRoutesEveryCable) {
  EXPECT_EQ(route(0, 1), 0b1100u);
  EXPECT_EQ(route(1, 1), 0b010u);
  EXPECT_TRUE(fabric_.recovery_log().empty());
}

// GPU 1's link 0 (chip 0 port 2) goes down; port 3 still reaches GPU 1 on chip 0.
TEST_F(LinkRecoveryTest, LinkDownWithAnotherPortToTheGpuRewritesTheRouteWithoutIt) {
  set_link(0, 2, true);
  fabric_.service_interrupts();
  EXPECT_EQ(route(0, 1), 0b1000u);
  EXPECT_EQ(writes_to(0), (std::vector<Write>{{0, regs::kErrorStatus, regs::error_link_state},
                                              {0, regs::route_word(1, 0), 0b1000u},
                                              {0, regs::route_word(1, 1), 0u}}));
  EXPECT_TRUE(writes_to(1).empty());
  EXPECT_EQ(link_changes_, (std::vector<std::tuple<uint32_t, uint32_t, bool>>{{1, 0, false}}));
  EXPECT_EQ(chips_[0].flushes + chips_[1].flushes, 0u);
  EXPECT_TRUE(reissued_for_.empty());
  ASSERT_EQ(fabric_.recovery_log().size(), 1u);
  const RecoveryRecord& r = fabric_.recovery_log()[0];
  EXPECT_EQ(r.kind, RecoveryKind::link_down);
  EXPECT_EQ(std::make_tuple(r.chip, r.port, r.gpu, r.gpu_link), std::make_tuple(0u, 2u, 1u, 0u));
  EXPECT_LT(r.detected_ns, r.recovered_ns);
  EXPECT_EQ(r.operations_reissued, 0u);
  EXPECT_THAT(r.describe(), HasSubstr("link_down: switch chip 0 port 2, GPU 1 link 0, detected at "));
  EXPECT_FALSE(fabric_.chip_out_of_use(0));
}

// Chip 1 has one port per GPU: GPU 1's link 2 down leaves it without a port to GPU 1.
TEST_F(LinkRecoveryTest, LinkDownLeavingAChipWithoutAPortToAGpuRetiresAndFlushesIt) {
  set_link(1, 1, true);
  fabric_.service_interrupts();
  EXPECT_TRUE(fabric_.chip_out_of_use(1));
  EXPECT_FALSE(fabric_.chip_dead(1));
  EXPECT_EQ(chips_[1].flushes, 1u);
  // Only ERROR_STATUS and FLUSH on chip 1: a retired chip's routes are left alone.
  EXPECT_EQ(writes_to(1), (std::vector<Write>{{1, regs::kErrorStatus, regs::error_link_state},
                                              {1, regs::kChipControl, regs::kChipControlFlush}}));
  EXPECT_TRUE(writes_to(0).empty());  // chip 0's routes did not change
  EXPECT_EQ(link_changes_, (std::vector<std::tuple<uint32_t, uint32_t, bool>>{{0, 2, false}, {1, 2, false}, {2, 2, false}}));
  EXPECT_EQ(reissued_for_, (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_EQ(fabric_.recovery_log().size(), 2u);
  EXPECT_EQ(fabric_.recovery_log()[0].kind, RecoveryKind::chip_retired);
  EXPECT_EQ(fabric_.recovery_log()[0].gpu, 1u);
  EXPECT_EQ(fabric_.recovery_log()[0].operations_reissued, 1u + 2u + 3u);
  EXPECT_EQ(fabric_.recovery_log()[1].kind, RecoveryKind::link_down);
  const RecoveryCounts counts = fabric_.recovery_counts();
  EXPECT_EQ(counts.chips_retired, 1u);
  EXPECT_EQ(counts.links_down, 1u);
  EXPECT_EQ(counts.operations_reissued, 6u);

  // The link comes back: the chip stays retired for the rest of the layer.
  set_link(1, 1, false);
  writes_.clear();
  link_changes_.clear();
  fabric_.service_interrupts();
  EXPECT_TRUE(fabric_.chip_out_of_use(1));
  EXPECT_TRUE(link_changes_.empty());
  EXPECT_EQ(writes_to(1), (std::vector<Write>{{1, regs::kErrorStatus, regs::error_link_state}}));
}

TEST_F(LinkRecoveryTest, DeadChipIsNeverWrittenItsCablesGoOutOfUseAndOperationsAreReissued) {
  chips_[1].dead = true;
  for (uint32_t g = 0; g < kGpus; ++g) gpu_links_down_[g] |= 1ull << 2;  // the GPUs see it too
  fabric_.service_interrupts();
  EXPECT_TRUE(fabric_.chip_dead(1));
  EXPECT_TRUE(writes_to(1).empty());
  EXPECT_TRUE(writes_to(0).empty());
  EXPECT_EQ(link_changes_, (std::vector<std::tuple<uint32_t, uint32_t, bool>>{{0, 2, false}, {1, 2, false}, {2, 2, false}}));
  EXPECT_EQ(reissued_for_, (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_EQ(fabric_.recovery_log().size(), 1u);
  EXPECT_EQ(fabric_.recovery_log()[0].kind, RecoveryKind::chip_down);
  EXPECT_EQ(fabric_.recovery_log()[0].chip, 1u);
  EXPECT_EQ(fabric_.recovery_log()[0].operations_reissued, 6u);
  // Recorded once: the next service does not even read it.
  reads_.clear();
  chips_[0].error_status |= regs::error_no_route;
  fabric_.service_interrupts();
  EXPECT_EQ(reads_.count(1), 0u);
  EXPECT_EQ(fabric_.recovery_log().size(), 1u);
  EXPECT_EQ(reissued_for_.size(), 3u);
}

TEST_F(LinkRecoveryTest, LinkBackUpIsReenabledAndItsRouteRestored) {
  set_link(0, 2, true);
  fabric_.service_interrupts();
  set_link(0, 2, false);
  link_changes_.clear();
  writes_.clear();
  fabric_.service_interrupts();
  EXPECT_EQ(route(0, 1), 0b1100u);
  EXPECT_EQ(link_changes_, (std::vector<std::tuple<uint32_t, uint32_t, bool>>{{1, 0, true}}));
  ASSERT_EQ(fabric_.recovery_log().size(), 2u);
  EXPECT_EQ(fabric_.recovery_log()[1].kind, RecoveryKind::link_up);
  EXPECT_EQ(fabric_.recovery_log()[1].port, 2u);
  EXPECT_TRUE(reissued_for_.empty());
}

TEST_F(LinkRecoveryTest, GpuWithNoLinkLeftIsAFabricErrorNamingIt) {
  set_link(0, 4, true);
  set_link(0, 5, true);
  set_link(1, 2, true);
  try {
    fabric_.service_interrupts();
    FAIL() << "GPU 2 lost every link: recovery is impossible";
  } catch (const FabricError& e) {
    EXPECT_THAT(e.what(), HasSubstr("GPU 2 has no usable link left"));
    EXPECT_THAT(e.what(), HasSubstr("link 0 to switch chip 0 port 4: down at the GPU"));
    EXPECT_THAT(e.what(), HasSubstr("link 2 to switch chip 1 port 2"));
  }
}

TEST_F(LinkRecoveryTest, TwoEventsInOneServiceAreBothRecoveredTogether) {
  set_link(0, 0, true);  // GPU 0 link 0
  set_link(0, 5, true);  // GPU 2 link 1
  fabric_.service_interrupts();
  EXPECT_EQ(route(0, 0), 0b10u);
  EXPECT_EQ(route(0, 2), 0b10000u);
  EXPECT_EQ(link_changes_, (std::vector<std::tuple<uint32_t, uint32_t, bool>>{{0, 0, false}, {2, 1, false}}));
  ASSERT_EQ(fabric_.recovery_log().size(), 2u);
  EXPECT_EQ(fabric_.recovery_log()[0].detected_ns, fabric_.recovery_log()[1].detected_ns);
  EXPECT_EQ(fabric_.recovery_log()[1].port, 5u);
  EXPECT_TRUE(reissued_for_.empty());
}

TEST_F(LinkRecoveryTest, ServiceWithNothingChangedWritesNothingButTheClear) {
  chips_[0].error_status |= regs::error_link_state;  // a flap already over
  fabric_.service_interrupts();
  EXPECT_EQ(writes_, (std::vector<Write>{{0, regs::kErrorStatus, regs::error_link_state}}));
  EXPECT_TRUE(link_changes_.empty());
  EXPECT_TRUE(reissued_for_.empty());
  EXPECT_TRUE(fabric_.recovery_log().empty());
  writes_.clear();
  fabric_.service_interrupts();
  EXPECT_TRUE(writes_.empty());
}

TEST_F(LinkRecoveryTest, SurvivingChipThatLostAMulticastGroupIsAFabricError) {
  chips_[0].written[regs::group_register(1, regs::kGroupControl)] = 1;
  chips_[1].written[regs::group_register(1, regs::kGroupControl)] = 1;
  fabric_.set_multicast_slots_in_use({1});
  set_link(0, 2, true);
  fabric_.service_interrupts();  // both chips still hold it
  chips_[0].written[regs::group_register(1, regs::kGroupControl)] = 0;
  set_link(0, 3, false);
  set_link(0, 2, false);
  EXPECT_THROW(fabric_.service_interrupts(), FabricError);
}

}  // namespace
}  // namespace nvsvp::fw
