// Parameters of one switch chip. SystemC-free.
#pragma once

#include <cstdint>
#include <string>

#include "nvsvp/hw/bit_mask.hpp"
#include "nvsvp/hw/params.hpp"

namespace nvsvp::model {

// The ports keep their credit counters inline (one cache line pair), hence a bound.
inline constexpr uint32_t kMaxVcsPerClass = 16;

struct SwitchParams {
  uint32_t ports = 64;
  uint32_t vcs_per_class = 8;       // request VCs; as many response VCs
  uint32_t vc_depth_flits = 256;    // input buffer per VC
  double latency_ns = 0.0;          // internal pipeline; the 250 ns hop latency already includes it
  double crossbar_speedup = 1.0;    // assumed: an input feeds one output at link rate per crossbar
  std::string arbiter = "round_robin";
  uint32_t allocator_iterations = 1;  // request-grant-accept rounds of the islip allocator
  std::string reduction_backend = "model";  // model | rtl | both (reduction unit, per port)
  uint32_t reduction_buffer_bytes = 64 * 1024;
  uint32_t reduction_contexts_per_port = 64;  // the RTL's count; open reductions a port's unit holds
  double reduction_clock_ns = 1.0;  // assumed: one clock of the reduction unit (its latency is cycles x this)
  uint32_t multicast_slots = 128;   // multicast group table entries (docs/background/nvlink_nvswitch.md)
  double register_access_ns = 0.0;  // one access to the register block (docs/registers.md)
  // Set from simulation.fabric (not a key of switch:): the packet fabric's outputs take turns by
  // input (docs/models/packet_fabric.md), the message fabric's by input VC.
  bool packet_fabric = false;

  template <class V>
  void visit(V& v) {
    v("ports", ports, "NVLink ports per chip (a route entry is a 128-bit port mask)", hw::between(1, hw::kMaxPortsPerChip));
    v("vcs_per_class", vcs_per_class, "virtual channels per class (request, response) per input port",
      hw::between(1, kMaxVcsPerClass));
    v("vc_depth_flits", vc_depth_flits, "input buffer depth per virtual channel, flits",
      hw::between(1, 1 << 24));
    v("latency_ns", latency_ns, "extra internal latency from input to output, ns",
      hw::between(0.0, 1e9));
    v("crossbar_speedup", crossbar_speedup, "crossbar bandwidth per input relative to a link",
      hw::between(0.01, 1000.0));
    v("arbiter", arbiter,
      "switch allocation: an arbiter per output (round_robin, fixed_priority, oldest_first) or a matching allocator (islip, wavefront)",
      hw::Choices{{"round_robin", "fixed_priority", "oldest_first", "islip", "wavefront"}});
    v("allocator_iterations", allocator_iterations, "request-grant-accept iterations of the islip allocator per decision",
      hw::between(1, 16));
    v("reduction_backend", reduction_backend,
      "multimem reduction unit: the C++ model, the Verilated RTL, or both compared beat by beat",
      hw::Choices{{"model", "rtl", "both"}});
    v("reduction_buffer_bytes", reduction_buffer_bytes,
      "reduction buffer per port, bytes (32-byte slots, 8 ways; rtl and both: 65536 only)",
      hw::between(256, 1 << 26));
    v("reduction_contexts_per_port", reduction_contexts_per_port,
      "reduction contexts of each port's reduction unit: multimem loads it reduces at once (rtl and both: 64 only)",
      hw::between(1, 65536));
    v("reduction_clock_ns", reduction_clock_ns,
      "clock period of the reduction unit, ns: a multimem ld_reduce's result leaves the unit's clocks x this after its last response",
      hw::between(0.0, 1e6));
    v("multicast_slots", multicast_slots, "multicast group table entries per chip", hw::between(1, 1024));
    v("register_access_ns", register_access_ns,
      "simulated time of one firmware access to the chip's register block, ns (0: bring-up takes no time)",
      hw::between(0.0, 1e9));
  }
};

}  // namespace nvsvp::model
