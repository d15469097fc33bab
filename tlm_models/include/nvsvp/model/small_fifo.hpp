// A FIFO for queues that stay short (a VC buffer holds a few messages): one small contiguous
// block, reused, instead of std::deque's 512-byte nodes, so thousands of them stay in cache.
// A queue that never runs empty (a switch's queue of multicast copies under load) moves its live
// items to the front once the consumed ones are the majority, so that it neither grows without
// bound nor writes every new item to memory it has never touched; `kCompactAfter` consumed items
// at least (a queue read for every message keeps fewer cache lines live with a smaller one).
// SystemC-free.
#pragma once

#include <cstddef>
#include <vector>

namespace nvsvp::model {

template <class T, size_t kCompactAfter = 32>
class SmallFifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  const T& front() const { return items_[head_]; }
  void push_back(const T& item) { items_.push_back(item); }
  // Queues `item` behind every item that `later` does not put after it (a queue kept in an order,
  // ties in order of queueing); true when it is the head now.
  template <class Later>
  bool insert_in_order(const T& item, Later later) {
    items_.push_back(item);
    size_t at = items_.size() - 1;
    for (; at > head_ && later(items_[at - 1], item); --at) items_[at] = items_[at - 1];
    items_[at] = item;
    return at == head_;
  }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAfter && 2 * head_ >= items_.size()) {  // amortised O(1) per pop
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  typename std::vector<T>::const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  typename std::vector<T>::const_iterator end() const { return items_.end(); }
  typename std::vector<T>::iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  typename std::vector<T>::iterator end() { return items_.end(); }

 private:
  std::vector<T> items_;
  size_t head_ = 0;
};

}  // namespace nvsvp::model
