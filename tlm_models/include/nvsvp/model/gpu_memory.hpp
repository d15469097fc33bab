// Functional memory of one GPU. Only 16-byte granules that were written are stored, each with a
// write counter so that checks can prove a copy landed exactly once; unwritten bytes read as
// zero. The leading granule of every element of a declared buffer lives in a dense array (the
// model's equivalent of an allocation: what firmware touches in order stays close in the host's
// caches); every other granule lives in one open-addressing table. SystemC-free.
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
  uint32_t read_counted(uint64_t address, void* data, size_t length) const override;
  void read_strided(uint64_t base, uint64_t stride, uint64_t count, size_t length, void* out,
                    uint32_t* write_counts = nullptr) const override;
  void write_strided(uint64_t base, uint64_t stride, uint64_t count, size_t length, const void* in) override;
  void declare_buffer(uint64_t base, uint64_t element_bytes, uint64_t elements) override;

  uint64_t sparse_granules() const { return used_; }
  uint64_t writes() const { return writes_; }

 private:
  struct Granule {
    uint32_t writes;
    uint8_t bytes[kGranuleBytes];
  };
  struct SparseGranule {
    uint64_t key;  // address / kGranuleBytes, or kEmpty
    Granule granule;
  };
  struct Buffer {
    uint64_t base;
    uint64_t element_bytes;
    uint64_t end;
    std::vector<Granule> leading;  // [element]
    // offset / element_bytes as a multiply (Lemire's method, exact for offsets below 2^32):
    // a division per message access costs more than the rest of the lookup.
    uint64_t reciprocal;  // 2^64 / element_bytes rounded up; 0 when element_bytes >= 2^32
    uint64_t element_of(uint64_t offset) const {
      if (reciprocal == 0 || offset >> 32 != 0) return offset / element_bytes;
      __extension__ using Wide = unsigned __int128;
      return static_cast<uint64_t>((static_cast<Wide>(reciprocal) * offset) >> 64);
    }
  };
  static constexpr uint64_t kEmpty = ~0ull;

  // The granule holding `address` (granule-aligned), or nullptr if it was never written.
  const Granule* find(uint64_t address) const;
  Granule& find_or_insert(uint64_t address);
  // The dense granule holding `address`, or nullptr; `last` remembers the buffer last hit (reads
  // and writes keep their own: a GPU alternates between its send and receive buffers), or is
  // nullptr.
  Granule* dense(uint64_t address, const Buffer*& last) const;
  // The leading granules of elements [first, first + count) of the declared buffer whose
  // elements are `stride` apart and start at `base`, or nullptr if no such buffer holds them all.
  Granule* dense_run(uint64_t base, uint64_t stride, uint64_t count) const;
  size_t slot_of(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(size_t slots);

  std::vector<Buffer> buffers_;
  // A pointer into buffers_, so that a hit costs one range check. declare_buffer clears it, and
  // a copied (or moved) memory starts without it rather than point into another's buffers.
  struct LastBuffer {
    const Buffer* buffer = nullptr;
    LastBuffer() = default;
    LastBuffer(const LastBuffer&) {}
    LastBuffer& operator=(const LastBuffer&) {
      buffer = nullptr;
      return *this;
    }
  };
  mutable LastBuffer last_read_buffer_;
  LastBuffer last_write_buffer_;
  std::vector<SparseGranule> table_;
  uint64_t used_ = 0;
  unsigned shift_;
  uint64_t writes_ = 0;
};

}  // namespace nvsvp::model
