#include "nvsvp/fw/partition_hal.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {

namespace {

constexpr uint32_t kMaxPartitionGpus = hw::kMaxGpus;  // the bits of a group's members

[[noreturn]] void refuse_dynamic(const char* what) {
  throw std::invalid_argument(std::string("partition: ") + what +
                              " is dynamic multimem, whose experts the switch chips map to GPUs chip-wide "
                              "(DYN_EXPERTS_PER_GPU): not available within a partition");
}

}  // namespace

PartitionHal::PartitionHal(Hal& machine, std::vector<uint32_t> gpus, uint64_t multimem_offset)
    : machine_(machine), gpus_(std::move(gpus)), multimem_offset_(multimem_offset) {
  if (gpus_.empty() || gpus_.size() > kMaxPartitionGpus) {
    throw std::invalid_argument("partition: " + std::to_string(gpus_.size()) + " GPUs (expected 1 to " +
                                std::to_string(kMaxPartitionGpus) + ")");
  }
  if (multimem_offset_ % hw::switch_regs::kMulticastGranule != 0) {
    throw std::invalid_argument("partition: multimem offset " + std::to_string(multimem_offset_) +
                                " is not a multiple of 2 MiB");
  }
  std::vector<bool> seen(machine_.gpu_count(), false);
  for (uint32_t g : gpus_) {
    if (g >= seen.size()) {
      throw std::invalid_argument("partition: GPU " + std::to_string(g) + " (the machine has " +
                                  std::to_string(seen.size()) + ")");
    }
    if (seen[g]) throw std::invalid_argument("partition: GPU " + std::to_string(g) + " listed twice");
    seen[g] = true;
  }
}

MulticastGroupRequest PartitionHal::machine_group(const MulticastGroupRequest& group) const {
  MulticastGroupRequest mapped = group;
  mapped.base += multimem_offset_;
  mapped.members = hw::GpuMask{};
  for (uint32_t g : group.members) mapped.members.set(machine_gpu(g));
  return mapped;
}

hw::WorkSequence PartitionHal::machine_sequence(hw::WorkSequence sequence) const {
  for (hw::Task& task : sequence.tasks) {
    switch (task.kind) {
      case hw::TaskKind::send:
      case hw::TaskKind::read:
        task.peer = machine_gpu(task.peer);
        break;
      case hw::TaskKind::multimem_store:
      case hw::TaskKind::multimem_red:
        task.target_address += multimem_offset_;
        break;
      case hw::TaskKind::multimem_ld_reduce:
        task.source_address += multimem_offset_;
        break;
      case hw::TaskKind::dynamic_store:
      case hw::TaskKind::dynamic_ld_reduce:
        refuse_dynamic("a dynamic_store or dynamic_ld_reduce task");
      case hw::TaskKind::notify_tokens:
        refuse_dynamic("a notify_tokens task");
      case hw::TaskKind::local_copy:
      case hw::TaskKind::wait_counter:
      case hw::TaskKind::compute:
      case hw::TaskKind::gemm:
      case hw::TaskKind::take_ready:
        break;  // local to the GPU: no GPU index, no multimem address
    }
  }
  return sequence;
}

void PartitionHal::submit(uint32_t gpu, hw::WorkSequence sequence) {
  const uint32_t machine = machine_gpu(gpu);
  machine_.submit(machine, machine_sequence(std::move(sequence)));
}

void PartitionHal::bind_dynamic_object(uint32_t, const hw::DynamicMulticastBinding&, uint64_t) {
  refuse_dynamic("binding a dynamic object");
}

}  // namespace nvsvp::fw
