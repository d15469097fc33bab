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
};

}  // namespace nvsvp::hw
