// The scenario file's own sections (read in platform/config; report.cpp's routing summary reads
// them too): each key is declared once, in a visit_section() overload, as the parameter structs of
// the models and the firmware declare theirs in visit(). The loader (scenario_loader.cpp) reads and checks a section through that
// declaration, rejecting keys it does not declare; `validate --dump` (scenario_dump.cpp) writes
// the section back through it. Keys are dumped in declaration order, and an unknown key's message
// lists the valid ones in that order.
//
// A visitor takes, besides the calls of a parameter struct's visit(),
//   v(key, value, description, rule, use)   a key with a rule of its own (below) and a KeyUse;
//   v.section(key, value, comment, use)     a nested scenario section (its visit_section());
//   v.parameters(key, value, comment)       a nested parameter struct (its visit());
//   v.section_list(key, values, comment)    a list of nested sections (a std::vector of them);
//   v.preset(name, kind, directory)         the section starts from a preset file in
//                                           config_dir/<directory>, named by the section itself or
//                                           by its key `preset`; `name` holds the preset's name;
//   v.origin(where)                         `where` is set to the place of the section's key.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "nvsvp/hw/params.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// --- rules of the scenario's keys beyond hw::Range and hw::Choices ---------------------------

// A number > 0 (hw::Range's bounds are inclusive); when `min` is set, also at least `min`,
// `min_means` saying what that is.
struct Positive {
  double min = 0.0;
  const char* min_means = "";
};
// The scenario's name: it names the output directory (valid_name()).
struct OutputName {};
// The schemes to run: a non-empty list of fw::scheme_names(), each once. Its dump comment lists them.
struct SchemeList {};
// A routing trace: a readable file, relative to the directory of the file that names it.
struct TraceFile {};
// A GPU or link number that may be left out (a std::optional<uint32_t>); the loader checks it
// against the platform.
struct OptionalIndex {};
// A time in us that may be left out (a std::optional<double>), 0 .. 1e9.
struct OptionalTime {};
// The GPU partitions: a list of non-empty lists of GPU indices (a std::vector of them); the
// loader checks them against the platform.
struct GpuPartitions {};

// How a key is used beyond its rule.
struct KeyUse {
  // A complete section must set it; for a preset section, its preset file must.
  bool required = false;
  // The key names the section's kind; keys with `kinds` belong to those kinds only.
  bool selects_kind = false;
  std::vector<std::string> kinds;  // empty: the key belongs to every kind
  // Before the key is read it takes this value, the one of the key `default_key` (relative to the
  // section), which is blamed for it when nobody sets it.
  const uint32_t* default_value = nullptr;
  const char* default_key = nullptr;
};

inline KeyUse required() {
  KeyUse use;
  use.required = true;
  return use;
}
inline KeyUse kind_selector() {
  KeyUse use = required();
  use.selects_kind = true;
  return use;
}
// A key of some kinds only; `required` applies when the section is of one of them.
inline KeyUse of_kinds(std::vector<std::string> kinds, bool is_required = false) {
  KeyUse use;
  use.required = is_required;
  use.kinds = std::move(kinds);
  return use;
}
inline KeyUse defaults_to(const uint32_t& value, const char* key) {
  KeyUse use;
  use.default_value = &value;
  use.default_key = key;
  return use;
}

inline bool belongs_to_kind(const KeyUse& use, const std::string& kind) {
  return use.kinds.empty() || std::find(use.kinds.begin(), use.kinds.end(), kind) != use.kinds.end();
}

// Follows a section's kind through a visit: the key that selects it sets it, and the keys after
// it apply or not.
class SectionKind {
 public:
  bool applies(const KeyUse& use) const { return belongs_to_kind(use, kind_); }
  template <class T>
  void note(const T& value, const KeyUse& use) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (use.selects_kind) kind_ = value;
    }
  }
  const std::string& name() const { return kind_; }

 private:
  std::string kind_;  // empty until the selecting key is seen
};

const hw::Choices kDataTypes{{"fp8", "bf16", "fp32"}};
const hw::Choices kWeightDtypes{{"fp4", "fp8", "bf16"}};

// --- the sections -----------------------------------------------------------------------------

template <class V>
void visit_section(V& v, PlatformSpec& p) {
  v.preset(p.preset, "platform", "platforms");
  v("gpus", p.gpus, "GPUs on the fabric", hw::between(1, 4096), required());
  v("switch_chips", p.switch_chips, "switch chips; every GPU has links to every chip", hw::between(1, 1024),
    required());
  v("links_per_chip", p.links_per_chip, "links from every GPU to switch chip c, one entry per chip",
    hw::between(1, 4096), required());
  v.parameters("link", p.link, "one NVLink link direction");
  v.parameters("switch", p.switch_chip, "one switch chip");
  v.parameters("gpu", p.gpu, "one GPU");
}

template <class V>
void visit_section(V& v, fw::AttentionShape& a) {
  v("kind", a.kind, "", hw::Choices{{"mha", "mla"}}, kind_selector());
  v("head_dim", a.head_dim, "dimension of one head (0: hidden / heads)", hw::between(0, 1 << 16), of_kinds({"mha"}));
  v("kv_heads", a.kv_heads, "key/value heads (0: as many as heads)", hw::between(0, 1 << 16), of_kinds({"mha"}));
  v("q_lora_rank", a.q_lora_rank, "the queries' low-rank dimension", hw::between(1, 1 << 20), of_kinds({"mla"}, true));
  v("kv_lora_rank", a.kv_lora_rank, "the keys' and values' compressed dimension", hw::between(1, 1 << 20),
    of_kinds({"mla"}, true));
  v("qk_nope_head_dim", a.qk_nope_head_dim, "per head: the query/key part without rotary embedding",
    hw::between(1, 1 << 16), of_kinds({"mla"}, true));
  v("qk_rope_head_dim", a.qk_rope_head_dim, "per head: the rotary query/key part", hw::between(1, 1 << 16),
    of_kinds({"mla"}, true));
  v("v_head_dim", a.v_head_dim, "per head: the values", hw::between(1, 1 << 16), of_kinds({"mla"}, true));
}

template <class V>
void visit_section(V& v, fw::MoeModel& m) {
  v.preset(m.name, "model", "models");
  v("hidden", m.hidden, "model (hidden) dimension", hw::between(1, 1 << 20), required());
  v("moe_hidden", m.moe_hidden, "intermediate dimension of one expert", hw::between(1, 1 << 20), required());
  v("heads", m.heads, "attention heads", hw::between(1, 1 << 16), required());
  v("sequence_length", m.sequence_length, "tokens per sequence (default tokens_per_gpu)", hw::between(1, 1 << 20),
    required());
  v("experts", m.experts, "routed experts of the MoE layer", hw::between(1, 65535), required());
  v("top_k", m.top_k, "experts per token (the model's default)", hw::between(1, 64), required());
  v("shared_experts", m.shared_experts, "experts every token goes through at home (the model's default)",
    hw::between(0, 64));
  v("layers", m.layers, "transformer layers of the whole model (0: not given)", hw::between(0, 4096));
  v("dense_layers", m.dense_layers, "the first this many layers have a dense FFN instead of experts",
    hw::between(0, 4096));
  v("dense_hidden", m.dense_hidden, "intermediate dimension of a dense layer's FFN", hw::between(0, 1 << 20));
  v("vocab", m.vocab, "vocabulary of the output head", hw::between(0, 1 << 24));
  v.section("attention", m.attention, "a layer's attention (absent: not given)");
}


template <class V>
void visit_section(V& v, RoutingSpec& r) {
  v.origin(r.origin);
  // No description: the kinds say it all.
  v("kind", r.kind, "", hw::Choices{{"uniform", "normal", "zipf", "drifting", "balanced", "trace"}}, kind_selector());
  v("seed", r.seed, "seed of the routing generator", hw::Range{}, of_kinds({"uniform", "normal", "zipf", "drifting"}));
  v("std", r.std, "standard deviation of the per-expert selection probability, relative to its mean top_k/experts",
    Positive{}, of_kinds({"normal"}));
  v("exponent", r.exponent, "power-law exponent", Positive{}, of_kinds({"zipf", "drifting"}));
  v("hot_lifetime", r.hot_lifetime, "iterations an expert keeps its popularity rank, on average",
    hw::between(1.0, 1e9), of_kinds({"drifting"}));
  v("iteration", r.iteration, "the iteration of the serving run this layer belongs to", hw::between(0, 1000000),
    of_kinds({"drifting", "trace"}));
  v("layer", r.layer, "the layer (each has a hot set of its own)", hw::between(0, 65535),
    of_kinds({"drifting", "trace"}));
  v("file", r.file, "one token per line: top_k expert IDs; {layer} and {iteration} in its name pick one file per layer "
    "and iteration", TraceFile{}, of_kinds({"trace"}, true));
}

template <class V>
void visit_section(V& v, WorkloadSpec& w) {
  v.section("model", w.model, "", required());
  v("top_k", w.top_k, "experts per token", hw::between(1, 64), defaults_to(w.model.top_k, "model.top_k"));
  v("tokens_per_gpu", w.tokens_per_gpu, "tokens whose home is each GPU", hw::between(1, 1 << 20),
    defaults_to(w.model.sequence_length, "model.sequence_length"));
  v("dispatch_dtype", w.dispatch_dtype, "wire format of dispatched token vectors", kDataTypes);
  v("combine_dtype", w.combine_dtype, "wire format of expert outputs in combine", kDataTypes);
  v("weight_dtype", w.weight_dtype, "format of the experts' weights, and so of their GEMMs", kWeightDtypes);
  v("pass", w.pass,
    "the layer's pass: backward sends each token's output gradient to its experts, computes their data and weight "
    "gradients (twice the forward GEMMs' work) and sums each token's input gradients at home",
    hw::Choices{{"forward", "backward"}});
  v("gradient_dtype", w.gradient_dtype,
    "backward: wire format of the output gradients sent to the experts (combine_dtype carries the input gradients "
    "back; dispatch_dtype is not used)",
    kDataTypes);
  v("shared_experts", w.shared_experts, "shared experts every token goes through at home", hw::between(0, 64),
    defaults_to(w.model.shared_experts, "model.shared_experts"));
  v.section("routing", w.routing, "", required());
}

template <class V>
void visit_section(V& v, StreamSpec& s) {
  v("iterations", s.iterations, "iterations of the serving run", hw::between(1, 1000000), required());
  v("layers", s.layers, "layers, each with its own hot set and replica slots", hw::between(1, 1024));
  v("static_refresh", s.static_refresh,
    "the static balancer is re-placed every this many iterations from their mean loads (0: placed once)",
    hw::between(0, 1000000));
  v("simulate_every", s.simulate_every,
    "every this many iterations of each layer, the schemes are simulated under each policy (0: never)",
    hw::between(0, 1000000));
}

template <class V>
void visit_section(V& v, StepPipeline& p) {
  v("stages", p.stages, "pipeline stages, each one NVLink domain (the platform); the layers split evenly",
    hw::between(1, 4096));
  v("schedule", p.schedule,
    "the pipeline's schedule for every scheme: 1f1b (one forward, one backward) or dualpipe (DeepSeek-V3's "
    "bidirectional schedule; over more than one stage: stages even, micro_batches even and at least twice the stages)",
    hw::Choices{{"1f1b", "dualpipe"}});
  v("link_gbps", p.link_gbps, "link between stages, per GPU and direction, GB/s", Positive{});
  v("link_latency_us", p.link_latency_us, "link between stages: latency of one transfer, us", hw::between(0.0, 1e6));
}

template <class V>
void visit_section(V& v, StepSpec& s) {
  v("kind", s.kind, "", hw::Choices{{"training", "inference"}}, kind_selector());
  v("micro_batches", s.micro_batches, "micro batches per step, each of workload.tokens_per_gpu tokens per GPU",
    hw::between(1, 1 << 16), of_kinds({"training"}));
  v("sample_layers", s.sample_layers,
    "MoE layers simulated, evenly spaced; the others take the sampled ones' mean (0: every MoE layer)",
    hw::between(0, 4096));
  v.section("pipeline", s.pipeline, "pipeline parallelism across NVLink domains", of_kinds({"training"}));
  v("prompt_tokens", s.prompt_tokens,
    "every sequence's prompt; workload.tokens_per_gpu / prompt_tokens sequences per GPU (0: the model's "
    "sequence_length)",
    hw::between(0, 1 << 24), of_kinds({"inference"}));
  v("decode_steps", s.decode_steps, "decode steps after the prefill, each one new token of every sequence",
    hw::between(1, 1 << 20), of_kinds({"inference"}));
}

template <class V>
void visit_section(V& v, SimulationSpec& s) {
  v("max_time_us", s.max_time_us, "simulated-time limit, us: a run still busy then is reported as stuck",
    Positive{});
  v("timeline_bin_us", s.timeline_bin_us,
    "bin of the link utilization time series (utilization_<scheme>.csv) and the trace's counters, us",
    Positive{0.001, "1 ns"});
  v("fabric", s.fabric,
    "how the fabric moves a message: whole (message), packet by packet, the reference engine (packet), or "
    "its packets timed without an event each (fast: unicast writes and reads so far)",
    hw::Choices{{"message", "packet", "fast"}});
}

template <class V>
void visit_section(V& v, FaultSpec& f) {
  v.origin(f.origin);
  v("kind", f.kind, "", hw::Choices{{"bit_errors", "credit_loss", "link_down", "chip_down"}}, kind_selector());
  v("gpu", f.gpu, "the GPU whose link it hits (bit_errors without gpu and link: every link)", OptionalIndex{},
    of_kinds({"bit_errors", "credit_loss", "link_down"}));
  v("link", f.link, "that GPU's link, 0 .. links per GPU - 1", OptionalIndex{},
    of_kinds({"bit_errors", "credit_loss", "link_down"}));
  v("chip", f.chip, "the switch chip that dies, 0 .. switch_chips - 1", OptionalIndex{}, of_kinds({"chip_down"}));
  v("direction", f.direction, "which way: both, to_switch (GPU to switch), from_switch (switch to GPU)",
    hw::Choices{{"both", "to_switch", "from_switch"}}, of_kinds({"bit_errors", "credit_loss", "link_down"}));
  v("rate_per_flit", f.rate_per_flit,
    "chance that a flit is corrupted; a transmission of F flits fails its CRC with 1-(1-rate)^F and is replayed",
    hw::between(0.0, 0.01), of_kinds({"bit_errors"}, true));
  v("seed", f.seed, "seed of the corruption draws (each link direction a stream of its own)", hw::Range{},
    of_kinds({"bit_errors"}));
  v("at_us", f.at_us, "when it happens (credits lost, link or chip down), us from the layer's start",
    hw::between(0.0, 1e9), of_kinds({"credit_loss", "link_down", "chip_down"}, true));
  v("up_at_us", f.up_at_us, "when the link comes back up, us from the layer's start (left out: it stays down)",
    OptionalTime{}, of_kinds({"link_down"}));
  v("credits", f.credits, "credit flits lost, from the request class's first VC", hw::between(1, 1 << 20),
    of_kinds({"credit_loss"}, true));
}

// The file's top level.
template <class V>
void visit_section(V& v, Scenario& s) {
  v("name", s.name, "names the output directory", OutputName{}, required());
  v.section("platform", s.platform, "", required());
  v.section("workload", s.workload, "", required());
  v("schemes", s.schemes, "", SchemeList{}, required());
  v.parameters("software", s.software, "how the software all-to-all schemes move tokens");
  v.section("simulation", s.simulation);
  v("pure_communication", s.pure_communication,
    "no compute: expert work takes no time (its results still land), the layer is communication only",
    hw::Range{});
  v.parameters("replication", s.replication, "hot-expert replication (docs/background/hot_expert_replication.md)");
  v.section_list("faults", s.faults, "faults injected into the run (docs/configuration.md#faults)");
  v("partitions", s.partitions,
    "GPU partitions, lists of GPU indices; [] is one partition of every GPU, a GPU left out is isolated",
    GpuPartitions{});
  v.section("stream", s.stream,
            "compares replication policies over iterations of a drifting routing (docs/configuration.md#stream)");
  v.section("step", s.step,
            "a step of the whole model: a training step or an inference request (docs/configuration.md#step)");
}

}  // namespace nvsvp::platform
