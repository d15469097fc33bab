// A GPU's dynamic-multimem client (docs/models/dynamic_multimem.md): the source queue that holds a
// dynamic operation while its target list is read, the Hub that translates a multimem address and
// a target expert into this GPU's packed layout, and what the GPU does with both.
//
// Issuing: a dynamic_store or dynamic_ld_reduce sends its targets on other GPUs in one request to
// the switch and serves this GPU's own targets (the end of its list) here, without a link; a
// notify_tokens task notifies every token's home through the Hub's token-ID table. Receiving (for
// the receiver): where a dynamic block lands, and the partials of this GPU's targets a load adds.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include <systemc>

#include "nvsvp/hw/dynamic_multicast.hpp"
#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/arrival_counters.hpp"
#include "nvsvp/model/dynamic_source_queue.hpp"
#include "nvsvp/model/gpu_hub.hpp"
#include "nvsvp/model/gpu_link_engines.hpp"
#include "nvsvp/model/gpu_memory.hpp"
#include "nvsvp/model/gpu_params.hpp"
#include "nvsvp/model/gpu_stats.hpp"
#include "nvsvp/model/nvlink_params.hpp"

namespace nvsvp::model {

class DynamicMultimemClient {
 public:
  // `owner` names the GPU in reports.
  DynamicMultimemClient(const char* owner, const GpuParams& params, const LinkParams& link, uint32_t gpu_id,
                        GpuMemory& memory, ArrivalCounters& counters, GpuLinkEngines& links, GpuStats& stats);
  DynamicMultimemClient(const DynamicMultimemClient&) = delete;
  DynamicMultimemClient& operator=(const DynamicMultimemClient&) = delete;

  // The runtime created and bound `binding`'s object; this GPU packs its blocks at `local_base`.
  // Throws HubError (or std::invalid_argument for experts per GPU that differ from an earlier
  // binding's).
  void install(const hw::DynamicMulticastBinding& binding, uint64_t local_base);
  // Issues a dynamic_store or dynamic_ld_reduce task.
  void run_dynamic(const hw::WorkSequence& sequence, const hw::Task& task);
  // Issues a notify_tokens task (hw/work.hpp).
  void run_notify(const hw::WorkSequence& sequence, const hw::Task& task);

  bool is_local_expert(uint16_t expert) const {
    return experts_per_gpu_ != 0 && expert / experts_per_gpu_ == gpu_id_;
  }
  // A dynamic block for local `expert` landed at `at`: one arrival on `counter`, or on counter +
  // the expert's local index with per-expert counting.
  void count_dynamic_block(uint32_t counter, bool per_expert, uint16_t expert, const sc_core::sc_time& at) {
    counters_.record_arrival(per_expert ? counter + (expert - gpu_id_ * experts_per_gpu_) : counter, at);
  }
  // Where target `index` of a list lands in this GPU: the Hub's translation of `multimem_address`
  // for its expert, or its explicit address. A Hub miss sets `miss` (the access waits for memory).
  uint64_t target_location(uint64_t multimem_address, hw::MultimemStage stage, const uint16_t* targets,
                           const uint64_t* target_addresses, uint32_t index, uint32_t packets, bool& miss);
  // Adds this GPU's targets among targets[first, first + count) (their partials at the combine
  // object) into `sum` (`bytes` functional bytes); returns how many there were.
  uint32_t add_local_partials(uint64_t multimem_address, const uint16_t* targets, const uint64_t* target_addresses,
                              uint32_t first, uint32_t count, uint64_t read_bytes, uint8_t op, uint8_t type,
                              uint8_t* sum, size_t bytes, bool have_sum, bool& miss);
  // `at`, or later by a Hub miss.
  sc_core::sc_time landed(const sc_core::sc_time& at, bool miss) const { return miss ? at + hub_miss_time_ : at; }

  const GpuHub& hub() const { return hub_; }
  const DynamicSourceQueue& source_queue() const { return source_queue_; }

 private:
  // This GPU's targets of a dynamic task (those after the first `remote`), served here at
  // `issue` without the switch.
  void serve_local_targets(const hw::WorkSequence& sequence, const hw::Task& task, const uint16_t* targets,
                           const uint64_t* addresses, uint16_t remote, const sc_core::sc_time& issue);
  // notify_tokens: the messages of the notifications gathered per home GPU.
  void send_notifications(const hw::WorkSequence& sequence, const hw::Task& task, const sc_core::sc_time& now);

  const char* owner_;
  LinkParams link_params_;
  uint32_t gpu_id_;
  uint32_t functional_bytes_;
  sc_core::sc_time hub_miss_time_;
  GpuMemory& memory_;
  ArrivalCounters& counters_;
  GpuLinkEngines& links_;
  GpuStats& stats_;
  GpuHub hub_;
  DynamicSourceQueue source_queue_;
  uint32_t experts_per_gpu_ = 0;  // from the bound objects; 0: none bound
  // The writes of the notification messages this GPU made (messages point into them until the
  // end of the run, as into a work sequence's element list).
  static constexpr size_t kNotificationBlock = 4096;
  std::deque<std::vector<hw::WriteElement>> notification_elements_;
  // run_notify's notifications by home GPU, kept between calls so their buffers are reused.
  std::vector<std::vector<hw::WriteElement>> notifications_by_home_;
};

}  // namespace nvsvp::model
