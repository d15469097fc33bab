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
  uint64_t access_errors = 0;    // writes and reads the switch refused (access_error responses)
  uint64_t dynamic_operations = 0;  // dynamic_store / dynamic_ld_reduce tasks issued
  uint64_t partials_received = 0;   // reduce_partial messages (a switch's full reduction buffer)
  uint64_t notifications_sent = 0;              // notify_tokens: tokens notified, over links or not
  uint64_t notification_messages_received = 0;  // of messages_received, those of notifications
  uint64_t notifications_received = 0;          // the notifications they carried
  // Of messages_received, the parts of chunks split over links but the one with the chunk's
  // first write (GpuParams::chunk_links): firmware counts a chunk as one message.
  uint64_t chunk_parts_received = 0;
  sc_core::sc_time compute_time;
};

}  // namespace nvsvp::model
