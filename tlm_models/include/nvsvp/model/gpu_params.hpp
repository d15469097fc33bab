// Parameters of one GPU model. SystemC-free.
#pragma once

#include <cstdint>

#include "nvsvp/hw/params.hpp"

namespace nvsvp::model {

struct GpuParams {
  uint32_t sms = 132;
  double fp8_tflops = 1979.0;     // dense peak
  double bf16_tflops = 989.0;     // dense peak
  double gemm_efficiency = 0.7;   // assumed
  double hbm_gbps = 4800.0;
  uint32_t interleave_bytes = 256;  // address interleaving over the GPU's links (assumed granule)
  uint32_t functional_bytes = 16;   // leading bytes of each message that carry real values
  uint32_t rx_vc_depth_flits = 256; // the GPU's own input buffer per VC (it drains at line rate)
  double tx_lookahead_ns = 1000.0;  // a link engine commits messages that start within this time

  template <class V>
  void visit(V& v) {
    v("sms", sms, "streaming multiprocessors", hw::between(1, 100000));
    v("fp8_tflops", fp8_tflops, "dense fp8 peak, TFLOP/s", hw::between(0.001, 1e7));
    v("bf16_tflops", bf16_tflops, "dense bf16 peak, TFLOP/s", hw::between(0.001, 1e7));
    v("gemm_efficiency", gemm_efficiency, "achieved fraction of peak in expert GEMMs",
      hw::between(0.001, 1.0));
    v("hbm_gbps", hbm_gbps, "memory bandwidth, GB/s", hw::between(0.001, 1e7));
    v("interleave_bytes", interleave_bytes, "address-interleaving granule over links, bytes",
      hw::between(1, 1u << 30));
    v("functional_bytes", functional_bytes, "leading bytes of each message carried as real data (checks need 16)",
      hw::between(16, 64));
    v("rx_vc_depth_flits", rx_vc_depth_flits, "receive buffer per virtual channel, flits",
      hw::between(1, 1 << 24));
    v("tx_lookahead_ns", tx_lookahead_ns,
      "a link engine commits queued messages that will start within this time (0: one at a time)",
      hw::between(0.0, 1e6));
  }
};

}  // namespace nvsvp::model
