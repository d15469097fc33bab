// Sparse functional memory of one GPU. Only 16-byte granules that were written are stored, in
// one open-addressing table (no allocation per granule), each with a write counter so that
// checks can prove a copy landed exactly once. Unwritten bytes read as zero. SystemC-free.
#pragma once

#include <cstdint>
#include <vector>

#include "nvsvp/hw/memory_access.hpp"

namespace nvsvp::model {

class GpuMemory : public hw::MemoryAccess {
 public:
  static constexpr uint64_t kGranuleBytes = 16;

  GpuMemory();

  void read(uint64_t address, void* data, size_t length) const override;
  void write(uint64_t address, const void* data, size_t length) override;
  uint32_t write_count(uint64_t address) const override;

  uint64_t granules() const { return used_; }
  uint64_t writes() const { return writes_; }

 private:
  struct Granule {
    uint64_t key;  // address / kGranuleBytes, or kEmpty
    uint32_t writes;
    uint8_t bytes[kGranuleBytes];
  };
  static constexpr uint64_t kEmpty = ~0ull;

  const Granule* find(uint64_t key) const;
  Granule& find_or_insert(uint64_t key);
  size_t slot_of(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow();

  std::vector<Granule> table_;
  uint64_t used_ = 0;
  unsigned shift_;
  uint64_t writes_ = 0;
};

}  // namespace nvsvp::model
