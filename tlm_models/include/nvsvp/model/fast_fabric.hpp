// The fast fabric (simulation.fabric: fast, docs/models/fabric_engine.md): the packet fabric's
// packets (docs/models/packet_fabric.md) timed without an event per packet. A GPU hands it each
// message whole, cut into the packets the packet fabric would send, each on the link its own
// address interleaves to (GpuLinkEngines::send_to_fast_fabric, the packet fabric's own cutting).
// What a message puts on one GPU link is a share: a link sends its shares from a queue per
// executor stream and one for responses, round robin among those ready as the link engines serve
// theirs, each once the link is free and the switch input it feeds has room (credits in one VC of
// its class per packet), as many of its packets back to back as find room, the rest as room comes
// back. The packets that start together for one output of the chip (the chip's own route lookup
// of each packet's address) are a run: each output takes one packet at a time from the runs that
// have reached it, by its arbiter, cut through, and each packet's buffer space goes back to its
// link a hop after it left. A message lands with its last packet. A packet is the unit of every count, of
// arbitration and of credits.
//
// Time: one SystemC method process serves the fabric in its own order of events. At a time `now`
// nothing handed over later can reach a switch before now + one hop, so everything due by then
// (runs arriving, links starting) is decided at once, in time order; a link picks its next share
// at its time and may start it up to a hop later still (back to back, or when the room it needs is
// known to come back: from runs already decided); the process wakes when the
// first thing is due and so about once per hop's latency of traffic, not once per packet.
//
// It moves unicast writes (sends and chunks), reads with their responses, and multimem stores and
// reds: the chip a packet reaches makes a copy of it for every member of its group, each queued
// at its output as the chip's own (one input per output, the packet fabric's queue of generated
// messages), the packet's buffer space held until its last copy has left, and each member's copy
// of the message landing with its last packet. A request a chip refuses (across partitions, a
// multicast without its group) gets a header-only error response per packet from the chip's own
// queue, gathered into one message at its issuer. Anything else ends the run with a message naming
// it. The GPUs' receive buffers are taken as deep enough (a GPU drains its input at line rate, so
// their credits never run out on the packet fabric either).
#pragma once

#include <cstdint>
#include <deque>
#include <ostream>
#include <queue>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/model/gpu.hpp"
#include "nvsvp/model/gpu_link_engines.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/slot_pool.hpp"
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

  void catch_up() override { decide(current_time().value()); }
  void send_message(uint32_t gpu, uint32_t stream, tlm::tlm_generic_payload& message, const FastPacket* packets,
                    uint32_t count) override;

  // Messages handed over and not yet landed.
  uint64_t messages_in_flight() const { return in_flight_; }
  // Lists up to `max_lines` of them (source, destination, what is left of them), then the links
  // waiting for buffer space; returns how many messages there are.
  uint64_t describe_outstanding(std::ostream& os, uint64_t max_lines) const;

 private:
  static constexpr uint64_t kNever = ~0ull;
  static constexpr uint32_t kNoRun = ~0u;
  static constexpr uint32_t kNoMessage = ~0u;
  static constexpr uint32_t kNoHeld = ~0u;  // a refused packet's error response holds no room

  // One message's packets from one GPU link to one output of the chip the link reaches.
  struct Run {
    uint64_t first_offset_ps = 0;   // its first packet's start, after its share's start
    uint64_t last_offset_ps = 0;    // its last packet's
    uint64_t arrival_ps = 0;        // its first packet's head at the chip (set when its share starts)
    uint64_t serialization_ps = 0;  // its packets' time on a link, each rounded as a port rounds it
    uint64_t replay_ps = 0;         // what bit errors on its output link added (replays)
    uint64_t payload_bytes = 0;
    uint32_t returned_flits = 0;  // buffer space given back so far (a packet's as it leaves)
    uint32_t message = 0;
    uint32_t packets = 0;
    uint32_t wire_flits = 0;
    uint32_t last_packet_flits = 0;
    uint32_t link = 0;  // the GPU link it came by (gpu * links + link)
    uint32_t chip = 0;
    bool copy = false;  // the chip's own message (a multicast's copy, a refusal's answer), in the chip's own queue
    uint16_t output = 0;
    uint8_t traffic_class = 0;
    bool first_of_message = false;  // holds the message's packet 0
    bool traced = false;            // its output link is traced: its packets in traced_packets_
    // At its output: the run after it from its input, packets sent so far, their summed and
    // longest waits from arrival to start.
    uint32_t next_in_queue = ~0u;
    uint32_t sent = 0;
    uint64_t queueing_ps = 0;
    uint64_t max_wait_ps = 0;
  };
  // One output of a chip: its schedule is decided up to `clock_ps` (its link free from then), and
  // the inputs with runs for it, each a queue in order of arrival; the output takes a packet at a
  // time from them by its arbiter (round robin by input within a class, the classes in turn, or
  // the oldest head).
  struct InputQueue {
    // (gpu * links + link) * 2 + traffic class: inputs in one order across both classes; the
    // chip's own queue comes after every link (generated_input()).
    uint32_t link = 0;
    uint32_t head = 0;  // runs, linked by next_in_queue (the chip's own queue: its heap's top)
    uint32_t tail = 0;
    uint64_t head_ps = 0;  // when the head run's next packet reaches the chip (next_head, kept here to scan)
  };
  // A run in the chip's own queue at an output, a queue of packets in order of arrival: its runs
  // are kept by their next packets' arrivals (a heap; ties in the order they were queued).
  struct QueuedCopy {
    uint64_t next_ps = 0;
    uint64_t order = 0;
    uint32_t run = 0;
    bool operator<(const QueuedCopy& o) const {  // std heaps are max-heaps: the earliest on top
      return next_ps != o.next_ps ? next_ps > o.next_ps : order > o.order;
    }
  };
  struct Output {
    uint64_t clock_ps = 0;
    std::vector<InputQueue> inputs[kTrafficClasses];  // per class, by link index
    // Per class, the chip's own queue (copies, refusals' answers): its input's head is the heap's top.
    std::vector<QueuedCopy> own[kTrafficClasses];
    bool empty() const { return inputs[0].empty() && inputs[1].empty(); }
    uint32_t last_input[kTrafficClasses] = {~0u, ~0u};  // per class: the last input served
    uint32_t next_class = 0;  // the class to try first (the other crossbar after each packet)
    uint32_t version = 0;  // of its due entry: an older one is stale
    // When the runs on their way to it (their links started) arrive: until the first of them, no
    // packet but those it holds can ask for it.
    std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> coming;
  };
  // One packet of a share: its payload, wire flits and the output of the chip it leaves by.
  struct SharePacket {
    uint32_t bytes = 0;
    uint32_t wire_flits = 0;
    uint32_t index = 0;  // in its message
    uint16_t output = 0;
  };
  // A packet of a run whose output link is traced (MessageObserver::packet_sent): which of its
  // message's packets, and its size.
  struct TracedPacket {
    uint32_t index = 0;
    uint32_t wire_flits = 0;
    uint32_t bytes = 0;
  };
  // What one message puts on one GPU link: its packets in order, those from `next` on not yet
  // started (a share starts a packet at a time as the switch input's buffer space allows).
  struct Share {
    uint32_t message = 0;
    uint32_t stream = 0;  // an executor stream's, or kExecutorStreams: the responses
    uint8_t traffic_class = 0;
    uint64_t ready_ps = 0;  // handed over (a response: when its read landed)
    std::vector<SharePacket> packets;
    uint32_t next = 0;
    bool first_of_message = false;  // its packets[0] is the message's packet 0
    bool multicast = false;         // a multimem store or red: the chip copies each packet to its group
    uint32_t refusal = 0;           // the error bit the chip refuses its packets with (0: none)
    std::vector<uint64_t> addresses;  // a multicast's: each packet's multimem address
  };
  struct Message {
    tlm::tlm_generic_payload* payload = nullptr;
    uint64_t landing_ps = 0;
    uint32_t packets_left = 0;  // not yet through their output
    uint32_t packets = 0;       // all of them
    // A multicast or refused request, which lands nowhere itself: its packets not yet started;
    // a multicast's members' copies (each a message of its own, made as its first packet starts),
    // in GPU order; a refused one's error response to its issuer (the chips' refusals gathered).
    uint32_t unstarted = 0;
    std::vector<uint32_t> copies;
    uint32_t refusal = kNoMessage;
  };
  // One GPU link: its shares waiting, a queue per executor stream and one for responses served
  // round robin as the link engines serve theirs (a share's packets that start together at a time,
  // where they take a packet at a time), when it is free, and the buffer space of the switch input
  // it feeds, per class.
  static constexpr uint32_t kQueues = kExecutorStreams + 1;  // the streams', then the responses'
  // Room in a switch input's VC coming back to its link: when, how many flits, which VC.
  struct CreditReturn {
    uint64_t at_ps = 0;
    uint32_t flits = 0;
    uint32_t vc = 0;
  };
  // What a packet of a run took at its switch input: flits (at most a VC's depth) of one VC.
  struct PacketCredits {
    uint32_t flits = 0;
    uint32_t vc = 0;
  };
  // A multicast packet's room at its switch input, held until its last copy has left.
  struct HeldPacket {
    PacketCredits credits;
    uint32_t link = 0;  // the GPU link it came by
    uint32_t copies_left = 0;
    uint64_t last_left_ps = 0;  // when the last of its copies decided so far left
    uint8_t traffic_class = 0;
  };
  struct Link {
    std::deque<uint32_t> shares[kQueues];
    uint32_t waiting = 0;     // shares in all queues
    uint32_t next_stream = 0;
    uint64_t free_ps = 0;
    // Per traffic class: flits free now in each VC of the switch input, the VC to try first, what
    // comes back when (in time order), and since when the link has waited for room.
    int32_t credits[kTrafficClasses][kMaxVcsPerClass] = {};
    uint8_t next_vc[kTrafficClasses] = {0, 0};
    std::deque<CreditReturn> returns[kTrafficClasses];
    uint64_t stalled_since_ps[kTrafficClasses] = {kNever, kNever};
    uint64_t wake_ps = kNever;  // a wake already due for it
    bool stalled() const { return stalled_since_ps[0] != kNever || stalled_since_ps[1] != kNever; }
  };
  // Something due at a time (a run reaching its chip, a link to look at again): the process
  // decides it once nothing later can come before it.
  enum class DueKind : uint8_t { run, link, output };
  struct Due {
    uint64_t at_ps = 0;
    uint64_t order = 0;  // ties: the order they were made
    uint32_t index = 0;  // a run, a link (gpu * links + link), or an output (chip << 16 | port)
    uint32_t version = 0;  // an output's
    DueKind kind = DueKind::run;
    // In time order; at one time runs and links before outputs (an output decides once everything
    // reaching it then has), then in the order they were made.
    bool operator>(const Due& o) const {
      if (at_ps != o.at_ps) return at_ps > o.at_ps;
      if ((kind == DueKind::output) != (o.kind == DueKind::output)) return kind == DueKind::output;
      return order > o.order;
    }
  };

  // When the run's next packet reaches its chip: its packets arrive spread evenly from its first's
  // arrival to its last's.
  static uint64_t next_head(const Run& run) {
    if (run.sent == 0 || run.packets == 1) return run.arrival_ps;
    return run.arrival_ps + (run.last_offset_ps - run.first_offset_ps) * run.sent / (run.packets - 1);
  }
  // The wire time of `flits`, rounded to the picosecond as NvlinkPort rounds it.
  uint64_t serialization_ps(uint32_t flits) const { return (flits * flit_time_fs_ + 500) / 1000; }
  void push_due(const Due& due);
  // The error bit the chip at the link's end refuses a request with across partitions (0: none).
  uint32_t partition_refusal(uint32_t link_index, const NvlinkExtension& ext) const;
  // The error bit `chip` refuses a multicast at `address` with, arriving on `port` (0: none, and
  // `group` its group), as MultimemEngine::accept_static checks it.
  uint32_t multicast_refusal(uint32_t chip, uint32_t port, uint64_t address, const NvlinkExtension& ext,
                             const MulticastGroup*& group) const;
  // A record for `payload` (a reference already taken), in flight: landing with its `packets`,
  // or, with `unstarted` > 0, a request that lands nowhere itself.
  uint32_t open_message(tlm::tlm_generic_payload& payload, uint32_t packets, uint32_t unstarted);
  // Every member's copy of multicast `message` (its record's copies), each to land as a message.
  void make_copies(uint32_t message, const MulticastGroup& group);
  // The error response refused request `message` gets (its record's refusal), as the issuer
  // gathers the chips' refusals of its packets: one message, landing with the last.
  void make_refusal(uint32_t message);
  // Packet `k` of a refused share, started `offset_ps` after `start_ps`: refused by its chip.
  void refuse_packet(uint32_t link_index, const Share& share, uint32_t k, const PacketCredits& credits,
                     uint64_t start_ps, uint64_t offset_ps);
  // The queue id of the chip's own queue at an output, after every GPU link's.
  uint32_t generated_input(uint32_t traffic_class) const {
    return static_cast<uint32_t>(links_.size()) * kTrafficClasses + traffic_class;
  }
  // The run of the packets starting now for (chip, `output`), taken on first use.
  uint32_t run_for(uint16_t output, uint32_t link_index, uint8_t traffic_class, uint32_t message, bool copy,
                   uint64_t arrival_ps, uint64_t offset_ps);
  // A copy of a held packet left at `left_ps`: with its last, the packet's room goes back.
  void copy_left(uint32_t held, uint64_t left_ps);
  // Starts link `index`'s shares that are ready now, now or by `horizon_ps` (back to back behind
  // the one it sends, or when room known to come back lets it); asks to be looked at again when
  // the next one could start.
  void advance_link(uint32_t index, uint64_t horizon_ps);
  // Link `index` is looked at again at `at_ps` (a due of its own, unless one is due by then).
  void look_at_link_again(uint32_t index, uint64_t at_ps);
  // Packet `packet` of a share, starting `offset_ps` after it, joins run `run_index`.
  void add_to_run(uint32_t run_index, const SharePacket& packet, uint64_t offset_ps, bool message_first);
  // Multicast packet `k` of the share, which took `credits`, reaches its chip at `arrival_ps`: a
  // copy for every member joins the run for the member's output.
  void copy_to_members(uint32_t link_index, const Share& share, uint32_t k, const PacketCredits& credits,
                       uint64_t arrival_ps, uint64_t offset_ps);
  // Starts the share's next packets at `start_ps`, as many as the switch input's buffer space
  // takes (the first is known to fit); returns whether the share is through.
  bool start_packets(uint32_t link_index, uint32_t share_index, uint64_t start_ps);
  // Room of traffic class `c` coming back to `link`, in time order among what is known.
  static void return_credits(Link& link, uint32_t c, const CreditReturn& entry);
  // The buffer space of traffic class `c` back at `link` by `until_ps`, into its credits.
  static void take_returns(Link& link, uint32_t c, uint64_t until_ps);
  // A VC of class `c` (of `vcs`) with room for `need` flits now, round robin from the link's next;
  // -1 if none (NvlinkPort::allocate_vc).
  static int allocate_vc(const Link& link, uint32_t c, uint32_t vcs, int32_t need);
  // Decides everything due by a hop from `now`, in time order.
  void decide(uint64_t now);
  // The method process: decides, then wakes when the next due is.
  void serve();
  // The process runs again by `at_ps` (now if that has passed).
  void wake_no_later_than(uint64_t at_ps);
  // A run reached its output: the output's schedule up to its arrival first, then it queues.
  void arrive(uint32_t run_index);
  // Decides output (chip, port)'s packets that start by `until_ps`, one at a time among its inputs.
  void advance_output(uint32_t chip, uint16_t port, uint64_t until_ps);
  // Its arbiter's choice: round robin (the class whose turn it is first, then the other), or the
  // earliest head; an input's queue of runs and its index there.
  std::pair<std::vector<InputQueue>*, size_t> choose_input(Output& output, bool oldest_first);
  // The output's next packet could start when its due says (none left: no due).
  void schedule_output(uint32_t chip, uint16_t port);
  // The run's last packet left at `end_ps`.
  void finish_run(uint32_t run_index, uint64_t end_ps);
  void land(uint32_t slot);

  uint64_t latency_ps_;
  uint64_t flit_time_fs_;
  uint64_t head_flit_ps_;
  uint32_t header_flits_;  // a packet's header: an error response's whole size
  uint64_t horizon_ps_ = 0;  // everything due by this time is decided
  std::vector<SwitchChip*> chips_;
  std::vector<uint64_t> chip_latency_ps_;              // [chip]: its internal latency
  std::vector<uint32_t> chip_vcs_;                     // [chip]: an input's VCs per class
  std::vector<uint32_t> chip_vc_depth_;                // [chip]: flits per VC
  std::vector<std::vector<Output>> output_state_;      // [chip][port]
  std::vector<uint8_t> chip_oldest_first_;             // [chip]: its arbiter takes the oldest head
  std::vector<std::vector<NvlinkPort*>> outputs_;      // [chip][port]: its link towards the GPU
  std::vector<Gpu*> gpus_;
  uint32_t links_per_gpu_ = 0;
  std::vector<LinkWiring> wiring_;  // [gpu * links + link]
  std::vector<Link> links_;         // [gpu * links + link]
  SlotPool<Run> runs_;
  std::vector<std::vector<TracedPacket>> traced_packets_;  // [run]: its packets, if its output link is traced
  std::vector<std::vector<PacketCredits>> run_credits_;    // [run]: what each of its packets took
  std::vector<std::vector<uint32_t>> run_held_;          // [copy run]: each packet's held packet
  SlotPool<HeldPacket> held_;
  SlotPool<Share> shares_;
  SlotPool<Message> messages_;
  PayloadPool copy_pool_;  // the members' copies of multicasts
  // start_packets' scratch: per output of the chip, its run (or kNoRun), and the outputs used.
  std::vector<uint32_t> run_of_output_;
  std::vector<uint16_t> outputs_used_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> link_due_;  // links to look at again, each at its time
  uint64_t next_order_ = 0;
  uint64_t next_copy_order_ = 0;  // QueuedCopy::order
  uint64_t in_flight_ = 0;
  std::vector<uint32_t> share_of_link_;  // send_message's scratch: per link of the GPU, its share (or kNoShare)
  std::vector<uint32_t> links_used_;
  sc_core::sc_event wake_;
  uint64_t wake_at_ps_ = kNever;  // the process's pending wake
};

}  // namespace nvsvp::model
