// Functional access to one GPU's memory, as seen by kernels and by checks. SystemC-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

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
  // Bulk forms, for kernels and checks that walk a buffer: element i is at base + i * stride and
  // `length` bytes of it move (out/in + i * length). read_strided also returns each element's
  // write count (write_count of its first byte) when `write_counts` is not null. A model may
  // answer with one buffer lookup instead of one per element; the results are the same.
  virtual void read_strided(uint64_t base, uint64_t stride, uint64_t count, size_t length, void* out,
                            uint32_t* write_counts = nullptr) const {
    auto* bytes = static_cast<uint8_t*>(out);
    for (uint64_t i = 0; i < count; ++i) {
      read(base + i * stride, bytes + i * length, length);
      if (write_counts != nullptr) write_counts[i] = write_count(base + i * stride);
    }
  }
  virtual void write_strided(uint64_t base, uint64_t stride, uint64_t count, size_t length, const void* in) {
    const auto* bytes = static_cast<const uint8_t*>(in);
    for (uint64_t i = 0; i < count; ++i) write(base + i * stride, bytes + i * length, length);
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
