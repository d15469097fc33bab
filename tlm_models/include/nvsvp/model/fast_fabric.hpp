// The fast fabric (simulation.fabric: fast, docs/models/fabric_engine.md): the packet fabric's
// packets (docs/models/packet_fabric.md) timed without an event per packet. A GPU hands it each
// message whole, cut into the packets the packet fabric would send, each on the link its own
// address interleaves to (GpuLinkEngines::send_to_fast_fabric, the packet fabric's own cutting).
// The fabric then works out, by arithmetic, when each packet leaves its GPU link (the link's
// packets back to back, messages in the order they were handed over), when its head reaches its
// switch chip, which output of the chip it leaves by (the chip's own route lookup), when it
// leaves (each output serving what reaches it in order of arrival, cut through) and when its tail
// lands; the message lands with its last packet. A message's packets from one link to one output
// travel as one run: a run is the unit of arbitration at an output, a packet the unit of every
// count. One SystemC method process serves the outputs, waking once per stretch of
// a link's latency rather than per packet.
//
// It moves unicast writes (sends and chunks); anything else ends the run with a message naming
// it. It keeps no credits: switch inputs and GPU receive buffers are taken as deep enough, and
// an input feeds its outputs at link rate (docs/models/fabric_engine.md says what that costs).
#pragma once

#include <cstdint>
#include <ostream>
#include <queue>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/model/gpu.hpp"
#include "nvsvp/model/gpu_link_engines.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/switch_chip.hpp"

namespace nvsvp::model {

class FastFabric final : public sc_core::sc_module, public FastFabricSink {
 public:
  // GPU link `link` of a GPU: the chip and port it reaches, and its port each way.
  struct LinkWiring {
    uint32_t chip = 0;
    uint16_t port = 0;
    NvlinkPort* up = nullptr;    // GPU to switch
    NvlinkPort* down = nullptr;  // switch to GPU
  };

  SC_HAS_PROCESS(FastFabric);
  FastFabric(const sc_core::sc_module_name& name, const LinkParams& link);

  // During elaboration: every chip (in order of its id), then every GPU (in order of its id) with
  // its links' wiring.
  void attach_chip(SwitchChip& chip);
  void attach_gpu(Gpu& gpu, std::vector<LinkWiring> links);

  void send_message(uint32_t gpu, tlm::tlm_generic_payload& message, const FastPacket* packets,
                    uint32_t count) override;

  // Messages handed over and not yet landed.
  uint64_t messages_in_flight() const { return in_flight_; }
  // Lists up to `max_lines` of them (source, destination, runs still to leave the switch);
  // returns how many there are.
  uint64_t describe_outstanding(std::ostream& os, uint64_t max_lines) const;

 private:
  // One message's consecutive packets from one GPU link to one switch output.
  struct Run {
    uint64_t head_arrival_ps = 0;       // its first packet's head at the chip (ready to leave)
    uint64_t last_head_arrival_ps = 0;  // its last packet's
    uint64_t order = 0;                 // ties between runs ready at once: the order they were made
    uint64_t serialization_ps = 0;      // its packets' time on the output link, each rounded as a port rounds it
    uint64_t payload_bytes = 0;
    uint32_t message = 0;  // the message's slot
    uint32_t chip = 0;
    uint32_t packets = 0;
    uint32_t wire_flits = 0;
    uint32_t last_packet_flits = 0;
    uint16_t output = 0;
    bool first_of_message = false;  // holds the message's packet 0
  };
  struct LaterRun {
    bool operator()(const Run& a, const Run& b) const {
      return a.head_arrival_ps != b.head_arrival_ps ? a.head_arrival_ps > b.head_arrival_ps : a.order > b.order;
    }
  };
  struct Message {
    tlm::tlm_generic_payload* payload = nullptr;
    uint64_t landing_ps = 0;
    uint32_t runs_left = 0;
    uint32_t source = 0;
    uint32_t destination = 0;
  };
  // What one message puts on one of its GPU's links.
  struct LinkShare {
    uint64_t start_ps = 0;
    uint64_t busy_ps = 0;  // its packets' serialization so far
    uint64_t queueing_ps = 0;   // its packets' waits, from when the message was handed over to their start
    uint64_t last_wait_ps = 0;  // the last packet's (the longest)
    uint64_t payload_bytes = 0;
    uint32_t packets = 0;
    uint32_t wire_flits = 0;
    uint32_t runs = 0;  // its runs (one per output its packets leave by), indexes into runs_
    uint32_t run_index[8] = {};
  };
  static constexpr uint32_t kMaxRunsPerLink = 8;  // outputs towards one GPU on one chip

  // The wire time of `flits`, rounded to the picosecond as NvlinkPort rounds it.
  uint64_t serialization_ps(uint32_t flits) const { return (flits * flit_time_fs_ + 500) / 1000; }
  // The run of `share`'s packets to `output` of `chip`, made if the link has none yet.
  Run& run_for(LinkShare& share, uint32_t chip, uint16_t output, uint32_t message);
  // Sends every run ready by `horizon_ps` (the method process).
  void serve();
  void forward(const Run& run);
  void land(uint32_t slot);

  uint64_t latency_ps_;
  uint64_t flit_time_fs_;
  uint64_t head_flit_ps_;
  std::vector<SwitchChip*> chips_;
  std::vector<uint64_t> chip_latency_ps_;           // [chip]: its internal latency
  std::vector<std::vector<uint64_t>> output_free_ps_;  // [chip][port]: when its link is free
  std::vector<std::vector<NvlinkPort*>> outputs_;       // [chip][port]: its link towards the GPU
  std::vector<Gpu*> gpus_;
  std::vector<std::vector<LinkWiring>> links_;  // [gpu][link]
  std::vector<std::vector<uint64_t>> link_free_ps_;  // [gpu][link]: when the GPU link is free
  std::priority_queue<Run, std::vector<Run>, LaterRun> pending_;
  std::vector<Message> messages_;
  std::vector<uint32_t> free_slots_;
  uint64_t in_flight_ = 0;
  uint64_t next_order_ = 0;
  // send_message's scratch: per link of the sending GPU, and the runs being made.
  std::vector<LinkShare> shares_;
  std::vector<uint32_t> links_used_;
  std::vector<Run> runs_;
  sc_core::sc_event wake_;
  uint64_t wake_at_ps_ = ~0ull;  // the pending wake, if any
};

}  // namespace nvsvp::model
