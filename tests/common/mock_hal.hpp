// The firmware's HAL as a GoogleMock, shared by the firmware unit tests.
#pragma once

#include <gmock/gmock.h>

#include <cstdint>

#include "nvsvp/fw/hal.hpp"

namespace nvsvp::test {

class MockHal : public fw::Hal {
 public:
  MOCK_METHOD(uint32_t, gpu_count, (), (const, override));
  MOCK_METHOD(void, submit, (uint32_t gpu, hw::WorkSequence sequence), (override));
  MOCK_METHOD(void, wait_all_finished, (), (override));
  MOCK_METHOD(bool, wait_finished_or_interrupt, (), (override));
  MOCK_METHOD(double, now_ns, (), (const, override));
  MOCK_METHOD(hw::MemoryAccess&, memory, (uint32_t gpu), (override));
  MOCK_METHOD(uint64_t, received_messages, (uint32_t gpu), (const, override));
  MOCK_METHOD(uint64_t, received_notifications, (uint32_t gpu), (const, override));
  MOCK_METHOD(void, bind_dynamic_object, (uint32_t gpu, const hw::DynamicMulticastBinding& binding, uint64_t local_base),
              (override));
  MOCK_METHOD(bool, dynamic_local_address, (uint32_t gpu, uint64_t multimem_address, uint16_t expert, uint64_t& local_address),
              (override));
  MOCK_METHOD(void, set_gpu_link_enabled, (uint32_t gpu, uint32_t link, bool enabled), (override));
  MOCK_METHOD(uint64_t, gpu_links_down, (uint32_t gpu), (override));
  MOCK_METHOD(uint64_t, reissue_lost_operations, (uint32_t gpu), (override));
  MOCK_METHOD(uint32_t, switch_count, (), (const, override));
  MOCK_METHOD(uint32_t, read_register, (uint32_t chip, uint32_t offset), (override));
  MOCK_METHOD(void, write_register, (uint32_t chip, uint32_t offset, uint32_t value), (override));
  MOCK_METHOD(bool, wait_interrupt, (double timeout_ns), (override));
};

}  // namespace nvsvp::test
