// The layer's checks: every token copy, every count and message the plan implies, and every
// combine result against a reference computed from the routing alone.
#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>

#include "moe_plan.hpp"
#include "nvsvp/fw/moe_data.hpp"

namespace nvsvp::fw {

namespace {

std::string lanes_text(const Lanes& lanes) {
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < kLanes; ++i) os << (i ? " " : "") << lanes[i];
  os << "]";
  return os.str();
}

// Dynamic dispatch: every (token, expert) block where the Hub's table (or, for explicit
// addressing, the firmware's layout) says, written once with the token's values; every block of
// every expert region written exactly once. A token copy (token, GPU) counts as delivered when
// all its experts' blocks on that GPU are right.
//
// A correct run is proven with each GPU's blocks visited in the order they lie: the walk token by
// token reads them in random order, which costs a cache miss per block at the benchmark's sizes.
// Only when that proof fails are the faults named, token by token.
template <class Violation>
void verify_dynamic_dispatch(Hal& hal, const LayerPlan& plan,
                             const std::vector<std::array<uint8_t, 2 * kLanes>>& token_bytes,
                             MoeCheckResult& result, Violation&& violation) {
  const MoeRouting& routing = plan.spec->routing;
  const MoeBuffers& b = plan.buffers;
  const hw::DynamicMulticastBinding& dispatch = plan.dynamic_objects.front().binding;
  const uint32_t per_gpu = routing.experts_per_gpu();
  constexpr size_t kBytes = 2 * kLanes;
  // The block of (token t, its k-th expert) on GPU d, false when there is none.
  auto block_of = [&](uint64_t t, uint32_t k, uint32_t d, uint64_t& block) {
    if (plan.explicit_layout) {
      block = (*plan.explicit_layout)[t * routing.top_k + k];
      return true;
    }
    uint64_t address = 0;
    if (!hal.dynamic_local_address(d, dispatch.multimem_address(t), routing.experts_of(t)[k], address)) return false;
    block = (address - b.dispatch_rx) / b.dispatch_stride;
    return true;
  };

  // The token each block should hold, from the tables; a fault stops the proof.
  constexpr uint32_t kNoToken = ~0u;
  std::vector<uint64_t> blocks(routing.gpus);
  std::vector<std::vector<uint32_t>> owner(routing.gpus);
  for (uint32_t d = 0; d < routing.gpus; ++d) {
    blocks[d] = dispatch.local_blocks(d);
    owner[d].assign(blocks[d], kNoToken);
  }
  bool all_right = routing.tokens() < kNoToken;
  for (uint64_t t = 0; t < routing.tokens() && all_right; ++t) {
    const uint16_t* experts = routing.experts_of(t);
    for (uint64_t c = (*plan.copy_first)[t]; c < (*plan.copy_first)[t + 1] && all_right; ++c) {
      const uint32_t d = (*plan.copy_dest)[c];
      for (uint32_t k = 0; k < routing.top_k && all_right; ++k) {
        if (experts[k] / per_gpu != d) continue;
        uint64_t block = 0;
        if (!block_of(t, k, d, block) || block >= blocks[d]) {
          all_right = false;
        } else {
          uint32_t& holder = owner[d][block];
          if (holder == kNoToken) holder = static_cast<uint32_t>(t);
          all_right = holder == t;
        }
      }
    }
  }
  // Every block written once; every block a token owns holds that token's values.
  std::vector<uint8_t> data;
  std::vector<uint32_t> writes;
  for (uint32_t d = 0; d < routing.gpus; ++d) {
    data.resize(blocks[d] * kBytes);
    writes.resize(blocks[d]);
    hal.memory(d).read_strided(b.dispatch_rx, b.dispatch_stride, blocks[d], kBytes, data.data(), writes.data());
    for (uint64_t block = 0; block < blocks[d]; ++block) {
      if (all_right && owner[d][block] != kNoToken &&
          std::memcmp(data.data() + block * kBytes, token_bytes[owner[d][block]].data(), kBytes) != 0) {
        all_right = false;
      }
      if (writes[block] == 1) continue;
      std::ostringstream os;
      os << "GPU " << d << ": dispatch block " << block << " written " << writes[block] << " times, expected once";
      violation(os.str());
      result.receive_count_errors++;
    }
  }
  if (all_right) {
    result.token_copies_delivered += (*plan.copy_first)[routing.tokens()] - (*plan.copy_first)[0];
    return;
  }

  owner.clear();
  std::vector<std::vector<uint8_t>> data_of(routing.gpus);
  for (uint32_t d = 0; d < routing.gpus; ++d) {
    data_of[d].resize(blocks[d] * kBytes);
    hal.memory(d).read_strided(b.dispatch_rx, b.dispatch_stride, blocks[d], kBytes, data_of[d].data());
  }
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    const uint16_t* experts = routing.experts_of(t);
    for (uint64_t c = (*plan.copy_first)[t]; c < (*plan.copy_first)[t + 1]; ++c) {
      const uint32_t d = (*plan.copy_dest)[c];
      bool ok = true;
      for (uint32_t k = 0; k < routing.top_k && ok; ++k) {
        if (experts[k] / per_gpu != d) continue;
        uint64_t block = 0;
        if (!block_of(t, k, d, block)) {
          std::ostringstream os;
          os << "token " << t << " (home GPU " << routing.home_of_token(t) << "): GPU " << d
             << "'s Hub holds no block for expert " << experts[k];
          violation(os.str());
          ok = false;
          continue;
        }
        const bool inside = block < blocks[d];
        const uint8_t* got = inside ? data_of[d].data() + block * kBytes : nullptr;
        if (!inside || std::memcmp(got, token_bytes[t].data(), kBytes) != 0) {
          std::ostringstream os;
          os << "token " << t << " (home GPU " << routing.home_of_token(t) << ") at GPU " << d << ", expert "
             << experts[k] << ": ";
          if (!inside) os << "block " << block << " outside the expert regions";
          else os << "data " << lanes_text(unpack_lanes(got)) << ", expected " << lanes_text(token_lanes(t));
          violation(os.str());
          ok = false;
        }
      }
      result.token_copies_delivered += ok;
    }
  }
}

}  // namespace

MoeCheckResult verify_layer(Hal& hal, const LayerPlan& plan, size_t max_violations) {
  const MoeRouting& routing = plan.spec->routing;
  const MoeBuffers& b = plan.buffers;
  MoeCheckResult result;
  result.token_copies_expected = plan.token_copies;
  result.remote_token_copies = plan.remote_token_copies;
  auto violation = [&](const std::string& text) {
    if (result.violations.size() < max_violations) result.violations.push_back(text);
  };
  uint8_t raw[2 * kLanes];
  // Every token's values as they travel, computed once (each token sits in several slots).
  std::vector<std::array<uint8_t, 2 * kLanes>> token_bytes(routing.tokens());
  for (uint64_t t = 0; t < routing.tokens(); ++t) pack_lanes(token_lanes(t), token_bytes[t].data());

  if (plan.dispatch_per_expert) {
    verify_dynamic_dispatch(hal, plan, token_bytes, result, violation);
  }
  // Dispatch: every slot written exactly once, with its token's values.
  for (uint32_t d = 0; d < routing.gpus && !plan.dispatch_per_expert; ++d) {
    hw::MemoryAccess& memory = hal.memory(d);
    const std::vector<uint64_t>& slots = (*plan.received)[d];
    std::vector<uint8_t> received(slots.size() * sizeof raw);
    std::vector<uint32_t> write_counts(slots.size());
    memory.read_strided(b.dispatch_rx, b.dispatch_stride, slots.size(), sizeof raw, received.data(),
                        write_counts.data());
    for (uint64_t s = 0; s < slots.size(); ++s) {
      const uint64_t t = slots[s];
      const uint32_t writes = write_counts[s];
      std::memcpy(raw, received.data() + s * sizeof raw, sizeof raw);
      if (writes == 1 && std::memcmp(raw, token_bytes[t].data(), sizeof raw) == 0) {
        result.token_copies_delivered++;
        continue;
      }
      std::ostringstream os;
      os << "token " << t << " (home GPU " << routing.home_of_token(t) << ") at GPU " << d << ": ";
      if (writes != 1) os << "delivered " << writes << " times, expected once";
      else os << "data " << lanes_text(unpack_lanes(raw)) << ", expected " << lanes_text(token_lanes(t));
      violation(os.str());
    }
  }

  // The count exchange carried the real counts (schemes that exchange counts write counts_rx).
  const std::vector<std::vector<uint64_t>> counts = detail::copies_between(plan);
  for (uint32_t d = 0; d < routing.gpus; ++d) {
    hw::MemoryAccess& memory = hal.memory(d);
    for (uint32_t s = 0; s < routing.gpus; ++s) {
      const uint64_t address = b.counts_rx + 16ull * s;
      if (s == d || memory.write_count(address) == 0) continue;
      uint64_t got = 0;
      memory.read(address, &got, sizeof got);
      if (got != counts[s][d]) {
        result.receive_count_errors++;
        std::ostringstream os;
        os << "GPU " << d << ": token count from GPU " << s << " reads " << got << ", expected "
           << counts[s][d];
        violation(os.str());
      }
    }
  }

  // Nothing more and nothing less arrived over each GPU's links.
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    const uint64_t got = hal.received_messages(g);
    if (got != plan.expected_link_arrivals[g]) {
      result.receive_count_errors++;
      std::ostringstream os;
      os << "GPU " << g << ": " << got << " messages arrived over its links, expected "
         << plan.expected_link_arrivals[g];
      violation(os.str());
    }
  }

  // Every notification of a fused schedule reached its token's home.
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    const uint64_t got = hal.received_notifications(g);
    result.notifications_expected += plan.expected_notifications[g];
    result.notifications_delivered += std::min(got, plan.expected_notifications[g]);
    if (got != plan.expected_notifications[g]) {
      result.receive_count_errors++;
      std::ostringstream os;
      os << "GPU " << g << ": " << got << " token notifications arrived over its links, expected "
         << plan.expected_notifications[g];
      violation(os.str());
    }
  }

  // Combine: every partial once, and the result equal to the sum over all top_k experts.
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    const uint32_t home = routing.home_of_token(t);
    const uint64_t local = t % routing.tokens_per_gpu;
    hw::MemoryAccess& memory = hal.memory(home);
    result.tokens_checked++;
    ExpertSum all;
    const uint16_t* experts = routing.experts_of(t);
    for (uint32_t k = 0; k < routing.top_k; ++k) all.add(routing.weights_of_copy(experts[k]));
    const Lanes reference = all.of(token_lanes(t));
    bool ok = true;
    if (plan.combine_reduced_in_switch) {
      // One reduced result per token, written once into the output.
      const uint32_t writes = memory.write_count(b.output + local * b.combine_stride);
      if (writes != 1) {
        ok = false;
        std::ostringstream os;
        os << "token " << t << ": the reduced result reached home GPU " << home << " " << writes
           << " times, expected once";
        violation(os.str());
      }
    }
    for (uint64_t c = (*plan.copy_first)[t]; c < (*plan.copy_first)[t + 1] && !plan.combine_reduced_in_switch; ++c) {
      const uint32_t writes = memory.write_count(detail::combine_slot_address(plan, home, c));
      if (writes != 1) {
        ok = false;
        std::ostringstream os;
        os << "token " << t << ": partial from GPU " << (*plan.copy_dest)[c] << " reached home GPU "
           << home << " " << writes << " times, expected once";
        violation(os.str());
      }
    }
    memory.read(b.output + local * b.combine_stride, raw, sizeof raw);
    const Lanes got = unpack_lanes(raw);
    if (got != reference) {
      ok = false;
      std::ostringstream os;
      os << "token " << t << " at GPU " << home << ": combine result " << lanes_text(got)
         << ", expected " << lanes_text(reference);
      violation(os.str());
    }
    result.combine_errors += !ok;
  }
  return result;
}

}  // namespace nvsvp::fw
