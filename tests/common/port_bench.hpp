// A bench of one NvlinkPort for the simulating tests: a driver thread that sends through it,
// a sink that records every arrival and returns credits when told, wired as the platform wires
// a link.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "nvsvp/model/nvlink_port.hpp"

namespace nvsvp::test {

using model::LinkParams;
using model::NvlinkExtension;
using model::NvlinkPort;
using model::NvlinkProtocolTypes;
using model::NvlinkTxIf;
using model::Opcode;
using model::PayloadPool;
using model::TrafficClass;
using model::WakeScheduler;
using model::extension_of;
using sc_core::sc_time;

// Drives one port: its body runs in a thread with access to the port through `tx`.
struct Driver : sc_core::sc_module {
  sc_core::sc_port<NvlinkTxIf> tx;
  sc_core::sc_event wake;  // notified when the port wakes the sender (awaited credits landed)
  WakeScheduler scheduler{"credit_wake", 1, [this](uint32_t) { wake.notify(sc_core::SC_ZERO_TIME); }};
  PayloadPool pool;
  LinkParams link;  // for the messages' wire_flits
  std::function<void(Driver&)> body;

  Driver(const sc_core::sc_module_name& name, std::function<void(Driver&)> b) : sc_module(name), body(std::move(b)) {
    SC_HAS_PROCESS(Driver);
    SC_THREAD(run);
  }
  void end_of_elaboration() override { tx->set_sender(&scheduler, 0); }
  void run() { body(*this); }

  // A message of `bytes` payload on `vc`, handed to the port now.
  tlm::tlm_generic_payload& send(uint64_t bytes, int vc, TrafficClass cls = TrafficClass::request) {
    tlm::tlm_generic_payload& p = pool.acquire();
    NvlinkExtension& ext = extension_of(p);
    ext.traffic_class = cls;
    ext.opcode = cls == TrafficClass::request ? Opcode::write : Opcode::read_response;
    ext.vc = static_cast<uint16_t>(vc);
    ext.payload_bytes = bytes;
    ext.wire_flits = link.wire_flits(bytes);
    tx->send(p);
    p.release();
    return p;
  }
};

// Records every message; returns credits only when asked.
struct Sink : sc_core::sc_module {
  struct Arrival {
    tlm::tlm_generic_payload* payload;
    sc_time head;
    sc_time tail;
    uint16_t vc;
    uint32_t flits;
  };
  tlm_utils::simple_target_socket<Sink, 32, NvlinkProtocolTypes> in;
  std::vector<Arrival> arrivals;

  explicit Sink(const sc_core::sc_module_name& name) : sc_module(name), in("in") {
    in.register_nb_transport_fw(this, &Sink::nb_transport_fw);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase, sc_time& delay) {
    EXPECT_EQ(phase, tlm::BEGIN_REQ);
    const NvlinkExtension& ext = extension_of(p);
    arrivals.push_back(Arrival{&p, sc_core::sc_time_stamp() + delay, ext.tail_arrival, ext.vc, ext.wire_flits});
    return tlm::TLM_ACCEPTED;
  }
  // Frees the buffer of arrival `i` `delay` from now.
  void return_credits(size_t i, const sc_time& delay) {
    tlm::tlm_phase phase = tlm::END_REQ;
    sc_time d = delay;
    EXPECT_EQ(in->nb_transport_bw(*arrivals.at(i).payload, phase, d), tlm::TLM_ACCEPTED);
  }
};

// Port + driver + sink, wired the way the platform wires them.
struct Bench {
  NvlinkPort port;
  Driver driver;
  Sink sink;
  Bench(const LinkParams& link, uint32_t vcs, uint32_t depth, std::function<void(Driver&)> body)
      : port("port", link, vcs, depth), driver("driver", std::move(body)), sink("sink") {
    driver.link = link;
    driver.tx.bind(port.in);
    port.out.bind(sink.in);
  }
};

}  // namespace nvsvp::test
