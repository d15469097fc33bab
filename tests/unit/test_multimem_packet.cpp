// The dynamic multimem packet format (multimem_packet.hpp): first-flit encoding and its limits,
// wire flits and payload efficiency of dynamic and explicit addressing (worked out by hand below),
// and the switch's trimming of a target list per output port. No simulation.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/model/multimem_packet.hpp"
#include "nvsvp/model/nvlink_params.hpp"

namespace nvsvp::model {
namespace {

using hw::MultimemStage;

// EXPECT_THROW plus a check that the message names the values.
template <class Exception, class F>
void expect_error_naming(F&& call, const std::vector<std::string>& words) {
  try {
    call();
    ADD_FAILURE() << "no exception";
  } catch (const Exception& e) {
    for (const std::string& word : words) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos)
          << "message \"" << e.what() << "\" does not name " << word;
    }
  }
}

// ---- first flit ----

TEST(MultimemFirstFlit, FieldsSitAtBits0To47Bit48And49To63) {
  // 0x1234_5678_9abc | combine (1 << 48 = 0x0001_0000_0000_0000) | 8 << 49 (= 2^52 = 0x0010_...)
  const DynamicFirstFlit flit{0x1234'5678'9abcull, MultimemStage::combine, 8};
  EXPECT_EQ(encode_first_flit(flit), 0x0011'1234'5678'9abcull);
  // dispatch, one target at address 0x10: 1 << 49 = 0x0002_0000_0000_0000
  EXPECT_EQ(encode_first_flit({0x10, MultimemStage::dispatch, 1}), 0x0002'0000'0000'0010ull);
  EXPECT_EQ(encode_first_flit({0, MultimemStage::dispatch, 0}), 0ull);
  // Every field at its maximum fills all 64 bits.
  EXPECT_EQ(encode_first_flit({(1ull << 48) - 1, MultimemStage::combine, 32767}), ~0ull);
}

TEST(MultimemFirstFlit, DecodeInvertsEncode) {
  const std::vector<DynamicFirstFlit> flits = {
      {0, MultimemStage::dispatch, 0},
      {0x4000'0000'0000ull, MultimemStage::dispatch, 8},
      {0x4000'7380'0040ull, MultimemStage::combine, 16},
      {(1ull << 48) - 1, MultimemStage::combine, 32767},
      {1, MultimemStage::combine, 1},
  };
  for (const DynamicFirstFlit& flit : flits) {
    EXPECT_EQ(decode_first_flit(encode_first_flit(flit)), flit) << flit.multimem_address;
  }
  // The fields cover all 64 bits, so every value decodes and re-encodes to itself.
  for (uint64_t field : {0ull, ~0ull, 0x8000'0000'0000'0000ull, 0x0001'0000'0000'0000ull,
                         0xdead'beef'cafe'f00dull}) {
    EXPECT_EQ(encode_first_flit(decode_first_flit(field)), field) << field;
  }
  const DynamicFirstFlit top = decode_first_flit(0x8000'0000'0000'0000ull);  // bit 63 only
  EXPECT_EQ(top.target_count, 1u << 14);
  EXPECT_EQ(top.stage, MultimemStage::dispatch);
  EXPECT_EQ(top.multimem_address, 0u);
}

TEST(MultimemFirstFlit, RejectsAddressesFrom2To48AndCountsFrom2To15) {
  expect_error_naming<std::out_of_range>(
      [] { encode_first_flit({1ull << 48, MultimemStage::dispatch, 1}); }, {"0x1000000000000", "48 bits"});
  expect_error_naming<std::out_of_range>(
      [] { encode_first_flit({0, MultimemStage::combine, 32768}); }, {"32768", "15 bits"});
  EXPECT_NO_THROW(encode_first_flit({(1ull << 48) - 1, MultimemStage::dispatch, 32767}));
}

// ---- wire size ----
// Default link: 16-byte flits, 256-byte packets, one header flit per packet.
// fp8 token of model L: 7168 values + 7168 / 128 = 56 scales of 4 bytes = 7392 bytes:
//   29 packets (28 full + 224 bytes), 462 payload flits, plain message 462 + 29 = 491 flits.

TEST(MultimemWireFlits, TargetFlitsHoldEightExpertIds) {
  const LinkParams link;
  EXPECT_EQ(target_flits(link, 1), 1u);
  EXPECT_EQ(target_flits(link, 8), 1u);
  EXPECT_EQ(target_flits(link, 9), 2u);
  EXPECT_EQ(target_flits(link, 16), 2u);
  EXPECT_EQ(target_flits(link, 17), 3u);
  EXPECT_EQ(target_flits(link, 32767), 4096u);  // ceil(32767 / 8)
  EXPECT_THROW(target_flits(link, 0), std::invalid_argument);
  EXPECT_THROW(target_flits(link, 32768), std::invalid_argument);
}

TEST(MultimemWireFlits, EightTargetsFp8TokenPaysOneTargetFlitPerPacket) {
  const LinkParams link;
  EXPECT_EQ(packets_of(link, 7392), 29u);
  EXPECT_EQ(link.wire_flits(7392), 491u);
  // 491 + 29 packets x 1 target flit = 520 flits = 8320 bytes.
  EXPECT_EQ(dynamic_wire_flits(link, 8, 7392), 520u);
  EXPECT_NEAR(dynamic_payload_efficiency(link, 8, 7392), 7392.0 / 8320.0, 1e-12);  // 0.8885
  // Explicit: 7 more addresses x 8 bytes = 56 bytes = 4 flits (3.5 rounded up) per packet:
  // 491 + 29 x 4 = 607 flits = 9712 bytes.
  EXPECT_EQ(explicit_address_flits(link, 8), 4u);
  EXPECT_EQ(explicit_wire_flits(link, 8, 7392), 607u);
  EXPECT_NEAR(explicit_payload_efficiency(link, 8, 7392), 7392.0 / 9712.0, 1e-12);  // 0.7611
  EXPECT_GT(dynamic_payload_efficiency(link, 8, 7392), explicit_payload_efficiency(link, 8, 7392));
}

TEST(MultimemWireFlits, OneTargetCostsAFlitPerPacketThatExplicitAddressingDoesNot) {
  const LinkParams link;
  EXPECT_EQ(dynamic_wire_flits(link, 1, 7392), 520u);   // 491 + 29 x 1
  EXPECT_EQ(explicit_wire_flits(link, 1, 7392), 491u);  // the header's address is the target's
  EXPECT_NEAR(explicit_payload_efficiency(link, 1, 7392), 7392.0 / (491.0 * 16), 1e-12);
}

TEST(MultimemWireFlits, NineTargetsSpillIntoASecondTargetFlit) {
  const LinkParams link;
  EXPECT_EQ(dynamic_wire_flits(link, 9, 7392), 549u);   // 491 + 29 x 2
  EXPECT_EQ(explicit_wire_flits(link, 9, 7392), 607u);  // 491 + 29 x ceil(64 / 16)
  EXPECT_NEAR(dynamic_payload_efficiency(link, 9, 7392), 7392.0 / 8784.0, 1e-12);
}

TEST(MultimemWireFlits, LoadRequestsAndResponses) {
  const LinkParams link;
  // ld_reduce request: one header-only packet plus its target flit(s).
  EXPECT_EQ(dynamic_wire_flits(link, 8, 0), 2u);
  EXPECT_EQ(dynamic_wire_flits(link, 9, 0), 3u);
  EXPECT_EQ(explicit_wire_flits(link, 8, 0), 5u);  // 1 + ceil(56 / 16)
  // bf16 output of model L: 14336 bytes = 896 flits in 56 packets. A dynamic response is plain
  // (LinkParams::wire_flits = 952); an explicit one carries the addresses: 952 + 56 x 4.
  EXPECT_EQ(link.wire_flits(14336), 952u);
  EXPECT_EQ(explicit_wire_flits(link, 8, 14336), 1176u);
  EXPECT_DOUBLE_EQ(payload_efficiency(link, 0, 2), 0.0);  // a load carries no payload
}

TEST(MultimemWireFlits, FollowTheLinkPacketParameters) {
  LinkParams link;
  link.flit_bytes = 32;
  link.max_packet_payload_bytes = 128;
  link.header_flits_per_packet = 2;
  // 256 bytes: 2 packets, 8 payload flits, 4 header flits: 12 plain.
  EXPECT_EQ(link.wire_flits(256), 12u);
  EXPECT_EQ(target_flits(link, 16), 1u);             // 16 IDs x 2 bytes = one 32-byte flit
  EXPECT_EQ(dynamic_wire_flits(link, 8, 256), 14u);  // 12 + 2 x 1
  EXPECT_EQ(dynamic_wire_flits(link, 17, 256), 16u); // 12 + 2 x ceil(34 / 32)
  EXPECT_EQ(explicit_wire_flits(link, 8, 256), 16u); // 12 + 2 x ceil(56 / 32)
}

// Per packet, dynamic adds ceil(T / 8) flits and explicit ceil((T - 1) / 2):
//   T = 1: 1 vs 0 (explicit better), T = 2, 3: 1 vs 1 (equal), T = 4: 1 vs 2, and from there on
//   explicit grows four times faster. The crossover is at 4 targets.
TEST(MultimemWireFlits, DynamicBeatsExplicitFromFourTargetsOn) {
  const LinkParams link;
  EXPECT_LT(explicit_wire_flits(link, 1, 7392), dynamic_wire_flits(link, 1, 7392));
  EXPECT_EQ(explicit_wire_flits(link, 2, 7392), dynamic_wire_flits(link, 2, 7392));
  EXPECT_EQ(explicit_wire_flits(link, 3, 7392), dynamic_wire_flits(link, 3, 7392));
  EXPECT_EQ(explicit_wire_flits(link, 4, 7392), 491u + 29u * 2u);
  EXPECT_EQ(dynamic_wire_flits(link, 4, 7392), 491u + 29u * 1u);
  for (uint32_t targets = 4; targets < kTargetCountLimit; ++targets) {
    ASSERT_LT(dynamic_wire_flits(link, targets, 7392), explicit_wire_flits(link, targets, 7392))
        << targets << " targets";
  }
}

TEST(MultimemWireFlits, RejectsTargetCountsOutsideTheField) {
  const LinkParams link;
  expect_error_naming<std::invalid_argument>([&] { dynamic_wire_flits(link, 0, 16); }, {"0 targets"});
  expect_error_naming<std::invalid_argument>([&] { explicit_wire_flits(link, 32768, 16); },
                                             {"32768 targets", "32767"});
}

// ---- trimming ----

// Four experts per GPU, one port per GPU: port = expert / 4.
uint32_t port_of_expert(uint16_t expert) { return expert / 4u; }

TEST(MultimemTrim, OneCopyPerPortInFirstAppearanceOrderWithTheSourceOrderKept) {
  // Experts 13, 14 -> port 3; 2, 3 -> port 0; 7 -> port 1; 31 -> port 7. Ports 2, 4, 5, 6 unused.
  const std::vector<uint16_t> targets = {13, 2, 14, 7, 3, 31};
  const TrimResult trimmed = trim_targets(targets, port_of_expert);
  ASSERT_EQ(trimmed.copies.size(), 4u);  // no copy for a port without targets
  EXPECT_EQ(trimmed.copies[0].port, 3u);
  EXPECT_EQ(trimmed.targets_of(trimmed.copies[0]), (std::vector<uint16_t>{13, 14}));
  EXPECT_EQ(trimmed.copies[1].port, 0u);
  EXPECT_EQ(trimmed.targets_of(trimmed.copies[1]), (std::vector<uint16_t>{2, 3}));
  EXPECT_EQ(trimmed.copies[2].port, 1u);
  EXPECT_EQ(trimmed.targets_of(trimmed.copies[2]), (std::vector<uint16_t>{7}));
  EXPECT_EQ(trimmed.copies[3].port, 7u);
  EXPECT_EQ(trimmed.targets_of(trimmed.copies[3]), (std::vector<uint16_t>{31}));
  // The copies' lists are laid out one after the other.
  EXPECT_EQ(trimmed.targets, (std::vector<uint16_t>{13, 14, 2, 3, 7, 31}));
  EXPECT_EQ(trimmed.copies[2].first_target, 4u);
  EXPECT_EQ(trimmed.copies[3].first_target, 5u);
}

TEST(MultimemTrim, TargetsOnOnePortStayTogetherUnsorted) {
  const TrimResult trimmed = trim_targets(std::vector<uint16_t>{7, 4, 6}, port_of_expert);
  ASSERT_EQ(trimmed.copies.size(), 1u);
  EXPECT_EQ(trimmed.copies[0].port, 1u);
  EXPECT_EQ(trimmed.targets_of(trimmed.copies[0]), (std::vector<uint16_t>{7, 4, 6}));
}

TEST(MultimemTrim, ExpectedResponsesPerCopyForLdReduce) {
  const std::vector<uint16_t> targets = {13, 2, 14, 7, 3, 31};
  // The destination sums its local experts: one response per copy, 4 in all.
  const TrimResult per_port = trim_targets(targets, port_of_expert, ReduceResponses::one_per_port);
  for (const TrimmedCopy& copy : per_port.copies) EXPECT_EQ(copy.expected_responses, 1u);
  EXPECT_EQ(per_port.expected_responses, 4u);
  // Every expert answers: 2 + 2 + 1 + 1.
  const TrimResult per_target = trim_targets(targets, port_of_expert, ReduceResponses::one_per_target);
  EXPECT_EQ(per_target.copies[0].expected_responses, 2u);
  EXPECT_EQ(per_target.copies[1].expected_responses, 2u);
  EXPECT_EQ(per_target.copies[2].expected_responses, 1u);
  EXPECT_EQ(per_target.copies[3].expected_responses, 1u);
  EXPECT_EQ(per_target.expected_responses, 6u);
}

TEST(MultimemTrim, ResultIsReusedWithoutLeftovers) {
  TrimResult out;
  const std::vector<uint16_t> first = {0, 4, 8, 12, 1};
  trim_targets(first.data(), 5, port_of_expert, ReduceResponses::one_per_port, out);
  EXPECT_EQ(out.copies.size(), 4u);
  const std::vector<uint16_t> second = {9};
  trim_targets(second.data(), 1, port_of_expert, ReduceResponses::one_per_port, out);
  ASSERT_EQ(out.copies.size(), 1u);
  EXPECT_EQ(out.copies[0].port, 2u);
  EXPECT_EQ(out.targets, (std::vector<uint16_t>{9}));
  EXPECT_EQ(out.expected_responses, 1u);
}

TEST(MultimemTrim, RejectsEmptyOversizedAndDuplicateListsAndPassesRouteErrorsOn) {
  expect_error_naming<std::invalid_argument>(
      [] { trim_targets(std::vector<uint16_t>{}, port_of_expert); }, {"0 targets"});
  expect_error_naming<std::invalid_argument>(
      [] { trim_targets(std::vector<uint16_t>(32768, 1), port_of_expert); }, {"32768 targets"});
  expect_error_naming<std::invalid_argument>(
      [] { trim_targets(std::vector<uint16_t>{5, 9, 5}, port_of_expert); }, {"expert 5", "twice"});
  // A long list on one port (more than 32 targets: checked by sorting, not pairwise).
  std::vector<uint16_t> long_list;
  for (uint16_t e = 0; e < 40; ++e) long_list.push_back(e);
  const auto one_port = [](uint16_t) { return 0u; };
  EXPECT_EQ(trim_targets(long_list, one_port).copies.size(), 1u);
  long_list.push_back(17);
  expect_error_naming<std::invalid_argument>([&] { trim_targets(long_list, one_port); },
                                             {"expert 17", "twice"});
  const auto no_route = [](uint16_t expert) -> uint32_t {
    if (expert >= 16) throw std::out_of_range("no route to expert " + std::to_string(expert));
    return expert / 4u;
  };
  expect_error_naming<std::out_of_range>(
      [&] { trim_targets(std::vector<uint16_t>{1, 20}, no_route); }, {"expert 20"});
}

}  // namespace
}  // namespace nvsvp::model
