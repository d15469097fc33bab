// Dynamic multicast objects (docs/background/dynamic_multimem.md#the-runtime): the descriptors the
// firmware runtime produces (fw/dynamic_multicast_runtime.hpp) and each destination GPU's Hub
// consumes (model/gpu_hub.hpp). One definition shared by both, with the checks both apply.
// SystemC-free.
//
// An object is one multimem address range of one stage (dispatch or combine) whose 48-bit
// multimem addresses are base + algebraic index * block_bytes + offset. Objects that share a
// *mapping* translate an algebraic index to the same layout index on a GPU: the dispatch region
// (fp8 tokens) allocates it, the combine region (bf16 outputs, another block size) reads it back.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvsvp::hw {

// The stage bit of a dynamic multimem packet: dispatch (dymultimem.st) allocates layout blocks
// on first touch, combine (dymultimem.ld_reduce) only looks them up.
enum class MultimemStage : uint8_t { dispatch = 0, combine = 1 };

inline const char* to_string(MultimemStage stage) {
  return stage == MultimemStage::dispatch ? "dispatch" : "combine";
}

// Multimem addresses are 48 bits wide (the first flit's address field, multimem_packet.hpp).
constexpr uint64_t kMultimemAddressLimit = 1ull << 48;
// Block sizes are whole flits: a token vector never shares a 16-byte flit with the next.
constexpr uint64_t kDynamicBlockAlignment = 16;
// Layout indices are 31 bits (a table entry is a valid bit and a 31-bit index).
constexpr uint64_t kLayoutIndexLimit = 1ull << 31;

// What create_dynamic_multicast returns.
struct DynamicMulticastObject {
  uint32_t id = 0;              // handle, unique per runtime
  uint32_t mapping = 0;         // objects with the same mapping share the algebraic->layout table
  uint64_t block_bytes = 0;     // one token vector in this region's format
  MultimemStage stage = MultimemStage::dispatch;
  uint32_t shared_regions = 1;  // objects that share `mapping` (2: dispatch and combine)
};

// What bind_dynamic_multicast returns: the object placed in the multimem address space and sized.
struct DynamicMulticastBinding {
  DynamicMulticastObject object;
  uint64_t multimem_base = 0;    // first multimem address of the object
  uint64_t token_count = 0;      // algebraic blocks: tokens of the all-gathered tensor
  uint32_t experts_per_gpu = 0;  // expert e lives on GPU e / experts_per_gpu
  std::vector<uint32_t> tokens_per_expert;  // [global expert]: tokens it will receive

  uint64_t multimem_bytes() const { return token_count * object.block_bytes; }
  uint64_t multimem_end() const { return multimem_base + multimem_bytes(); }
  uint32_t experts() const { return static_cast<uint32_t>(tokens_per_expert.size()); }
  // The multimem address a packet carries for byte `offset` of algebraic block `algebraic_index`.
  uint64_t multimem_address(uint64_t algebraic_index, uint64_t offset = 0) const {
    if (algebraic_index >= token_count || offset >= object.block_bytes) {
      throw std::out_of_range("dynamic multicast object " + std::to_string(object.id) +
                              ": algebraic block " + std::to_string(algebraic_index) + " offset " +
                              std::to_string(offset) + " outside its " +
                              std::to_string(token_count) + " blocks of " +
                              std::to_string(object.block_bytes) + " bytes");
    }
    return multimem_base + algebraic_index * object.block_bytes + offset;
  }
  uint32_t gpus() const { return experts_per_gpu == 0 ? 0 : experts() / experts_per_gpu; }
  // Blocks GPU `gpu` packs: the tokens of its local experts, each expert's region after the last.
  uint64_t local_blocks(uint32_t gpu) const {
    uint64_t blocks = 0;
    for (uint32_t e = gpu * experts_per_gpu; e < (gpu + 1) * experts_per_gpu; ++e) {
      blocks += tokens_per_expert.at(e);
    }
    return blocks;
  }
  // Bytes GPU `gpu` reserves at its local base for this object's packed buffer.
  uint64_t local_bytes(uint32_t gpu) const { return local_blocks(gpu) * object.block_bytes; }
};

// Checks shared by the runtime (which builds descriptors) and the Hub (which may be handed
// hand-made ones). Each throws std::invalid_argument naming the offending value.
inline void check_block_bytes(uint64_t block_bytes) {
  if (block_bytes == 0 || block_bytes % kDynamicBlockAlignment != 0) {
    throw std::invalid_argument("dynamic multicast: block size " + std::to_string(block_bytes) +
                                " bytes must be a non-zero multiple of " +
                                std::to_string(kDynamicBlockAlignment));
  }
  if (block_bytes >= kMultimemAddressLimit) {
    throw std::invalid_argument("dynamic multicast: block size " + std::to_string(block_bytes) +
                                " bytes does not fit the 48-bit multimem address space");
  }
}

inline void check_object(const DynamicMulticastObject& object) {
  check_block_bytes(object.block_bytes);
  if (object.stage != MultimemStage::dispatch && object.stage != MultimemStage::combine) {
    throw std::invalid_argument("dynamic multicast object " + std::to_string(object.id) +
                                ": stage " + std::to_string(static_cast<int>(object.stage)) +
                                " is neither dispatch nor combine");
  }
  if (object.shared_regions == 0) {
    throw std::invalid_argument("dynamic multicast object " + std::to_string(object.id) +
                                ": at least one region must use its mapping (shared_regions 0)");
  }
}

inline void check_binding(const DynamicMulticastBinding& binding) {
  check_object(binding.object);
  const std::string what = "dynamic multicast object " + std::to_string(binding.object.id) + ": ";
  if (binding.token_count == 0) throw std::invalid_argument(what + "token count 0");
  if (binding.tokens_per_expert.empty()) throw std::invalid_argument(what + "no experts");
  if (binding.experts_per_gpu == 0 || binding.experts() % binding.experts_per_gpu != 0) {
    throw std::invalid_argument(what + std::to_string(binding.experts()) +
                                " experts do not spread evenly at " +
                                std::to_string(binding.experts_per_gpu) + " experts per GPU");
  }
  // token_count * block_bytes must not overflow before the range check.
  if (binding.token_count > (kMultimemAddressLimit - 1) / binding.object.block_bytes ||
      binding.multimem_base >= kMultimemAddressLimit ||
      binding.multimem_bytes() > kMultimemAddressLimit - binding.multimem_base) {
    throw std::invalid_argument(what + std::to_string(binding.token_count) + " blocks of " +
                                std::to_string(binding.object.block_bytes) + " bytes from base " +
                                std::to_string(binding.multimem_base) +
                                " leave the 48-bit multimem address space");
  }
  if (binding.multimem_base % kDynamicBlockAlignment != 0) {
    throw std::invalid_argument(what + "multimem base " + std::to_string(binding.multimem_base) +
                                " is not 16-byte aligned");
  }
  for (uint32_t e = 0; e < binding.experts(); ++e) {
    // An expert receives each token at most once.
    if (binding.tokens_per_expert[e] > binding.token_count) {
      throw std::invalid_argument(what + "expert " + std::to_string(e) + " is bound to receive " +
                                  std::to_string(binding.tokens_per_expert[e]) +
                                  " tokens, more than the " + std::to_string(binding.token_count) +
                                  " tokens of the object");
    }
  }
  for (uint32_t gpu = 0; gpu < binding.gpus(); ++gpu) {
    if (binding.local_blocks(gpu) >= kLayoutIndexLimit) {
      throw std::invalid_argument(what + "GPU " + std::to_string(gpu) + " would pack " +
                                  std::to_string(binding.local_blocks(gpu)) +
                                  " blocks; layout indices are 31 bits");
    }
  }
}

}  // namespace nvsvp::hw
