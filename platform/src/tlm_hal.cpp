#include "nvsvp/platform/tlm_hal.hpp"

#include <stdexcept>

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

double TlmHal::now_ns() const { return sc_core::sc_time_stamp().to_seconds() * 1e9; }

hw::MemoryAccess& TlmHal::memory(uint32_t gpu) { return platform_.gpu(gpu).memory(); }

uint64_t TlmHal::received_messages(uint32_t gpu) const {
  return platform_.gpu(gpu).stats().messages_received;
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
