// Parameters of one GPU model. SystemC-free.
#pragma once

#include <cstdint>
#include <string>

#include "nvsvp/hw/params.hpp"
#include "nvsvp/hw/work.hpp"
#include "nvsvp/model/dynamic_source_queue.hpp"
#include "nvsvp/model/gpu_hub.hpp"

namespace nvsvp::model {

// Executor streams (SM groups) a GPU offers: the four groups of the study's persistent kernel
// (dispatch, GEMM-1, GEMM-2, combine). The link engines keep a request queue per stream, the
// arrival counters a wait and a ready list per stream.
inline constexpr uint32_t kExecutorStreams = 4;

struct GpuParams {
  uint32_t sms = 132;
  double fp8_tflops = 1979.0;     // dense peak
  double bf16_tflops = 989.0;     // dense peak
  // Dense NVFP4 peak. Hopper has no fp4 tensor cores: there fp4 weights are taken as dequantized
  // to fp8 in the GEMM, so the value equals fp8_tflops (the weights' HBM bytes still shrink).
  double fp4_tflops = 1979.0;
  // Anchored to DeepGEMM's grouped fp8 GEMMs at DeepSeek-V3's expert shapes on H800 (docs/models/gpu.md).
  double gemm_efficiency = 0.66;
  double hbm_gbps = 4800.0;
  uint32_t interleave_bytes = 256;  // address interleaving over the GPU's links (assumed granule)
  uint32_t functional_bytes = 16;   // leading bytes of each message that carry real values
  uint32_t rx_vc_depth_flits = 256; // the GPU's own input buffer per VC (it drains at line rate)
  double tx_lookahead_ns = 1000.0;  // a link engine commits messages that start within this time
  // The VC a GPU's message takes at the GPU->switch hop: "round_robin", any VC with room, as the
  // switch's outputs do; "destination", a request or response for a GPU takes the VC of its
  // destination (destination mod VCs), so that messages waiting for one destination hold one VC
  // of the switch's input and not all of them (docs/models/gpu.md#gpulinkengines-injection: it caps every
  // destination at one VC's credit loop, so it is not the default).
  std::string tx_vc_choice = "round_robin";
  // How a chunk (a send of k writes) meets the links: "per_write", each write on the link its own
  // target address interleaves to (the writes of one chunk sharing a link travel as one message),
  // as the GPU spreads stores over its links by address; "first_write", the whole chunk on the
  // link of its first write (the model before issue 18: coarser, fewer messages);
  // "least_loaded", the whole chunk on the link, of those its writes' addresses interleave to,
  // with the least work pending (the cost of a whole message with the balance of the spread).
  std::string chunk_links = "least_loaded";
  // Which address a request to a peer is spread over the links by: "fabric_address", the target's
  // address within the peer's range of the fabric's address space, as the GPU's hardware sees a
  // peer's memory; "local_address", its address within the peer's memory alone (writes to
  // different peers at the same offset then take the same link; kept for comparison:
  // docs/calibration.md, "Blackwell cases").
  std::string link_interleave = "fabric_address";
  // Assumed: a link engine keeps multimem loads (static and dynamic ld_reduce) in flight up to
  // this many result bytes, as many as a switch port's reduction buffer holds.
  uint32_t load_bytes_in_flight_per_link = 65536;
  // Dynamic multimem (docs/models/dynamic_multimem.md).
  GpuHubParams hub;
  double hub_miss_ns = 500.0;  // assumed: one HBM access for a table entry the cache misses
  DynamicSourceQueueParams source_queue;
  // Token-centric fusion (docs/background/token_centric_fusion.md#hardware-tables): entries of the
  // tile-status and output-readiness tables, and what an update of an entry that spilled to memory
  // costs (assumed: one HBM access, as a Hub miss).
  uint32_t tile_status_entries = 1024;
  uint32_t readiness_entries = 1024;
  double table_spill_ns = 500.0;
  // Calibration (docs/calibration.md#the-sm-store-issue-rate): the rate at which one SM issues
  // remote stores (multimem.st / .red, dymultimem.st, the stores of an SM-driven send or copy),
  // GB/s: DeepEP's intranode dispatch reaches 329 GB/s on 8x H100 with 10 sending SMs, where the
  // links would allow more. Applies to streams with WorkSequence::issue_sms > 0.
  double sm_store_gbps = 33.0;
  // The packets a GPU's engines cut their writes and reads into on the packet fabric
  // (docs/models/packet_fabric.md): an SM's stores travel as writes of at most 128 bytes, a copy
  // engine's as 256 (an NVIDIA maintainer in NCCL's issues; a user's Nsight trace shows a 16-byte
  // header per 128-byte write). A sequence with issue_sms > 0 is an SM's; one without, a copy
  // engine's.
  uint32_t sm_store_packet_bytes = 128;
  uint32_t copy_engine_packet_bytes = 256;
  // Set from simulation.fabric (not a key of gpu:): the GPU cuts messages into packets (packet and
  // fast), and hands each message whole to the fast fabric, which times its packets (fast).
  bool packet_fabric = false;
  bool fast_fabric = false;

  // The payload of one packet of a sequence's writes and reads (issue_sms > 0: an SM's).
  uint32_t packet_bytes(bool sm_issued) const { return sm_issued ? sm_store_packet_bytes : copy_engine_packet_bytes; }
  // The payload per packet header of such writes on the wire: the packet fabric's engine packets;
  // on the message fabric the link's largest packets (`link_max_packet_bytes`).
  uint32_t wire_packet_bytes(bool sm_issued, uint32_t link_max_packet_bytes) const {
    return packet_fabric ? packet_bytes(sm_issued) : link_max_packet_bytes;
  }

  // The dense peak a GEMM of `precision` runs at.
  double peak_tflops(hw::Precision precision) const {
    switch (precision) {
      case hw::Precision::fp4: return fp4_tflops;
      case hw::Precision::fp8: return fp8_tflops;
      case hw::Precision::bf16: return bf16_tflops;
    }
    return fp8_tflops;
  }

  template <class V>
  void visit(V& v) {
    v("sms", sms, "streaming multiprocessors", hw::between(1, 100000));
    v("fp8_tflops", fp8_tflops, "dense fp8 peak, TFLOP/s", hw::between(0.001, 1e7));
    v("bf16_tflops", bf16_tflops, "dense bf16 peak, TFLOP/s", hw::between(0.001, 1e7));
    v("fp4_tflops", fp4_tflops, "dense fp4 (NVFP4) peak, TFLOP/s (no fp4 tensor cores: the fp8 peak)",
      hw::between(0.001, 1e7));
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
    v("tx_vc_choice", tx_vc_choice,
      "VC a GPU's message takes at the GPU->switch hop: its destination's (destination mod VCs) or any with room",
      hw::Choices{{"destination", "round_robin"}});
    v("chunk_links", chunk_links,
      "links a chunk travels on: each write on its own address's link, the whole chunk on its first write's, or "
      "the whole chunk on the least loaded of its writes' links",
      hw::Choices{{"per_write", "first_write", "least_loaded"}});
    v("link_interleave", link_interleave,
      "address a request to a peer is spread over the links by: the target's address in the peer's memory "
      "(local_address) or in the peer's fabric address range (fabric_address)",
      hw::Choices{{"local_address", "fabric_address"}});
    v("load_bytes_in_flight_per_link", load_bytes_in_flight_per_link,
      "result bytes of multimem loads a link engine keeps in flight; a load beyond waits at the head of its queue "
      "(one load always goes)",
      hw::between(1, 1u << 30));
    v("hub_cache_entries", hub.cache_entries, "algebraic->layout table entries the Hub's cache holds",
      hw::between(1, 1 << 20));
    v("hub_cache_ways", hub.cache_ways, "associativity of the Hub's cache (1: direct-mapped)",
      hw::between(1, 1 << 20));
    v("hub_sector_bytes", hub.sector_bytes, "memory bytes a Hub cache miss reads and an allocation writes",
      hw::between(4, 4096));
    v("hub_miss_ns", hub_miss_ns, "time a Hub cache miss adds before the data lands or the partial is read, ns",
      hw::between(0.0, 1e6));
    v("source_queue_entries", source_queue.entries, "pending dynamic multimem operations the source queue holds",
      hw::between(1, 1 << 16));
    v("tile_status_entries", tile_status_entries,
      "entries of the fused kernel's tile-status table; tiles beyond it spill to memory", hw::between(1, 1 << 24));
    v("readiness_entries", readiness_entries,
      "entries of the fused kernel's output-readiness table; tokens beyond it spill to memory", hw::between(1, 1 << 24));
    v("table_spill_ns", table_spill_ns, "time an update of a spilled table entry adds, ns", hw::between(0.0, 1e6));
    v("target_list_read_ns", source_queue.target_list_read_ns,
      "time to read a dynamic operation's target list before it can issue, ns", hw::between(0.0, 1e6));
    v("sm_store_gbps", sm_store_gbps,
      "remote-store issue rate of one SM, GB/s: a stream with issue_sms > 0 is held for each store's bytes / "
      "(issue_sms x this)",
      hw::between(0.001, 1e7));
    v("sm_store_packet_bytes", sm_store_packet_bytes,
      "payload of one packet of an SM's writes and reads on the packet fabric, bytes (at most "
      "link.max_packet_payload_bytes)",
      hw::between(1, 1 << 16));
    v("copy_engine_packet_bytes", copy_engine_packet_bytes,
      "payload of one packet of a copy engine's writes and reads on the packet fabric, bytes (at most "
      "link.max_packet_payload_bytes)",
      hw::between(1, 1 << 16));
  }
};

}  // namespace nvsvp::model
