// One NVSwitch chip: input ports with per-VC buffers, a request crossbar and a separate response
// crossbar (each with its own per-output arbiters and its own input transfer slot, so requests
// and responses never block each other inside the chip), a route table from destination GPU to
// output ports, and the outputs' NVLink ports. The route table, the multicast group table, the
// counters and the error status live in the chip's register block (SwitchCsr), which firmware
// reaches through the `csr` socket (docs/registers.md).
//
// Messages cut through: a message may leave once its head has arrived (plus the internal
// latency). Event-driven: an output is evaluated when its link goes idle, when credits return or
// when a new head message asks for it; nothing is clocked.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "nvsvp/model/arbiter.hpp"
#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/nvlink_target_socket.hpp"
#include "nvsvp/model/slot_pool.hpp"
#include "nvsvp/model/small_fifo.hpp"
#include "nvsvp/model/switch_csr.hpp"
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
  uint64_t parked_loads = 0;  // ld_reduce requests that waited for a free reduction context
  uint64_t evicted_partial_bytes = 0;  // payload of the partial sums passed on (extra traffic)
  uint64_t peak_reduction_buffer_bytes = 0;  // most bytes one port's reduction buffer held
};

class SwitchChip : public sc_core::sc_module, private NvlinkReceiver {
 public:
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
  bool irq() const { return registers_.interrupt_line(); }
  const sc_core::sc_event& irq_changed() const { return irq_changed_; }

  uint32_t chip_id() const { return chip_id_; }
  const SwitchParams& params() const { return params_; }
  SwitchStats stats() const;
  uint64_t buffered_messages() const { return buffered_; }
  // The multimem reduction unit of port `port`, created on first use with the backend the
  // parameters name (reduction_backend, reduction_buffer_bytes).
  reduction::ReductionUnit& reduction_unit(uint16_t port);
  // Replaces port `port`'s reduction unit before its first use (tests: a lockstep pair with a
  // faulty backend, to show a ReductionMismatch ends the run).
  void replace_reduction_unit(uint16_t port, std::unique_ptr<reduction::ReductionUnit> unit);
  // Lists up to `max_lines` buffered messages (port, VC, destination); returns how many there are.
  uint64_t describe_outstanding(std::ostream& os, uint64_t max_lines) const;

 private:
  static constexpr uint32_t kNoParent = 0xFFFF'FFFFu;
  struct Entry {
    tlm::tlm_generic_payload* payload;
    NvlinkExtension* ext;
    uint32_t wire_flits;
    uint16_t output;
    sc_core::sc_time ready_at;
    uint32_t parent = kNoParent;  // a member copy: its multimem request in held_
  };
  // A multimem request whose member copies are still in the chip. It keeps its input buffer space
  // (so the issuer's credits stay taken, as for a unicast message) until its last copy has left.
  struct HeldRequest {
    tlm::tlm_generic_payload* payload = nullptr;
    uint16_t port = 0;
    uint32_t fifo = 0;
    uint32_t flits = 0;
    uint32_t copies_left = 0;
  };
  // An outstanding multimem_ld_reduce or dynamic_ld_reduce: the member reads went out; their
  // responses are reduced by the reduction unit of the issuer's port (`port`) in context
  // `context`. The port's reduction buffer holds `read_bytes` for it from the first response it
  // accumulates; a response that finds the buffer full is passed on to the issuer instead.
  struct PendingReduction {
    bool active = false;
    bool context_opened = false;
    uint32_t evicted_parts = 0;  // responses passed on to the issuer as reduce_partial
    uint16_t port = 0;
    uint16_t context = 0;
    uint32_t responses_left = 0;
    uint32_t length_beats = 0;
    uint32_t functional_bytes = 0;
    uint8_t reduce_op = 0;
    uint8_t reduce_type = 0;
    uint32_t issuer = 0;
    uint32_t counter = 0;
    uint64_t return_address = 0;
    uint64_t read_bytes = 0;
    uint64_t issue_sequence = 0;
    sc_core::sc_time last_arrival;
    sc_core::sc_time unit_latency;
    std::vector<reduction::Beat> result;   // [beat]
    std::vector<uint16_t> result_parts;    // [beat]: result beats (complete or partial) folded in
    // Dynamic: the issuer's target list, handed back with the result (the issuer adds its own
    // experts' partials, which it keeps out of the request).
    const uint16_t* targets = nullptr;
    const uint64_t* target_addresses = nullptr;
    uint16_t remote_targets = 0;
    uint16_t issuer_targets = 0;
    uint64_t multimem_address = 0;  // the load's
  };
  // A multimem_ld_reduce waiting for a free context of its port's reduction unit.
  struct ParkedLoad {
    tlm::tlm_generic_payload* payload;
    uint32_t fifo;
    uint32_t flits;
  };
  struct InputPort {
    std::vector<SmallFifo<Entry>> fifos;  // [class * vcs + vc]
    std::vector<uint32_t> occupied_flits;  // [class * vcs + vc]
  };
  // A head-of-line message asking for an output: what arbitration needs, kept with the output.
  struct Request {
    uint32_t requester;  // input * vcs + vc
    uint32_t wire_flits;
    sc_core::sc_time ready_at;
  };
  // The per-output half of one crossbar: who wants this output, and the arbiter choosing.
  struct CrossbarOutput {
    std::vector<Request> requests;  // sorted by requester
    std::unique_ptr<Arbiter> arbiter;
  };
  struct OutputPort {
    CrossbarOutput crossbar[kTrafficClasses];  // [request crossbar, response crossbar]
    sc_core::sc_time link_busy_until;          // mirror of the port's, set when this output sends
    uint8_t next_class = 0;                    // link-level round robin between the crossbars
  };

  void end_of_elaboration() override;
  tlm::tlm_sync_enum nb_transport_fw(int port, tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& phase, sc_core::sc_time& delay) override;
  void serve_output(uint16_t output);
  // Moves the head of `requester` to `output`; returns the time it occupies the link.
  sc_core::sc_time forward(uint16_t output, TrafficClass traffic_class, uint32_t requester);
  void request_output(uint16_t output, TrafficClass traffic_class, const Request& request);
  uint16_t select_output(const NvlinkExtension& ext);
  void register_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  // Static multimem (docs/models/switch_chip.md).
  void accept_multimem(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                       uint32_t flits, const sc_core::sc_time& ready_at);
  void start_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                       uint32_t flits, const sc_core::sc_time& ready_at);
  void take_member_response(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits);
  void run_reduction_unit(uint16_t port, const std::vector<reduction::Command>& commands);
  // Returns the result to the issuer and frees the context; `last_response` when the last
  // member response passes through as the result (nothing accumulated in the buffer).
  void finish_reduction(uint32_t tag, const tlm::tlm_generic_payload* last_response = nullptr);
  void refuse_multimem(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                       uint32_t flits, uint32_t error_bit, const sc_core::sc_time& ready_at);
  // Dynamic multimem (docs/models/dynamic_multimem.md): trims the target list per destination
  // GPU into trim_; false (and the request refused) when the chip cannot serve the list.
  bool trim_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                    const sc_core::sc_time& ready_at);
  void accept_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                      uint32_t flits, const sc_core::sc_time& ready_at);
  // Records a reduction of `responses` member responses for `request` in a free context of
  // `port`; returns its tag.
  uint32_t open_reduction(uint16_t port, const NvlinkExtension& request, uint32_t responses);
  // The ld_reduce in `payload` starts: static or dynamic as its opcode says.
  void start_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                  const sc_core::sc_time& ready_at);
  // One copy of a dynamic request per destination GPU in trim_, each with its own targets: a
  // dynamic_write for a store, a dynamic_member_read of reduction `tag` for a load.
  void send_dynamic_copies(tlm::tlm_generic_payload& request, uint32_t parent, uint32_t tag,
                           const sc_core::sc_time& leaves);
  // trim_ must hold the load's trimmed targets.
  void start_dynamic_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo,
                               uint32_t flits, const sc_core::sc_time& ready_at);
  // Whether port `port` can take a load now (a context free within CONTEXTS_ENABLED, none parked
  // before it); if not, parks it.
  bool admit_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits);
  // Whether port `port` holds fewer contexts than the register block enables per port.
  bool context_available(uint16_t port) const;
  // A response to the issuer of `r` (its result or a partial passed on) with the header filled.
  tlm::tlm_generic_payload& issuer_response(const PendingReduction& r, Opcode opcode);
  // A response that found the reduction buffer full goes on to the issuer as it is.
  void pass_partial_on(uint32_t tag, tlm::tlm_generic_payload& member_response);
  // Frees a message's input buffer space now and returns its credits when its tail has arrived.
  void free_input_space(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits);
  // Queues a message the chip made (a member copy, a reduced result, an error response) for
  // `output`; it competes for the output like a message from an input port.
  void push_generated(uint16_t output, const Entry& entry, TrafficClass traffic_class);
  uint32_t hold(tlm::tlm_generic_payload& payload, uint16_t port, uint32_t fifo, uint32_t flits,
                uint32_t copies);
  void release_copy_parent(uint32_t parent, const sc_core::sc_time& drained);
  bool is_generated_input(uint32_t port) const { return port >= params_.ports; }
  size_t fifo_index(TrafficClass traffic_class, uint16_t vc) const {
    return static_cast<size_t>(traffic_class) * params_.vcs_per_class + vc;
  }

  // The chip's own messages (member copies, results, error responses) come from here. Declared
  // first so that it outlives every member that may still point at one of its payloads.
  PayloadPool pool_;
  SwitchParams params_;
  uint32_t chip_id_;
  LinkParams link_;
  uint32_t header_flits_;
  uint32_t interleave_bytes_;
  sc_core::sc_time internal_latency_;
  std::vector<InputPort> inputs_;
  // The bound interfaces, resolved once (sc_vector and sc_port indirections cost cache misses).
  std::vector<NvlinkPort*> out_ports_;  // the ports `out` is bound to
  std::vector<tlm::tlm_bw_transport_if<NvlinkProtocolTypes>*> in_backward_;
  std::vector<sc_core::sc_time> crossbar_free_;  // [input * classes + class]: input's transfer slot
  std::vector<OutputPort> outputs_;
  WakeScheduler output_scheduler_;  // serves the outputs (declared after them)
  reduction::ReductionUnitConfig reduction_config_;
  SwitchCsr registers_;
  sc_core::sc_time register_access_time_;
  sc_core::sc_event irq_changed_;
  std::vector<ArbiterRequest> eligible_;  // scratch, reused per arbitration
  uint64_t buffered_ = 0;
  std::vector<std::unique_ptr<reduction::ReductionUnit>> reduction_units_;  // [port], lazily
  sc_core::sc_time reduction_clock_;
  SlotPool<HeldRequest> held_;
  SlotPool<PendingReduction> reductions_;  // [tag]
  std::vector<std::vector<uint16_t>> free_contexts_;   // [port]: the unit's free context ids
  std::vector<std::vector<uint32_t>> context_tag_;     // [port][context]: the reduction using it
  std::vector<std::deque<ParkedLoad>> parked_loads_;   // [port]
  std::vector<uint64_t> evicted_seen_;                 // [port]: the unit's evicted_beats counted
  std::vector<uint64_t> buffer_used_;                  // [port]: reduction buffer bytes held
  TrimResult trim_;                                    // scratch of the dynamic requests
  std::vector<reduction::Command> unit_commands_;      // scratch of take_member_response
  std::vector<reduction::ResultBeat> unit_results_;    // scratch of run_reduction_unit
  SwitchStats stats_;
};

}  // namespace nvsvp::model
