// The hardware abstraction layer: everything firmware may do to the machine. The platform
// implements it over the TLM models (from a SystemC thread); unit tests implement it with a mock.
// SystemC-free on purpose.
#pragma once

#include <cstdint>
#include <string>

#include "nvsvp/hw/dynamic_multicast.hpp"
#include "nvsvp/hw/log_level.hpp"
#include "nvsvp/hw/memory_access.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw {

class Hal {
 public:
  virtual ~Hal() = default;

  virtual uint32_t gpu_count() const = 0;
  // Hands `sequence` to GPU `gpu`'s work executor; it starts at once.
  virtual void submit(uint32_t gpu, hw::WorkSequence sequence) = 0;
  // Blocks (in simulated time) until every GPU has run all the work it was given.
  virtual void wait_all_finished() = 0;
  // Blocks (in simulated time) until every GPU has run all its work (returns true) or some switch
  // chip's interrupt line is high or some GPU's link-state interrupt pending (returns false). An interrupt wins: a line already high returns
  // false at once, even when the work is done too, so that firmware services it first. What
  // firmware waits on while a layer runs (run_layer's service loop).
  virtual bool wait_finished_or_interrupt() = 0;
  virtual double now_ns() const = 0;
  // Debug access to a GPU's memory: loading inputs, reading results for checks.
  virtual hw::MemoryAccess& memory(uint32_t gpu) = 0;
  // The GPU's receive counter: messages that arrived over its links, not counting the partial
  // sums a switch passed on because its reduction buffer was full (how many there are depends on
  // buffer occupancy, not on the work).
  // Nor does it count the messages of token notifications (notify_tokens): how many there are
  // depends on which tokens shared a tile, that is on arrival order. Their notifications (the
  // tokens they name) are counted instead. Nor the member reads it answered for loads a switch
  // chip then lost (they went again with new reads).
  virtual uint64_t received_messages(uint32_t gpu) const = 0;
  virtual uint64_t received_notifications(uint32_t gpu) const = 0;

  // Dynamic multimem (docs/background/dynamic_multimem.md#the-gpu-hub): programs GPU `gpu`'s Hub
  // with a bound object whose blocks that GPU packs at `local_base`. Throws std::invalid_argument
  // for a binding the Hub refuses.
  virtual void bind_dynamic_object(uint32_t gpu, const hw::DynamicMulticastBinding& binding, uint64_t local_base) = 0;
  // Reads GPU `gpu`'s algebraic->layout table (for checks): the local address of byte
  // `multimem_address` for target `expert`; false when the table holds no entry for it.
  virtual bool dynamic_local_address(uint32_t gpu, uint64_t multimem_address, uint16_t expert,
                                     uint64_t& local_address) = 0;

  // GPU `gpu` stops (false) or resumes (true) using its link `link`: while it is out of use, the
  // messages queued for it and every new one spread over the GPU's other links, those to the
  // same switch chip first (docs/firmware.md#link-down-recovery). What firmware does when a link
  // goes down or comes back.
  virtual void set_gpu_link_enabled(uint32_t gpu, uint32_t link, bool enabled) = 0;
  // GPU `gpu`'s link state as its link layer sees it: bit l is set while its link l is down (in
  // either direction, or because the switch chip at the other end is dead). A change raises the
  // GPU's link-state interrupt, which wait_interrupt and wait_finished_or_interrupt wake on like
  // a chip's line; this read acknowledges it.
  virtual uint64_t gpu_links_down(uint32_t gpu) = 0;
  // GPU `gpu` re-issues its operations that a switch chip lost (a dead chip, or one firmware
  // flushed with CHIP_CONTROL): messages it sent that the chip had not delivered, copies of its
  // multimem and dynamic stores still in the chip, loads whose results never came. They go over
  // the links in use at the call. Returns how many; the GPU holds them until this call.
  virtual uint64_t reissue_lost_operations(uint32_t gpu) = 0;

  // The switch chips' register blocks (docs/registers.md; offsets in nvsvp/hw/switch_registers.hpp).
  // Chips are numbered 0 .. switch_count()-1. An access takes the chip's register access time
  // in simulated time. A refused access (unknown offset, read-only register, ...) is no exception:
  // the read returns 0, the write is ignored and the chip sets error_bad_register_access.
  virtual uint32_t switch_count() const = 0;
  virtual uint32_t read_register(uint32_t chip, uint32_t offset) = 0;
  virtual void write_register(uint32_t chip, uint32_t offset, uint32_t value) = 0;
  // Blocks (in simulated time) until some chip's interrupt line is high (or a GPU's link-state
  // interrupt pending), at most `timeout_ns`; returns whether one is. Returns at once when one already is. The line stays high
  // until firmware clears the pending bits, so an interrupt is never lost between two waits.
  virtual bool wait_interrupt(double timeout_ns) = 0;

  // Firmware's log: whether a line of `level` is printed, and the line (the platform adds the
  // simulated time and the component name "firmware"). By default nothing is. Use FW_LOG.
  virtual bool log_enabled(hw::LogLevel) const { return false; }
  virtual void log(hw::LogLevel, const std::string&) {}
};

}  // namespace nvsvp::fw
