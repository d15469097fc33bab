// Functional access to one GPU's memory, as seen by kernels and by checks. SystemC-free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nvsvp::hw {

class MemoryAccess {
 public:
  virtual ~MemoryAccess() = default;
  virtual void read(uint64_t address, void* data, size_t length) const = 0;
  virtual void write(uint64_t address, const void* data, size_t length) = 0;
  // How many writes touched the byte at `address` since reset: how checks prove that a copy
  // landed exactly once. A debug (backdoor) view, not an architectural register.
  virtual uint32_t write_count(uint64_t address) const = 0;
  // read() and write_count(address) together (a model may answer both with one lookup).
  virtual uint32_t read_counted(uint64_t address, void* data, size_t length) const {
    read(address, data, length);
    return write_count(address);
  }
  // Allocation hint: a buffer of `elements` elements, `element_bytes` apart from `base`, will be
  // used, so that a model can keep its elements' leading bytes densely. No effect on behaviour.
  virtual void declare_buffer(uint64_t base, uint64_t element_bytes, uint64_t elements) {
    (void)base;
    (void)element_bytes;
    (void)elements;
  }
};

}  // namespace nvsvp::hw
