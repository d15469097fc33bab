// The runtime calls for dynamic multicast objects (dynamic_multicast_runtime.hpp).
#include "nvsvp/fw/dynamic_multicast_runtime.hpp"

namespace nvsvp::fw {

namespace {

std::string object_name(uint32_t id) { return "dynamic multicast object " + std::to_string(id); }

}  // namespace

DynamicMulticastRuntime::DynamicMulticastRuntime(uint32_t gpu_count, uint64_t multimem_base)
    : gpu_count_(gpu_count), next_multimem_address_(multimem_base) {
  if (gpu_count == 0) throw DynamicMulticastError("dynamic multicast runtime: 0 GPUs");
  if (multimem_base >= hw::kMultimemAddressLimit || multimem_base % kObjectAlignment != 0) {
    throw DynamicMulticastError("dynamic multicast runtime: multimem base " +
                                std::to_string(multimem_base) +
                                " must be below 2^48 and a multiple of 2 MiB");
  }
}

hw::DynamicMulticastObject DynamicMulticastRuntime::create_dynamic_multicast(
    uint64_t block_bytes, hw::MultimemStage stage, uint32_t shared_regions) {
  hw::DynamicMulticastObject object;
  object.id = static_cast<uint32_t>(objects_.size());
  object.block_bytes = block_bytes;
  object.stage = stage;
  object.shared_regions = shared_regions;
  try {
    hw::check_object(object);
  } catch (const std::invalid_argument& e) {
    throw DynamicMulticastError(e.what());
  }

  // Join the last mapping while it waits for regions, else open one. Nothing changes until every
  // check has passed.
  const bool join = !mappings_.empty() && mappings_.back().members < mappings_.back().shared_regions;
  if (join) {
    const MappingState& open = mappings_.back();
    const uint32_t mapping = static_cast<uint32_t>(mappings_.size() - 1);
    if (shared_regions != open.shared_regions) {
      throw DynamicMulticastError(
          object_name(object.id) + " declares " + std::to_string(shared_regions) +
          " regions sharing its mapping, but mapping " + std::to_string(mapping) + " has " +
          std::to_string(open.members) + " of its " + std::to_string(open.shared_regions) +
          " regions and waits for the rest");
    }
    if (open.members + 1 == open.shared_regions && !open.has_dispatch &&
        stage != hw::MultimemStage::dispatch) {
      throw DynamicMulticastError(object_name(object.id) + " completes mapping " +
                                  std::to_string(mapping) +
                                  " without a dispatch region: nothing would allocate its layout blocks");
    }
    object.mapping = mapping;
  } else {
    if (shared_regions == 1 && stage != hw::MultimemStage::dispatch) {
      throw DynamicMulticastError(object_name(object.id) +
                                  ": a combine region alone in its mapping (shared_regions 1) could "
                                  "never be mapped; share it with the dispatch region");
    }
    object.mapping = static_cast<uint32_t>(mappings_.size());
    MappingState fresh;
    fresh.shared_regions = shared_regions;
    mappings_.push_back(fresh);
  }
  MappingState& mapping = mappings_[object.mapping];
  ++mapping.members;
  mapping.has_dispatch = mapping.has_dispatch || stage == hw::MultimemStage::dispatch;
  objects_.push_back(ObjectState{object, false});
  return object;
}

hw::DynamicMulticastBinding DynamicMulticastRuntime::bind_dynamic_multicast(
    const hw::DynamicMulticastObject& object, uint64_t token_count,
    const std::vector<uint32_t>& tokens_per_expert) {
  const std::string who = object_name(object.id) + ": ";
  if (object.id >= objects_.size()) {
    throw DynamicMulticastError(who + "unknown (" + std::to_string(objects_.size()) +
                                " objects were created)");
  }
  ObjectState& state = objects_[object.id];
  const hw::DynamicMulticastObject& created = state.object;
  if (object.mapping != created.mapping || object.block_bytes != created.block_bytes ||
      object.stage != created.stage || object.shared_regions != created.shared_regions) {
    throw DynamicMulticastError(who + "the descriptor differs from the one create_dynamic_multicast returned");
  }
  if (state.bound) throw DynamicMulticastError(who + "already bound");
  MappingState& mapping = mappings_[created.mapping];
  if (mapping.members < mapping.shared_regions) {
    throw DynamicMulticastError(who + "mapping " + std::to_string(created.mapping) + " has " +
                                std::to_string(mapping.members) + " of its " +
                                std::to_string(mapping.shared_regions) +
                                " regions; create the others before binding");
  }
  if (tokens_per_expert.empty() || tokens_per_expert.size() % gpu_count_ != 0) {
    throw DynamicMulticastError(who + std::to_string(tokens_per_expert.size()) +
                                " experts do not spread evenly over " + std::to_string(gpu_count_) +
                                " GPUs");
  }
  if (mapping.bound) {
    // The regions of a mapping translate through one table: their counts must agree.
    if (token_count != mapping.token_count) {
      throw DynamicMulticastError(who + "token count " + std::to_string(token_count) +
                                  " differs from " + std::to_string(mapping.token_count) +
                                  ", bound for the other regions of mapping " +
                                  std::to_string(created.mapping));
    }
    if (tokens_per_expert.size() != mapping.tokens_per_expert.size()) {
      throw DynamicMulticastError(who + std::to_string(tokens_per_expert.size()) +
                                  " experts differ from " +
                                  std::to_string(mapping.tokens_per_expert.size()) +
                                  ", bound for the other regions of mapping " +
                                  std::to_string(created.mapping));
    }
    for (size_t e = 0; e < tokens_per_expert.size(); ++e) {
      if (tokens_per_expert[e] != mapping.tokens_per_expert[e]) {
        throw DynamicMulticastError(who + "expert " + std::to_string(e) + " receives " +
                                    std::to_string(tokens_per_expert[e]) + " tokens here but " +
                                    std::to_string(mapping.tokens_per_expert[e]) +
                                    " in the other regions of mapping " + std::to_string(created.mapping));
      }
    }
  }

  hw::DynamicMulticastBinding binding;
  binding.object = created;
  binding.multimem_base = next_multimem_address_;
  binding.token_count = token_count;
  binding.experts_per_gpu = static_cast<uint32_t>(tokens_per_expert.size() / gpu_count_);
  binding.tokens_per_expert = tokens_per_expert;
  try {
    hw::check_binding(binding);  // counts, the 48-bit space, 31-bit layout indices
  } catch (const std::invalid_argument& e) {
    throw DynamicMulticastError(e.what());
  }

  const uint64_t end = binding.multimem_end();
  next_multimem_address_ = (end + kObjectAlignment - 1) / kObjectAlignment * kObjectAlignment;
  state.bound = true;
  if (!mapping.bound) {
    mapping.bound = true;
    mapping.token_count = token_count;
    mapping.tokens_per_expert = tokens_per_expert;
  }
  return binding;
}

}  // namespace nvsvp::fw
