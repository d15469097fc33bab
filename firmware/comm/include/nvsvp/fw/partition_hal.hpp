// One partition's view of the machine (docs/firmware.md#partitions): a Hal whose GPUs are the
// partition's, numbered 0 .. size-1 in the order the partition lists them, over the Hal of the
// whole machine. Firmware that plans and runs a layer on "every GPU" (build_layer, load_inputs,
// run_layer, verify_layer) then runs unchanged on one partition: each GPU index it passes is
// mapped to the machine's, in calls and inside the work it submits. Static multimem addresses are
// moved by the partition's multimem offset, so that partitions' groups never share an address.
#pragma once

#include <cstdint>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/moe_layer.hpp"

namespace nvsvp::fw {

class PartitionHal final : public Hal {
 public:
  // `gpus`: the partition's GPUs (machine indices, each below machine.gpu_count(), none twice, at
  // most 64); `multimem_offset`: added to every static multimem address (2 MiB aligned). Throws
  // std::invalid_argument otherwise.
  PartitionHal(Hal& machine, std::vector<uint32_t> gpus, uint64_t multimem_offset);

  // The machine's index of the partition's GPU `gpu`. Throws std::out_of_range beyond the partition.
  uint32_t machine_gpu(uint32_t gpu) const { return gpus_.at(gpu); }
  // `group` (members and addresses in the partition's terms) in the machine's terms: members
  // mapped, base moved by the multimem offset.
  MulticastGroupRequest machine_group(const MulticastGroupRequest& group) const;
  // `sequence` (for the partition's GPU) in the machine's terms: the peer of sends and reads
  // mapped, static multimem addresses moved. Throws std::invalid_argument for a dynamic multimem
  // task or a token notification: their targets are experts the switch chips map to GPUs
  // chip-wide (DYN_EXPERTS_PER_GPU), which no per-partition renumbering reaches.
  hw::WorkSequence machine_sequence(hw::WorkSequence sequence) const;

  uint32_t gpu_count() const override { return static_cast<uint32_t>(gpus_.size()); }
  void submit(uint32_t gpu, hw::WorkSequence sequence) override;
  // Waits for the machine's GPUs: every partition's work, not only this one's.
  void wait_all_finished() override { machine_.wait_all_finished(); }
  bool wait_finished_or_interrupt() override { return machine_.wait_finished_or_interrupt(); }
  double now_ns() const override { return machine_.now_ns(); }
  hw::MemoryAccess& memory(uint32_t gpu) override { return machine_.memory(machine_gpu(gpu)); }
  uint64_t received_messages(uint32_t gpu) const override { return machine_.received_messages(machine_gpu(gpu)); }
  uint64_t received_notifications(uint32_t gpu) const override {
    return machine_.received_notifications(machine_gpu(gpu));
  }
  void bind_dynamic_object(uint32_t gpu, const hw::DynamicMulticastBinding& binding, uint64_t local_base) override;
  bool dynamic_local_address(uint32_t gpu, uint64_t multimem_address, uint16_t expert,
                             uint64_t& local_address) override {
    return machine_.dynamic_local_address(machine_gpu(gpu), multimem_address, expert, local_address);
  }
  void set_gpu_link_enabled(uint32_t gpu, uint32_t link, bool enabled) override {
    machine_.set_gpu_link_enabled(machine_gpu(gpu), link, enabled);
  }
  uint64_t gpu_links_down(uint32_t gpu) override { return machine_.gpu_links_down(machine_gpu(gpu)); }
  uint64_t reissue_lost_operations(uint32_t gpu) override { return machine_.reissue_lost_operations(machine_gpu(gpu)); }
  uint32_t switch_count() const override { return machine_.switch_count(); }
  uint32_t read_register(uint32_t chip, uint32_t offset) override { return machine_.read_register(chip, offset); }
  void write_register(uint32_t chip, uint32_t offset, uint32_t value) override {
    machine_.write_register(chip, offset, value);
  }
  bool wait_interrupt(double timeout_ns) override { return machine_.wait_interrupt(timeout_ns); }
  bool log_enabled(hw::LogLevel level) const override { return machine_.log_enabled(level); }
  void log(hw::LogLevel level, const std::string& line) override { machine_.log(level, line); }

 private:
  Hal& machine_;
  const std::vector<uint32_t> gpus_;
  const uint64_t multimem_offset_;
};

}  // namespace nvsvp::fw
