// A FIFO for queues that stay short (a VC buffer holds a few messages): one small contiguous
// block, reused, instead of std::deque's 512-byte nodes, so thousands of them stay in cache.
// SystemC-free.
#pragma once

#include <cstddef>
#include <vector>

namespace nvsvp::model {

template <class T>
class SmallFifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  const T& front() const { return items_[head_]; }
  void push_back(const T& item) { items_.push_back(item); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    }
  }
  typename std::vector<T>::const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  typename std::vector<T>::const_iterator end() const { return items_.end(); }

 private:
  std::vector<T> items_;
  size_t head_ = 0;
};

}  // namespace nvsvp::model
