// The observation point between components (model/message_observer.hpp): an observer attached to
// the platform hears of every message on every link, once per hop and before its receiver, of
// every credit return, and of every register access; the figures it gathers agree with the
// links' own statistics.
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/model/message_observer.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/platform/platform.hpp"

namespace nvsvp::platform {
namespace {

struct SeenMessage {
  const model::NvlinkPort* link;
  model::Opcode opcode;
  uint32_t source_gpu;
  uint64_t sequence;
  sc_core::sc_time start;
  sc_core::sc_time tail_arrival;
};

class RecordingObserver : public model::MessageObserver {
 public:
  void message_sent(const model::NvlinkPort& link, const tlm::tlm_generic_payload& payload,
                    const sc_core::sc_time& start) override {
    const model::NvlinkExtension& ext = model::extension_of(payload);
    messages.push_back(SeenMessage{&link, ext.opcode, ext.source_gpu, ext.sequence, start, ext.tail_arrival});
    wire_flits[&link] += ext.wire_flits;
  }
  void credits_returned(const model::NvlinkPort& link, const tlm::tlm_generic_payload&, uint32_t flits,
                        const sc_core::sc_time& lands) override {
    credit_flits[&link] += flits;
    EXPECT_GE(lands, sc_core::sc_time_stamp());
  }
  void register_accessed(uint32_t chip, const tlm::tlm_generic_payload& payload,
                         const sc_core::sc_time& delay) override {
    EXPECT_EQ(payload.get_response_status(), tlm::TLM_OK_RESPONSE);
    register_accesses[chip]++;
    register_time += delay;
  }

  std::vector<SeenMessage> messages;
  std::map<const model::NvlinkPort*, uint64_t> wire_flits;
  std::map<const model::NvlinkPort*, uint64_t> credit_flits;
  std::map<uint32_t, uint64_t> register_accesses;
  sc_core::sc_time register_time;
};

TEST(MessageObserver, HearsEveryHopEveryCreditAndEveryRegisterAccess) {
  constexpr uint32_t kWrites = 40;
  constexpr uint32_t kReads = 10;
  PlatformSpec spec = test::small_platform(3, {2, 1});
  spec.switch_chip.register_access_ns = 20.0;
  test::Machine machine(spec, [](TlmHal& hal, Platform&) {
    hw::WorkSequence writer;
    for (uint32_t i = 0; i < kWrites; ++i) writer.tasks.push_back(hw::Task::send(0, 1 + i % 2, 0, i * 256ull, 256, 0));
    for (uint32_t i = 0; i < kReads; ++i) writer.tasks.push_back(hw::Task::read(0, 2, i * 512ull, 0x10000 + i * 512ull, 512, 1));
    writer.tasks.push_back(hw::Task::wait(0, 1, kReads));
    hal.submit(0, std::move(writer));
    for (uint32_t g = 1; g < 3; ++g) {
      hw::WorkSequence reader;
      reader.tasks.push_back(hw::Task::wait(0, 0, kWrites / 2));
      hal.submit(g, std::move(reader));
    }
    hal.wait_all_finished();
  });
  RecordingObserver observer;
  machine.platform.attach_observer(&observer);
  machine.run();

  // Each write and each read request crosses two links (GPU -> switch -> GPU), and so does each
  // read response: 2 x (writes + 2 x reads) hops.
  EXPECT_EQ(observer.messages.size(), 2u * (kWrites + 2 * kReads));
  // Every hop once: per (link, source, sequence) one message.
  using Hop = std::tuple<const model::NvlinkPort*, uint32_t, uint64_t, model::Opcode>;
  std::map<Hop, int> hops;
  for (const SeenMessage& m : observer.messages) {
    const int heard = ++hops[Hop(m.link, m.source_gpu, m.sequence, m.opcode)];
    EXPECT_EQ(heard, 1) << "a hop heard twice";
    EXPECT_GT(m.tail_arrival, m.start);
  }
  // What it heard is what the links counted; every credit came back by the end.
  uint64_t link_messages = 0;
  for (LinkDirection direction : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    for (uint32_t g = 0; g < 3; ++g) {
      for (uint32_t l = 0; l < machine.platform.links_per_gpu(); ++l) {
        const model::NvlinkPort& port = machine.platform.link(direction, g, l);
        const model::LinkStats& stats = port.stats();
        link_messages += stats.messages[0] + stats.messages[1];
        const auto seen = observer.wire_flits.find(&port);
        EXPECT_EQ(seen == observer.wire_flits.end() ? 0 : seen->second, stats.wire_flits) << port.name();
        const auto credited = observer.credit_flits.find(&port);
        const uint64_t flits = credited == observer.credit_flits.end() ? 0 : credited->second;
        EXPECT_EQ(flits, stats.wire_flits) << port.name() << ": messages of at most a VC's depth return all their flits";
        EXPECT_EQ(port.credits_outstanding(), 0u) << port.name();
      }
    }
  }
  EXPECT_EQ(link_messages, observer.messages.size());
  // Bring-up reached both chips through their registers.
  EXPECT_GT(observer.register_accesses[0], 0u);
  EXPECT_GT(observer.register_accesses[1], 0u);
  const uint64_t accesses = observer.register_accesses[0] + observer.register_accesses[1];
  EXPECT_EQ(observer.register_time, sc_core::sc_time(20.0 * static_cast<double>(accesses), sc_core::SC_NS));
}

}  // namespace
}  // namespace nvsvp::platform
