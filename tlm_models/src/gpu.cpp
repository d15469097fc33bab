#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: one process per executor stream
#include "nvsvp/model/gpu.hpp"

#include <string>

namespace nvsvp::model {

Gpu::Gpu(const sc_core::sc_module_name& name, const GpuParams& params, const LinkParams& link,
         uint32_t gpu_id, uint32_t links, PayloadPool& pool)
    : sc_module(name),
      tx("tx", links),
      rx("rx", links),
      id_(gpu_id),
      link_scheduler_("link_engines", links, [this](uint32_t engine) { links_.serve_link(engine); }),
      links_(this->name(), params, link, gpu_id, links, pool, memory_, link_scheduler_, stats_),
      counters_(this->name(), params),
      dynamic_(this->name(), params, link, gpu_id, memory_, counters_, links_, stats_),
      receiver_(this->name(), params, link, gpu_id, links, pool, memory_, counters_, links_, dynamic_, stats_),
      executor_(this->name(), params, memory_, counters_, links_, dynamic_, stats_, log_) {
  if (params.functional_bytes > PayloadPool::kMaxFunctionalBytes) {
    SC_REPORT_FATAL(this->name(), "functional_bytes exceeds what a payload carries");
  }
  for (uint32_t l = 0; l < links; ++l) {
    rx[l].set_receiver(&receiver_, static_cast<int>(l));
  }
  // Every stream's process is made here, during elaboration, so that it belongs to this GPU (a
  // process spawned later would belong to whichever process was running).
  for (uint32_t i = 0; i < kExecutorStreams; ++i) {
    counters_.set_stream_event(i, executor_.work_event(i));
    sc_core::sc_spawn_options options;
    options.spawn_method();
    options.dont_initialize();
    options.set_sensitivity(&executor_.work_event(i));
    const std::string process = i == 0 ? "executor" : "executor_" + std::to_string(i);
    sc_core::sc_spawn([this, i] { executor_.execute(i); }, process.c_str(), &options);
  }
}

void Gpu::end_of_elaboration() {
  for (uint32_t l = 0; l < tx.size(); ++l) {
    links_.attach(l, bound_port(tx[l]));
    receiver_.attach(l, rx[l].operator->());
  }
}

void Gpu::set_link_down(uint32_t link, bool down) {
  if (link >= 64) SC_REPORT_FATAL(name(), "set_link_down: the link state holds 64 links");
  const uint64_t bit = 1ull << link;
  const uint64_t state = down ? links_down_ | bit : links_down_ & ~bit;
  if (state == links_down_) return;
  links_down_ = state;
  link_state_pending_ = true;
  link_state_changed_.notify(sc_core::SC_ZERO_TIME);
}

uint64_t Gpu::describe_outstanding(std::ostream& os) const {
  const uint64_t tasks_left = executor_.tasks_left();
  const uint64_t queued = queued_messages();
  const uint64_t lost = links_.lost_held();
  const uint64_t stranded = links_.stranded();
  const uint64_t incomplete = receiver_.incomplete_messages();
  if (tasks_left == 0 && queued == 0 && lost == 0 && stranded == 0 && incomplete == 0) return 0;
  os << "  " << name() << ": " << tasks_left << " of " << executor_.total_tasks() << " tasks not done";
  executor_.describe_streams(os);
  os << "; " << queued << " messages queued on its links";
  if (lost > 0) os << "; " << lost << " operations a switch chip lost, held for firmware to re-issue";
  if (stranded > 0) os << "; " << stranded << " messages waiting for a link in use (every link is out of use)";
  if (incomplete > 0) os << "; " << incomplete << " messages received in part (packets still missing)";
  if (links_down_ != 0) os << "; links down (mask) 0x" << std::hex << links_down_ << std::dec;
  os << "\n";
  return tasks_left + queued + lost + stranded + incomplete;
}

}  // namespace nvsvp::model
