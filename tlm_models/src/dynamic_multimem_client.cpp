#include "nvsvp/model/dynamic_multimem_client.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "nvsvp/hw/hex_text.hpp"
#include "nvsvp/model/gpu_reduce.hpp"
#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/sim_time.hpp"

namespace nvsvp::model {

using sc_core::sc_time;

DynamicMultimemClient::DynamicMultimemClient(const char* owner, const GpuParams& params, const LinkParams& link,
                                             uint32_t gpu_id, GpuMemory& memory, ArrivalCounters& counters,
                                             GpuLinkEngines& links, GpuStats& stats)
    : owner_(owner),
      link_params_(link),
      gpu_id_(gpu_id),
      functional_bytes_(params.functional_bytes),
      hub_miss_time_(picoseconds(to_picoseconds(params.hub_miss_ns))),
      memory_(memory),
      counters_(counters),
      links_(links),
      stats_(stats),
      hub_(gpu_id, params.hub),
      source_queue_(params.source_queue) {}

void DynamicMultimemClient::install(const hw::DynamicMulticastBinding& binding, uint64_t local_base) {
  if (experts_per_gpu_ != 0 && binding.experts_per_gpu != experts_per_gpu_) {
    throw std::invalid_argument(std::string(owner_) + ": dynamic multicast object " +
                                std::to_string(binding.object.id) + " spreads " +
                                std::to_string(binding.experts_per_gpu) + " experts per GPU, an earlier one " +
                                std::to_string(experts_per_gpu_));
  }
  if (!hub_.is_bound(binding.object.id)) hub_.create(binding.object);
  hub_.bind(binding, local_base);
  experts_per_gpu_ = binding.experts_per_gpu;
}

uint64_t DynamicMultimemClient::target_location(uint64_t multimem_address, hw::MultimemStage stage,
                                                const uint16_t* targets, const uint64_t* target_addresses,
                                                uint32_t index, uint32_t packets, bool& miss) {
  if (target_addresses != nullptr) return target_addresses[index];
  try {
    const HubTranslation t = hub_.translate(multimem_address, stage, targets[index], packets);
    miss = miss || !t.cache_hit;
    return t.local_address;
  } catch (const HubError& e) {
    SC_REPORT_FATAL(owner_, e.what());
    return 0;
  }
}

uint32_t DynamicMultimemClient::add_local_partials(uint64_t multimem_address, const uint16_t* targets,
                                                   const uint64_t* target_addresses, uint32_t first, uint32_t count,
                                                   uint64_t read_bytes, uint8_t op, uint8_t type, uint8_t* sum,
                                                   size_t bytes, bool have_sum, bool& miss) {
  const auto packets = static_cast<uint32_t>(packets_of(link_params_, read_bytes));
  uint8_t partial[PayloadPool::kMaxFunctionalBytes];
  uint32_t added = 0;
  for (uint32_t i = first; i < first + count; ++i) {
    if (!is_local_expert(targets[i])) continue;
    const uint64_t address =
        target_location(multimem_address, hw::MultimemStage::combine, targets, target_addresses, i, packets, miss);
    if (!have_sum) {
      memory_.read(address, sum, bytes);
      have_sum = true;
    } else {
      memory_.read(address, partial, bytes);
      accumulate(sum, partial, bytes, static_cast<reduction::ReduceOp>(op), static_cast<reduction::ReduceType>(type));
    }
    ++added;
  }
  return added;
}

// A dynamic operation: its targets on other GPUs travel in one request to the switch; its targets
// on this GPU (the end of its list) are served by the Hub here, without a link: a store writes
// them now, a load adds their partials to the switch's result when that arrives.
void DynamicMultimemClient::run_dynamic(const hw::WorkSequence& sequence, const hw::Task& task) {
  const uint64_t end = static_cast<uint64_t>(task.first_target) + task.target_count;
  const bool explicit_addresses = task.addressing == hw::DynamicAddressing::explicit_addresses;
  if (task.target_count == 0 || end > sequence.targets.size() ||
      (explicit_addresses && end > sequence.target_addresses.size()) || experts_per_gpu_ == 0) {
    std::ostringstream msg;
    msg << "malformed dynamic operation: targets " << task.first_target << " to " << end << " of a list of "
        << sequence.targets.size() << (explicit_addresses ? " (explicit addressing)" : "")
        << (experts_per_gpu_ == 0 ? ", and no dynamic multicast object is bound" : "");
    SC_REPORT_FATAL(owner_, msg.str().c_str());
    return;
  }
  const uint16_t* targets = &sequence.targets[task.first_target];
  const uint64_t* addresses = explicit_addresses ? &sequence.target_addresses[task.first_target] : nullptr;
  uint16_t remote = task.target_count;
  while (remote > 0 && is_local_expert(targets[remote - 1])) --remote;
  for (uint16_t i = 0; i < remote; ++i) {
    if (is_local_expert(targets[i])) {
      SC_REPORT_FATAL(owner_, "dynamic operation: this GPU's own targets must come last in the list");
    }
  }
  const auto local = static_cast<uint16_t>(task.target_count - remote);
  stats_.dynamic_operations++;
  const sc_time now = current_time();
  // The source queue holds the operation while its target list is read.
  const QueuedOperation queued = source_queue_.admit(static_cast<double>(now.value()) / 1000.0);
  const sc_time issue = picoseconds(static_cast<uint64_t>(std::llround(queued.issue_ns * 1000.0)));
  const bool store = task.kind == hw::TaskKind::dynamic_store;
  if (remote > 0) {
    TxItem item = links_.request_item(sequence, task);
    item.targets = targets;
    item.target_addresses = addresses;
    item.target_count = remote;
    item.issuer_targets = store ? 0 : local;
    item.count_per_expert = store && task.count_per_expert;
    item.wire_flits = explicit_addresses ? explicit_wire_flits(link_params_, remote, store ? task.bytes : 0)
                                         : dynamic_wire_flits(link_params_, remote, store ? task.bytes : 0);
    item.not_before = issue;
    links_.enqueue_for_switch(item);
  }
  if (local == 0 || (!store && remote > 0)) return;
  serve_local_targets(sequence, task, targets, addresses, remote, issue);
}

void DynamicMultimemClient::serve_local_targets(const hw::WorkSequence& sequence, const hw::Task& task,
                                                const uint16_t* targets, const uint64_t* addresses, uint16_t remote,
                                                const sc_time& issue) {
  const bool store = task.kind == hw::TaskKind::dynamic_store;
  const uint64_t multimem_address = store ? task.target_address : task.source_address;
  const auto local = static_cast<uint16_t>(task.target_count - remote);
  const auto n = static_cast<size_t>(std::min<uint64_t>(task.bytes, functional_bytes_));
  bool miss = false;
  uint8_t data[PayloadPool::kMaxFunctionalBytes];
  if (store) {
    memory_.read(task.source_address, data, n);
    const auto packets = static_cast<uint32_t>(packets_of(link_params_, task.bytes));
    for (uint32_t i = remote; i < task.target_count; ++i) {
      const uint64_t address =
          target_location(multimem_address, hw::MultimemStage::dispatch, targets, addresses, i, packets, miss);
      memory_.write(address, data, n);
      counters_.count_landing(address, landed(issue, miss));
    }
    stats_.local_copies += local;
    if (task.count_per_expert) {
      for (uint32_t i = remote; i < task.target_count; ++i) {
        count_dynamic_block(task.counter, true, targets[i], landed(issue, miss));
      }
      return;
    }
  } else {
    // Every target is here: the load completes without the switch.
    add_local_partials(multimem_address, targets, addresses, remote, local, task.bytes,
                       static_cast<uint8_t>(task.reduce_op), static_cast<uint8_t>(task.reduce_type), data, n, false,
                       miss);
    memory_.write(task.target_address, data, n);
  }
  counters_.record_arrival(task.counter, landed(issue, miss), store ? local : 1);
}

void DynamicMultimemClient::run_notify(const hw::WorkSequence& sequence, const hw::Task& task) {
  const sc_time now = current_time();
  const bool from_hub = task.addressing == hw::DynamicAddressing::algebraic;
  uint64_t tokens_per_gpu = 0;
  if (!hub_.tokens_per_gpu(task.source_address, tokens_per_gpu) ||
      (!from_hub && task.first_block + task.blocks > sequence.block_tokens.size())) {
    std::ostringstream msg;
    msg << "notify_tokens: blocks " << task.first_block << " + " << task.blocks << " of "
        << (from_hub ? "the Hub's" : "the sequence's") << " token-ID table for the dynamic object at "
        << hw::hex_text(task.source_address) << ": no such object bound, or blocks beyond the table";
    SC_REPORT_FATAL(owner_, msg.str().c_str());
    return;
  }
  // Notifications per home in block order; this GPU's own tokens count at once.
  std::vector<std::vector<hw::WriteElement>>& by_home = notifications_by_home_;
  for (uint64_t b = 0; b < task.blocks; ++b) {
    uint64_t token = 0;
    const uint64_t block = task.first_block + b;
    if (!from_hub) {
      token = sequence.block_tokens[block];
    } else if (block > UINT32_MAX || !hub_.token_of_block(task.source_address, static_cast<uint32_t>(block), token)) {
      std::ostringstream msg;
      msg << "notify_tokens: layout block " << block << " of the dynamic object at "
          << hw::hex_text(task.source_address) << " holds no token (the Hub never allocated it)";
      SC_REPORT_FATAL(owner_, msg.str().c_str());
      return;
    }
    const auto home = static_cast<uint32_t>(token / tokens_per_gpu);
    const uint64_t entry = task.target_address + hw::kCounterEntryBytes * (token % tokens_per_gpu);
    stats_.notifications_sent++;
    if (home == gpu_id_) {
      counters_.count_landing(entry, now);
      counters_.record_arrival(task.counter, now);
      continue;
    }
    if (home >= by_home.size()) by_home.resize(home + 1);
    by_home[home].push_back(hw::WriteElement{entry, entry});
  }
  send_notifications(sequence, task, now);
}

// A home's notifications travel in messages of what one payload holds, homes in ascending order.
void DynamicMultimemClient::send_notifications(const hw::WorkSequence& sequence, const hw::Task& task,
                                               const sc_time& now) {
  const uint32_t per_message = std::max<uint32_t>(1, PayloadPool::kMaxFunctionalBytes / functional_bytes_);
  for (uint32_t home = 0; home < notifications_by_home_.size(); ++home) {
    std::vector<hw::WriteElement>& list = notifications_by_home_[home];
    for (size_t first = 0; first < list.size(); first += per_message) {
      const auto n = static_cast<uint32_t>(std::min<size_t>(per_message, list.size() - first));
      if (notification_elements_.empty() || notification_elements_.back().size() + n > kNotificationBlock) {
        notification_elements_.emplace_back();
        notification_elements_.back().reserve(kNotificationBlock);
      }
      std::vector<hw::WriteElement>& block = notification_elements_.back();
      const size_t at = block.size();
      block.insert(block.end(), list.begin() + static_cast<ptrdiff_t>(first),
                   list.begin() + static_cast<ptrdiff_t>(first + n));
      TxItem item;
      item.opcode = Opcode::write;
      item.peer = home;
      item.counter = task.counter;
      item.chunk = &block[at];
      item.chunk_writes = n;
      item.chunk_mask = all_chunk_writes(n);
      item.bytes = task.bytes * n;
      item.wire_flits = link_params_.wire_flits(task.bytes * n);  // one packet of token entries
      item.source_address = block[at].source_address;
      item.target_address = block[at].target_address;
      item.notification = true;
      item.stream = static_cast<uint8_t>(sequence.stream);
      item.not_before = now;
      links_.enqueue(links_.link_for(item.target_address), TrafficClass::request, item);
    }
    list.clear();
  }
}

}  // namespace nvsvp::model
