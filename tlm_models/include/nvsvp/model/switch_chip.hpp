// One NVSwitch chip, as the module that owns its sockets and wires its hardware blocks:
//   - the input stage (switch_input_stage.hpp): per-VC input buffers, credit returns, route
//     lookup, and a queue per output for the messages the chip makes itself;
//   - two crossbars (switch_crossbar.hpp), one for requests and one for responses, each with its
//     per-output requests and arbiters and its inputs' transfer slots, so that requests and
//     responses never block each other inside the chip;
//   - the output stage (switch_output_stage.hpp): the outputs' NVLink ports and the link-level
//     round robin between the two crossbars;
//   - the multimem engine (multimem_engine.hpp): replication, reduction and dynamic trimming;
//   - the register block (SwitchCsr: the route table, the multicast group table, the counters
//     and the error status), which firmware reaches through the `csr` socket (docs/registers.md).
//
// Messages cut through: a message may leave once its head has arrived (plus the internal
// latency). Event-driven: an output is evaluated when its link goes idle, when credits return or
// when a new head message asks for it; nothing is clocked. The per-message path (nb_transport_fw,
// serve_output, forward, request_output) is here and calls the blocks' inline members directly.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "nvsvp/model/component_log.hpp"
#include "nvsvp/model/multimem_engine.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/nvlink_target_socket.hpp"
#include "nvsvp/model/switch_crossbar.hpp"
#include "nvsvp/model/switch_csr.hpp"
#include "nvsvp/model/switch_input_stage.hpp"
#include "nvsvp/model/switch_output_stage.hpp"
#include "nvsvp/model/switch_params.hpp"
#include "nvsvp/model/wake_scheduler.hpp"
#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::model {

struct SwitchStats {
  uint64_t forwarded[kTrafficClasses] = {0, 0};  // the register block's forwarding counters
  uint64_t forwarded_flits[kTrafficClasses] = {0, 0};
  uint64_t peak_buffered_messages = 0;
  // Multimem (the register block's counters): member copies made for multimem_store /
  // multimem_red / multimem_ld_reduce and target copies for the dynamic operations, completed
  // ld_reduce results, evictions (beats the reduction units evicted, and partial sums passed on
  // because the port's reduction buffer was full), and refused multimem requests.
  uint64_t replications = 0;
  uint64_t reductions = 0;
  uint64_t evictions = 0;
  uint64_t access_errors = 0;
  uint64_t partition_errors = 0;  // requests refused for crossing partitions
  uint64_t parked_loads = 0;  // ld_reduce requests that waited for a free reduction context
  uint64_t evicted_partial_bytes = 0;  // payload of the partial sums passed on (extra traffic)
  uint64_t evicted_reductions = 0;     // ld_reduce results with at least one partial passed on
  uint64_t peak_reduction_buffer_bytes = 0;  // most bytes one port's reduction buffer held
};

// Where a switch chip hands the operations it loses (it died, or firmware flushed it): each goes
// back to the GPU that issued it, which holds it until firmware has it re-issued
// (docs/models/switch_chip.md#link-down-chip-down-and-flush). The sink takes its own reference.
class LostOperationSink {
 public:
  virtual ~LostOperationSink() = default;
  // A message the chip had not delivered, to be sent again as it is by its source GPU.
  virtual void message_lost(tlm::tlm_generic_payload& message) = 0;
  // A load (multimem or dynamic ld_reduce request) whose result will never come;
  // `members_read` has bit g set for each GPU g its member reads had already reached (they
  // arrived, were answered, and count for nothing: the load goes again with new ones).
  virtual void load_lost(tlm::tlm_generic_payload& request, const hw::GpuMask& members_read) = 0;
};

// What a chip lost, counted as it handed it over.
struct SwitchLossStats {
  uint64_t messages_lost = 0;     // handed to message_lost
  uint64_t loads_lost = 0;        // handed to load_lost
  uint64_t messages_dropped = 0;  // member reads and partial sums of the lost loads (their loads go again)
};

class SwitchChip : public sc_core::sc_module, private NvlinkReceiver {
 public:
  // The identity figures chip `chip_id` of `params` reports in its registers.
  static SwitchCsrConfig csr_config(const SwitchParams& params, uint32_t chip_id);

  sc_core::sc_vector<NvlinkTargetSocket> in;               // one per port, from the GPU side
  sc_core::sc_vector<sc_core::sc_port<NvlinkTxIf>> out;    // one per port, to the GPU side
  // The register block: TLM-2.0 base protocol, b_transport only, 4-byte accesses. Optional, so
  // a bench without a management bus may leave it unbound.
  tlm_utils::simple_target_socket_optional<SwitchChip> csr;

  // `interleave_bytes`: granule of address interleaving over a destination's ports.
  // `link`: the links' packet format, which sizes the messages the chip makes (member copies,
  // reduced results, error responses).
  SwitchChip(const sc_core::sc_module_name& name, const SwitchParams& params, uint32_t chip_id,
             uint32_t interleave_bytes, const LinkParams& link = LinkParams{});

  // Route table: messages for `gpu` leave through one of `ports`, chosen by address. set_route
  // writes the register block's entry directly (a shortcut for benches; firmware programs the
  // ROUTE registers); the ports are kept ascending.
  void set_route(uint32_t gpu, const std::vector<uint16_t>& ports);
  const std::vector<uint16_t>& route(uint32_t gpu) const { return registers_.route_ports(gpu); }

  // The register block's state, for the datapath and for tests.
  SwitchCsr& registers() { return registers_; }
  const SwitchCsr& registers() const { return registers_; }
  // The interrupt line: high while an enabled error is pending. The event is notified (one delta
  // later) whenever the line changes.
  bool irq() const { return !dead_ && registers_.interrupt_line(); }
  const sc_core::sc_event& irq_changed() const { return irq_changed_; }

  // Counts the link errors of the GPU->switch link feeding input `port` (its CRC failures and
  // credit resynchronisations) in the port's registers; the chip's own output links are counted
  // from the end of elaboration.
  void watch_input_link(uint32_t port, NvlinkPort& link) { link.set_fault_listener(&link_errors_, port); }

  // --- Link down, chip down, flush (docs/models/switch_chip.md#link-down-chip-down-and-flush) ---
  // The link of `port` went down (either direction) or came back up: LINK_DOWN_PORTS and
  // error_link_state. An output whose link is down sends nothing; firmware routes around it.
  void set_port_link_down(uint16_t port, bool down) { registers_.set_port_link_down(port, down); }
  // Who gets what the chip loses (the platform); without one, losing anything is fatal.
  void set_lost_operation_sink(LostOperationSink* sink) { lost_sink_ = sink; }
  // The chip dies now: everything it holds is lost (handed to the sink), its interrupt line
  // falls, its registers read kDeadChipRead and ignore writes, and no message may reach it.
  void fail();
  bool dead() const { return dead_; }
  const SwitchLossStats& loss_stats() const { return loss_stats_; }

  uint32_t chip_id() const { return chip_id_; }
  // --- The fast fabric (simulation.fabric: fast, fast_fabric.hpp), which moves packets itself ---
  // The output a packet for `gpu` at `address` leaves by: the route lookup of a message that
  // reaches an input (a GPU without a route ends the run, as there).
  uint16_t output_for(uint32_t gpu, uint64_t address) {
    const std::vector<uint16_t>& ports = registers_.route_ports(gpu);
    if (ports.empty()) {
      no_route_for(gpu);
      return 0;
    }
    return inputs_.route_port(ports, address);
  }
  // `packets` packets of `flits` wire flits of `traffic_class` left through an output.
  void count_forwarded(TrafficClass traffic_class, uint32_t packets, uint64_t flits) {
    registers_.count(traffic_class == TrafficClass::request ? SwitchCounter::forwarded_requests
                                                            : SwitchCounter::forwarded_responses,
                     packets);
    outputs_.add_forwarded_flits(traffic_class, flits);
  }
  // Multimem group and reduction events, evictions, access errors, refused register accesses and
  // route lookup failures (debug level; a failure that ends the run at error level).
  ComponentLog& log() { return log_; }
  const ComponentLog& log() const { return log_; }
  const SwitchParams& params() const { return params_; }
  SwitchStats stats() const;
  uint64_t buffered_messages() const { return inputs_.buffered(); }
  // Statistics (docs/models/switch_chip.md, "Statistics"): input `port`'s buffer occupancy of a
  // traffic class, in flits; all inputs together; the arbitration wait at output `port`; the
  // reduction buffers together, in bytes.
  const OccupancyStatistics& input_occupancy(uint16_t port, TrafficClass traffic_class) const {
    return inputs_.occupancy(port, traffic_class);
  }
  const OccupancyStatistics& total_input_occupancy() const { return inputs_.total_occupancy(); }
  uint64_t arbitration_wait_ps(uint16_t port, TrafficClass traffic_class) const {
    return outputs_.arbitration_wait_ps(port, traffic_class);
  }
  const OccupancyStatistics& reduction_occupancy() const { return multimem_.reduction_occupancy(); }
  // From now on the chip also records its input buffers' and reduction buffers' occupancy per
  // time bin (nullptr: not).
  void record_occupancy_in(OccupancyTimeline* inputs, OccupancyTimeline* reduction) {
    inputs_.record_occupancy_in(inputs);
    multimem_.record_reduction_occupancy_in(reduction);
  }
  // The multimem reduction unit of port `port`, created on first use with the backend the
  // parameters name (reduction_backend, reduction_buffer_bytes).
  reduction::ReductionUnit& reduction_unit(uint16_t port) { return multimem_.reduction_unit(port); }
  // Replaces port `port`'s reduction unit before its first use (tests: a lockstep pair with a
  // faulty backend, to show a ReductionMismatch ends the run).
  void replace_reduction_unit(uint16_t port, std::unique_ptr<reduction::ReductionUnit> unit) {
    multimem_.replace_reduction_unit(port, std::move(unit));
  }
  // Lists up to `max_lines` buffered messages (port, VC, destination); returns how many there are.
  uint64_t describe_outstanding(std::ostream& os, uint64_t max_lines) const {
    return inputs_.describe(os, max_lines);
  }

 private:
  // The multimem engine's way back into the chip: the output of a message it made, queueing that
  // message for the output, and the input buffer space of the requests it consumes or holds.
  friend class MultimemEngine;
  [[gnu::cold]] void no_route_for(uint32_t gpu);
  uint16_t select_output(const NvlinkExtension& ext) { return inputs_.route(ext); }
  // Queues a message the chip made (a member copy, a reduced result, an error response) for
  // `output`; it competes for the output like a message from an input port.
  // reroute() on the packet fabric: input `port`'s output queues of outputs no longer in `gpu`'s
  // route give up that GPU's messages to the queues of their new outputs.
  template <class InRoute>
  void requeue_output_queues(uint32_t port, uint32_t gpu, const InRoute& in_route);
  void push_generated(uint16_t output, const SwitchEntry& entry, TrafficClass traffic_class) {
    const uint32_t input = inputs_.generated_input(output);
    const size_t queue = inputs_.queue_index(traffic_class, 0, output);
    const uint32_t requester = inputs_.queue_requester(input, 0);
    if (!params_.packet_fabric) {
      if (inputs_.push(input, queue, entry)) {
        request_output(output, traffic_class, CrossbarRequest{requester, entry.wire_flits, entry.ready_at});
      }
      return;
    }
    // The engine makes a copy when its sender hands the packet over, which may be up to the
    // sender's lookahead before it arrives: the packet fabric queues each copy in order of
    // arrival, as the copies of packets arriving one by one would queue. A new head asks for the
    // output instead of the old one.
    const bool had_head = !inputs_.input(input).fifos[queue].empty();
    if (inputs_.push_in_arrival_order(input, queue, entry)) {
      if (had_head) crossbars_[static_cast<size_t>(traffic_class)].withdraw(output, requester);
      request_output(output, traffic_class, CrossbarRequest{requester, entry.wire_flits, entry.ready_at});
    }
  }
  // Frees a message's input buffer space now and returns its credits when its tail has arrived.
  void free_input_space(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits) {
    inputs_.free_at_tail(port, payload, fifo, flits);
  }
  // A multimem request keeps its input buffer space until `copies` member copies have left;
  // returns the parent id the copies carry.
  uint32_t hold_input_space(tlm::tlm_generic_payload& payload, uint16_t port, uint32_t fifo, uint32_t flits,
                            uint32_t copies) {
    return inputs_.hold(payload, port, fifo, flits, copies);
  }

  // The chip's links' fault events counted in the register block: tags below the port count are
  // inputs (the GPU's link into the port), the others outputs (port = tag - ports).
  class LinkErrorCounter final : public LinkFaultListener {
   public:
    LinkErrorCounter(SwitchCsr& registers, uint32_t ports) : registers_(registers), ports_(ports) {}
    // The chip counts what its own end sees: CRC errors on the packets it receives, replays of
    // the packets it sends.
    void crc_error_received(uint32_t tag) override {
      if (tag < ports_) registers_.count_link_error(port_of(tag), PortLinkCounter::rx_crc_errors, 1);
    }
    void replay_started(uint32_t tag) override {
      if (tag >= ports_) registers_.count_link_error(port_of(tag), PortLinkCounter::tx_replays, 1);
    }
    void credits_resynchronised(uint32_t tag) override {
      registers_.count_link_error(port_of(tag),
                                  tag < ports_ ? PortLinkCounter::rx_credit_resyncs : PortLinkCounter::tx_credit_resyncs);
    }

   private:
    uint32_t port_of(uint32_t tag) const { return tag < ports_ ? tag : tag - ports_; }
    SwitchCsr& registers_;
    uint32_t ports_;
  };

  void end_of_elaboration() override;
  tlm::tlm_sync_enum nb_transport_fw(int port, tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& phase, sc_core::sc_time& delay) override;
  // Serving one output (a client of output_scheduler_).
  void serve_output(uint16_t output);
  // With a matching allocator: the outputs served in the scheduler's pass, decided together.
  void match_due_outputs();
  // Moves the head of `requester` to `output`; returns the time it occupies the link.
  sc_core::sc_time forward(uint16_t output, TrafficClass traffic_class, uint32_t requester);
  void request_output(uint16_t output, TrafficClass traffic_class, const CrossbarRequest& request);
  void register_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  // Route entry `gpu` lost a port: the messages waiting for it take another of the entry's.
  void reroute(uint32_t gpu);
  // Hands everything the chip holds to the sink (death, CHIP_CONTROL.FLUSH).
  void discard_contents();

  // The chip's own messages (member copies, results, error responses) come from here. Declared
  // first so that it outlives every member that may still point at one of its payloads.
  PayloadPool pool_;
  SwitchParams params_;
  uint32_t chip_id_;
  ComponentLog log_;  // before the blocks that log through it
  sc_core::sc_time internal_latency_;
  sc_core::sc_time register_access_time_;
  SwitchCsr registers_;
  LinkErrorCounter link_errors_{registers_, params_.ports};
  sc_core::sc_event irq_changed_;
  LostOperationSink* lost_sink_ = nullptr;
  SwitchLossStats loss_stats_;
  bool dead_ = false;
  SwitchInputStage inputs_;
  SwitchCrossbar crossbars_[kTrafficClasses];  // [request crossbar, response crossbar]
  SwitchOutputStage outputs_;
  // A matching allocator's outputs due in this pass, and its scratch.
  std::vector<uint16_t> due_outputs_;
  std::vector<uint16_t> free_outputs_;
  std::vector<bool> output_due_ = std::vector<bool>(params_.ports, false);
  std::vector<bool> output_matched_ = std::vector<bool>(params_.ports, false);
  std::vector<MatchRequest> match_requests_;
  std::vector<MatchRequest> match_grants_;
  WakeScheduler output_scheduler_;  // serves the outputs (declared after the blocks it reads)
  MultimemEngine multimem_;
};

}  // namespace nvsvp::model
