// The multimem engine of a switch chip: what the chip does with multimem and dynamic multimem
// requests instead of forwarding them (docs/models/switch_chip.md).
//   - Static multimem: multicast group lookup and access control, replication of a store or a
//     red to every member, and a ld_reduce's member reads.
//   - Dynamic multimem: the target list trimmed into one copy per destination GPU.
//   - Loads: the reduction contexts of each port's reduction unit, the loads parked while a port
//     has none free, the member responses counted and fed to the unit, the port's reduction
//     buffer in bytes (a response that finds it full is passed on to the issuer as a partial),
//     and the one result per load.
//
// The chip hands it a request, or a member response, as it arrives (with the input buffer space
// it takes); the engine answers with messages it makes from the chip's payload pool and hands to
// the chip for an output (SwitchChip::push_generated, after SwitchChip::select_output), and it
// frees or holds the request's input space through the chip. Those calls are SwitchChip's own,
// not a virtual interface: they run once per member copy.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/slot_pool.hpp"
#include "nvsvp/model/switch_csr.hpp"
#include "nvsvp/model/switch_input_stage.hpp"
#include "nvsvp/model/switch_params.hpp"
#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::model {

class SwitchChip;
class LostOperationSink;

// The engine's own figures (its counters proper are the register block's).
struct MultimemStats {
  uint64_t parked_loads = 0;  // ld_reduce requests that waited for a free reduction context
  uint64_t evicted_partial_bytes = 0;  // payload of the partial sums passed on (extra traffic)
  uint64_t evicted_reductions = 0;     // ld_reduce results with at least one partial passed on
  uint64_t peak_reduction_buffer_bytes = 0;  // most bytes one port's reduction buffer held
};

class MultimemEngine {
 public:
  // `chip`: where the messages it makes go. `pool`: where they come from. `owner`: the chip's
  // name, for fatal reports.
  MultimemEngine(SwitchChip& chip, PayloadPool& pool, SwitchCsr& registers, const SwitchParams& params,
                 const LinkParams& link, const char* owner);
  // The reduction units' structure, as the parameters set it (the register block reports it).
  static reduction::ReductionUnitConfig unit_config(const SwitchParams& params) {
    reduction::ReductionUnitConfig config;
    config.buffer_bytes = params.reduction_buffer_bytes;
    config.contexts = params.reduction_contexts_per_port;
    return config;
  }

  // A request that arrived on `port` and took `flits` of its VC buffer `fifo`; its head may
  // cross the chip at `ready_at`. Static: multimem_store, multimem_red, multimem_ld_reduce.
  void accept_static(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                     const sc_core::sc_time& ready_at);
  // dynamic_store, dynamic_ld_reduce.
  void accept_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                      const sc_core::sc_time& ready_at);
  // A request that arrived on `port` and crosses partitions (a write or read the chip checked, or
  // one of the above): refused with error_partition, counted in partition_errors, answered on
  // `port` (an isolated source may have no route here); nothing is written anywhere.
  void refuse_across_partitions(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                                const sc_core::sc_time& ready_at) {
    refuse(port, payload, fifo, flits, hw::switch_regs::error_partition, ready_at);
  }
  // A member_read_response for one of the engine's loads; consumed here.
  void take_member_response(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits);

  // The reduction unit of port `port`, created on first use with the backend the parameters
  // name (reduction_backend, reduction_buffer_bytes).
  reduction::ReductionUnit& reduction_unit(uint16_t port);
  // Replaces port `port`'s reduction unit before its first use.
  void replace_reduction_unit(uint16_t port, std::unique_ptr<reduction::ReductionUnit> unit);
  const MultimemStats& stats() const { return stats_; }
  // A member read of reduction `tag` left the chip for `gpu` (what a lost load's members saw).
  void member_read_left(uint32_t tag, uint32_t gpu) { reductions_[tag].members_read.set(gpu); }
  // The chip lost its loads (death, flush): each outstanding and parked one goes to `sink`
  // (load_lost) and is forgotten; `lost` gets each outstanding one's (issuer, issue sequence), the
  // header its partial sums carry. Returns how many.
  uint64_t discard_loads(LostOperationSink& sink, std::vector<std::pair<uint32_t, uint64_t>>& lost);
  // The reduction buffers of all ports together, in bytes, over time: a reduction holds its
  // read bytes from its first accumulated partial to its result (docs/models/switch_chip.md).
  const OccupancyStatistics& reduction_occupancy() const { return reduction_occupancy_; }
  // From now on also records that occupancy per time bin (nullptr: not).
  void record_reduction_occupancy_in(OccupancyTimeline* timeline) { reduction_timeline_ = timeline; }

 private:
  // Port `port`'s reduction unit, empty before its first use (a fatal error for a port the chip
  // does not have).
  std::unique_ptr<reduction::ReductionUnit>& unit_slot(uint16_t port);
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
    uint8_t issuer_link = 0;        // the load's (NvlinkExtension::issuer_link)
    // The request itself (a reference held until the result leaves): what the issuer sends
    // again if the chip loses the load.
    tlm::tlm_generic_payload* request = nullptr;
    hw::GpuMask members_read;  // bit g: the member read for GPU g has left the chip
  };
  // A ld_reduce waiting for a free context of its port's reduction unit.
  struct ParkedLoad {
    tlm::tlm_generic_payload* payload;
    uint32_t fifo;
    uint32_t flits;
  };

  // Static multimem.
  void start_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                       const sc_core::sc_time& ready_at);
  // The request is refused with `error_bit`: its buffer frees and the issuer gets a
  // multimem_error response (a write or read: access_error).
  void refuse(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits, uint32_t error_bit,
              const sc_core::sc_time& ready_at);
  // Whether every member of a group is in the partition of `port` (a chip with partitions).
  bool group_within_partition(uint16_t port, const hw::GpuMask& members) const;
  // Dynamic multimem (docs/models/dynamic_multimem.md): trims the target list per destination
  // GPU into trim_; false (and the request refused) when the chip cannot serve the list.
  bool trim_dynamic(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                    const sc_core::sc_time& ready_at);
  // One copy of a dynamic request per destination GPU in trim_, each with its own targets: a
  // dynamic_write for a store, a dynamic_member_read of reduction `tag` for a load.
  void send_dynamic_copies(tlm::tlm_generic_payload& request, uint32_t parent, uint32_t tag,
                           const sc_core::sc_time& leaves);
  // trim_ must hold the load's trimmed targets.
  void start_dynamic_ld_reduce(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                               const sc_core::sc_time& ready_at);

  // Reduction contexts. Whether port `port` can take a load now (a context free within
  // CONTEXTS_ENABLED, none parked before it); if not, parks it.
  bool admit_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits);
  // Whether port `port` holds fewer contexts than the register block enables per port.
  bool context_available(uint16_t port) const;
  // The ld_reduce in `payload` starts: static or dynamic as its opcode says.
  void start_load(uint16_t port, tlm::tlm_generic_payload& payload, uint32_t fifo, uint32_t flits,
                  const sc_core::sc_time& ready_at);
  // Records a reduction of `responses` member responses for `request` in a free context of
  // `port`; returns its tag.
  // (It keeps a reference to the request until the result leaves.)
  uint32_t open_reduction(uint16_t port, tlm::tlm_generic_payload& request, uint32_t responses);

  // Member responses and results.
  void run_reduction_unit(uint16_t port, const std::vector<reduction::Command>& commands);
  // The commands that open reduction `r`'s context for a first response of `bytes`.
  void open_context(PendingReduction& r, uint32_t bytes, std::vector<reduction::Command>& commands);
  // Returns the result to the issuer and frees the context; `last_response` when the last
  // member response passes through as the result (nothing accumulated in the buffer).
  void finish_reduction(uint32_t tag, const tlm::tlm_generic_payload* last_response = nullptr);
  // A response to the issuer of `r` (its result or a partial passed on) with the header filled.
  tlm::tlm_generic_payload& issuer_response(const PendingReduction& r, Opcode opcode);
  // A response that found the reduction buffer full goes on to the issuer as it is.
  void pass_partial_on(uint32_t tag, tlm::tlm_generic_payload& member_response);
  // Queues a message the engine made for its output (chosen by the route table).
  void send_generated(tlm::tlm_generic_payload& message, NvlinkExtension& ext, const sc_core::sc_time& ready_at,
                      uint32_t parent = SwitchEntry::kNoParent);

  SwitchChip& chip_;
  PayloadPool& pool_;
  SwitchCsr& registers_;
  const char* owner_;
  SwitchParams params_;
  LinkParams link_;
  sc_core::sc_time internal_latency_;
  sc_core::sc_time reduction_clock_;
  reduction::ReductionUnitConfig reduction_config_;
  std::vector<std::unique_ptr<reduction::ReductionUnit>> reduction_units_;  // [port], lazily
  SlotPool<PendingReduction> reductions_;  // [tag]
  std::vector<std::vector<uint16_t>> free_contexts_;   // [port]: the unit's free context ids
  std::vector<std::vector<uint32_t>> context_tag_;     // [port][context]: the reduction using it
  std::vector<std::deque<ParkedLoad>> parked_loads_;   // [port]
  std::vector<uint64_t> evicted_seen_;                 // [port]: the unit's evicted_beats counted
  std::vector<uint64_t> buffer_used_;                  // [port]: reduction buffer bytes held
  TrimResult trim_;                                    // scratch of the dynamic requests
  std::vector<reduction::Command> unit_commands_;      // scratch of take_member_response
  std::vector<reduction::ResultBeat> unit_results_;    // scratch of run_reduction_unit
  MultimemStats stats_;
  OccupancyStatistics reduction_occupancy_;
  OccupancyTimeline* reduction_timeline_ = nullptr;
  void count_reduction_buffer(int64_t delta_bytes);
};

}  // namespace nvsvp::model
