// `nvsvp packet-efficiency`: the payload efficiency of one message per transfer size, computed by
// the models' own wire-size functions, so the table is what a simulation would count.
#include "nvsvp/platform/packet_efficiency.hpp"

#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/platform/config_reader.hpp"

namespace nvsvp::platform {

std::vector<PacketEfficiencyRow> packet_efficiency_table(const model::LinkParams& link, uint32_t targets) {
  std::vector<PacketEfficiencyRow> rows;
  for (uint64_t bytes = 16; bytes <= 16384; bytes *= 2) {
    rows.push_back({bytes, model::dynamic_payload_efficiency(link, targets, bytes),
                    model::explicit_payload_efficiency(link, targets, bytes),
                    model::payload_efficiency(link, bytes, link.wire_flits(bytes)),
                    model::explicit_payload_efficiency(link, targets, bytes)});
  }
  return rows;
}

std::string packet_efficiency_csv(const std::vector<PacketEfficiencyRow>& rows) {
  std::string csv = "payload_bytes,request_dysharp,request_explicit,response_dysharp,response_explicit\n";
  for (const PacketEfficiencyRow& r : rows) {
    csv += std::to_string(r.payload_bytes) + "," + format_number(r.request_dysharp) + "," +
           format_number(r.request_explicit) + "," + format_number(r.response_dysharp) + "," +
           format_number(r.response_explicit) + "\n";
  }
  return csv;
}

}  // namespace nvsvp::platform
