// Helpers of the multimem simulation tests (static and dynamic): 16-byte values, bf16 lanes of
// small integers, reading a GPU's memory, chip counters summed, one-task sequences.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/switch_chip.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::test {

using Bytes16 = std::array<uint8_t, 16>;

// bf16 of a small integer: the upper half of its f32 encoding (exact for |v| < 256).
inline uint16_t bf16_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<uint16_t>(bits >> 16);
}

inline Bytes16 bf16_lanes(const std::array<float, 8>& values) {
  Bytes16 out{};
  for (size_t i = 0; i < 8; ++i) {
    const uint16_t b = bf16_of(values[i]);
    std::memcpy(out.data() + 2 * i, &b, 2);
  }
  return out;
}

inline Bytes16 read16(platform::TlmHal& hal, uint32_t gpu, uint64_t address) {
  Bytes16 out{};
  hal.memory(gpu).read(address, out.data(), out.size());
  return out;
}

// A switch statistic summed over the platform's chips.
inline uint64_t chips_counter(platform::Platform& platform, uint64_t model::SwitchStats::*field) {
  uint64_t sum = 0;
  for (uint32_t c = 0; c < platform.switch_count(); ++c) sum += platform.chip(c).stats().*field;
  return sum;
}

inline hw::WorkSequence one_task(const hw::Task& task) {
  hw::WorkSequence sequence;
  sequence.tasks.push_back(task);
  return sequence;
}

inline hw::WorkSequence wait_for(uint32_t counter, uint64_t count) {
  return one_task(hw::Task::wait(0, counter, count));
}

}  // namespace nvsvp::test
