// Payload efficiency against transfer granularity, from the packet formats themselves (the wire
// size functions the models use: LinkParams::wire_flits and tlm_models/src/multimem_packet.cpp),
// for dynamic multimem (`dysharp`) and explicit addressing: `nvsvp packet-efficiency`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nvsvp/model/nvlink_params.hpp"

namespace nvsvp::platform {

struct PacketEfficiencyRow {
  uint64_t payload_bytes;
  // Payload bytes over wire bytes of one message of `payload_bytes` for `targets` targets.
  double request_dysharp;   // dymultimem store: the data and one expert ID per target
  double request_explicit;  // explicit addressing: the data and a 64-bit address per target
  double response_dysharp;  // ld_reduce answer: a plain response (the switch matches it)
  double response_explicit; // explicit addressing: the answer names every target's address
};

// One row per transfer size, 16 bytes to 16 KB in powers of two, on `link`.
std::vector<PacketEfficiencyRow> packet_efficiency_table(const model::LinkParams& link, uint32_t targets);

// The rows as CSV: payload_bytes,request_dysharp,request_explicit,response_dysharp,response_explicit.
std::string packet_efficiency_csv(const std::vector<PacketEfficiencyRow>& rows);

}  // namespace nvsvp::platform
