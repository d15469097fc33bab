// The firmware HAL over the TLM platform. Blocking calls must come from a SystemC thread.
#pragma once

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/platform/platform.hpp"

namespace nvsvp::platform {

class TlmHal : public fw::Hal {
 public:
  explicit TlmHal(Platform& platform) : platform_(platform) {}

  uint32_t gpu_count() const override { return platform_.gpu_count(); }
  void submit(uint32_t gpu, hw::WorkSequence sequence) override;
  void wait_all_finished() override;
  // Wakes on a GPU finishing and on a chip's interrupt line changing; costs no time of its own.
  bool wait_finished_or_interrupt() override;
  double now_ns() const override;
  hw::MemoryAccess& memory(uint32_t gpu) override;
  uint64_t received_messages(uint32_t gpu) const override;
  uint64_t received_notifications(uint32_t gpu) const override;
  void bind_dynamic_object(uint32_t gpu, const hw::DynamicMulticastBinding& binding, uint64_t local_base) override;
  bool dynamic_local_address(uint32_t gpu, uint64_t multimem_address, uint16_t expert,
                             uint64_t& local_address) override;
  void set_gpu_link_enabled(uint32_t gpu, uint32_t link, bool enabled) override;
  uint64_t gpu_links_down(uint32_t gpu) override;
  uint64_t reissue_lost_operations(uint32_t gpu) override;
  uint32_t switch_count() const override { return platform_.switch_count(); }
  // b_transport over the platform's management bus, then wait() for the annotated delay.
  // Throws std::runtime_error if the chip answers with a TLM error (it cannot, for the 4-byte
  // accesses made here) and std::out_of_range for a chip that does not exist.
  uint32_t read_register(uint32_t chip, uint32_t offset) override;
  void write_register(uint32_t chip, uint32_t offset, uint32_t value) override;
  bool wait_interrupt(double timeout_ns) override;
  // Firmware's lines, under the component name the platform's log settings give (firmware).
  bool log_enabled(hw::LogLevel level) const override { return log_.on(level); }
  void log(hw::LogLevel level, const std::string& line) override { log_.write(level, line); }
  model::ComponentLog& log() { return log_; }

 private:
  uint32_t register_access(tlm::tlm_command command, uint32_t chip, uint32_t offset, uint32_t value);

  Platform& platform_;
  model::ComponentLog log_;
};

// Runs a firmware entry point in a SystemC thread of its own.
class FirmwareHost : public sc_core::sc_module {
 public:
  FirmwareHost(const sc_core::sc_module_name& name, std::function<void()> entry);
  bool done() const { return done_; }

 private:
  void run();
  std::function<void()> entry_;
  bool done_ = false;
};

}  // namespace nvsvp::platform
