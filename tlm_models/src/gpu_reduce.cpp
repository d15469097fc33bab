#include "nvsvp/model/gpu_reduce.hpp"

#include <algorithm>

namespace nvsvp::model {

void accumulate(uint8_t* into, const uint8_t* operand, size_t bytes, reduction::ReduceOp op,
                reduction::ReduceType type) {
  for (size_t offset = 0; offset < bytes; offset += 16) {
    const size_t n = std::min<size_t>(16, bytes - offset);
    reduction::Beat current{};
    reduction::Beat addend{};
    std::copy(into + offset, into + offset + n, current.begin());
    std::copy(operand + offset, operand + offset + n, addend.begin());
    const reduction::Beat result =
        reduction::finish(type, reduction::combine(op, type, reduction::widen(type, current), addend));
    std::copy(result.begin(), result.begin() + n, into + offset);
  }
}

}  // namespace nvsvp::model
