#include "nvsvp/model/gpu_memory.hpp"

#include <algorithm>
#include <cstring>

namespace nvsvp::model {

namespace {
constexpr unsigned kInitialBits = 10;
}

GpuMemory::GpuMemory()
    : table_(size_t{1} << kInitialBits, SparseGranule{kEmpty, {}}), shift_(64 - kInitialBits) {}

void GpuMemory::declare_buffer(uint64_t base, uint64_t element_bytes, uint64_t elements) {
  // Only aligned, non-overlapping buffers can be kept densely; others stay sparse (same behaviour).
  if (elements == 0 || element_bytes == 0 || base % kGranuleBytes != 0 || element_bytes % kGranuleBytes != 0) return;
  const uint64_t end = base + element_bytes * elements;
  for (const Buffer& b : buffers_) {
    if (base < b.end && b.base < end) return;
  }
  Buffer buffer{base, element_bytes, end, std::vector<Granule>(elements, Granule{0, {}}),
                element_bytes >> 32 == 0 ? ~uint64_t{0} / element_bytes + 1 : 0};
  // Granules written before the declaration move into the dense array (usually there are none).
  for (uint64_t i = 0; used_ > 0 && i < elements; ++i) {
    if (const Granule* g = find(base + i * element_bytes)) buffer.leading[i] = *g;
  }
  buffers_.insert(std::upper_bound(buffers_.begin(), buffers_.end(), base,
                                   [](uint64_t b, const Buffer& x) { return b < x.base; }),
                  std::move(buffer));
  last_read_buffer_.buffer = nullptr;  // the insertion moved the buffers
  last_write_buffer_.buffer = nullptr;
}

GpuMemory::Granule* GpuMemory::dense(uint64_t address, const Buffer*& last) const {
  // One unsigned compare: an address below the base wraps around to beyond the end.
  if (last == nullptr || address - last->base >= last->end - last->base) {
    // Buffers are sorted by base and do not overlap: the candidate is the last one starting at
    // or below the address.
    auto it = std::upper_bound(buffers_.begin(), buffers_.end(), address,
                               [](uint64_t a, const Buffer& b) { return a < b.base; });
    if (it == buffers_.begin() || address >= (it - 1)->end) return nullptr;
    last = &*(it - 1);
  }
  const Buffer& b = *last;
  const uint64_t offset = address - b.base;
  const uint64_t element = b.element_of(offset);
  if (offset - element * b.element_bytes >= kGranuleBytes) return nullptr;
  return const_cast<Granule*>(&b.leading[element]);
}

const GpuMemory::Granule* GpuMemory::find(uint64_t address) const {
  if (Granule* g = dense(address, last_read_buffer_.buffer)) return g->writes == 0 ? nullptr : g;
  const uint64_t key = address / kGranuleBytes;
  const size_t mask = table_.size() - 1;
  for (size_t i = slot_of(key);; i = (i + 1) & mask) {
    const SparseGranule& s = table_[i];
    if (s.key == key) return &s.granule;
    if (s.key == kEmpty) return nullptr;
  }
}

GpuMemory::Granule& GpuMemory::find_or_insert(uint64_t address) {
  if (Granule* g = dense(address, last_write_buffer_.buffer)) return *g;
  if (2 * (used_ + 1) > table_.size()) rehash(table_.size() * 2);  // load factor at most 1/2
  const uint64_t key = address / kGranuleBytes;
  const size_t mask = table_.size() - 1;
  for (size_t i = slot_of(key);; i = (i + 1) & mask) {
    SparseGranule& s = table_[i];
    if (s.key == key) return s.granule;
    if (s.key == kEmpty) {
      s.key = key;
      ++used_;
      return s.granule;
    }
  }
}

void GpuMemory::rehash(size_t slots) {
  std::vector<SparseGranule> old(slots, SparseGranule{kEmpty, {}});
  old.swap(table_);
  while ((size_t{1} << (64 - shift_)) < slots) --shift_;
  const size_t mask = table_.size() - 1;
  for (const SparseGranule& s : old) {
    if (s.key == kEmpty) continue;
    size_t i = slot_of(s.key);
    while (table_[i].key != kEmpty) i = (i + 1) & mask;
    table_[i] = s;
  }
}

void GpuMemory::read(uint64_t address, void* data, size_t length) const {
  if (length == kGranuleBytes && address % kGranuleBytes == 0) {  // the common case: one granule
    const Granule* g = find(address);
    if (g == nullptr) {
      std::memset(data, 0, kGranuleBytes);
    } else {
      std::memcpy(data, g->bytes, kGranuleBytes);
    }
    return;
  }
  auto* out = static_cast<uint8_t*>(data);
  while (length > 0) {
    const uint64_t offset = address % kGranuleBytes;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(length, kGranuleBytes - offset));
    const Granule* g = find(address - offset);
    if (g == nullptr) {
      std::memset(out, 0, chunk);
    } else {
      std::memcpy(out, g->bytes + offset, chunk);
    }
    out += chunk;
    address += chunk;
    length -= chunk;
  }
}

void GpuMemory::write(uint64_t address, const void* data, size_t length) {
  if (length == 0) return;
  ++writes_;
  if (length == kGranuleBytes && address % kGranuleBytes == 0) {  // the common case: one granule
    Granule& g = find_or_insert(address);
    std::memcpy(g.bytes, data, kGranuleBytes);
    g.writes++;
    return;
  }
  const auto* in = static_cast<const uint8_t*>(data);
  while (length > 0) {
    const uint64_t offset = address % kGranuleBytes;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(length, kGranuleBytes - offset));
    Granule& g = find_or_insert(address - offset);
    std::memcpy(g.bytes + offset, in, chunk);
    g.writes++;
    in += chunk;
    address += chunk;
    length -= chunk;
  }
}

uint32_t GpuMemory::write_count(uint64_t address) const {
  const Granule* g = find(address - address % kGranuleBytes);
  return g == nullptr ? 0 : g->writes;
}

uint32_t GpuMemory::read_counted(uint64_t address, void* data, size_t length) const {
  if (length == kGranuleBytes && address % kGranuleBytes == 0) {  // one granule: one lookup
    const Granule* g = find(address);
    if (g == nullptr) {
      std::memset(data, 0, kGranuleBytes);
      return 0;
    }
    std::memcpy(data, g->bytes, kGranuleBytes);
    return g->writes;
  }
  read(address, data, length);
  return write_count(address);
}

GpuMemory::Granule* GpuMemory::dense_run(uint64_t base, uint64_t stride, uint64_t count) const {
  if (count == 0) return nullptr;
  const Buffer* last = last_read_buffer_.buffer;
  Granule* first = dense(base, last);
  if (first == nullptr) return nullptr;
  const Buffer& b = *last;
  const uint64_t element = static_cast<uint64_t>(first - b.leading.data());
  const bool aligned = base == b.base + element * b.element_bytes;
  if (stride != b.element_bytes || !aligned || element + count > b.leading.size()) return nullptr;
  return first;
}

void GpuMemory::read_strided(uint64_t base, uint64_t stride, uint64_t count, size_t length, void* out,
                             uint32_t* write_counts) const {
  const Granule* run = length == kGranuleBytes ? dense_run(base, stride, count) : nullptr;
  if (run == nullptr) {
    MemoryAccess::read_strided(base, stride, count, length, out, write_counts);
    return;
  }
  auto* bytes = static_cast<uint8_t*>(out);
  for (uint64_t i = 0; i < count; ++i) {
    std::memcpy(bytes + i * kGranuleBytes, run[i].bytes, kGranuleBytes);  // unwritten: zeros
    if (write_counts != nullptr) write_counts[i] = run[i].writes;
  }
}

void GpuMemory::write_strided(uint64_t base, uint64_t stride, uint64_t count, size_t length, const void* in) {
  Granule* run = length == kGranuleBytes ? dense_run(base, stride, count) : nullptr;
  if (run == nullptr) {
    MemoryAccess::write_strided(base, stride, count, length, in);
    return;
  }
  const auto* bytes = static_cast<const uint8_t*>(in);
  for (uint64_t i = 0; i < count; ++i) {
    std::memcpy(run[i].bytes, bytes + i * kGranuleBytes, kGranuleBytes);
    run[i].writes++;
  }
  writes_ += count;
}

}  // namespace nvsvp::model
