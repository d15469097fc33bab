#include "nvsvp/platform/tlm_hal.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace nvsvp::platform {

void TlmHal::submit(uint32_t gpu, hw::WorkSequence sequence) {
  if (gpu >= platform_.gpu_count()) throw std::out_of_range("submit to a GPU that does not exist");
  platform_.gpu(gpu).submit(std::move(sequence));
}

void TlmHal::wait_all_finished() {
  for (;;) {
    sc_core::sc_event_or_list unfinished;
    bool any = false;
    for (uint32_t g = 0; g < platform_.gpu_count(); ++g) {
      if (!platform_.gpu(g).finished()) {
        unfinished |= platform_.gpu(g).finished_event();
        any = true;
      }
    }
    if (!any) return;
    sc_core::wait(unfinished);
  }
}

bool TlmHal::wait_finished_or_interrupt() {
  for (;;) {
    sc_core::sc_event_or_list changes;
    // The lines first: a line already high is serviced before the work is declared done.
    for (uint32_t c = 0; c < platform_.switch_count(); ++c) {
      if (platform_.chip(c).irq()) return false;
      changes |= platform_.chip(c).irq_changed();
    }
    for (uint32_t g = 0; g < platform_.gpu_count(); ++g) {
      if (platform_.gpu(g).link_state_interrupt()) return false;
      changes |= platform_.gpu(g).link_state_changed();
    }
    bool unfinished = false;
    for (uint32_t g = 0; g < platform_.gpu_count(); ++g) {
      if (!platform_.gpu(g).finished()) {
        changes |= platform_.gpu(g).finished_event();
        unfinished = true;
      }
    }
    if (!unfinished) return true;
    sc_core::wait(changes);
  }
}

double TlmHal::now_ns() const { return sc_core::sc_time_stamp().to_seconds() * 1e9; }

hw::MemoryAccess& TlmHal::memory(uint32_t gpu) { return platform_.gpu(gpu).memory(); }

uint64_t TlmHal::received_messages(uint32_t gpu) const {
  const model::GpuStats& stats = platform_.gpu(gpu).stats();
  return stats.messages_received - stats.partials_received - stats.notification_messages_received -
         stats.chunk_parts_received - platform_.void_member_reads(gpu);
}

uint64_t TlmHal::received_notifications(uint32_t gpu) const {
  return platform_.gpu(gpu).stats().notifications_received;
}

void TlmHal::set_gpu_link_enabled(uint32_t gpu, uint32_t link, bool enabled) {
  if (gpu >= platform_.gpu_count()) throw std::out_of_range("set_gpu_link_enabled on a GPU that does not exist");
  if (link >= platform_.links_per_gpu()) throw std::out_of_range("set_gpu_link_enabled on a link that does not exist");
  platform_.gpu(gpu).set_link_enabled(link, enabled);
}

uint64_t TlmHal::gpu_links_down(uint32_t gpu) {
  if (gpu >= platform_.gpu_count()) throw std::out_of_range("gpu_links_down on a GPU that does not exist");
  return platform_.gpu(gpu).read_links_down();
}

uint64_t TlmHal::reissue_lost_operations(uint32_t gpu) {
  if (gpu >= platform_.gpu_count()) throw std::out_of_range("reissue_lost_operations on a GPU that does not exist");
  return platform_.gpu(gpu).reissue_lost_operations();
}

void TlmHal::bind_dynamic_object(uint32_t gpu, const hw::DynamicMulticastBinding& binding, uint64_t local_base) {
  if (gpu >= platform_.gpu_count()) throw std::out_of_range("bind_dynamic_object on a GPU that does not exist");
  try {
    platform_.gpu(gpu).install_dynamic_multicast(binding, local_base);
  } catch (const model::HubError& e) {
    throw std::invalid_argument(e.what());
  }
}

bool TlmHal::dynamic_local_address(uint32_t gpu, uint64_t multimem_address, uint16_t expert, uint64_t& local_address) {
  if (gpu >= platform_.gpu_count()) throw std::out_of_range("dynamic_local_address on a GPU that does not exist");
  return platform_.gpu(gpu).hub().lookup(multimem_address, expert, local_address);
}

uint32_t TlmHal::register_access(tlm::tlm_command command, uint32_t chip, uint32_t offset, uint32_t value) {
  tlm::tlm_generic_payload payload;
  uint8_t data[4];
  std::memcpy(data, &value, 4);
  payload.set_command(command);
  payload.set_address(offset);
  payload.set_data_ptr(data);
  payload.set_data_length(4);
  payload.set_streaming_width(4);
  payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  platform_.register_transport(chip, payload, delay);
  if (!payload.is_response_ok()) {
    throw std::runtime_error("register access to switch chip " + std::to_string(chip) + " offset " +
                             std::to_string(offset) + ": " + payload.get_response_string());
  }
  // Loosely timed: the access took `delay`; a zero delay costs no delta cycle.
  if (delay != sc_core::SC_ZERO_TIME) sc_core::wait(delay);
  std::memcpy(&value, data, 4);
  return value;
}

uint32_t TlmHal::read_register(uint32_t chip, uint32_t offset) {
  return register_access(tlm::TLM_READ_COMMAND, chip, offset, 0);
}

void TlmHal::write_register(uint32_t chip, uint32_t offset, uint32_t value) {
  register_access(tlm::TLM_WRITE_COMMAND, chip, offset, value);
}

bool TlmHal::wait_interrupt(double timeout_ns) {
  if (!(timeout_ns >= 0.0)) throw std::invalid_argument("wait_interrupt: negative timeout");
  const sc_core::sc_time deadline = sc_core::sc_time_stamp() + sc_core::sc_time(timeout_ns, sc_core::SC_NS);
  for (;;) {
    // The lines are levels read straight from the register blocks: an interrupt raised before
    // this call is seen here, not lost.
    sc_core::sc_event_or_list changes;
    for (uint32_t c = 0; c < platform_.switch_count(); ++c) {
      if (platform_.chip(c).irq()) return true;
      changes |= platform_.chip(c).irq_changed();
    }
    for (uint32_t g = 0; g < platform_.gpu_count(); ++g) {
      if (platform_.gpu(g).link_state_interrupt()) return true;
      changes |= platform_.gpu(g).link_state_changed();
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (now >= deadline) return false;
    if (platform_.switch_count() == 0 && platform_.gpu_count() == 0) {
      sc_core::wait(deadline - now);
      return false;
    }
    sc_core::wait(deadline - now, changes);
  }
}

FirmwareHost::FirmwareHost(const sc_core::sc_module_name& name, std::function<void()> entry)
    : sc_module(name), entry_(std::move(entry)) {
  SC_HAS_PROCESS(FirmwareHost);
  SC_THREAD(run);
}

void FirmwareHost::run() {
  entry_();
  done_ = true;
}

}  // namespace nvsvp::platform
