#include "nvsvp/model/switch_input_stage.hpp"

#include <sstream>

namespace nvsvp::model {

SwitchInputStage::SwitchInputStage(const char* owner, const SwitchParams& params, SwitchCsr& registers,
                                   uint32_t interleave_bytes)
    : owner_(owner),
      registers_(registers),
      ports_(params.ports),
      vcs_per_class_(params.vcs_per_class),
      vc_depth_flits_(params.vc_depth_flits),
      interleave_bytes_(interleave_bytes),
      output_queued_(params.packet_fabric),
      inputs_(2 * static_cast<size_t>(params.ports)),
      backward_(params.ports, nullptr) {
  const size_t buffers = static_cast<size_t>(kTrafficClasses) * params.vcs_per_class;
  const size_t queues = output_queued_ ? static_cast<size_t>(kTrafficClasses) * params.ports : buffers;
  for (Input& input : inputs_) {
    input.fifos.resize(queues);
    input.occupied_flits.assign(buffers, 0);
  }
}

void SwitchInputStage::overflow() const {
  SC_REPORT_FATAL(owner_, "input buffer overflow: the sender ignored credits");
}

void SwitchInputStage::no_route(const NvlinkExtension& ext) {
  registers_.raise_error(hw::switch_regs::error_no_route);
  std::ostringstream msg;
  msg << "no route to GPU " << ext.target_gpu << " (message " << ext.source_gpu << "#" << ext.sequence << ")";
  if (log_ != nullptr) NVSVP_LOG(*log_, error, "route lookup failed: " << msg.str());
  SC_REPORT_FATAL(owner_, msg.str().c_str());
}

void SwitchInputStage::release_held(uint32_t parent, const sc_core::sc_time& drained) {
  HeldRequest& held = held_[parent];
  inputs_[held.port].occupied_flits[held.fifo] -= held.flits;
  count_occupancy(inputs_[held.port], held.fifo, -static_cast<int64_t>(held.flits));
  return_credits(held.port, *held.payload, drained);
  held.payload->release();
  held.payload = nullptr;
  held_.give(parent);
}

uint64_t SwitchInputStage::describe(std::ostream& os, uint64_t max_lines) const {
  uint64_t count = 0;
  for (size_t p = 0; p < inputs_.size(); ++p) {
    for (size_t f = 0; f < inputs_[p].fifos.size(); ++f) {
      for (const SwitchEntry& e : inputs_[p].fifos[f]) {
        if (count++ >= max_lines) continue;
        const NvlinkExtension& ext = *e.ext;
        os << "  " << owner_ << " input " << p << " " << to_string(ext.traffic_class) << " vc "
           << ext.vc << ": " << to_string(ext.opcode) << " GPU " << ext.source_gpu << "#"
           << ext.sequence << " -> GPU " << ext.target_gpu << " via output " << e.output
           << ", ready at " << e.ready_at << "\n";
      }
    }
  }
  return count;
}

}  // namespace nvsvp::model
