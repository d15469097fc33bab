// What a GPU counts. Each of its blocks (gpu.hpp) adds to the fields of its own work: the
// executor its tasks and compute, the link engines what they send, the receiver what lands, the
// dynamic-multimem client its operations and notifications.
#pragma once

#include <cstdint>

#include <systemc>

namespace nvsvp::model {

struct GpuStats {
  uint64_t messages_sent = 0;
  uint64_t payload_bytes_sent = 0;
  uint64_t messages_received = 0;
  uint64_t payload_bytes_received = 0;
  uint64_t local_copies = 0;
  uint64_t tasks_done = 0;
  uint64_t multimem_errors = 0;  // multimem requests the switch refused (multimem_error responses)
  uint64_t dynamic_operations = 0;  // dynamic_store / dynamic_ld_reduce tasks issued
  uint64_t partials_received = 0;   // reduce_partial messages (a switch's full reduction buffer)
  uint64_t notifications_sent = 0;              // notify_tokens: tokens notified, over links or not
  uint64_t notification_messages_received = 0;  // of messages_received, those of notifications
  uint64_t notifications_received = 0;          // the notifications they carried
  sc_core::sc_time compute_time;
};

}  // namespace nvsvp::model
