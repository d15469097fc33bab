// The packet format and the payload pool: wire_flits (one header per packet of at most
// max_packet_payload_bytes), flit time, traffic classes, and payload recycling with a cleared
// extension. No simulation.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"

namespace nvsvp::model {
namespace {

TEST(LinkParams, WireFlitsAddOneHeaderPer256BytePacket) {
  const LinkParams link;  // 16-byte flits, 256-byte packets, one header flit each
  EXPECT_EQ(link.wire_flits(0), 1u);     // header-only packet (read request, ack)
  EXPECT_EQ(link.wire_flits(1), 2u);
  EXPECT_EQ(link.wire_flits(16), 2u);
  EXPECT_EQ(link.wire_flits(17), 3u);
  EXPECT_EQ(link.wire_flits(256), 17u);
  EXPECT_EQ(link.wire_flits(257), 17u + 2u);  // 17 data flits, 2 packets
  EXPECT_EQ(link.wire_flits(512), 34u);
  EXPECT_EQ(link.wire_flits(4096), 256u + 16u);
  // fp8 token of model S: 2048 values + 16 scales of 4 bytes = 2112 bytes, 9 packets.
  EXPECT_EQ(fw::vector_bytes(fw::DataType::fp8, 2048), 2112u);
  EXPECT_EQ(link.wire_flits(2112), 132u + 9u);
  // bf16 partial of model S: 4096 bytes.
  EXPECT_EQ(link.wire_flits(fw::vector_bytes(fw::DataType::bf16, 2048)), 272u);
}

TEST(LinkParams, WireFlitsFollowThePacketParameters) {
  LinkParams link;
  link.flit_bytes = 32;
  link.max_packet_payload_bytes = 128;
  link.header_flits_per_packet = 2;
  EXPECT_EQ(link.wire_flits(0), 2u);
  EXPECT_EQ(link.wire_flits(128), 4u + 2u);
  EXPECT_EQ(link.wire_flits(129), 5u + 4u);
  link.header_flits_per_packet = 0;
  EXPECT_EQ(link.wire_flits(0), 1u);  // never zero: something occupies the wire
  EXPECT_EQ(link.wire_flits(64), 2u);
}

TEST(LinkParams, FlitTimeIsFlitBytesOverEffectiveRate) {
  LinkParams link;  // 25 GB/s x 0.875
  EXPECT_NEAR(link.flit_time_ps(), 16.0 / 21.875 * 1000.0, 1e-9);
  link.line_rate_gbps = 16.0;
  link.efficiency = 1.0;
  EXPECT_DOUBLE_EQ(link.flit_time_ps(), 1000.0);
}

TEST(NvlinkPacket, OpcodesMapToTrafficClasses) {
  EXPECT_EQ(class_of(Opcode::write), TrafficClass::request);
  EXPECT_EQ(class_of(Opcode::read), TrafficClass::request);
  EXPECT_EQ(class_of(Opcode::read_response), TrafficClass::response);
  EXPECT_EQ(class_of(Opcode::write_ack), TrafficClass::response);
  EXPECT_STREQ(to_string(Opcode::read_response), "read_response");
  EXPECT_STREQ(to_string(TrafficClass::response), "response");
}

TEST(PayloadPool, RecyclesPayloadsWithAClearedExtension) {
  PayloadPool pool;
  tlm::tlm_generic_payload& a = pool.acquire();
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(a.get_ref_count(), 1);
  NvlinkExtension& ext = extension_of(a);
  EXPECT_EQ(a.get_extension<NvlinkExtension>(), &ext);  // reachable the TLM way too
  EXPECT_EQ(a.get_data_ptr(), static_cast<PooledPayload&>(a).data);
  ext.target_gpu = 7;
  ext.payload_bytes = 4096;
  ext.opcode = Opcode::read;
  a.set_data_length(16);
  a.release();  // back to the pool
  EXPECT_EQ(pool.in_use(), 0u);

  tlm::tlm_generic_payload& b = pool.acquire();
  EXPECT_EQ(&b, &a);
  EXPECT_EQ(pool.allocated(), 1u);
  EXPECT_EQ(extension_of(b).target_gpu, 0u);
  EXPECT_EQ(extension_of(b).payload_bytes, 0u);
  EXPECT_EQ(extension_of(b).opcode, Opcode::write);
  EXPECT_EQ(b.get_data_length(), 0u);
  EXPECT_EQ(b.get_response_status(), tlm::TLM_INCOMPLETE_RESPONSE);

  // Held payloads are distinct; the pool grows only to what is in flight.
  std::set<tlm::tlm_generic_payload*> held{&b};
  for (int i = 0; i < 9; ++i) held.insert(&pool.acquire());
  EXPECT_EQ(held.size(), 10u);
  EXPECT_EQ(pool.allocated(), 10u);
  EXPECT_EQ(pool.in_use(), 10u);
  for (auto* p : held) p->release();
  EXPECT_EQ(pool.in_use(), 0u);
  pool.acquire().release();
  EXPECT_EQ(pool.allocated(), 10u);
}

TEST(NvlinkPacket, ExtensionClonesAllFields) {
  NvlinkExtension ext;
  ext.opcode = Opcode::read_response;
  ext.traffic_class = TrafficClass::response;
  ext.vc = 3;
  ext.source_gpu = 1;
  ext.target_gpu = 2;
  ext.target_address = 0x1234;
  ext.wire_flits = 17;
  ext.tail_arrival = sc_core::sc_time(5, sc_core::SC_NS);
  std::unique_ptr<NvlinkExtension> copy(static_cast<NvlinkExtension*>(ext.clone()));
  EXPECT_EQ(copy->opcode, Opcode::read_response);
  EXPECT_EQ(copy->vc, 3);
  EXPECT_EQ(copy->target_address, 0x1234u);
  EXPECT_EQ(copy->wire_flits, 17u);
  EXPECT_EQ(copy->tail_arrival, sc_core::sc_time(5, sc_core::SC_NS));
  NvlinkExtension other;
  other.copy_from(ext);
  EXPECT_EQ(other.target_gpu, 2u);
}

}  // namespace
}  // namespace nvsvp::model
