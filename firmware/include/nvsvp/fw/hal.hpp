// The hardware abstraction layer: everything firmware may do to the machine. The platform
// implements it over the TLM models (from a SystemC thread); unit tests implement it with a mock.
// SystemC-free on purpose.
#pragma once

#include <cstdint>

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
  virtual double now_ns() const = 0;
  // Debug access to a GPU's memory: loading inputs, reading results for checks.
  virtual hw::MemoryAccess& memory(uint32_t gpu) = 0;
  // The GPU's receive counter: messages that arrived over its links.
  virtual uint64_t received_messages(uint32_t gpu) const = 0;
};

}  // namespace nvsvp::fw
