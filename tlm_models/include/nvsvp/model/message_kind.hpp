// What kind of message an NVLink message is: its opcode and its traffic class (the VC class it
// travels in). SystemC-free, so that reports and statistics can name them without the models.
#pragma once

#include <cstdint>

namespace nvsvp::model {

enum class Opcode : uint8_t {
  write,
  read,
  read_response,
  write_ack,
  // Static multimem (docs/models/switch_chip.md, "Static multimem"). From the issuing GPU to the
  // switch: target_address is a multimem address; the switch replaces each by member copies.
  multimem_store,      // request: `payload_bytes` to store into every member
  multimem_red,        // request: an operand every member combines into its copy (reduce_op/type)
  multimem_ld_reduce,  // request: a load of `read_bytes` to reduce over the members
  // From the switch to a member and back.
  reduce_write,        // request: combine the payload into target_address (a multimem_red copy)
  member_read,         // request: a ld_reduce's read of one member's copy; the member answers
                       // with member_read_response on the link it arrived on
  member_read_response,  // response: one member's copy, consumed by the switch that asked
  // From the switch to the issuer.
  multimem_error,      // response: the multimem request was refused (no group, not a member)
  // Dynamic multimem (docs/models/dynamic_multimem.md). From the issuing GPU to the switch:
  // target_address is the multimem address (an algebraic block), the target list rides along.
  dynamic_store,       // request: dymultimem.st, `payload_bytes` to every target expert
  dynamic_ld_reduce,   // request: dymultimem.ld_reduce, a load of `read_bytes` summed over the targets
  // From the switch to a target GPU: one copy per output port, the list trimmed to that GPU.
  dynamic_write,       // request: write the payload for each of the copy's targets
  dynamic_member_read, // request: read and sum the copy's targets' partials, answer once with
                       // member_read_response on the link it arrived on
  // From the switch to the issuer of a dynamic or static ld_reduce.
  reduce_partial,      // response: a partial sum the switch's full reduction buffer passed on
                       // (an eviction); the issuer adds it to the result that follows
  // From the switch to the source of a write or read it refused (the source and destination are in
  // different partitions): nothing was written; `refused_opcode` says which request it was.
  access_error,
};
inline constexpr int kOpcodes = static_cast<int>(Opcode::access_error) + 1;
enum class TrafficClass : uint8_t { request = 0, response = 1 };
inline constexpr int kTrafficClasses = 2;

inline TrafficClass class_of(Opcode opcode) {
  switch (opcode) {
    case Opcode::read_response:
    case Opcode::write_ack:
    case Opcode::member_read_response:
    case Opcode::multimem_error:
    case Opcode::reduce_partial:
    case Opcode::access_error:
      return TrafficClass::response;
    default:
      return TrafficClass::request;
  }
}

inline const char* to_string(Opcode opcode) {
  switch (opcode) {
    case Opcode::write: return "write";
    case Opcode::read: return "read";
    case Opcode::read_response: return "read_response";
    case Opcode::write_ack: return "write_ack";
    case Opcode::multimem_store: return "multimem_store";
    case Opcode::multimem_red: return "multimem_red";
    case Opcode::multimem_ld_reduce: return "multimem_ld_reduce";
    case Opcode::reduce_write: return "reduce_write";
    case Opcode::member_read: return "member_read";
    case Opcode::member_read_response: return "member_read_response";
    case Opcode::multimem_error: return "multimem_error";
    case Opcode::dynamic_store: return "dynamic_store";
    case Opcode::dynamic_ld_reduce: return "dynamic_ld_reduce";
    case Opcode::dynamic_write: return "dynamic_write";
    case Opcode::dynamic_member_read: return "dynamic_member_read";
    case Opcode::reduce_partial: return "reduce_partial";
    case Opcode::access_error: return "access_error";
  }
  return "?";
}

inline const char* to_string(TrafficClass traffic_class) {
  return traffic_class == TrafficClass::request ? "request" : "response";
}

}  // namespace nvsvp::model
