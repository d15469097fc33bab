// Parameters of one NVLink link direction and of the packet format on it. SystemC-free.
#pragma once

#include <cstdint>

#include "nvsvp/hw/params.hpp"

namespace nvsvp::model {

struct LinkParams {
  double line_rate_gbps = 25.0;         // NVLink4, per direction
  double efficiency = 0.875;            // assumed: DL overhead so that 256 B packets carry ~20.6 GB/s
  double latency_ns = 250.0;            // one hop GPU->switch or switch->GPU
  uint32_t flit_bytes = 16;
  uint32_t max_packet_payload_bytes = 256;  // assumed
  uint32_t header_flits_per_packet = 1;     // assumed
  // Link-level recovery (docs/models/nvlink_port.md#faults): both assumed, no public figure.
  double replay_overhead_ns = 100.0;        // CRC check and NACK turnaround beyond the two hops
  double credit_resync_timeout_ns = 5000.0; // a sender starved of credits this long resynchronises

  template <class V>
  void visit(V& v) {
    v("line_rate_gbps", line_rate_gbps, "line rate per direction, GB/s", hw::between(0.001, 1e6));
    v("efficiency", efficiency, "fraction of the line rate left for flits (data-link overhead)",
      hw::between(0.01, 1.0));
    v("latency_ns", latency_ns, "one hop GPU->switch or switch->GPU, ns", hw::between(0.0, 1e9));
    v("flit_bytes", flit_bytes, "flit size, bytes", hw::between(1, 4096));
    v("max_packet_payload_bytes", max_packet_payload_bytes,
      "largest payload of one packet; larger messages pay one header per packet", hw::between(1, 1 << 20));
    v("header_flits_per_packet", header_flits_per_packet, "header flits of each packet",
      hw::between(0, 64));
    v("replay_overhead_ns", replay_overhead_ns,
      "a CRC failure's cost beyond the round trip (2 x latency_ns) before the replay starts, ns",
      hw::between(0.0, 1e6));
    v("credit_resync_timeout_ns", credit_resync_timeout_ns,
      "how long a sender starved of credits waits before it resynchronises lost ones, ns", hw::between(1.0, 1e9));
  }

  // Time one flit occupies the link, in picoseconds (fractional; rounded per message).
  double flit_time_ps() const { return flit_bytes / (line_rate_gbps * efficiency) * 1000.0; }

  // Flits a message of `payload_bytes` occupies on the wire, headers included. A message with no
  // payload (a read request, an acknowledgement) is one header-only packet.
  uint32_t wire_flits(uint64_t payload_bytes) const { return wire_flits(payload_bytes, max_packet_payload_bytes); }
  // The same for a sender whose packets carry at most `packet_payload_bytes` (at most
  // max_packet_payload_bytes: an SM's stores travel as smaller packets than a copy engine's).
  uint32_t wire_flits(uint64_t payload_bytes, uint32_t packet_payload_bytes) const {
    const uint64_t packets =
        payload_bytes == 0 ? 1 : (payload_bytes + packet_payload_bytes - 1) / packet_payload_bytes;
    const uint64_t data_flits = (payload_bytes + flit_bytes - 1) / flit_bytes;
    const uint64_t header_flits = packets * header_flits_per_packet;
    const uint64_t total = data_flits + header_flits;
    return static_cast<uint32_t>(total == 0 ? 1 : total);
  }
};

}  // namespace nvsvp::model
