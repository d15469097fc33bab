// SwitchChip on a bench of its own: streaming sources feed the inputs over NvlinkPorts, sinks on
// the outputs record what arrives and return credits (or keep them, to jam a class). Checks:
// round-robin fairness at a shared output, requests and responses never blocking each other
// (also on the assembled platform, with GPU reads), routes with several ports spreading traffic
// by address, and a message without a route being a fatal error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "../common/test_support.hpp"
#include "nvsvp/model/address_hash.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/switch_chip.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::model {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

struct Message {
  uint32_t target_gpu;
  uint64_t address;
  uint64_t bytes;
};

// A sender with one queue per traffic class (each served by its own thread, so a jammed class
// does not hold the other back at the source), one message at a time on the link.
struct Source : sc_core::sc_module {
  sc_core::sc_port<NvlinkTxIf> tx;
  sc_core::sc_event wake;
  WakeScheduler scheduler{"credit_wake", 1, [this](uint32_t) { wake.notify(sc_core::SC_ZERO_TIME); }};
  PayloadPool& pool;
  LinkParams link;
  uint32_t gpu;
  std::vector<Message> queue[kTrafficClasses];
  uint64_t sequence = 0;

  Source(const sc_core::sc_module_name& name, PayloadPool& p, const LinkParams& l, uint32_t id)
      : sc_module(name), pool(p), link(l), gpu(id) {
    sc_core::sc_spawn([this] { run(TrafficClass::request); }, "requests");
    sc_core::sc_spawn([this] { run(TrafficClass::response); }, "responses");
  }
  void end_of_elaboration() override { tx->set_sender(&scheduler, 0); }

  void run(TrafficClass cls) {
    for (const Message& m : queue[static_cast<size_t>(cls)]) {
      const uint32_t flits = link.wire_flits(m.bytes);
      int vc;
      for (;;) {
        const sc_time now = sc_core::sc_time_stamp();
        if (tx->busy_until() > now) {
          sc_core::wait(tx->busy_until() - now);
          continue;
        }
        vc = tx->allocate_vc(cls, flits);
        if (vc >= 0) break;
        tx->wait_for_credits(cls);
        sc_core::wait(wake);
      }
      tlm::tlm_generic_payload& p = pool.acquire();
      NvlinkExtension& ext = extension_of(p);
      ext.opcode = cls == TrafficClass::request ? Opcode::write : Opcode::read_response;
      ext.traffic_class = cls;
      ext.vc = static_cast<uint16_t>(vc);
      ext.source_gpu = gpu;
      ext.target_gpu = m.target_gpu;
      ext.target_address = m.address;
      ext.payload_bytes = m.bytes;
      ext.wire_flits = flits;
      ext.sequence = sequence++;
      tx->send(p);
      p.release();
    }
  }
};

// Records arrivals; frees each message's buffer when its tail arrives, unless its class is held.
struct Sink : sc_core::sc_module {
  struct Arrival {
    uint32_t source;
    TrafficClass cls;
    uint64_t address;
    sc_time tail;
  };
  tlm_utils::simple_target_socket<Sink, 32, NvlinkProtocolTypes> in;
  std::vector<Arrival> arrivals;
  bool hold[kTrafficClasses] = {false, false};

  explicit Sink(const sc_core::sc_module_name& name) : sc_module(name), in("in") {
    in.register_nb_transport_fw(this, &Sink::nb_transport_fw);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase&, sc_time&) {
    const NvlinkExtension& ext = extension_of(p);
    arrivals.push_back(Arrival{ext.source_gpu, ext.traffic_class, ext.target_address, ext.tail_arrival});
    if (!hold[static_cast<size_t>(ext.traffic_class)]) {
      tlm::tlm_phase phase = tlm::END_REQ;
      sc_time freed = ext.tail_arrival - sc_core::sc_time_stamp();
      in->nb_transport_bw(p, phase, freed);
    }
    return tlm::TLM_ACCEPTED;
  }
  size_t count(TrafficClass cls) const {
    return static_cast<size_t>(std::count_if(arrivals.begin(), arrivals.end(),
                                             [&](const Arrival& a) { return a.cls == cls; }));
  }
};

// One chip; port p has a source (GPU p) on its input and a sink on its output. GPU g is routed
// to port g unless a test sets other routes.
struct Bench {
  PayloadPool pool;
  SwitchChip chip;
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<std::unique_ptr<NvlinkPort>> up, down;
  std::vector<std::unique_ptr<Sink>> sinks;

  Bench(const SwitchParams& params, const LinkParams& link, uint32_t sink_vcs, uint32_t sink_depth)
      : chip("chip", params, 0, 256) {
    for (uint32_t p = 0; p < params.ports; ++p) {
      const std::string n = std::to_string(p);
      sources.push_back(std::make_unique<Source>(("source_" + n).c_str(), pool, link, p));
      up.push_back(std::make_unique<NvlinkPort>(("up_" + n).c_str(), link, params.vcs_per_class,
                                                params.vc_depth_flits));
      down.push_back(std::make_unique<NvlinkPort>(("down_" + n).c_str(), link, sink_vcs, sink_depth));
      sinks.push_back(std::make_unique<Sink>(("sink_" + n).c_str()));
      sources[p]->tx.bind(up[p]->in);
      up[p]->out.bind(chip.in[p]);
      chip.out[p].bind(down[p]->in);
      down[p]->out.bind(sinks[p]->in);
      chip.set_route(p, {static_cast<uint16_t>(p)});
    }
  }
  void stream(uint32_t from, TrafficClass cls, uint32_t to, uint32_t count, uint64_t bytes) {
    for (uint32_t i = 0; i < count; ++i) {
      sources[from]->queue[static_cast<size_t>(cls)].push_back(Message{to, 0x1000 + i * 256ull, bytes});
    }
  }
};

SwitchParams chip_params(uint32_t ports, uint32_t vcs = 2, uint32_t depth = 64) {
  SwitchParams p;
  p.ports = ports;
  p.vcs_per_class = vcs;
  p.vc_depth_flits = depth;
  return p;
}

// Three inputs stream to one output (3x oversubscribed): round robin gives each the same share.
TEST(SwitchChip, RoundRobinSharesAnOutputEqually) {
  // Input buffers deep enough to cover the credit round trip, so the output never starves.
  Bench bench(chip_params(4, 1, 512), test::exact_link(), 8, 256);
  constexpr uint32_t kMessages = 60;
  for (uint32_t s = 0; s < 3; ++s) bench.stream(s, TrafficClass::request, 3, kMessages, 256);
  sc_core::sc_start(sc_time(1, sc_core::SC_MS));

  const auto& arrivals = bench.sinks[3]->arrivals;
  ASSERT_EQ(arrivals.size(), 3 * kMessages);
  // Every prefix of the output's sequence: shares within one message of each other.
  std::map<uint32_t, int> share;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    share[arrivals[i].source]++;
    if (i < 2) continue;
    int lo = kMessages, hi = 0;
    for (uint32_t s = 0; s < 3; ++s) {
      lo = std::min(lo, share[s]);
      hi = std::max(hi, share[s]);
    }
    ASSERT_LE(hi - lo, 1) << "after " << i + 1 << " messages at the output";
  }
  // The output never idled: 180 messages back to back at 17 ns each after the first arrival.
  EXPECT_EQ(arrivals.back().tail - arrivals.front().tail, sc_time(17.0 * (3 * kMessages - 1), SC_NS));
  EXPECT_EQ(bench.chip.stats().forwarded[0], 3 * kMessages);
  EXPECT_EQ(bench.chip.buffered_messages(), 0u);
}

// With several VCs per input, every input still gets a third of the output over the run.
TEST(SwitchChip, SharesStayEqualWithSeveralVcsPerInput) {
  Bench bench(chip_params(4, 4, 64), test::exact_link(), 8, 256);
  constexpr uint32_t kMessages = 90;
  for (uint32_t s = 0; s < 3; ++s) bench.stream(s, TrafficClass::request, 3, kMessages, 256);
  sc_core::sc_start(sc_time(1, sc_core::SC_MS));
  const auto& arrivals = bench.sinks[3]->arrivals;
  ASSERT_EQ(arrivals.size(), 3 * kMessages);
  // While all three still stream (the first two thirds), shares stay within a VC's burst.
  std::map<uint32_t, int> share;
  for (size_t i = 0; i < 2 * kMessages; ++i) share[arrivals[i].source]++;
  for (uint32_t s = 0; s < 3; ++s) EXPECT_NEAR(share[s], 2 * kMessages / 3, 4) << "source " << s;
}

// The sink at port 3 never frees request buffers: requests towards it jam (downstream credits,
// then the chip's input VCs, then the sources' links), yet responses on the same inputs, the
// same output and the same links all get through.
TEST(SwitchChip, JammedRequestsDoNotBlockResponses) {
  Bench bench(chip_params(4, 2, 64), test::exact_link(), 2, 64);
  bench.sinks[3]->hold[0] = true;
  bench.stream(0, TrafficClass::request, 3, 100, 256);
  bench.stream(1, TrafficClass::request, 3, 100, 256);
  bench.stream(0, TrafficClass::response, 3, 20, 256);
  bench.stream(2, TrafficClass::response, 3, 20, 256);
  sc_core::sc_start(sc_time(1, sc_core::SC_MS));

  const Sink& sink = *bench.sinks[3];
  // Requests: only what the sink's buffers hold (2 VCs x 3 messages of 17 flits).
  EXPECT_EQ(sink.count(TrafficClass::request), 6u);
  EXPECT_GT(bench.chip.buffered_messages(), 0u);
  // Responses: all of them.
  EXPECT_EQ(sink.count(TrafficClass::response), 40u);
  std::ostringstream os;
  const uint64_t listed = bench.chip.describe_outstanding(os, 1000);
  EXPECT_EQ(listed, bench.chip.buffered_messages());
  EXPECT_NE(os.str().find("request"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("response"), std::string::npos) << os.str();
}

// A destination reached over four ports: each message leaves through the port its address hashes
// to, and the traffic spreads over all four.
TEST(SwitchChip, RouteWithSeveralPortsSpreadsByAddress) {
  Bench bench(chip_params(6, 2, 64), test::exact_link(), 8, 256);
  const std::vector<uint16_t> ports{2, 3, 4, 5};
  bench.chip.set_route(1, ports);
  EXPECT_EQ(bench.chip.route(1), ports);
  constexpr uint32_t kMessages = 400;
  bench.stream(0, TrafficClass::request, 1, kMessages, 64);
  sc_core::sc_start(sc_time(1, sc_core::SC_MS));

  size_t total = 0;
  for (uint16_t p : {0, 1}) EXPECT_TRUE(bench.sinks[p]->arrivals.empty()) << "port " << p;
  for (size_t i = 0; i < ports.size(); ++i) {
    const auto& arrivals = bench.sinks[ports[i]]->arrivals;
    total += arrivals.size();
    EXPECT_GT(arrivals.size(), kMessages / 8) << "port " << ports[i] << " is barely used";
    for (const Sink::Arrival& a : arrivals) {
      ASSERT_EQ(interleave_way(a.address, 256, 4), i) << "address 0x" << std::hex << a.address;
    }
  }
  EXPECT_EQ(total, kMessages);
}

TEST(SwitchChipDeathTest, MessageWithoutRouteIsFatal) {
  EXPECT_DEATH(
      {
        // A fatal report must end the process here (the test handler would only record it).
        sc_core::sc_report_handler::set_handler([](const sc_core::sc_report& r, const sc_core::sc_actions&) {
          if (r.get_severity() >= sc_core::SC_ERROR) {
            std::cerr << r.get_msg() << std::endl;
            std::abort();
          }
        });
        Bench bench(chip_params(2, 2, 64), test::exact_link(), 8, 256);
        bench.stream(0, TrafficClass::request, 7, 1, 64);
        sc_core::sc_start(sc_time(1, sc_core::SC_MS));
      },
      "no route to GPU 7");
}

}  // namespace
}  // namespace nvsvp::model

namespace nvsvp::platform {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

// On the platform: GPUs 0 and 1 flood GPU 2 with writes (its down link is 2x oversubscribed),
// while GPU 2 reads from GPU 0. The read's request and its response (response class) share the
// congested links and switch ports with the writes, yet the read completes long before them.
TEST(SwitchChip, ReadResponsesPassCongestedWrites) {
  Platform platform("platform", test::small_platform(3, {1}));
  TlmHal hal(platform);
  constexpr uint32_t kWrites = 200;
  constexpr uint64_t kBytes = 4096;  // 272 flits: 272 ns on the wire
  sc_time read_done, writes_done;
  FirmwareHost host("firmware", [&] {
    test::bring_up_switches(hal, platform);
    const uint8_t pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    hal.memory(0).write(0x9000, pattern, 16);
    for (uint32_t g = 0; g < 2; ++g) {
      hw::WorkSequence s;
      for (uint32_t i = 0; i < kWrites; ++i) s.tasks.push_back(hw::Task::send(0, 2, 0, i * kBytes, kBytes, 0));
      hal.submit(g, std::move(s));
    }
    hw::WorkSequence reader;
    reader.phase_names = {"reads", "writes"};
    reader.tasks.push_back(hw::Task::delay(0, 2000.0));  // the writes are in full flow by then
    reader.tasks.push_back(hw::Task::read(0, 0, 0x9000, 0x1000'0000, kBytes, 1));
    reader.tasks.push_back(hw::Task::wait(0, 1, 1));
    reader.tasks.push_back(hw::Task::wait(1, 0, 2 * kWrites));
    hal.submit(2, std::move(reader));
    hal.wait_all_finished();
    read_done = platform.gpu(2).phase_times()[0].last_end;
    writes_done = platform.gpu(2).phase_times()[1].last_end;
  });
  sc_core::sc_start(sc_time(10, sc_core::SC_MS));
  ASSERT_TRUE(host.done());
  uint8_t got[16];
  platform.gpu(2).memory().read(0x1000'0000, got, 16);
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[15], 16);
  // The writes need 400 x 272 ns on GPU 2's link; the read, started at 2 us, needs a few hops,
  // sharing each congested link half and half with the writes.
  EXPECT_GT(writes_done, sc_time(2 * kWrites * 272, SC_NS));
  EXPECT_LT(read_done, sc_time(2000 + 4 * 100 + 4 * 272 + 2 * 272, SC_NS)) << "read done at " << read_done;
  EXPECT_EQ(platform.link(LinkDirection::gpu_to_switch, 0, 0).stats().messages[1], 1u);
  EXPECT_EQ(platform.link(LinkDirection::switch_to_gpu, 2, 0).stats().messages[1], 1u);
}

// Each port's reduction unit comes from the backend the platform names (here "both": the model
// and the Verilated RTL in lockstep) and reduces: 1.5 + 2.25 = 3.75 in every f32 lane.
TEST(SwitchReduction, PortUnitsUseTheConfiguredBackend) {
  PlatformSpec spec = test::small_platform(2, {1});
  spec.switch_chip.reduction_backend = "both";
  Platform platform("platform", spec);
  reduction::ReductionUnit& unit = platform.chip(0).reduction_unit(1);
  EXPECT_EQ(unit.backend_name(), "both");
  EXPECT_EQ(&unit, &platform.chip(0).reduction_unit(1));  // one unit per port, kept
  EXPECT_NE(&unit, &platform.chip(0).reduction_unit(0));

  auto f32_beat = [](float value) {
    reduction::Beat beat{};
    for (int lane = 0; lane < 4; ++lane) std::memcpy(beat.data() + 4 * lane, &value, 4);
    return beat;
  };
  std::vector<reduction::Command> commands(3);
  commands[0].kind = reduction::Command::Kind::open_context;
  commands[0].open = reduction::OpenContext{5, 2, reduction::ReduceOp::add, reduction::ReduceType::f32, 1};
  commands[1].contribution = reduction::Contribution{5, 0, f32_beat(1.5f)};
  commands[2].contribution = reduction::Contribution{5, 0, f32_beat(2.25f)};
  std::vector<reduction::ResultBeat> results;
  unit.process(commands, results);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].partial);
  EXPECT_EQ(results[0].contributions, 2u);
  EXPECT_EQ(results[0].data, f32_beat(3.75f));
}

}  // namespace
}  // namespace nvsvp::platform
