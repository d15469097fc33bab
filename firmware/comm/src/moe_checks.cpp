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

constexpr size_t kTokenBytes = 2 * kLanes;  // what a message carries of a token functionally
using TokenBytes = std::array<uint8_t, kTokenBytes>;

std::string lanes_text(const Lanes& lanes) {
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < kLanes; ++i) os << (i ? " " : "") << lanes[i];
  os << "]";
  return os.str();
}

// One check of a run against its plan, step by step; each step adds to the result and names the
// first faults it finds.
class LayerCheck {
 public:
  LayerCheck(Hal& hal, const LayerPlan& plan, size_t max_violations)
      : hal_(hal), plan_(plan), routing_(plan.spec->routing), buffers_(plan.buffers), max_violations_(max_violations) {
    result_.token_copies_expected = plan.token_copies;
    result_.remote_token_copies = plan.remote_token_copies;
    // Every token's values as they travel, computed once (each token sits in several slots).
    token_bytes_.resize(routing_.tokens());
    for (uint64_t t = 0; t < routing_.tokens(); ++t) pack_lanes(token_lanes(t), token_bytes_[t].data());
  }

  MoeCheckResult run() {
    if (plan_.dispatch_per_expert) {
      check_dynamic_dispatch();
    } else {
      check_dispatch_slots();
    }
    check_count_exchange();
    check_link_arrivals();
    check_notifications();
    check_row_regions();
    for (uint64_t t = 0; t < routing_.tokens(); ++t) check_combine(t);
    return std::move(result_);
  }

 private:
  void violation(const std::string& text) {
    if (result_.violations.size() < max_violations_) result_.violations.push_back(text);
  }

  // Dispatch: every slot written exactly once, with its token's values.
  void check_dispatch_slots() {
    for (uint32_t d = 0; d < routing_.gpus; ++d) {
      const std::vector<uint64_t>& slots = (*plan_.received)[d];
      std::vector<uint8_t> received(slots.size() * kTokenBytes);
      std::vector<uint32_t> write_counts(slots.size());
      hal_.memory(d).read_strided(buffers_.dispatch_rx, buffers_.dispatch_stride, slots.size(), kTokenBytes,
                                  received.data(), write_counts.data());
      for (uint64_t s = 0; s < slots.size(); ++s) {
        const uint64_t t = slots[s];
        const uint32_t writes = write_counts[s];
        const uint8_t* raw = received.data() + s * kTokenBytes;
        if (writes == 1 && std::memcmp(raw, token_bytes_[t].data(), kTokenBytes) == 0) {
          result_.token_copies_delivered++;
          continue;
        }
        std::ostringstream os;
        os << "token " << t << " (home GPU " << routing_.home_of_token(t) << ") at GPU " << d << ": ";
        if (writes != 1) os << "delivered " << writes << " times, expected once";
        else os << "data " << lanes_text(unpack_lanes(raw)) << ", expected " << lanes_text(token_lanes(t));
        violation(os.str());
      }
    }
  }

  // The block of (token t, its k-th expert) on GPU d, false when there is none: where the Hub's
  // table says or, for explicit addressing, the firmware's layout.
  bool block_of(uint64_t t, uint32_t k, uint32_t d, uint64_t& block) const {
    if (plan_.explicit_layout) {
      block = (*plan_.explicit_layout)[t * routing_.top_k + k];
      return true;
    }
    const hw::DynamicMulticastBinding& dispatch = plan_.dynamic_objects.front().binding;
    uint64_t address = 0;
    if (!hal_.dynamic_local_address(d, dispatch.multimem_address(t), routing_.experts_of(t)[k], address)) return false;
    block = (address - buffers_.dispatch_rx) / buffers_.dispatch_stride;
    return true;
  }

  // Dynamic dispatch: every (token, expert) block where block_of says, written once with the
  // token's values; every block of every expert region written exactly once. A token copy (token,
  // GPU) counts as delivered when all its experts' blocks on that GPU are right.
  //
  // A correct run is proven with each GPU's blocks visited in the order they lie: the walk token by
  // token reads them in random order, which costs a cache miss per block at the benchmark's sizes.
  // Only when that proof fails are the faults named, token by token.
  void check_dynamic_dispatch() {
    const hw::DynamicMulticastBinding& dispatch = plan_.dynamic_objects.front().binding;
    std::vector<uint64_t> blocks(routing_.gpus);
    for (uint32_t d = 0; d < routing_.gpus; ++d) blocks[d] = dispatch.local_blocks(d);
    if (prove_dynamic_dispatch(blocks)) {
      result_.token_copies_delivered += (*plan_.copy_first)[routing_.tokens()] - (*plan_.copy_first)[0];
      return;
    }
    name_dynamic_dispatch_faults(blocks);
  }

  // True when every block holds what the tables say; names the blocks not written exactly once
  // either way.
  bool prove_dynamic_dispatch(const std::vector<uint64_t>& blocks) {
    // The token each block should hold, from the tables; a fault stops the proof.
    constexpr uint32_t kNoToken = ~0u;
    const uint32_t per_gpu = routing_.experts_per_gpu();
    std::vector<std::vector<uint32_t>> owner(routing_.gpus);
    for (uint32_t d = 0; d < routing_.gpus; ++d) owner[d].assign(blocks[d], kNoToken);
    bool all_right = routing_.tokens() < kNoToken;
    for (uint64_t t = 0; t < routing_.tokens() && all_right; ++t) {
      const uint16_t* experts = routing_.experts_of(t);
      for (uint64_t c = (*plan_.copy_first)[t]; c < (*plan_.copy_first)[t + 1] && all_right; ++c) {
        const uint32_t d = (*plan_.copy_dest)[c];
        for (uint32_t k = 0; k < routing_.top_k && all_right; ++k) {
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
    for (uint32_t d = 0; d < routing_.gpus; ++d) {
      data.resize(blocks[d] * kTokenBytes);
      writes.resize(blocks[d]);
      hal_.memory(d).read_strided(buffers_.dispatch_rx, buffers_.dispatch_stride, blocks[d], kTokenBytes, data.data(),
                                  writes.data());
      for (uint64_t block = 0; block < blocks[d]; ++block) {
        if (all_right && owner[d][block] != kNoToken &&
            std::memcmp(data.data() + block * kTokenBytes, token_bytes_[owner[d][block]].data(), kTokenBytes) != 0) {
          all_right = false;
        }
        if (writes[block] == 1) continue;
        std::ostringstream os;
        os << "GPU " << d << ": dispatch block " << block << " written " << writes[block] << " times, expected once";
        violation(os.str());
        result_.receive_count_errors++;
      }
    }
    return all_right;
  }

  // Token by token: each copy's blocks, named where missing, outside the regions or wrong.
  void name_dynamic_dispatch_faults(const std::vector<uint64_t>& blocks) {
    const uint32_t per_gpu = routing_.experts_per_gpu();
    std::vector<std::vector<uint8_t>> data_of(routing_.gpus);
    for (uint32_t d = 0; d < routing_.gpus; ++d) {
      data_of[d].resize(blocks[d] * kTokenBytes);
      hal_.memory(d).read_strided(buffers_.dispatch_rx, buffers_.dispatch_stride, blocks[d], kTokenBytes,
                                  data_of[d].data());
    }
    for (uint64_t t = 0; t < routing_.tokens(); ++t) {
      const uint16_t* experts = routing_.experts_of(t);
      for (uint64_t c = (*plan_.copy_first)[t]; c < (*plan_.copy_first)[t + 1]; ++c) {
        const uint32_t d = (*plan_.copy_dest)[c];
        bool ok = true;
        for (uint32_t k = 0; k < routing_.top_k && ok; ++k) {
          if (experts[k] / per_gpu != d) continue;
          uint64_t block = 0;
          if (!block_of(t, k, d, block)) {
            std::ostringstream os;
            os << "token " << t << " (home GPU " << routing_.home_of_token(t) << "): GPU " << d
               << "'s Hub holds no block for expert " << experts[k];
            violation(os.str());
            ok = false;
            continue;
          }
          const bool inside = block < blocks[d];
          const uint8_t* got = inside ? data_of[d].data() + block * kTokenBytes : nullptr;
          if (!inside || std::memcmp(got, token_bytes_[t].data(), kTokenBytes) != 0) {
            std::ostringstream os;
            os << "token " << t << " (home GPU " << routing_.home_of_token(t) << ") at GPU " << d << ", expert "
               << experts[k] << ": ";
            if (!inside) os << "block " << block << " outside the expert regions";
            else os << "data " << lanes_text(unpack_lanes(got)) << ", expected " << lanes_text(token_lanes(t));
            violation(os.str());
            ok = false;
          }
        }
        result_.token_copies_delivered += ok;
      }
    }
  }

  // The count exchange carried the real counts (schemes that exchange counts write counts_rx).
  void check_count_exchange() {
    const std::vector<std::vector<uint64_t>> counts = detail::copies_between(plan_);
    for (uint32_t d = 0; d < routing_.gpus; ++d) {
      hw::MemoryAccess& memory = hal_.memory(d);
      for (uint32_t s = 0; s < routing_.gpus; ++s) {
        const uint64_t address = buffers_.counts_rx + 16ull * s;
        if (s == d || memory.write_count(address) == 0) continue;
        uint64_t got = 0;
        memory.read(address, &got, sizeof got);
        if (got != counts[s][d]) {
          result_.receive_count_errors++;
          std::ostringstream os;
          os << "GPU " << d << ": token count from GPU " << s << " reads " << got << ", expected " << counts[s][d];
          violation(os.str());
        }
      }
    }
  }

  // GPU g's links delivered `got` of `what`, the plan `expected`: a receive-count error if not.
  void expect_arrivals(uint32_t g, uint64_t got, uint64_t expected, const char* what) {
    if (got == expected) return;
    result_.receive_count_errors++;
    std::ostringstream os;
    os << "GPU " << g << ": " << got << " " << what << " arrived over its links, expected " << expected;
    violation(os.str());
  }

  // Nothing more and nothing less arrived over each GPU's links.
  void check_link_arrivals() {
    for (uint32_t g = 0; g < routing_.gpus; ++g) {
      expect_arrivals(g, hal_.received_messages(g), plan_.expected_link_arrivals[g], "messages");
    }
  }

  // Every notification of a fused schedule reached its token's home.
  void check_notifications() {
    for (uint32_t g = 0; g < routing_.gpus; ++g) {
      const uint64_t got = hal_.received_notifications(g);
      result_.notifications_expected += plan_.expected_notifications[g];
      result_.notifications_delivered += std::min(got, plan_.expected_notifications[g]);
      expect_arrivals(g, got, plan_.expected_notifications[g], "token notifications");
    }
  }

  // Per-expert row layouts: every row beyond a token's first on a GPU, and every padding row,
  // written exactly once into its region; nothing else there.
  void check_row_regions() {
    std::vector<uint32_t> writes;
    for (const LayerPlan::RowRegion& region : plan_.row_regions) {
      for (uint32_t g = 0; g < region.writes.size(); ++g) {
        const std::vector<uint8_t>& expected = region.writes[g];
        writes.assign(expected.size(), 0);
        std::vector<uint8_t> data(expected.size() * kTokenBytes);
        hal_.memory(g).read_strided(region.base, region.stride, expected.size(), kTokenBytes, data.data(), writes.data());
        for (uint64_t row = 0; row < expected.size(); ++row) {
          if (writes[row] == expected[row]) continue;
          result_.receive_count_errors++;
          std::ostringstream os;
          os << "GPU " << g << ": row " << row << " of the row region at 0x" << std::hex << region.base << std::dec
             << " written " << writes[row] << " times, expected " << static_cast<int>(expected[row]);
          violation(os.str());
        }
      }
    }
  }

  // Combine: every partial of token t once, and the result equal to the sum over all top_k experts.
  void check_combine(uint64_t t) {
    const uint32_t home = routing_.home_of_token(t);
    const uint64_t local = t % routing_.tokens_per_gpu;
    hw::MemoryAccess& memory = hal_.memory(home);
    result_.tokens_checked++;
    ExpertSum all;
    const uint16_t* experts = routing_.experts_of(t);
    for (uint32_t k = 0; k < routing_.top_k; ++k) all.add(routing_.weights_of_copy(experts[k]));
    const Lanes reference = all.of(token_lanes(t));
    bool ok = true;
    if (plan_.combine_reduced_in_switch) {
      // One reduced result per token, written once into the output.
      const uint32_t writes = memory.write_count(buffers_.output + local * buffers_.combine_stride);
      if (writes != 1) {
        ok = false;
        std::ostringstream os;
        os << "token " << t << ": the reduced result reached home GPU " << home << " " << writes
           << " times, expected once";
        violation(os.str());
      }
    }
    for (uint64_t c = (*plan_.copy_first)[t]; c < (*plan_.copy_first)[t + 1] && !plan_.combine_reduced_in_switch; ++c) {
      const uint32_t writes = memory.write_count(detail::combine_slot_address(plan_, home, c));
      if (writes != 1) {
        ok = false;
        std::ostringstream os;
        os << "token " << t << ": partial from GPU " << (*plan_.copy_dest)[c] << " reached home GPU " << home << " "
           << writes << " times, expected once";
        violation(os.str());
      }
    }
    uint8_t raw[kTokenBytes];
    memory.read(buffers_.output + local * buffers_.combine_stride, raw, sizeof raw);
    const Lanes got = unpack_lanes(raw);
    if (got != reference) {
      ok = false;
      std::ostringstream os;
      os << "token " << t << " at GPU " << home << ": combine result " << lanes_text(got) << ", expected "
         << lanes_text(reference);
      violation(os.str());
    }
    result_.combine_errors += !ok;
  }

  Hal& hal_;
  const LayerPlan& plan_;
  const MoeRouting& routing_;
  const MoeBuffers& buffers_;
  const size_t max_violations_;
  std::vector<TokenBytes> token_bytes_;
  MoeCheckResult result_;
};

}  // namespace

MoeCheckResult verify_layer(Hal& hal, const LayerPlan& plan, size_t max_violations) {
  return LayerCheck(hal, plan, max_violations).run();
}

}  // namespace nvsvp::fw
