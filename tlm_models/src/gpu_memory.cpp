#include "nvsvp/model/gpu_memory.hpp"

#include <algorithm>
#include <cstring>

namespace nvsvp::model {

namespace {
constexpr unsigned kInitialBits = 12;
}

GpuMemory::GpuMemory() : table_(size_t{1} << kInitialBits, Granule{kEmpty, 0, {}}), shift_(64 - kInitialBits) {}

const GpuMemory::Granule* GpuMemory::find(uint64_t key) const {
  const size_t mask = table_.size() - 1;
  for (size_t i = slot_of(key);; i = (i + 1) & mask) {
    const Granule& g = table_[i];
    if (g.key == key) return &g;
    if (g.key == kEmpty) return nullptr;
  }
}

GpuMemory::Granule& GpuMemory::find_or_insert(uint64_t key) {
  if (2 * (used_ + 1) > table_.size()) grow();  // load factor at most 1/2
  const size_t mask = table_.size() - 1;
  for (size_t i = slot_of(key);; i = (i + 1) & mask) {
    Granule& g = table_[i];
    if (g.key == key) return g;
    if (g.key == kEmpty) {
      g.key = key;
      ++used_;
      return g;
    }
  }
}

void GpuMemory::grow() {
  std::vector<Granule> old(table_.size() * 2, Granule{kEmpty, 0, {}});
  old.swap(table_);
  --shift_;
  const size_t mask = table_.size() - 1;
  for (const Granule& g : old) {
    if (g.key == kEmpty) continue;
    size_t i = slot_of(g.key);
    while (table_[i].key != kEmpty) i = (i + 1) & mask;
    table_[i] = g;
  }
}

void GpuMemory::read(uint64_t address, void* data, size_t length) const {
  auto* out = static_cast<uint8_t*>(data);
  while (length > 0) {
    const uint64_t offset = address % kGranuleBytes;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(length, kGranuleBytes - offset));
    const Granule* g = find(address / kGranuleBytes);
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
  const auto* in = static_cast<const uint8_t*>(data);
  while (length > 0) {
    const uint64_t offset = address % kGranuleBytes;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(length, kGranuleBytes - offset));
    Granule& g = find_or_insert(address / kGranuleBytes);
    std::memcpy(g.bytes + offset, in, chunk);
    g.writes++;
    in += chunk;
    address += chunk;
    length -= chunk;
  }
}

uint32_t GpuMemory::write_count(uint64_t address) const {
  const Granule* g = find(address / kGranuleBytes);
  return g == nullptr ? 0 : g->writes;
}

}  // namespace nvsvp::model
