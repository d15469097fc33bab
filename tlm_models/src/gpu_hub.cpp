// The destination GPU's Hub (gpu_hub.hpp).
#include "nvsvp/model/gpu_hub.hpp"

#include "nvsvp/hw/hex_text.hpp"

#include <algorithm>

namespace nvsvp::model {

namespace {

using hw::hex_text;

std::string range_text(uint64_t begin, uint64_t end) { return "[" + hex_text(begin) + ", " + hex_text(end) + ")"; }

uint64_t round_up(uint64_t value, uint64_t granule) { return (value + granule - 1) / granule * granule; }

}  // namespace

const char* to_string(HubErrorKind kind) {
  switch (kind) {
    case HubErrorKind::bad_descriptor: return "bad_descriptor";
    case HubErrorKind::duplicate_object: return "duplicate_object";
    case HubErrorKind::unknown_object: return "unknown_object";
    case HubErrorKind::descriptor_mismatch: return "descriptor_mismatch";
    case HubErrorKind::already_bound: return "already_bound";
    case HubErrorKind::overlapping_objects: return "overlapping_objects";
    case HubErrorKind::inconsistent_mapping: return "inconsistent_mapping";
    case HubErrorKind::gpu_not_in_binding: return "gpu_not_in_binding";
    case HubErrorKind::address_outside_objects: return "address_outside_objects";
    case HubErrorKind::stage_mismatch: return "stage_mismatch";
    case HubErrorKind::not_a_local_expert: return "not_a_local_expert";
    case HubErrorKind::capacity_exceeded: return "capacity_exceeded";
    case HubErrorKind::unmapped_combine: return "unmapped_combine";
  }
  return "?";
}

// ---- TableEntryCache ----

TableEntryCache::TableEntryCache(uint32_t entries, uint32_t ways) : sets_(0), ways_(ways) {
  if (entries == 0 || ways == 0 || entries % ways != 0) {
    throw std::invalid_argument("Hub cache: " + std::to_string(entries) + " entries in " +
                                std::to_string(ways) +
                                " ways (need entries > 0, ways > 0, entries a multiple of ways)");
  }
  sets_ = entries / ways;
  lines_.resize(static_cast<size_t>(entries));
}

TableEntryCache::Access TableEntryCache::access(uint64_t entry_address) {
  Access result;
  Line* set = &lines_[static_cast<size_t>(set_of(entry_address)) * ways_];
  ++clock_;
  Line* victim = set;
  for (uint32_t w = 0; w < ways_; ++w) {
    Line& line = set[w];
    if (line.address == entry_address) {  // an empty way holds kNoAddress, which matches nothing
      line.last_use = clock_;
      result.hit = true;
      return result;
    }
    // Prefer an empty way (last_use 0), else the least recently used.
    if (line.last_use < victim->last_use) victim = &line;
  }
  if (victim->last_use != 0) {
    result.evicted = true;
    result.evicted_address = victim->address;
  }
  victim->address = entry_address;
  victim->last_use = clock_;
  return result;
}

bool TableEntryCache::contains(uint64_t entry_address) const {
  const Line* set = &lines_[static_cast<size_t>(set_of(entry_address)) * ways_];
  for (uint32_t w = 0; w < ways_; ++w) {
    if (set[w].last_use != 0 && set[w].address == entry_address) return true;
  }
  return false;
}

// ---- GpuHub ----

GpuHub::GpuHub(uint32_t gpu, const GpuHubParams& params)
    : gpu_(gpu),
      params_(params),
      cache_(params.cache_entries, params.cache_ways),
      next_table_address_(params.table_base_address) {
  if (params.sector_bytes == 0) throw std::invalid_argument("Hub: sector_bytes 0");
}

void GpuHub::create(const hw::DynamicMulticastObject& object) {
  try {
    hw::check_object(object);
  } catch (const std::invalid_argument& e) {
    throw HubError(HubErrorKind::bad_descriptor, "GPU " + std::to_string(gpu_) + " Hub: " + e.what());
  }
  if (objects_.count(object.id) != 0) {
    throw HubError(HubErrorKind::duplicate_object, "GPU " + std::to_string(gpu_) +
                                                       " Hub: dynamic multicast object " +
                                                       std::to_string(object.id) + " created twice");
  }
  auto found = mappings_.find(object.mapping);
  if (found == mappings_.end()) {
    auto mapping = std::make_unique<Mapping>();
    mapping->id = object.mapping;
    mapping->shared_regions = object.shared_regions;
    found = mappings_.emplace(object.mapping, std::move(mapping)).first;
  } else {
    Mapping& mapping = *found->second;
    uint32_t members = 0;
    for (const auto& entry : objects_) members += entry.second.descriptor.mapping == mapping.id;
    if (object.shared_regions != mapping.shared_regions || members >= mapping.shared_regions) {
      throw HubError(HubErrorKind::inconsistent_mapping,
                     "GPU " + std::to_string(gpu_) + " Hub: object " + std::to_string(object.id) +
                         " declares " + std::to_string(object.shared_regions) +
                         " regions sharing mapping " + std::to_string(mapping.id) + ", which has " +
                         std::to_string(members) + " of " + std::to_string(mapping.shared_regions) +
                         " regions already");
    }
  }
  objects_[object.id].descriptor = object;
}

void GpuHub::bind(const hw::DynamicMulticastBinding& binding, uint64_t local_base) {
  const std::string who = "GPU " + std::to_string(gpu_) + " Hub: object " +
                          std::to_string(binding.object.id) + ": ";
  try {
    hw::check_binding(binding);
  } catch (const std::invalid_argument& e) {
    throw HubError(HubErrorKind::bad_descriptor, "GPU " + std::to_string(gpu_) + " Hub: " + e.what());
  }
  Object& object = created_object(binding, who);
  const hw::DynamicMulticastObject& created = object.descriptor;
  // The range must not overlap another bound object's: an address names one object.
  const uint64_t begin = binding.multimem_base;
  const uint64_t end = binding.multimem_end();
  check_no_overlap(begin, end, who);
  Mapping& mapping = *mappings_.at(created.mapping);
  if (mapping.token_count == 0) {
    size_mapping(mapping, binding);
  } else {
    check_same_counts(mapping, binding, who);
  }
  object.bound = true;
  object.multimem_base = begin;
  object.multimem_end = end;
  object.local_base = local_base;
  object.mapping = &mapping;
  bound_by_base_[begin] = binding.object.id;
}

GpuHub::Object& GpuHub::created_object(const hw::DynamicMulticastBinding& binding, const std::string& who) {
  auto found = objects_.find(binding.object.id);
  if (found == objects_.end()) {
    throw HubError(HubErrorKind::unknown_object, who + "bound but never created");
  }
  Object& object = found->second;
  const hw::DynamicMulticastObject& created = object.descriptor;
  if (created.mapping != binding.object.mapping || created.block_bytes != binding.object.block_bytes ||
      created.stage != binding.object.stage || created.shared_regions != binding.object.shared_regions) {
    throw HubError(HubErrorKind::descriptor_mismatch,
                   who + "bound as mapping " + std::to_string(binding.object.mapping) + ", " +
                       std::to_string(binding.object.block_bytes) + "-byte blocks, " +
                       hw::to_string(binding.object.stage) + " but created as mapping " +
                       std::to_string(created.mapping) + ", " + std::to_string(created.block_bytes) +
                       "-byte blocks, " + hw::to_string(created.stage));
  }
  if (object.bound) throw HubError(HubErrorKind::already_bound, who + "bound twice");
  if (gpu_ >= binding.gpus()) {
    throw HubError(HubErrorKind::gpu_not_in_binding,
                   who + "its " + std::to_string(binding.experts()) + " experts at " +
                       std::to_string(binding.experts_per_gpu) + " per GPU cover GPUs 0.." +
                       std::to_string(binding.gpus() - 1) + ", not this GPU");
  }
  return object;
}

void GpuHub::check_no_overlap(uint64_t begin, uint64_t end, const std::string& who) const {
  auto next = bound_by_base_.lower_bound(begin);
  if (next != bound_by_base_.end() && objects_.at(next->second).multimem_base < end) {
    const Object& other = objects_.at(next->second);
    throw HubError(HubErrorKind::overlapping_objects,
                   who + "range " + range_text(begin, end) + " overlaps object " +
                       std::to_string(next->second) + " at " +
                       range_text(other.multimem_base, other.multimem_end));
  }
  if (next != bound_by_base_.begin()) {
    const uint32_t previous_id = std::prev(next)->second;
    const Object& previous = objects_.at(previous_id);
    if (previous.multimem_end > begin) {
      throw HubError(HubErrorKind::overlapping_objects,
                     who + "range " + range_text(begin, end) + " overlaps object " +
                         std::to_string(previous_id) + " at " +
                         range_text(previous.multimem_base, previous.multimem_end));
    }
  }
}

// The first bound member of `mapping` sizes it and places its table.
void GpuHub::size_mapping(Mapping& mapping, const hw::DynamicMulticastBinding& binding) {
  mapping.token_count = binding.token_count;
  mapping.tokens_per_expert = binding.tokens_per_expert;
  mapping.first_expert = gpu_ * binding.experts_per_gpu;
  mapping.local_experts = binding.experts_per_gpu;
  mapping.region_start.resize(mapping.local_experts);
  mapping.allocated.assign(mapping.local_experts, 0);
  uint32_t start = 0;  // check_binding keeps every GPU's sum below 2^31
  for (uint32_t local = 0; local < mapping.local_experts; ++local) {
    mapping.region_start[local] = start;
    start += mapping.tokens_per_expert[mapping.first_expert + local];
  }
  mapping.table.reset(mapping.token_count, mapping.region_start, start);  // one entry per bound (token, local expert) at most
  mapping.block_token.assign(start, kNoToken);
  mapping.gpus = binding.gpus();
  mapping.table_base = next_table_address_;
  next_table_address_ = round_up(
      next_table_address_ + hub_table_bytes(mapping.token_count, mapping.local_experts),
      params_.sector_bytes);
}

// A later member of `mapping` must be bound with the same counts.
void GpuHub::check_same_counts(const Mapping& mapping, const hw::DynamicMulticastBinding& binding,
                               const std::string& who) const {
  if (mapping.token_count == binding.token_count && mapping.tokens_per_expert == binding.tokens_per_expert &&
      mapping.local_experts == binding.experts_per_gpu) {
    return;
  }
  std::string difference = "token count " + std::to_string(binding.token_count) + " vs " +
                           std::to_string(mapping.token_count);
  if (mapping.token_count == binding.token_count) {
    difference = "experts per GPU " + std::to_string(binding.experts_per_gpu) + " vs " +
                 std::to_string(mapping.local_experts);
    const size_t n = std::min(mapping.tokens_per_expert.size(), binding.tokens_per_expert.size());
    if (mapping.tokens_per_expert.size() != binding.tokens_per_expert.size()) {
      difference = std::to_string(binding.tokens_per_expert.size()) + " experts vs " +
                   std::to_string(mapping.tokens_per_expert.size());
    }
    for (size_t e = 0; e < n; ++e) {
      if (mapping.tokens_per_expert[e] != binding.tokens_per_expert[e]) {
        difference = "expert " + std::to_string(e) + " receives " +
                     std::to_string(binding.tokens_per_expert[e]) + " tokens vs " +
                     std::to_string(mapping.tokens_per_expert[e]);
        break;
      }
    }
  }
  throw HubError(HubErrorKind::inconsistent_mapping,
                 who + "bound with other counts than the rest of mapping " +
                     std::to_string(mapping.id) + ": " + difference);
}

void TableEntries::reset(uint64_t tokens, const std::vector<uint32_t>& region_start, uint64_t max_entries) {
  first_.assign(tokens, 0);
  region_bounds_.assign(region_start.begin(), region_start.end());
  region_bounds_.push_back(max_entries);
  more_.clear();
  more_shift_ = 64;
  more_used_ = 0;
  size_ = 0;
  capacity_ = max_entries;
}

uint32_t TableEntries::find_more(uint64_t key) const {
  if (more_.empty()) return 0;
  const uint64_t mask = more_.size() - 1;
  for (uint64_t i = more_home(key);; i = (i + 1) & mask) {
    const More& cell = more_[i];
    if (cell.entry == 0) return 0;
    if (cell.key == key) return cell.entry;
  }
}

void TableEntries::grow_more() {
  std::vector<More> old(more_.empty() ? 16 : 2 * more_.size());
  old.swap(more_);
  more_shift_ = 64 - static_cast<uint32_t>(__builtin_ctzll(more_.size()));
  const uint64_t mask = more_.size() - 1;
  for (const More& cell : old) {
    if (cell.entry == 0) continue;
    uint64_t i = more_home(cell.key);
    while (more_[i].entry != 0) i = (i + 1) & mask;
    more_[i] = cell;
  }
}

void TableEntries::insert(uint64_t token, uint32_t local, uint32_t entry) {
  if (entry == 0 || size_ >= capacity_) throw std::logic_error("Hub table: insert beyond the bound entries");
  if (local + 1 >= region_bounds_.size() || !in_region(entry, local)) {
    throw std::logic_error("Hub table: an entry outside its local expert's region");
  }
  if (token < first_.size()) {
    uint32_t& first = first_[token];
    if (first == 0) {
      first = entry;
      ++size_;
      return;
    }
    if (in_region(first, local)) throw std::logic_error("Hub table: slot inserted twice");
  }
  if (2 * (more_used_ + 1) > more_.size()) grow_more();  // at most half full: short probe runs
  const uint64_t key = more_key(token, local);
  const uint64_t mask = more_.size() - 1;
  for (uint64_t i = more_home(key);; i = (i + 1) & mask) {
    More& cell = more_[i];
    if (cell.entry == 0) {
      cell.key = key;
      cell.entry = entry;
      ++more_used_;
      ++size_;
      return;
    }
    if (cell.key == key) throw std::logic_error("Hub table: slot inserted twice");
  }
}

GpuHub::Object& GpuHub::object_at(uint64_t multimem_address) {
  // Packets come in runs of one object: the last one found is tried first.
  if (last_object_ != nullptr && multimem_address >= last_object_->multimem_base &&
      multimem_address < last_object_->multimem_end) {
    return *last_object_;
  }
  auto after = bound_by_base_.upper_bound(multimem_address);
  if (after != bound_by_base_.begin()) {
    Object& object = objects_.at(std::prev(after)->second);
    if (multimem_address < object.multimem_end) {
      last_object_ = &object;
      return object;
    }
  }
  std::string nearest;
  if (after != bound_by_base_.begin()) {
    const Object& below = objects_.at(std::prev(after)->second);
    nearest += "; below it: object " + std::to_string(below.descriptor.id) + " at " +
               range_text(below.multimem_base, below.multimem_end);
  }
  if (after != bound_by_base_.end()) {
    const Object& above = objects_.at(after->second);
    nearest += "; above it: object " + std::to_string(above.descriptor.id) + " at " +
               range_text(above.multimem_base, above.multimem_end);
  }
  throw HubError(HubErrorKind::address_outside_objects,
                 "GPU " + std::to_string(gpu_) + " Hub: multimem address " + hex_text(multimem_address) +
                     " lies in no bound dynamic multicast object" +
                     (nearest.empty() ? std::string(" (none is bound)") : nearest));
}

HubTranslation GpuHub::translate(uint64_t multimem_address, hw::MultimemStage stage, uint16_t expert,
                                 uint32_t packets) {
  Object& object = object_at(multimem_address);
  const hw::DynamicMulticastObject& descriptor = object.descriptor;
  // Error text is built only when needed: translate runs once per packet and target.
  const auto where = [&] {
    return "GPU " + std::to_string(gpu_) + " Hub: object " + std::to_string(descriptor.id) +
           ", address " + hex_text(multimem_address);
  };
  if (stage != descriptor.stage) {
    throw HubError(HubErrorKind::stage_mismatch, where() + ": a " + hw::to_string(stage) +
                                                     " packet in a " +
                                                     hw::to_string(descriptor.stage) + " object");
  }
  Mapping& mapping = *object.mapping;
  if (expert < mapping.first_expert || expert >= mapping.first_expert + mapping.local_experts) {
    throw HubError(HubErrorKind::not_a_local_expert,
                   where() + ": target expert " + std::to_string(expert) +
                       " is not local (this GPU holds experts " +
                       std::to_string(mapping.first_expert) + ".." +
                       std::to_string(mapping.first_expert + mapping.local_experts - 1) + ")");
  }
  const uint32_t local = expert - mapping.first_expert;
  const uint64_t relative = multimem_address - object.multimem_base;

  HubTranslation result;
  result.object = descriptor.id;
  result.algebraic_index = relative / descriptor.block_bytes;
  const size_t slot = static_cast<size_t>(local) * mapping.token_count + result.algebraic_index;
  result.table_entry_address = mapping.table_base + slot * kTableEntryBytes;

  // Decide the outcome before touching the cache or the counters, so an error leaves no trace.
  // The host keys entries token-major, so that a stream of tokens touches neighbouring cells.
  uint32_t entry = mapping.table.find(result.algebraic_index, local);
  const bool allocate = !table_entry_valid(entry);
  if (allocate && stage == hw::MultimemStage::combine) {
    throw HubError(HubErrorKind::unmapped_combine,
                   where() + ": combine for expert " + std::to_string(expert) + " of algebraic block " +
                       std::to_string(result.algebraic_index) + ", which dispatch never mapped");
  }
  if (allocate && result.algebraic_index >= kNoToken) {
    throw HubError(HubErrorKind::capacity_exceeded, where() + ": algebraic index beyond the token-ID table's 32 bits");
  }
  const uint32_t capacity = mapping.tokens_per_expert[expert];
  if (allocate && mapping.allocated[local] >= capacity) {
    throw HubError(HubErrorKind::capacity_exceeded,
                   where() + ": expert " + std::to_string(expert) + " was bound for " +
                       std::to_string(capacity) + " tokens and algebraic block " +
                       std::to_string(result.algebraic_index) + " would be token " +
                       std::to_string(mapping.allocated[local] + 1));
  }

  const TableEntryCache::Access cached = cache_.access(result.table_entry_address);
  result.cache_hit = cached.hit;
  // The message's later packets find the entry the first one just brought in.
  if (packets > 1) statistics_.cache_hits += packets - 1;
  if (cached.hit) {
    ++statistics_.cache_hits;
  } else {
    ++statistics_.cache_misses;
    result.memory_read_bytes = params_.sector_bytes;
  }
  if (cached.evicted) ++statistics_.cache_evictions;
  if (allocate) {
    entry = encode_table_entry(mapping.region_start[local] + mapping.allocated[local]++);
    mapping.table.insert(result.algebraic_index, local, entry);
    mapping.block_token[table_entry_layout_index(entry)] = static_cast<uint32_t>(result.algebraic_index);
    result.allocated = true;
    result.memory_write_bytes = params_.sector_bytes;
    ++statistics_.allocations;
  }
  result.layout_index = table_entry_layout_index(entry);
  result.local_address = object.local_base +
                         static_cast<uint64_t>(result.layout_index) * descriptor.block_bytes +
                         relative % descriptor.block_bytes;
  statistics_.memory_read_bytes += result.memory_read_bytes;
  statistics_.memory_write_bytes += result.memory_write_bytes;
  ++(stage == hw::MultimemStage::dispatch ? statistics_.dispatch_translations
                                          : statistics_.combine_translations);
  return result;
}

bool GpuHub::lookup(uint64_t multimem_address, uint16_t expert, uint64_t& local_address) const {
  const Object* found = bound_object(multimem_address);
  if (found == nullptr) return false;
  const Object& object = *found;
  const Mapping& mapping = *object.mapping;
  if (expert < mapping.first_expert || expert >= mapping.first_expert + mapping.local_experts) return false;
  const uint64_t relative = multimem_address - object.multimem_base;
  const uint32_t entry = mapping.table.find(relative / object.descriptor.block_bytes, expert - mapping.first_expert);
  if (!table_entry_valid(entry)) return false;
  local_address = object.local_base + static_cast<uint64_t>(table_entry_layout_index(entry)) * object.descriptor.block_bytes +
                  relative % object.descriptor.block_bytes;
  return true;
}

const GpuHub::Object* GpuHub::bound_object(uint64_t multimem_address) const {
  // Checks and notifications look up one object many times in a row: the last one found is
  // tried before the two map lookups.
  if (last_found_ != nullptr && multimem_address >= last_found_->multimem_base &&
      multimem_address < last_found_->multimem_end) {
    return last_found_;
  }
  auto after = bound_by_base_.upper_bound(multimem_address);
  if (after == bound_by_base_.begin()) return nullptr;
  const Object& object = objects_.at(std::prev(after)->second);
  if (multimem_address >= object.multimem_end) return nullptr;
  last_found_ = &object;
  return &object;
}

bool GpuHub::token_of_block(uint64_t multimem_address, uint32_t layout_index, uint64_t& token) const {
  const Object* object = bound_object(multimem_address);
  if (object == nullptr) return false;
  const Mapping& mapping = *object->mapping;
  if (layout_index >= mapping.block_token.size() || mapping.block_token[layout_index] == kNoToken) return false;
  token = mapping.block_token[layout_index];
  return true;
}

bool GpuHub::tokens_per_gpu(uint64_t multimem_address, uint64_t& tokens) const {
  const Object* object = bound_object(multimem_address);
  if (object == nullptr || object->mapping->gpus == 0) return false;
  tokens = object->mapping->token_count / object->mapping->gpus;
  return true;
}

const GpuHub::Mapping& GpuHub::mapping(uint32_t id) const {
  auto found = mappings_.find(id);
  if (found == mappings_.end()) {
    throw HubError(HubErrorKind::unknown_object,
                   "GPU " + std::to_string(gpu_) + " Hub: no object uses mapping " + std::to_string(id));
  }
  return *found->second;
}

uint64_t GpuHub::table_bytes(uint32_t id) const {
  const Mapping& m = mapping(id);
  return hub_table_bytes(m.token_count, m.local_experts);  // 0 until a member is bound
}

uint64_t GpuHub::table_bytes() const {
  uint64_t bytes = 0;
  for (const auto& entry : mappings_) bytes += table_bytes(entry.first);
  return bytes;
}

uint32_t GpuHub::allocated_blocks(uint32_t id, uint16_t expert) const {
  const Mapping& m = mapping(id);
  if (m.token_count == 0) {
    throw HubError(HubErrorKind::unknown_object, "GPU " + std::to_string(gpu_) + " Hub: mapping " +
                                                     std::to_string(id) + " has no bound object");
  }
  if (expert < m.first_expert || expert >= m.first_expert + m.local_experts) {
    throw HubError(HubErrorKind::not_a_local_expert,
                   "GPU " + std::to_string(gpu_) + " Hub: expert " + std::to_string(expert) +
                       " has no sub-table in mapping " + std::to_string(id));
  }
  return m.allocated[expert - m.first_expert];
}

bool GpuHub::is_bound(uint32_t object) const {
  auto found = objects_.find(object);
  return found != objects_.end() && found->second.bound;
}

}  // namespace nvsvp::model
