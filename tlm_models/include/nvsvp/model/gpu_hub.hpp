// The destination GPU's Hub (docs/background/dynamic_multimem.md#the-gpu-hub): translates the
// multimem address of a dynamic multimem packet into the GPU's own packed layout, per target
// expert. SystemC-free; it keeps functional state and statistics, the GPU model times the memory
// traffic it reports (docs/models/dynamic_multimem.md).
//
//   algebraic index = (multimem address - multimem base) / block bytes
//   local address   = local base + layout index * block bytes + (multimem address - base) mod block
//
// The algebraic->layout table lives in GPU memory: per mapping, one sub-table per local expert of
// token_count entries of 4 bytes (bit 31 valid, bits 30:0 layout index). Dispatch allocates the
// next free layout block of the target expert on the first touch of an algebraic block (a bump
// counter per expert, so each expert's region stays packed); combine reads the mapping back.
// A set-associative cache of table entries (512 entries, LRU within a set) sits in front of it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/hw/dynamic_multicast.hpp"
#include "nvsvp/hw/params.hpp"

namespace nvsvp::model {

struct GpuHubParams {
  uint32_t cache_entries = 512;  // the study's cache size
  uint32_t cache_ways = 8;       // assumed; 1 is direct-mapped, cache_entries fully associative
  uint32_t sector_bytes = 32;    // assumed: a miss reads, an allocation writes one memory sector
  // Where the Hub places its tables in GPU memory (only used to name the entries' addresses, for
  // timing; above the firmware's MoE buffers at 0x0100'0000'0000 .. 0x0800'0000'0000).
  uint64_t table_base_address = 0x0F00'0000'0000;

};

// A table entry: valid bit and 31-bit layout index.
constexpr uint32_t kTableEntryBytes = 4;
constexpr uint32_t kTableEntryValid = 1u << 31;
inline uint32_t encode_table_entry(uint32_t layout_index) {
  if (layout_index >= kTableEntryValid) {
    throw std::out_of_range("Hub table entry: layout index " + std::to_string(layout_index) +
                            " does not fit 31 bits");
  }
  return kTableEntryValid | layout_index;
}
inline bool table_entry_valid(uint32_t entry) { return (entry & kTableEntryValid) != 0; }
inline uint32_t table_entry_layout_index(uint32_t entry) { return entry & ~kTableEntryValid; }

// Bytes of one mapping's table: one sub-table of `token_count` entries per local expert.
inline uint64_t hub_table_bytes(uint64_t token_count, uint32_t local_experts) {
  return token_count * local_experts * kTableEntryBytes;
}

enum class HubErrorKind : uint8_t {
  bad_descriptor,          // a descriptor fails the shared checks (hw/dynamic_multicast.hpp)
  duplicate_object,        // create() twice with one id
  unknown_object,          // bind() of an object never created
  descriptor_mismatch,     // bind() of an object that differs from what was created
  already_bound,           // bind() twice
  overlapping_objects,     // two bound objects share multimem addresses
  inconsistent_mapping,    // objects of one mapping disagree (shared_regions, counts)
  gpu_not_in_binding,      // this GPU is not among the binding's GPUs
  address_outside_objects, // a multimem address in no bound object
  stage_mismatch,          // a packet's stage differs from its object's
  not_a_local_expert,      // a target expert that lives on another GPU
  capacity_exceeded,       // more tokens for an expert than it was bound for
  unmapped_combine,        // combine of an algebraic block dispatch never touched
};
const char* to_string(HubErrorKind kind);

// Errors are model errors (a firmware or switch bug); the message names the values.
class HubError : public std::runtime_error {
 public:
  HubError(HubErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  HubErrorKind kind() const { return kind_; }

 private:
  HubErrorKind kind_;
};

// Set-associative cache of table entries keyed by the entry's memory address; true LRU within a
// set. Set = (address / 4) mod sets, so consecutive algebraic indices of one sub-table fall in
// consecutive sets. It holds tags only: the tables are written through, so the model reads the
// value from the table and the cache only decides hit or miss.
class TableEntryCache {
 public:
  TableEntryCache(uint32_t entries, uint32_t ways);

  struct Access {
    bool hit = false;
    bool evicted = false;  // a miss replaced a valid entry
    uint64_t evicted_address = 0;
  };
  // Looks `entry_address` up and, on a miss, installs it in place of the set's least recently
  // used (or an empty) way.
  Access access(uint64_t entry_address);
  bool contains(uint64_t entry_address) const;

  uint32_t entries() const { return sets_ * ways_; }
  uint32_t ways() const { return ways_; }
  uint32_t sets() const { return sets_; }
  uint32_t set_of(uint64_t entry_address) const {
    return static_cast<uint32_t>((entry_address / kTableEntryBytes) % sets_);
  }

 private:
  static constexpr uint64_t kNoAddress = ~0ull;  // no table entry lies there
  struct Line {
    uint64_t address = kNoAddress;
    uint64_t last_use = 0;  // 0: empty
  };
  uint32_t sets_;
  uint32_t ways_;
  uint64_t clock_ = 0;
  std::vector<Line> lines_;  // [set * ways + way]
};

// What one translation did: where the bytes go and what the table access cost.
struct HubTranslation {
  uint32_t object = 0;
  uint64_t algebraic_index = 0;
  uint32_t layout_index = 0;
  uint64_t local_address = 0;
  uint64_t table_entry_address = 0;
  bool cache_hit = false;
  bool allocated = false;           // dispatch: this access was the block's first touch
  uint32_t memory_read_bytes = 0;   // a miss reads one sector
  uint32_t memory_write_bytes = 0;  // an allocation writes one sector (write-through)
};

struct HubStatistics {
  uint64_t dispatch_translations = 0;
  uint64_t combine_translations = 0;
  uint64_t allocations = 0;
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t cache_evictions = 0;
  uint64_t memory_read_bytes = 0;
  uint64_t memory_write_bytes = 0;

  double hit_rate() const {
    const uint64_t accesses = cache_hits + cache_misses;
    return accesses == 0 ? 0.0 : static_cast<double>(cache_hits) / static_cast<double>(accesses);
  }
};

// The valid entries of one algebraic->layout table, by (algebraic index, local expert). A GPU
// holds entries only for the tokens its experts receive, and most of those tokens reach one of its
// experts only. So the host keeps each algebraic index's first entry in a dense array of 4-byte
// cells, the entry itself: its layout index tells the local expert, since each local expert's
// blocks form one region of the layout. A token's further experts go to a small open-addressing
// table. Translations come in no useful order (combine follows the experts' completion), so what
// counts is the bytes per token: 4 here, against 32 for the hashed table this replaced. The
// addresses the Hub cache sees are still those of the dense table in GPU memory. A missing key
// reads as 0 (not valid).
class TableEntries {
 public:
  // `tokens` algebraic indices kept densely (larger ones go to the small table);
  // `region_start[local]`: the first layout index of each local expert's region, ascending, the
  // regions together holding `max_entries` (the Hub never allocates beyond its bound counts).
  void reset(uint64_t tokens, const std::vector<uint32_t>& region_start, uint64_t max_entries);
  uint32_t find(uint64_t token, uint32_t local) const {
    if (token < first_.size()) {
      const uint32_t first = first_[token];
      if (first == 0) return 0;  // a token's first entry is always the dense one
      if (in_region(first, local)) return first;
    }
    return find_more(more_key(token, local));
  }
  void insert(uint64_t token, uint32_t local, uint32_t entry);  // entry != 0; the key must be absent
  uint64_t size() const { return size_; }

 private:
  struct More {
    uint64_t key = 0;
    uint32_t entry = 0;  // 0: empty
  };
  bool in_region(uint32_t entry, uint32_t local) const {
    const uint32_t index = table_entry_layout_index(entry);
    return index >= region_bounds_[local] && index < region_bounds_[local + 1];
  }
  static uint64_t more_key(uint64_t token, uint32_t local) { return token << 32 | local; }
  uint64_t more_home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> more_shift_; }
  uint32_t find_more(uint64_t key) const;
  void grow_more();
  std::vector<uint32_t> first_;          // [algebraic index]: its first entry, 0 if none
  std::vector<uint64_t> region_bounds_;  // [local expert]: region start; one more: the end
  std::vector<More> more_;               // open addressing, at most half full; empty until needed
  uint32_t more_shift_ = 64;
  uint64_t more_used_ = 0;
  uint64_t size_ = 0;
  uint64_t capacity_ = 0;
};

class GpuHub {
 public:
  explicit GpuHub(uint32_t gpu, const GpuHubParams& params = {});

  // The runtime created `object` (the Hub only records it).
  void create(const hw::DynamicMulticastObject& object);
  // The runtime bound a created object; this GPU packs its blocks at `local_base`
  // (binding.local_bytes(gpu) bytes). The first bound object of a mapping creates its table.
  void bind(const hw::DynamicMulticastBinding& binding, uint64_t local_base);

  // One target expert's access to `multimem_address` with the packet's stage bit. Dispatch
  // allocates on first touch; combine of an unmapped block, a foreign expert, an address in no
  // bound object, a stage that is not the object's, or an expert over its capacity throw HubError.
  // `packets`: the packets of the message (each translates; the later ones hit the entry the
  // first one brought in, and count as hits).
  HubTranslation translate(uint64_t multimem_address, hw::MultimemStage stage, uint16_t expert,
                           uint32_t packets = 1);
  // The table as it stands, for checks: the local address `multimem_address` maps to for
  // `expert`; false when not mapped. Touches neither the cache nor the statistics.
  bool lookup(uint64_t multimem_address, uint16_t expert, uint64_t& local_address) const;

  // The token-ID table (docs/background/token_centric_fusion.md#hardware-tables): the algebraic
  // index (token) the Hub placed in layout block `layout_index` of the object holding
  // `multimem_address`. False when the block has not been allocated or no bound object holds the
  // address. Touches neither the cache nor the statistics (firmware's fused kernel keeps this table
  // beside the tiles).
  bool token_of_block(uint64_t multimem_address, uint32_t layout_index, uint64_t& token) const;
  // Tokens per GPU of the bound object holding `multimem_address` (token count / GPUs); false
  // when no bound object holds it.
  bool tokens_per_gpu(uint64_t multimem_address, uint64_t& tokens) const;

  uint32_t gpu() const { return gpu_; }
  const HubStatistics& statistics() const { return statistics_; }
  const TableEntryCache& cache() const { return cache_; }
  // Table bytes of every mapping with a bound object (what the tables occupy in GPU memory).
  uint64_t table_bytes() const;
  uint64_t table_bytes(uint32_t mapping) const;
  // Layout blocks handed out so far to `expert` in `mapping` (its bump counter).
  uint32_t allocated_blocks(uint32_t mapping, uint16_t expert) const;
  bool is_bound(uint32_t object) const;

 private:
  struct Mapping {
    uint32_t id = 0;
    uint32_t shared_regions = 0;
    uint64_t token_count = 0;
    std::vector<uint32_t> tokens_per_expert;  // global, as bound (for the consistency check)
    uint32_t first_expert = 0;
    uint32_t local_experts = 0;
    uint64_t table_base = 0;            // memory address of the first sub-table
    std::vector<uint32_t> region_start;  // [local expert]: layout index of its first block
    std::vector<uint32_t> allocated;     // [local expert]: bump counter
    std::vector<uint32_t> block_token;   // [layout index]: algebraic index, kNoToken until allocated
    uint32_t gpus = 0;
    TableEntries table;                  // by algebraic index and local expert
  };
  struct Object {
    hw::DynamicMulticastObject descriptor;
    bool bound = false;
    uint64_t multimem_base = 0;
    uint64_t multimem_end = 0;
    uint64_t local_base = 0;
    Mapping* mapping = nullptr;
  };

  static constexpr uint32_t kNoToken = ~0u;
  Object& object_at(uint64_t multimem_address);
  const Object* bound_object(uint64_t multimem_address) const;  // nullptr: in no bound object
  const Mapping& mapping(uint32_t id) const;
  // bind()'s steps: the created object the binding names (HubError unless it matches and is
  // unbound), the checks of its range and counts, and the first member's sizing of the mapping.
  Object& created_object(const hw::DynamicMulticastBinding& binding, const std::string& who);
  void check_no_overlap(uint64_t begin, uint64_t end, const std::string& who) const;
  void size_mapping(Mapping& mapping, const hw::DynamicMulticastBinding& binding);
  void check_same_counts(const Mapping& mapping, const hw::DynamicMulticastBinding& binding,
                         const std::string& who) const;

  uint32_t gpu_;
  GpuHubParams params_;
  TableEntryCache cache_;
  HubStatistics statistics_;
  std::map<uint32_t, Object> objects_;                        // by id
  std::map<uint32_t, std::unique_ptr<Mapping>> mappings_;     // by id
  std::map<uint64_t, uint32_t> bound_by_base_;                // multimem base -> object id
  Object* last_object_ = nullptr;  // the object the last translation found (std::map nodes stay put)
  mutable const Object* last_found_ = nullptr;  // the same for bound_object (checks, notifications)
  uint64_t next_table_address_;
};

}  // namespace nvsvp::model
