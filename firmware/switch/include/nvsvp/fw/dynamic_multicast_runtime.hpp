// The runtime calls that create and bind dynamic multicast objects
// (docs/background/dynamic_multimem.md#the-runtime). They produce plain descriptors
// (hw/dynamic_multicast.hpp) that the platform hands to every GPU's Hub; members are never
// registered per token, each packet carries its own targets. SystemC-free.
//
// Mappings are formed in creation order: an object joins the mapping opened last while that one
// still waits for regions, otherwise it opens a new one. For one MoE layer:
//   auto dispatch = rt.create_dynamic_multicast(7392, MultimemStage::dispatch, 2);   // mapping m
//   auto combine  = rt.create_dynamic_multicast(14336, MultimemStage::combine, 2);   // mapping m
//   rt.bind_dynamic_multicast(dispatch, tokens, tokens_per_expert);
//   rt.bind_dynamic_multicast(combine, tokens, tokens_per_expert);   // the same counts
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/hw/dynamic_multicast.hpp"

namespace nvsvp::fw {

// A rejected runtime call; the message names the object and the values.
class DynamicMulticastError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class DynamicMulticastRuntime {
 public:
  // Assumed: dynamic objects take the upper quarter of the 48-bit multimem space, above where
  // static groups are placed, each at a 2 MiB boundary (the static multicast granule).
  static constexpr uint64_t kDefaultMultimemBase = 0x4000'0000'0000;
  static constexpr uint64_t kObjectAlignment = 2ull << 20;

  explicit DynamicMulticastRuntime(uint32_t gpu_count, uint64_t multimem_base = kDefaultMultimemBase);

  // A region of `block_bytes` per token (a non-zero multiple of 16) for `stage`, sharing its
  // mapping with `shared_regions` - 1 other objects created next. A mapping must hold at least
  // one dispatch region (only dispatch allocates layout blocks).
  hw::DynamicMulticastObject create_dynamic_multicast(uint64_t block_bytes, hw::MultimemStage stage,
                                                      uint32_t shared_regions);

  // Places a created object in the multimem space for `token_count` tokens, with
  // `tokens_per_expert[e]` the tokens expert e will receive (experts spread evenly over the
  // GPUs). Every region of the mapping must have been created, and all of them are bound with the
  // same counts.
  hw::DynamicMulticastBinding bind_dynamic_multicast(const hw::DynamicMulticastObject& object,
                                                     uint64_t token_count,
                                                     const std::vector<uint32_t>& tokens_per_expert);

  uint32_t gpu_count() const { return gpu_count_; }
  uint32_t objects() const { return static_cast<uint32_t>(objects_.size()); }
  uint32_t mappings() const { return static_cast<uint32_t>(mappings_.size()); }
  // Where the next bound object will start.
  uint64_t next_multimem_address() const { return next_multimem_address_; }

 private:
  struct MappingState {
    uint32_t shared_regions = 0;
    uint32_t members = 0;
    bool has_dispatch = false;
    bool bound = false;  // a member was bound: the counts below are fixed
    uint64_t token_count = 0;
    std::vector<uint32_t> tokens_per_expert;
  };
  struct ObjectState {
    hw::DynamicMulticastObject object;
    bool bound = false;
  };

  uint32_t gpu_count_;
  uint64_t next_multimem_address_;
  std::vector<ObjectState> objects_;    // by id
  std::vector<MappingState> mappings_;  // by id
};

}  // namespace nvsvp::fw
