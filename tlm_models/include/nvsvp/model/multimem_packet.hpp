// The dynamic multimem packet format (docs/background/dynamic_multimem.md#the-packet) and its
// `explicit-addressing` alternative: first-flit encoding, wire size, payload efficiency, and the
// switch's trimming of the target list per output port. SystemC-free
// (docs/models/dynamic_multimem.md).
//
// Every packet of a message (at most max_packet_payload_bytes of payload each, as in
// LinkParams::wire_flits) is routed on its own, so every packet carries the target list:
//
//   | header (first flit) | target flits (8 expert IDs each) | payload flits (unchanged) |
//
// The first flit is the packet's header flit with its 64-bit address field re-purposed, so it
// costs nothing beyond the header LinkParams already counts:
//
//   bits [47:0]  multimem address = multimem base + algebraic index * block bytes + offset
//   bit  48      stage: 0 dispatch (dymultimem.st), 1 combine (dymultimem.ld_reduce)
//   bits [63:49] target count (15 bits)
#pragma once

#include <cstdint>
#include <vector>

#include "nvsvp/hw/dynamic_multicast.hpp"
#include "nvsvp/model/nvlink_params.hpp"

namespace nvsvp::model {

constexpr uint32_t kMultimemAddressBits = 48;
constexpr uint32_t kStageBit = 48;
constexpr uint32_t kTargetCountShift = 49;
constexpr uint32_t kTargetCountBits = 15;
constexpr uint32_t kTargetCountLimit = 1u << kTargetCountBits;  // target counts are below this
constexpr uint32_t kExpertIdBytes = 2;       // a target is a 16-bit expert ID
constexpr uint32_t kExplicitAddressBytes = 8;  // explicit addressing: a full 64-bit address

// The first flit's 64-bit field, decoded.
struct DynamicFirstFlit {
  uint64_t multimem_address = 0;
  hw::MultimemStage stage = hw::MultimemStage::dispatch;
  uint32_t target_count = 0;

  bool operator==(const DynamicFirstFlit& other) const {
    return multimem_address == other.multimem_address && stage == other.stage &&
           target_count == other.target_count;
  }
};

// Throws std::out_of_range when the address is not below 2^48 or the count not below 2^15.
uint64_t encode_first_flit(const DynamicFirstFlit& flit);
// Every 64-bit value decodes (the fields cover all bits).
DynamicFirstFlit decode_first_flit(uint64_t field);

// Packets of a message of `payload_bytes`, as LinkParams::wire_flits counts them (a message with
// no payload, such as a load request, is one header-only packet).
uint64_t packets_of(const LinkParams& link, uint64_t payload_bytes);

// Target flits after each header of a dynamic packet with `targets` expert IDs:
// ceil(targets * 2 / flit_bytes), i.e. ceil(targets / 8) with 16-byte flits.
uint32_t target_flits(const LinkParams& link, uint32_t targets);

// Wire flits of a dynamic multimem message with `targets` targets (1 .. 2^15 - 1) and
// `payload_bytes` of payload (0 for an ld_reduce request):
//   LinkParams::wire_flits(payload_bytes) + packets_of(payload_bytes) * target_flits(targets).
// The ld_reduce partials and the reduced result travel as plain responses
// (LinkParams::wire_flits): the switch matches them to its outstanding reduction.
uint32_t dynamic_wire_flits(const LinkParams& link, uint32_t targets, uint64_t payload_bytes);

// `explicit-addressing`: a message for T targets carries T full 64-bit destination addresses, in
// a request and in the response that returns to the source alike. The header's own address field
// holds the first (a one-target message is a plain unicast one), the other T - 1 follow in
// address flits after each header: ceil((T - 1) * 8 / flit_bytes), i.e. ceil((T - 1) / 2).
uint32_t explicit_address_flits(const LinkParams& link, uint32_t targets);
uint32_t explicit_wire_flits(const LinkParams& link, uint32_t targets, uint64_t payload_bytes);

// payload bytes / wire bytes (0 for a message without payload).
double payload_efficiency(const LinkParams& link, uint64_t payload_bytes, uint32_t wire_flits);
inline double dynamic_payload_efficiency(const LinkParams& link, uint32_t targets,
                                         uint64_t payload_bytes) {
  return payload_efficiency(link, payload_bytes, dynamic_wire_flits(link, targets, payload_bytes));
}
inline double explicit_payload_efficiency(const LinkParams& link, uint32_t targets,
                                          uint64_t payload_bytes) {
  return payload_efficiency(link, payload_bytes, explicit_wire_flits(link, targets, payload_bytes));
}

// Trimming in the switch: one copy per output port, each carrying only the targets behind that
// port, in the order of the source's list.

// How many ld_reduce responses the switch expects back for one copy. `one_per_port`: the
// destination GPU sums its local experts' partials and answers once (the D vectors per token on the
// combine GPU->switch side of docs/background/dynamic_multimem.md#where-the-bytes-go).
// `one_per_target`: every expert answers.
enum class ReduceResponses : uint8_t { one_per_port, one_per_target };

struct TrimmedCopy {
  uint32_t port = 0;
  uint32_t first_target = 0;  // index into TrimResult::targets
  uint32_t target_count = 0;
  uint32_t expected_responses = 0;  // ld_reduce only
};

struct TrimResult {
  std::vector<TrimmedCopy> copies;  // in the order of each port's first target in the list
  std::vector<uint16_t> targets;    // copy c's targets: [first_target, first_target + target_count)
  uint32_t expected_responses = 0;  // the outstanding reduction's counter: sum over the copies

  std::vector<uint16_t> targets_of(const TrimmedCopy& copy) const {
    return {targets.begin() + copy.first_target,
            targets.begin() + copy.first_target + copy.target_count};
  }

  // Reused between calls so that trimming allocates nothing once warm.
  std::vector<uint32_t> copy_of_target;
};

// Throws std::invalid_argument for an empty list, more than 2^15 - 1 targets or an expert listed
// twice (it would be written twice at its GPU); `port_of` may throw for an expert with no route.
void check_target_count(uint64_t targets);
void check_no_duplicate_targets(const uint16_t* targets, uint32_t count);

// `port_of(expert)` gives the output port of an expert (its GPU's port through the route table).
template <class PortOf>
void trim_targets(const uint16_t* targets, uint32_t count, PortOf&& port_of,
                  ReduceResponses responses, TrimResult& out) {
  check_target_count(count);
  out.copies.clear();
  out.targets.resize(count);
  out.copy_of_target.resize(count);
  // Pass 1: the copy of every target, and the size of every copy.
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t port = port_of(targets[i]);
    uint32_t c = 0;
    while (c < out.copies.size() && out.copies[c].port != port) ++c;  // ports are few
    if (c == out.copies.size()) out.copies.push_back(TrimmedCopy{port, 0, 0, 0});
    ++out.copies[c].target_count;
    out.copy_of_target[i] = c;
  }
  uint32_t next = 0;
  for (TrimmedCopy& copy : out.copies) {
    copy.first_target = next;
    next += copy.target_count;
    copy.expected_responses = responses == ReduceResponses::one_per_port ? 1 : copy.target_count;
    copy.target_count = 0;  // refilled as a cursor by pass 2
  }
  // Pass 2: place the targets, keeping the source's order within each copy.
  for (uint32_t i = 0; i < count; ++i) {
    TrimmedCopy& copy = out.copies[out.copy_of_target[i]];
    out.targets[copy.first_target + copy.target_count++] = targets[i];
  }
  out.expected_responses = 0;
  for (const TrimmedCopy& copy : out.copies) {
    check_no_duplicate_targets(out.targets.data() + copy.first_target, copy.target_count);
    out.expected_responses += copy.expected_responses;
  }
}

template <class PortOf>
TrimResult trim_targets(const std::vector<uint16_t>& targets, PortOf&& port_of,
                        ReduceResponses responses = ReduceResponses::one_per_port) {
  check_target_count(targets.size());
  TrimResult out;
  trim_targets(targets.data(), static_cast<uint32_t>(targets.size()), port_of, responses, out);
  return out;
}

}  // namespace nvsvp::model
