// Records addressed by a stable index, reused once given back (held multicast requests, pending
// reductions): no allocation per message once the pool has grown. SystemC-free.
#pragma once

#include <cstdint>
#include <vector>

namespace nvsvp::model {

template <class T>
class SlotPool {
 public:
  // An index whose record is free to be overwritten.
  uint32_t take() {
    if (free_.empty()) {
      slots_.emplace_back();
      return static_cast<uint32_t>(slots_.size() - 1);
    }
    const uint32_t index = free_.back();
    free_.pop_back();
    return index;
  }
  void give(uint32_t index) { free_.push_back(index); }

  T& operator[](uint32_t index) { return slots_[index]; }
  const T& operator[](uint32_t index) const { return slots_[index]; }
  uint32_t size() const { return static_cast<uint32_t>(slots_.size()); }

 private:
  std::vector<T> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace nvsvp::model
