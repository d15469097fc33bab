// The scheme registry: every scheme this firmware builds, by name, and build_layer, which starts
// the plan (moe_planning.cpp) and hands it to the scheme's builder (scheme_*.cpp).
#include <algorithm>
#include <stdexcept>

#include "moe_plan.hpp"

namespace nvsvp::fw {

namespace {

struct SchemeEntry {
  const char* name;
  detail::SchemeBuilder build;
  bool fused_kernel;  // runs the fused kernel whose SM groups are software.fusion_*_sms
};

const std::vector<SchemeEntry>& schemes() {
  static const std::vector<SchemeEntry> entries{
      {"deepep", &detail::build_deepep, false},
      {"deepep-ll", &detail::build_deepep_ll, false},
      {"nvls", &detail::build_nvls, false},
      {"dysharp-basic", &detail::build_dysharp_basic, false},
      {"explicit-addressing-basic", &detail::build_explicit_addressing_basic, false},
      {"tutel", &detail::build_tutel, false},
      {"fastermoe", &detail::build_fastermoe, false},
      {"ccfuser", &detail::build_ccfuser, false},
      {"comet", &detail::build_comet, false},
      {"fusion-only", &detail::build_fusion_only, true},
      {"dysharp-comet", &detail::build_dysharp_comet, false},
      {"explicit-addressing", &detail::build_explicit_addressing, true},
      {"dysharp", &detail::build_dysharp, true}};
  return entries;
}

// Delays are the plans' fixed software costs: the only compute tasks with a duration of their own.
std::vector<double> software_delays(const LayerPlan& plan) {
  std::vector<double> largest(detail::moe_phase_names().size(), 0.0);
  auto add = [&](const hw::WorkSequence& seq) {
    std::vector<double> sums(largest.size(), 0.0);
    for (const hw::Task& t : seq.tasks) {
      if (t.kind == hw::TaskKind::compute && t.phase < sums.size()) sums[t.phase] += t.duration_ns;
    }
    for (size_t p = 0; p < sums.size(); ++p) largest[p] = std::max(largest[p], sums[p]);
  };
  for (const hw::WorkSequence& seq : plan.sequences) add(seq);
  for (const auto& streams : plan.extra_sequences) {
    for (const hw::WorkSequence& seq : streams) add(seq);
  }
  return largest;
}

const SchemeEntry* find_scheme(const std::string& scheme) {
  for (const SchemeEntry& e : schemes()) {
    if (scheme == e.name) return &e;
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string>& scheme_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const SchemeEntry& e : schemes()) n.emplace_back(e.name);
    return n;
  }();
  return names;
}

const std::vector<uint32_t>& tutel_degree_candidates() {
  static const std::vector<uint32_t> degrees{1, 2, 4, 8};
  return degrees;
}

bool uses_fused_kernel(const std::string& scheme) {
  const SchemeEntry* entry = find_scheme(scheme);
  return entry != nullptr && entry->fused_kernel;
}

LayerPlan build_layer(const std::string& scheme, std::shared_ptr<const MoeLayerSpec> spec) {
  const SchemeEntry* entry = find_scheme(scheme);
  if (entry == nullptr) throw std::invalid_argument("unknown scheme '" + scheme + "'");
  const MoeRouting& routing = spec->routing;
  if (routing.gpus == 0 || routing.experts % routing.gpus != 0 || routing.top_k == 0 ||
      routing.expert_ids.size() != routing.tokens() * routing.top_k) {
    throw std::invalid_argument("inconsistent routing for the layer");
  }
  const detail::DispatchMap map = detail::map_dispatch(routing);
  LayerPlan plan = detail::start_plan(scheme, std::move(spec), map);
  entry->build(plan, map);
  plan.software_delay_ns = software_delays(plan);
  return plan;
}

}  // namespace nvsvp::fw
