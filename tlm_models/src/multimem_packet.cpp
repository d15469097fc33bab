// The dynamic multimem packet format and trimming (multimem_packet.hpp).
#include "nvsvp/model/multimem_packet.hpp"

#include "nvsvp/hw/hex_text.hpp"

#include <algorithm>

namespace nvsvp::model {

namespace {

constexpr uint64_t kAddressMask = (1ull << kMultimemAddressBits) - 1;

using hw::hex_text;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint32_t checked_flits(uint64_t flits) {
  if (flits > UINT32_MAX) {
    throw std::overflow_error("multimem packet: " + std::to_string(flits) +
                              " wire flits do not fit 32 bits");
  }
  return static_cast<uint32_t>(flits);
}

}  // namespace

uint64_t encode_first_flit(const DynamicFirstFlit& flit) {
  if (flit.multimem_address > kAddressMask) {
    throw std::out_of_range("dynamic multimem first flit: address " + hex_text(flit.multimem_address) +
                            " does not fit 48 bits (limit " + hex_text(kAddressMask) + ")");
  }
  if (flit.target_count >= kTargetCountLimit) {
    throw std::out_of_range("dynamic multimem first flit: target count " +
                            std::to_string(flit.target_count) + " does not fit 15 bits (at most " +
                            std::to_string(kTargetCountLimit - 1) + ")");
  }
  const uint64_t stage = flit.stage == hw::MultimemStage::combine ? 1 : 0;
  return flit.multimem_address | (stage << kStageBit) |
         (static_cast<uint64_t>(flit.target_count) << kTargetCountShift);
}

DynamicFirstFlit decode_first_flit(uint64_t field) {
  DynamicFirstFlit flit;
  flit.multimem_address = field & kAddressMask;
  flit.stage = ((field >> kStageBit) & 1) != 0 ? hw::MultimemStage::combine : hw::MultimemStage::dispatch;
  flit.target_count = static_cast<uint32_t>(field >> kTargetCountShift);  // the top 15 bits
  return flit;
}

uint64_t packets_of(const LinkParams& link, uint64_t payload_bytes) {
  return payload_bytes == 0 ? 1 : ceil_div(payload_bytes, link.max_packet_payload_bytes);
}

void check_target_count(uint64_t targets) {
  if (targets == 0 || targets >= kTargetCountLimit) {
    throw std::invalid_argument("dynamic multimem: " + std::to_string(targets) +
                                " targets (a packet carries 1 to " +
                                std::to_string(kTargetCountLimit - 1) + ")");
  }
}

void check_no_duplicate_targets(const uint16_t* targets, uint32_t count) {
  // The switch trims every packet: the usual short list (the experts behind one port) is
  // compared pairwise without allocating; only long lists pay for a sorted copy.
  if (count <= 32) {
    for (uint32_t i = 1; i < count; ++i) {
      for (uint32_t j = 0; j < i; ++j) {
        if (targets[i] == targets[j]) {
          throw std::invalid_argument("dynamic multimem: expert " + std::to_string(targets[i]) +
                                      " is listed twice in a target list");
        }
      }
    }
    return;
  }
  std::vector<uint16_t> sorted(targets, targets + count);
  std::sort(sorted.begin(), sorted.end());
  const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
  if (twice != sorted.end()) {
    throw std::invalid_argument("dynamic multimem: expert " + std::to_string(*twice) +
                                " is listed twice in a target list");
  }
}

uint32_t target_flits(const LinkParams& link, uint32_t targets) {
  check_target_count(targets);
  return checked_flits(ceil_div(static_cast<uint64_t>(targets) * kExpertIdBytes, link.flit_bytes));
}

uint32_t dynamic_wire_flits(const LinkParams& link, uint32_t targets, uint64_t payload_bytes) {
  const uint64_t per_packet = target_flits(link, targets);
  return checked_flits(link.wire_flits(payload_bytes) + packets_of(link, payload_bytes) * per_packet);
}

uint32_t explicit_address_flits(const LinkParams& link, uint32_t targets) {
  check_target_count(targets);
  const uint64_t extra_addresses = targets - 1;  // the header carries the first
  return checked_flits(ceil_div(extra_addresses * kExplicitAddressBytes, link.flit_bytes));
}

uint32_t explicit_wire_flits(const LinkParams& link, uint32_t targets, uint64_t payload_bytes) {
  const uint64_t per_packet = explicit_address_flits(link, targets);
  return checked_flits(link.wire_flits(payload_bytes) + packets_of(link, payload_bytes) * per_packet);
}

double payload_efficiency(const LinkParams& link, uint64_t payload_bytes, uint32_t wire_flits) {
  if (payload_bytes == 0 || wire_flits == 0) return 0.0;
  return static_cast<double>(payload_bytes) /
         (static_cast<double>(wire_flits) * static_cast<double>(link.flit_bytes));
}

}  // namespace nvsvp::model
