// The scheme registry: every scheme by name with its traits (scheme_registry.hpp), and build_layer,
// which starts the plan (moe_planning.cpp) and hands it to the builder of the scheme whose plan
// the scheme runs (scheme_*.cpp).
#include <algorithm>
#include <stdexcept>

#include "moe_plan.hpp"
#include "nvsvp/fw/scheme_registry.hpp"

namespace nvsvp::fw {

namespace {

using Multicast = SwitchMulticast;

struct SchemeEntry {
  SchemeTraits traits;
  detail::SchemeBuilder build;  // null for a scheme that runs another's plan (traits.plan)
};

SchemeTraits traits(const char* name, const char* summary) { return SchemeTraits{name, summary, name}; }
SchemeTraits with(SchemeTraits t, Multicast multicast) {
  t.multicast = multicast;
  return t;
}
SchemeTraits fused(SchemeTraits t) {
  t.fused_kernel = true;
  return t;
}

const std::vector<SchemeEntry>& entries() {
  static const std::vector<SchemeEntry> table = [] {
    SchemeTraits tutel = traits("tutel", "Tutel: capacity-padded all-to-all on NCCL's channels, pipelined with "
                                         "the experts (degree searched when software.tutel_degree is 0)");
    tutel.nccl_channels = true;
    tutel.searches_degree = true;
    SchemeTraits fastermoe = traits("fastermoe", "FasterMoE: exchanges with one group of GPUs at a time, an NCCL call "
                                                 "per local expert, the experts computing one group's rows as the next "
                                                 "group's arrive");
    fastermoe.nccl_channels = true;
    SchemeTraits dualpipe{"dualpipe", "DeepEP's layers under DeepSeek-V3's DualPipe schedule",
                          "deepep"};
    dualpipe.schedule = StepSchedule::dualpipe;
    dualpipe.training_step_only = true;
    return std::vector<SchemeEntry>{
        {traits("deepep", "DeepEP's normal kernels: count exchange, token copies over channels, a barrier, "
                          "the experts, the partial sums back"),
         &detail::build_deepep},
        {traits("deepep-ll", "DeepEP's low-latency kernels (decoding): a row per (token, expert) into "
                             "per-expert buffers, no count exchange"),
         &detail::build_deepep_ll},
        {with(traits("nvls", "NVLink SHARP: multimem.st of every token to every GPU, multimem.ld_reduce of "
                             "every token's partials in the switch"),
              Multicast::groups),
         &detail::build_nvls},
        {with(traits("dysharp-basic", "in-switch dynamic multicast and reduction by expert ID, with barriers "
                                      "between the phases"),
              Multicast::dynamic_objects),
         &detail::build_dysharp_basic},
        {with(traits("explicit-addressing-basic", "dynamic multicast and reduction naming every target's "
                                                  "address in the packet, with barriers between the phases"),
              Multicast::dynamic_objects),
         &detail::build_explicit_addressing_basic},
        {tutel, &detail::build_tutel},
        {fastermoe, &detail::build_fastermoe},
        {traits("ccfuser", "CCFuser: GEMMs that pull their rows by remote reads and write each result row home"),
         &detail::build_ccfuser},
        {traits("comet", "COMET: tile-level overlap over the software all-to-all with readiness flags, "
                         "GEMM-2 and combine after all of GEMM-1"),
         &detail::build_comet},
        {fused(traits("fusion-only", "token-centric fusion over the software all-to-all with readiness flags, "
                                     "one persistent kernel")),
         &detail::build_fusion_only},
        {with(traits("dysharp-comet", "in-switch dynamic multicast and reduction under COMET's two-kernel "
                                      "overlap"),
              Multicast::dynamic_objects),
         &detail::build_dysharp_comet},
        {fused(with(traits("explicit-addressing", "token-centric fusion over dynamic multicast naming every "
                                                  "target's address"),
                    Multicast::dynamic_objects)),
         &detail::build_explicit_addressing},
        {fused(with(traits("dysharp", "token-centric fusion over in-switch dynamic multicast and reduction by "
                                      "expert ID (the in-switch MoE design)"),
                    Multicast::dynamic_objects)),
         &detail::build_dysharp},
        {dualpipe, nullptr}};
  }();
  return table;
}

const SchemeEntry* find_entry(const std::string& scheme) {
  for (const SchemeEntry& e : entries()) {
    if (scheme == e.traits.name) return &e;
  }
  return nullptr;
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

}  // namespace

const char* to_string(SwitchMulticast multicast) {
  switch (multicast) {
    case SwitchMulticast::none: return "none";
    case SwitchMulticast::groups: return "groups";
    case SwitchMulticast::dynamic_objects: return "dynamic";
  }
  return "?";
}

const std::vector<SchemeTraits>& scheme_registry() {
  static const std::vector<SchemeTraits> registry = [] {
    std::vector<SchemeTraits> all;
    for (const SchemeEntry& e : entries()) all.push_back(e.traits);
    return all;
  }();
  return registry;
}

const SchemeTraits* find_scheme(const std::string& scheme) {
  const SchemeEntry* entry = find_entry(scheme);
  return entry == nullptr ? nullptr : &entry->traits;
}

const SchemeTraits& scheme_traits(const std::string& scheme) {
  const SchemeTraits* traits = find_scheme(scheme);
  if (traits == nullptr) throw std::invalid_argument("unknown scheme '" + scheme + "'");
  return *traits;
}

const std::vector<std::string>& scheme_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const SchemeEntry& e : entries()) n.emplace_back(e.traits.name);
    return n;
  }();
  return names;
}

const std::vector<std::string>& layer_scheme_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const SchemeEntry& e : entries()) {
      if (!e.traits.training_step_only) n.emplace_back(e.traits.name);
    }
    return n;
  }();
  return names;
}

const std::vector<uint32_t>& tutel_degree_candidates() {
  static const std::vector<uint32_t> degrees{1, 2, 4, 8};
  return degrees;
}

LayerPlan build_layer(const std::string& scheme, std::shared_ptr<const MoeLayerSpec> spec) {
  const SchemeEntry* entry = find_entry(scheme_traits(scheme).plan);
  const MoeRouting& routing = spec->routing;
  if (routing.gpus == 0 || routing.experts % routing.gpus != 0 || routing.top_k == 0 ||
      routing.expert_ids.size() != routing.tokens() * routing.top_k) {
    throw std::invalid_argument("inconsistent routing for the layer");
  }
  const detail::DispatchMap map = detail::map_dispatch(routing);
  LayerPlan plan = detail::start_plan(entry->traits.name, std::move(spec), map);
  entry->build(plan, map);
  plan.software_delay_ns = software_delays(plan);
  return plan;
}

}  // namespace nvsvp::fw
