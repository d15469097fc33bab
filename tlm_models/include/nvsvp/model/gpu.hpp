// One GPU: the sc_module that owns its sockets (one transmit port and one receive socket per
// NVLink), its sparse functional memory, its processes (one per executor stream, one that serves
// the link engines) and the hardware blocks it wires together:
//
//   GpuExecutor            runs the task sequences firmware hands it, per stream (SM group)
//   GpuLinkEngines         injection: one engine per link feeding the link's port
//   GpuReceiver            the receive side of every link, a handler per message kind
//   ArrivalCounters        arrival counters, counter maps and the fused kernel's tables
//   DynamicMultimemClient  the source queue and the Hub of dynamic multimem
//
// Sends are spread over the links by address interleaving. Receives cost no simulation event:
// a message's data lands and its arrival counter records the tail-arrival time when the message
// is handed over; a wait completes at the time its N-th arrival lands.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/arrival_counters.hpp"
#include "nvsvp/model/dynamic_multimem_client.hpp"
#include "nvsvp/model/component_log.hpp"
#include "nvsvp/model/gpu_executor.hpp"
#include "nvsvp/model/gpu_link_engines.hpp"
#include "nvsvp/model/gpu_memory.hpp"
#include "nvsvp/model/gpu_params.hpp"
#include "nvsvp/model/gpu_receiver.hpp"
#include "nvsvp/model/gpu_stats.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/nvlink_port.hpp"
#include "nvsvp/model/nvlink_target_socket.hpp"
#include "nvsvp/model/wake_scheduler.hpp"

namespace nvsvp::model {

class Gpu : public sc_core::sc_module {
 public:
  static constexpr uint32_t kExecutorStreams = model::kExecutorStreams;
  using TakenItem = model::TakenItem;

  sc_core::sc_vector<sc_core::sc_port<NvlinkTxIf>> tx;  // one per link, towards the switch
  sc_core::sc_vector<NvlinkTargetSocket> rx;             // one per link, from the switch

  Gpu(const sc_core::sc_module_name& name, const GpuParams& params, const LinkParams& link,
      uint32_t gpu_id, uint32_t links, PayloadPool& pool);

  // Runs `sequence` after whatever was submitted before to its stream (`sequence.stream`); streams
  // run concurrently. The GPU keeps it until the end.
  void submit(hw::WorkSequence sequence) { executor_.submit(std::move(sequence)); }
  bool finished() const { return executor_.finished(); }
  const sc_core::sc_event& finished_event() const { return executor_.finished_event(); }
  sc_core::sc_time finish_time() const { return executor_.finish_time(); }

  uint32_t id() const { return id_; }
  uint32_t link_for(uint64_t address) const { return links_.link_for(address); }
  GpuMemory& memory() { return memory_; }
  const GpuMemory& memory() const { return memory_; }
  const GpuStats& stats() const { return stats_; }
  const std::vector<PhaseTime>& phase_times() const { return executor_.phase_times(); }
  const std::vector<ComputeSpan>& compute_spans() const { return executor_.compute_spans(); }
  const std::vector<std::string>& phase_names() const { return executor_.phase_names(); }
  uint64_t queued_messages() const { return links_.queued_messages(); }
  // The fast fabric (simulation.fabric: fast, fast_fabric.hpp): this GPU's messages go to
  // `fabric`, and the fabric lands messages here with land().
  void attach_fast_fabric(FastFabricSink* fabric) { links_.attach_fast_fabric(fabric); }
  void land(const tlm::tlm_generic_payload& message, const sc_core::sc_time& arrival) {
    receiver_.land(message, arrival);
  }
  // Messages received in part (the packet fabric: some of their packets still to land).
  uint64_t incomplete_messages() const { return receiver_.incomplete_messages(); }
  // Links out of use (GpuLinkEngines::set_link_enabled): the chip each link goes to, from the
  // cabling; firmware takes a link out of use or back.
  void set_link_chips(std::vector<uint32_t> chip_of_link) { links_.set_link_chips(std::move(chip_of_link)); }
  void set_link_enabled(uint32_t link, bool enabled) { links_.set_link_enabled(link, enabled); }
  bool link_enabled(uint32_t link) const { return links_.link_enabled(link); }
  uint64_t messages_moved_off_links() const { return links_.messages_moved(); }
  // The link layer's view (Hal::gpu_links_down): the platform says when a link goes down or up;
  // a change raises the link-state interrupt, which reading the state acknowledges.
  void set_link_down(uint32_t link, bool down);
  uint64_t links_down() const { return links_down_; }
  uint64_t read_links_down() {
    link_state_pending_ = false;
    return links_down_;
  }
  bool link_state_interrupt() const { return link_state_pending_; }
  const sc_core::sc_event& link_state_changed() const { return link_state_changed_; }
  // Operations a switch chip lost, held until firmware has them re-issued.
  GpuLinkEngines& link_engines() { return links_; }
  const GpuLinkEngines& link_engines() const { return links_; }
  uint64_t reissue_lost_operations() { return links_.reissue_lost(); }
  void discard_partials(uint64_t return_address) { receiver_.discard_partials(return_address); }
  // From now on every message this GPU receives adds its injection-to-tail latency to
  // `latencies` (nullptr: not recorded); GPUs may share one.
  void record_latency_in(MessageLatencies* latencies) { receiver_.record_latency_in(latencies); }
  // Why this GPU has not finished: current task, counters, queued messages. Returns 0 if idle.
  uint64_t describe_outstanding(std::ostream& os) const;
  // Time of a compute task on this GPU; a GEMM without its own SM count runs on `group_sms`
  // (0: all the GPU's SMs).
  sc_core::sc_time compute_time(const hw::Task& task, uint32_t group_sms = 0) const {
    return executor_.compute_time(task, group_sms);
  }

  // Dynamic multimem: the runtime created and bound `binding`'s object; this GPU packs its blocks
  // at `local_base`. Throws HubError (or std::invalid_argument for experts per GPU that differ
  // from an earlier binding's).
  void install_dynamic_multicast(const hw::DynamicMulticastBinding& binding, uint64_t local_base) {
    dynamic_.install(binding, local_base);
  }
  const GpuHub& hub() const { return dynamic_.hub(); }
  // Arrivals counter `index` has counted so far (0 for a counter never used).
  uint64_t counter_arrivals(uint32_t index) const { return counters_.arrivals(index); }
  // When counter `index` counted its n-th arrival (1 <= n <= counter_arrivals(index)), ps.
  uint64_t counter_reached_ps(uint32_t index, uint64_t n) const { return counters_.reached_ps(index, n); }
  // The take_ready items this GPU ran: the counter each waited on and when its tasks issued.
  const std::vector<TakenItem>& taken_items() const { return executor_.taken_items(); }
  const DynamicSourceQueue& source_queue() const { return dynamic_.source_queue(); }
  const CounterTableStats& table_stats(hw::CounterTable table) const { return counters_.table_stats(table); }
  // Task starts and ends per stream, the sends they issue (debug level).
  ComponentLog& log() { return log_; }

 private:
  void end_of_elaboration() override;

  uint32_t id_;
  ComponentLog log_;  // before the blocks that log through it
  GpuMemory memory_;
  GpuStats stats_;
  // Serves the link engines (client l: link l); built before them, it only calls them once the
  // simulation runs.
  WakeScheduler link_scheduler_;
  GpuLinkEngines links_;
  uint64_t links_down_ = 0;
  bool link_state_pending_ = false;
  sc_core::sc_event link_state_changed_;
  ArrivalCounters counters_;
  DynamicMultimemClient dynamic_;
  GpuReceiver receiver_;
  GpuExecutor executor_;
};

}  // namespace nvsvp::model
