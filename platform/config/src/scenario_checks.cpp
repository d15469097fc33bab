#include "scenario_checks.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/hw/work.hpp"
#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/trace_files.hpp"

namespace nvsvp::platform {

namespace {


class ScenarioChecks {
 public:
  ScenarioChecks(const Scenario& scenario, const KeyOrigins& origins) : scenario_(scenario), origins_(origins) {}

  void check_platform() const { check_fabric(); }
  void check() const {
    check_fabric();
    check_experts();
    check_reduction_buffer();
    check_gpu_resources();
    check_replication();
    check_message_size();
    check_faults();
    check_partitions();
    check_fast_fabric();
    check_stream();
    check_step();
    check_trace_files();
  }

 private:
  // Whether any of the scenario's schemes has a trait (its scheme registry entry).
  template <class Predicate>
  bool any_scheme(Predicate has) const {
    return std::any_of(scenario_.schemes.begin(), scenario_.schemes.end(),
                       [&](const std::string& s) { return has(fw::scheme_traits(s)); });
  }

  void check_fabric() const;
  void check_experts() const;
  void check_reduction_buffer() const;
  void check_gpu_resources() const;
  void check_replication() const;
  void check_stream() const;
  void check_step() const;
  void check_inference() const;
  void check_trace_files() const;
  void check_trace_placeholders(const Place& at) const;
  void check_message_size() const;
  void check_faults() const;
  void check_partitions() const;
  void check_fast_fabric() const;

  const Scenario& scenario_;
  const KeyOrigins& origins_;
};

void ScenarioChecks::check_fabric() const {
  const PlatformSpec& p = scenario_.platform;
  if (p.links_per_chip.size() != p.switch_chips) {
    const Place at = origins_.blame({"platform.links_per_chip", "platform.switch_chips"});
    config_fail(at.origin, at.path,
                "one entry of platform.links_per_chip per switch chip (switch_chips = " +
                    std::to_string(p.switch_chips) + ")",
                std::to_string(p.links_per_chip.size()) + " entries");
  }
  if (p.gpus > hw::kMaxGpus) {
    // Said before the ports: every GPU needs a route entry in every chip (ROUTE_ENTRIES).
    const Place at = origins_.blame({"platform.gpus"});
    config_fail(at.origin, at.path,
                "at most " + std::to_string(hw::kMaxGpus) + " GPUs (a switch chip's route table, ROUTE_ENTRIES)",
                std::to_string(p.gpus) + " GPUs");
  }
  for (const auto& [key, bytes] : {std::pair{"sm_store_packet_bytes", p.gpu.sm_store_packet_bytes},
                                   std::pair{"copy_engine_packet_bytes", p.gpu.copy_engine_packet_bytes}}) {
    if (bytes <= p.link.max_packet_payload_bytes) continue;
    const Place at = origins_.blame({std::string("platform.gpu.") + key, "platform.link.max_packet_payload_bytes"});
    config_fail(at.origin, at.path,
                std::string("a packet no larger than the link's largest payload (platform.link.max_packet_payload_bytes "
                            "= ") + std::to_string(p.link.max_packet_payload_bytes) + ")",
                std::to_string(bytes) + " bytes");
  }
  for (size_t c = 0; c < p.links_per_chip.size(); ++c) {
    const uint64_t needed = static_cast<uint64_t>(p.gpus) * p.links_per_chip[c];
    if (needed <= p.switch_chip.ports) continue;
    const Place at = origins_.blame({"platform.switch.ports", "platform.gpus", "platform.links_per_chip"});
    config_fail(at.origin, at.path,
                "enough switch ports for gpus x links_per_chip[" + std::to_string(c) + "] = " +
                    std::to_string(p.gpus) + " x " + std::to_string(p.links_per_chip[c]) + " = " +
                    std::to_string(needed) + " links per chip",
                std::to_string(p.switch_chip.ports) + " ports per chip (platform.switch.ports)");
  }
}

void ScenarioChecks::check_experts() const {
  const PlatformSpec& p = scenario_.platform;
  const WorkloadSpec& w = scenario_.workload;
  if (w.top_k > w.model.experts) {
    const Place at = origins_.blame({"workload.top_k", "workload.model.experts"});
    config_fail(at.origin, at.path, "top_k <= experts (a token picks top_k distinct experts)",
                "top_k " + std::to_string(w.top_k) + " with " + std::to_string(w.model.experts) + " experts");
  }
  if (w.model.experts % p.gpus != 0) {
    const Place at = origins_.blame({"workload.model.experts", "platform.gpus"});
    config_fail(at.origin, at.path,
                "a number of experts divisible by the number of GPUs (experts are spread evenly)",
                std::to_string(w.model.experts) + " experts over " + std::to_string(p.gpus) + " GPUs");
  }
  const fw::MoeModel& m = w.model;
  if (m.dense_layers > m.layers) {
    const Place at = origins_.blame({"workload.model.dense_layers", "workload.model.layers"});
    config_fail(at.origin, at.path, "dense_layers <= layers (the first dense_layers of the model's layers are dense)",
                "dense_layers " + std::to_string(m.dense_layers) + " of " + std::to_string(m.layers) + " layers");
  }
  if (m.layers > 0 && (m.attention.kind.empty() || m.vocab == 0)) {
    const Place at = origins_.blame({"workload.model.vocab", "workload.model.layers"});
    config_fail(at.origin, at.path,
                "attention and vocab in a model that gives its layers (the parts of a whole-model step)",
                "layers " + std::to_string(m.layers) + (m.attention.kind.empty() ? ", no attention" : "") +
                    (m.vocab == 0 ? ", no vocab" : ""));
  }
  if (m.dense_layers > 0 && m.dense_hidden == 0) {
    const Place at = origins_.blame({"workload.model.dense_hidden", "workload.model.dense_layers"});
    config_fail(at.origin, at.path, "dense_hidden >= 1 for a model with dense layers",
                "dense_hidden 0 with " + std::to_string(m.dense_layers) + " dense layers");
  }
}

void ScenarioChecks::check_reduction_buffer() const {
  const model::SwitchParams& s = scenario_.platform.switch_chip;
  const uint32_t buffer = s.reduction_buffer_bytes;
  if ((buffer & (buffer - 1)) != 0) {
    const Place at = origins_.blame({"platform.switch.reduction_buffer_bytes"});
    config_fail(at.origin, at.path, "a power of two (the buffer is 8-way set-associative in 32-byte slots)",
                std::to_string(buffer));
  }
  if (s.reduction_backend != "model" && buffer != 65536) {
    const Place at = origins_.blame({"platform.switch.reduction_buffer_bytes", "platform.switch.reduction_backend"});
    config_fail(at.origin, at.path,
                "65536 with reduction_backend " + s.reduction_backend +
                    " (the RTL is built for a 64 KB buffer; other sizes run on the model)",
                std::to_string(buffer));
  }
  if (s.reduction_backend != "model" && s.reduction_contexts_per_port != 64) {
    const Place at = origins_.blame({"platform.switch.reduction_contexts_per_port", "platform.switch.reduction_backend"});
    config_fail(at.origin, at.path,
                "64 with reduction_backend " + s.reduction_backend +
                    " (the RTL is built for 64 contexts per port; other counts run on the model)",
                std::to_string(s.reduction_contexts_per_port));
  }
}

void ScenarioChecks::check_gpu_resources() const {
  const model::GpuParams& gpu = scenario_.platform.gpu;
  const fw::SoftwareParams& sw = scenario_.software;
  if (sw.comm_sms >= gpu.sms) {
    const Place at = origins_.blame({"software.comm_sms", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "comm_sms below the GPU's SMs (the GEMMs need at least one)",
                std::to_string(sw.comm_sms) + " of " + std::to_string(gpu.sms) + " SMs");
  }
  const bool on_nccl = any_scheme([](const fw::SchemeTraits& t) { return t.nccl_channels; });
  if (on_nccl && sw.nccl_channels >= gpu.sms) {
    const Place at = origins_.blame({"software.nccl_channels", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "nccl_channels below the GPU's SMs (the GEMMs need at least one)",
                std::to_string(sw.nccl_channels) + " of " + std::to_string(gpu.sms) + " SMs");
  }
  if (sw.recv_queue_tokens != 0 && sw.recv_queue_tokens < sw.chunk_tokens) {
    const Place at = origins_.blame({"software.recv_queue_tokens", "software.chunk_tokens"});
    config_fail(at.origin, at.path, "0 (no rings) or a ring of at least one chunk (chunk_tokens)",
                std::to_string(sw.recv_queue_tokens) + " tokens, chunks of " + std::to_string(sw.chunk_tokens));
  }
  const uint64_t fusion_sms = static_cast<uint64_t>(sw.fusion_dispatch_sms) + sw.fusion_gemm1_sms + sw.fusion_gemm2_sms +
                              sw.fusion_combine_sms;
  const bool fused = any_scheme([](const fw::SchemeTraits& t) { return t.fused_kernel; });
  if (fused && fusion_sms > gpu.sms) {
    const Place at = origins_.blame({"software.fusion_dispatch_sms", "software.fusion_gemm1_sms",
                                     "software.fusion_gemm2_sms", "software.fusion_combine_sms", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "the fused kernel's four SM groups within the GPU's SMs",
                std::to_string(fusion_sms) + " of " + std::to_string(gpu.sms) + " SMs");
  }
  if (gpu.hub.cache_entries % gpu.hub.cache_ways != 0) {
    const Place at = origins_.blame({"platform.gpu.hub_cache_entries", "platform.gpu.hub_cache_ways"});
    config_fail(at.origin, at.path, "hub_cache_entries a multiple of hub_cache_ways (whole sets)",
                std::to_string(gpu.hub.cache_entries) + " entries in " + std::to_string(gpu.hub.cache_ways) + " ways");
  }
}

// A fault names a GPU link of the platform: both gpu and link, or (bit errors only) neither; a
// credit loss takes no more credits than the VC it hits holds.
void ScenarioChecks::check_faults() const {
  const PlatformSpec& p = scenario_.platform;
  for (size_t i = 0; i < scenario_.faults.size(); ++i) {
    const FaultSpec& f = scenario_.faults[i];
    const std::string path = "faults[" + std::to_string(i) + "]";
    const std::string origin = origins_.at(path).origin;
    const auto origin_of = [&](const char* key) { return origins_.at(path + "." + key).origin; };
    if (f.kind == "chip_down") {
      if (!f.chip) config_fail(origin, path + ".chip", "the chip that dies (chip_down needs chip)", "none");
      if (*f.chip >= p.switch_chips) {
        config_fail(origin_of("chip"), path + ".chip",
                    "a switch chip of the platform, 0 .. " + std::to_string(p.switch_chips - 1), std::to_string(*f.chip));
      }
      for (size_t j = 0; j < i; ++j) {
        const FaultSpec& e = scenario_.faults[j];
        if (e.kind == "chip_down" && *e.chip == *f.chip) {
          config_fail(origin, path, "one chip_down per chip", "a second one for chip " + std::to_string(*f.chip));
        }
      }
      continue;
    }
    const bool needs_link = f.kind == "credit_loss" || f.kind == "link_down";
    if (f.gpu.has_value() != f.link.has_value() || (needs_link && !f.gpu)) {
      config_fail(f.gpu ? origin_of("gpu") : f.link ? origin_of("link") : origin, path + (f.gpu ? ".link" : ".gpu"),
                  f.kind == "credit_loss" ? "gpu and link (the link whose credits are lost)"
                  : f.kind == "link_down" ? "gpu and link (the link that goes down)"
                                          : "gpu and link together, or neither (every link)",
                  f.gpu ? "gpu alone" : (f.link ? "link alone" : "neither"));
    }
    if (f.gpu && *f.gpu >= p.gpus) {
      config_fail(origin_of("gpu"), path + ".gpu", "a GPU of the platform, 0 .. " + std::to_string(p.gpus - 1),
                  std::to_string(*f.gpu));
    }
    if (f.link && *f.link >= p.links_per_gpu()) {
      config_fail(origin_of("link"), path + ".link", "a link of the GPU, 0 .. " + std::to_string(p.links_per_gpu() - 1),
                  std::to_string(*f.link));
    }
    if (f.kind == "bit_errors") {
      // One rate per link direction: a second entry that reaches the same one is a contradiction.
      for (size_t j = 0; j < i; ++j) {
        const FaultSpec& e = scenario_.faults[j];
        const bool same_links = !e.gpu || !f.gpu || (*e.gpu == *f.gpu && *e.link == *f.link);
        const bool same_direction = e.direction == "both" || f.direction == "both" || e.direction == f.direction;
        if (e.kind == "bit_errors" && same_links && same_direction) {
          config_fail(origin, path, "one bit-error rate per link direction",
                      "a second one for a link faults[" + std::to_string(j) + "] covers");
        }
      }
      continue;
    }
    if (f.kind == "link_down") {
      if (f.up_at_us && !(*f.up_at_us > f.at_us)) {
        config_fail(origin_of("up_at_us"), path + ".up_at_us", "a time after at_us (" + format_number(f.at_us) + ")",
                    format_number(*f.up_at_us));
      }
      const uint32_t chip = p.chip_of_link(*f.link);
      for (size_t j = 0; j < scenario_.faults.size(); ++j) {
        const FaultSpec& e = scenario_.faults[j];
        if (j < i && e.kind == "link_down" && *e.gpu == *f.gpu && *e.link == *f.link) {
          config_fail(origin, path, "one link_down per link",
                      "a second one for GPU " + std::to_string(*f.gpu) + " link " + std::to_string(*f.link));
        }
        if (e.kind == "chip_down" && e.chip && *e.chip == chip) {
          config_fail(origin, path, "a link of a chip that stays up (faults[" + std::to_string(j) + "] takes chip " +
                                        std::to_string(chip) + " down)",
                      "GPU " + std::to_string(*f.gpu) + " link " + std::to_string(*f.link));
        }
      }
      continue;
    }
    const uint32_t depth = f.direction == "to_switch"     ? p.switch_chip.vc_depth_flits
                           : f.direction == "from_switch" ? p.gpu.rx_vc_depth_flits
                                                          : std::min(p.switch_chip.vc_depth_flits, p.gpu.rx_vc_depth_flits);
    if (f.credits > depth) {
      config_fail(origin_of("credits"), path + ".credits",
                  "at most the depth of the VC it hits, " + std::to_string(depth) + " flits", std::to_string(f.credits));
    }
  }
}

// Every GPU named is one of the platform's, in one partition only; no partition is empty. GPUs
// left out are allowed (isolated: the switch refuses every access to or from them).
void ScenarioChecks::check_partitions() const {
  const uint32_t gpus = scenario_.platform.gpus;
  std::vector<int64_t> partition_of(gpus, -1);
  for (size_t i = 0; i < scenario_.partitions.size(); ++i) {
    const std::vector<uint32_t>& partition = scenario_.partitions[i];
    const std::string path = "partitions[" + std::to_string(i) + "]";
    if (partition.empty()) {
      config_fail(origins_.at(path).origin, path, "a partition of at least one GPU", "an empty list");
    }
    for (size_t j = 0; j < partition.size(); ++j) {
      const std::string gpu_path = path + "[" + std::to_string(j) + "]";
      const uint32_t gpu = partition[j];
      if (gpu >= gpus) {
        config_fail(origins_.at(gpu_path).origin, gpu_path, "a GPU of the platform, 0 .. " + std::to_string(gpus - 1),
                    std::to_string(gpu));
      }
      if (partition_of[gpu] >= 0) {
        config_fail(origins_.at(gpu_path).origin, gpu_path, "each GPU in one partition, once",
                    "GPU " + std::to_string(gpu) + " again (it is in partitions[" + std::to_string(partition_of[gpu]) + "])");
      }
      partition_of[gpu] = static_cast<int64_t>(i);
    }
  }
}

void ScenarioChecks::check_replication() const {
  const PlatformSpec& p = scenario_.platform;
  const WorkloadSpec& w = scenario_.workload;
  const fw::ReplicationParams& r = scenario_.replication;
  const std::string n_gpus = std::to_string(p.gpus);
  for (uint32_t size : r.groups) {
    if (size <= p.gpus && p.gpus % size == 0 && std::count(r.groups.begin(), r.groups.end(), size) == 1) continue;
    const Place at = origins_.blame({"replication.groups", "platform.gpus"});
    config_fail(at.origin, at.path, "group sizes that divide the GPU count (" + n_gpus + "), each once",
                "a group of " + std::to_string(size));
  }
  if (r.static_seed != 0 && (r.policy != "static" || w.routing.kind == "trace" || w.routing.kind == "uniform" ||
                               w.routing.kind == "balanced")) {
    const Place at = origins_.blame({"replication.static_seed", "replication.policy", "workload.routing.kind"});
    config_fail(at.origin, at.path,
                "static_seed only with policy static and a normal, zipf or drifting routing (the seed deals their "
                "popularity)",
                "static_seed " + std::to_string(r.static_seed) + " with policy " + r.policy + " and routing " +
                    w.routing.kind);
  }
  // A stream runs every policy, whatever replication.policy says.
  const bool stream = scenario_.stream.iterations > 0;
  if (w.pass == fw::LayerPass::backward && (r.policy != "none" || stream)) {
    // Replicas in training would need their weight gradients summed back into the original
    // expert's, which is not modeled; ISER replicates for serving.
    const Place at = origins_.blame({"workload.pass", stream ? "stream.iterations" : "replication.policy"});
    config_fail(at.origin, at.path, "hot-expert replication and streams in a forward pass only (serving)",
                stream ? std::string("a stream with pass backward") : "policy " + r.policy + " with pass backward");
  }
  if (r.policy == "none" && !stream) return;
  const bool iser = r.policy == "iser" || stream;
  const uint64_t copies = w.model.experts + static_cast<uint64_t>(p.gpus) * r.slots_per_gpu;
  if (copies > 65535) {
    const Place at = origins_.blame({"replication.slots_per_gpu", "workload.model.experts", "platform.gpus"});
    config_fail(at.origin, at.path, "experts + gpus x slots_per_gpu <= 65535 (expert copies have 16-bit IDs)",
                std::to_string(copies));
  }
  const bool multicast = fw::uses_multicast(r);
  if (iser && multicast && r.broadcast_sms >= p.gpu.sms) {
    const Place at = origins_.blame({"replication.broadcast_sms", "platform.gpu.sms"});
    config_fail(at.origin, at.path, "broadcast_sms below the GPU's SMs (the shared experts need at least one)",
                std::to_string(r.broadcast_sms) + " of " + std::to_string(p.gpu.sms) + " SMs");
  }
  if (iser && multicast && p.gpus > hw::kMaxGpus) {
    const Place at = origins_.blame({"replication.broadcast", "platform.gpus"});
    config_fail(at.origin, at.path,
                "p2p or ring above " + std::to_string(hw::kMaxGpus) + " GPUs (a multicast group names at most " +
                    std::to_string(hw::kMaxGpus) + ")",
                r.broadcast + " on " + n_gpus + " GPUs");
  }
}

void ScenarioChecks::check_stream() const {
  if (scenario_.stream.iterations == 0) return;
  const RoutingSpec& routing = scenario_.workload.routing;
  if (routing.kind != "drifting" && routing.kind != "trace") {
    const Place at = origins_.blame({"stream.iterations", "workload.routing.kind"});
    config_fail(at.origin, at.path,
                "a stream over a drifting routing or over trace files (workload.routing.kind: drifting or trace)",
                "routing " + routing.kind);
  }
  if (routing.kind == "trace") {
    // Every iteration (and every layer of several) its own file.
    const Place at = origins_.blame({"workload.routing.file", "stream.iterations"});
    check_trace_placeholders(at);
    const uint32_t layers = scenario_.stream.layers;
    if (!names_placeholder(routing.file, "{iteration}") || (layers > 1 && !names_placeholder(routing.file, "{layer}"))) {
      config_fail(at.origin, at.path,
                  layers > 1 ? "a trace file name with the placeholders {layer} and {iteration} (the stream has " +
                                   std::to_string(layers) + " layers): one file per layer and iteration"
                             : std::string("a trace file name with the placeholder {iteration}: one file per iteration"),
                  routing.file);
    }
  }
  const bool degree_search =
      scenario_.software.tutel_degree == 0 && any_scheme([](const fw::SchemeTraits& t) { return t.searches_degree; });
  if (scenario_.stream.simulate_every > 0 && degree_search) {
    const Place at = origins_.blame({"stream.simulate_every", "software.tutel_degree"});
    config_fail(at.origin, at.path, "a fixed software.tutel_degree (1 .. 64) for tutel in a stream's simulations",
                "tutel_degree 0 (the adaptive search)");
  }
  if (!scenario_.partitions.empty()) {
    const Place at = origins_.blame({"stream.iterations", "partitions"});
    config_fail(at.origin, at.path, "a stream over every GPU (no partitions)",
                std::to_string(scenario_.partitions.size()) + " partitions");
  }
}

void ScenarioChecks::check_step() const {
  const StepSpec& step = scenario_.step;
  const auto step_only = std::find_if(scenario_.schemes.begin(), scenario_.schemes.end(), [](const std::string& s) {
    return fw::scheme_traits(s).training_step_only;
  });
  if (step_only != scenario_.schemes.end() && step.kind != "training") {
    const std::string path = "schemes[" + std::to_string(step_only - scenario_.schemes.begin()) + "]";
    const Place at = origins_.blame({path, "step.kind"});
    config_fail(at.origin, at.path,
                *step_only + " (" + fw::scheme_traits(*step_only).summary + ") in a training step",
                step.kind.empty() ? std::string("no step") : "an " + step.kind + " step");
  }
  const uint32_t stages = step.pipeline.stages, micro_batches = step.micro_batches;
  const bool under_dualpipe =
      step.pipeline.schedule == "dualpipe" ||
      any_scheme([](const fw::SchemeTraits& t) { return t.schedule == fw::StepSchedule::dualpipe; });
  if (step.kind == "training" && under_dualpipe && stages > 1 &&
      (stages % 2 != 0 || micro_batches % 2 != 0 || micro_batches < 2 * stages)) {
    const Place at = stages % 2 != 0 ? origins_.blame({"step.pipeline.stages", "step.pipeline.schedule"})
                                     : origins_.blame({"step.micro_batches", "step.pipeline.schedule"});
    config_fail(at.origin, at.path,
                "for DualPipe over several stages (scheme dualpipe or pipeline.schedule dualpipe): an even number of "
                "stages and an even number of micro_batches, at least twice the stages",
                std::to_string(stages) + " stages and " + std::to_string(micro_batches) + " micro batches");
  }
  if (step.kind.empty()) return;
  const fw::MoeModel& m = scenario_.workload.model;
  if (m.layers == 0 || m.attention.kind.empty() || m.vocab == 0 || m.dense_layers >= m.layers) {
    const Place at = origins_.blame({"workload.model", "step.kind"});
    config_fail(at.origin, at.path,
                "a model that gives its layers (at least one MoE layer), attention and vocab for a step of the whole "
                "model",
                "model " + m.name + " with " + std::to_string(m.layers) + " layers, " +
                    std::to_string(m.dense_layers) + " dense" + (m.attention.kind.empty() ? ", no attention" : "") +
                    (m.vocab == 0 ? ", no vocab" : ""));
  }
  const uint32_t moe_layers = m.layers - m.dense_layers;
  if (step.pipeline.stages > m.layers) {
    const Place at = origins_.blame({"step.pipeline.stages", "workload.model"});
    config_fail(at.origin, at.path, "at most one stage per layer (" + std::to_string(m.layers) + " layers)",
                std::to_string(step.pipeline.stages) + " stages");
  }
  if (step.sample_layers > moe_layers) {
    const Place at = origins_.blame({"step.sample_layers", "workload.model"});
    config_fail(at.origin, at.path, "at most the model's " + std::to_string(moe_layers) + " MoE layers",
                std::to_string(step.sample_layers));
  }
  if (step.kind == "inference") check_inference();
  // The step runs its passes itself, without replication, streams or partitions.
  const char* conflict = scenario_.workload.pass == fw::LayerPass::backward ? "workload.pass"
                         : scenario_.replication.policy != "none"           ? "replication.policy"
                         : scenario_.stream.iterations > 0                  ? "stream.iterations"
                         : !scenario_.partitions.empty()                    ? "partitions"
                                                                            : nullptr;
  if (conflict != nullptr) {
    const Place at = origins_.blame({conflict, "step.kind"});
    config_fail(at.origin, at.path,
                "a step alone: it runs its passes itself, with no replication, stream or partitions",
                std::string(conflict) + " given");
  }
  const bool degree_search =
      scenario_.software.tutel_degree == 0 && any_scheme([](const fw::SchemeTraits& t) { return t.searches_degree; });
  if (degree_search) {
    const Place at = origins_.blame({"step.kind", "software.tutel_degree"});
    config_fail(at.origin, at.path, "a fixed software.tutel_degree (1 .. 64) for tutel in a step",
                "tutel_degree 0 (the adaptive search)");
  }
}

// An inference request's prompts fill the GPUs' tokens evenly, and its decode batches are drawn.
void ScenarioChecks::check_inference() const {
  const StepSpec& step = scenario_.step;
  const uint32_t prompt = step.prompt_of(scenario_.workload.model);
  const uint32_t tokens = scenario_.workload.tokens_per_gpu;
  if (prompt == 0 || tokens % prompt != 0) {
    const Place at = origins_.blame({"step.prompt_tokens", "workload.tokens_per_gpu"});
    config_fail(at.origin, at.path,
                "a prompt length (step.prompt_tokens, or the model's sequence_length) that divides "
                "workload.tokens_per_gpu into whole sequences",
                "prompt " + std::to_string(prompt) + " tokens for " + std::to_string(tokens) + " tokens per GPU");
  }
  if (scenario_.workload.routing.kind == "trace") {
    const Place at = origins_.blame({"workload.routing.kind", "step.kind"});
    config_fail(at.origin, at.path,
                "a drawn routing for an inference request (its decode batches are smaller than a trace's)", "trace");
  }
}

void ScenarioChecks::check_trace_placeholders(const Place& at) const {
  const std::string& pattern = scenario_.workload.routing.file;
  try {
    trace_file_of(pattern, 0, 0, at.origin);
  } catch (const ConfigError&) {
    config_fail(at.origin, at.path, "a trace file whose braces are the placeholders {layer} and {iteration}", pattern);
  }
}

// Every trace file the run will read exists: the stream's, one per layer and iteration, before
// anything runs (so that a run does not stop at iteration 180), or the one the routing keys name.
// Their contents are checked as each is read (file:line, exit 2).
void ScenarioChecks::check_trace_files() const {
  const RoutingSpec& routing = scenario_.workload.routing;
  if (routing.kind != "trace" || routing.file.find_first_of("{}") == std::string::npos) return;
  const Place at = origins_.blame({"workload.routing.file"});
  check_trace_placeholders(at);
  const StreamSpec& stream = scenario_.stream;
  const bool in_stream = stream.iterations > 0;
  // The layers whose files a run reads: the stream's, a step's simulated MoE layers (and the
  // scenario's own layer), or the routing's one.
  std::vector<uint32_t> layers{routing.layer};
  if (in_stream) {
    layers.clear();
    for (uint32_t l = 0; l < stream.layers; ++l) layers.push_back(l);
  } else if (!scenario_.step.kind.empty()) {
    const fw::MoeModel& m = scenario_.workload.model;
    for (uint32_t k : sampled_moe_layers(m.layers - m.dense_layers, scenario_.step.sample_layers)) {
      layers.push_back(m.dense_layers + k);
    }
  }
  const uint32_t iterations = in_stream ? stream.iterations : 1;
  for (uint32_t layer : layers) {
    for (uint32_t i = 0; i < iterations; ++i) {
      const uint32_t iteration = in_stream ? i : routing.iteration;
      const std::string file = trace_file_of(routing.file, layer, iteration, at.origin);
      if (const std::string why = unreadable_file(file); !why.empty()) {
        config_fail(at.origin, at.path,
                    "a readable trace file (a regular file) for layer " + std::to_string(layer) + ", iteration " +
                        std::to_string(iteration) + " (" + routing.file + ")",
                    file + " (" + why + ")");
      }
    }
  }
}

void ScenarioChecks::check_message_size() const {
  const uint32_t chunk_tokens = scenario_.software.chunk_tokens;
  const uint32_t functional_bytes = scenario_.platform.gpu.functional_bytes;
  const uint64_t chunk_bytes = static_cast<uint64_t>(chunk_tokens) * functional_bytes;
  if (chunk_bytes > hw::kMaxFunctionalBytesPerMessage) {
    const Place at = origins_.blame({"software.chunk_tokens", "platform.gpu.functional_bytes"});
    config_fail(at.origin, at.path,
                "chunk_tokens x functional_bytes <= " + std::to_string(hw::kMaxFunctionalBytesPerMessage) +
                    " (the functional bytes one message carries)",
                std::to_string(chunk_tokens) + " x " + std::to_string(functional_bytes) + " = " +
                    std::to_string(chunk_bytes));
  }
}

}  // namespace

// What the fast fabric moves so far (docs/models/fabric_engine.md): unicast writes and reads, multimem stores
// and reds (a hot-expert replication's broadcast), bit errors, the arbiters it emulates packet by packet.
void ScenarioChecks::check_fast_fabric() const {
  if (scenario_.simulation.fabric != "fast") return;
  for (const std::string& scheme : scenario_.schemes) {
    const fw::SchemeTraits& t = fw::scheme_traits(scheme);
    if (t.multicast == fw::SwitchMulticast::none) continue;
    const Place at = origins_.blame({"simulation.fabric", "schemes"});
    config_fail(at.origin, at.path,
                "schemes of unicast writes and reads on simulation.fabric: fast (its first part; packet or message "
                "moves every scheme)",
                scheme + ", which uses the switch's multicast");
  }
  for (size_t i = 0; i < scenario_.faults.size(); ++i) {
    if (scenario_.faults[i].kind == "bit_errors") continue;
    const std::string path = "faults[" + std::to_string(i) + "].kind";
    config_fail(origins_.at(path).origin, path,
                "bit_errors on simulation.fabric: fast (its other fault kinds are not modelled on it yet; packet or "
                "message)",
                scenario_.faults[i].kind);
  }
  const std::string& arbiter = scenario_.platform.switch_chip.arbiter;
  if (arbiter != "round_robin" && arbiter != "oldest_first") {
    const Place at = origins_.blame({"platform.switch.arbiter", "simulation.fabric"});
    config_fail(at.origin, at.path, "round_robin or oldest_first on simulation.fabric: fast", arbiter);
  }
}

void check_scenario(const Scenario& scenario, const KeyOrigins& origins) { ScenarioChecks(scenario, origins).check(); }

void check_platform(const Scenario& scenario, const KeyOrigins& origins) {
  ScenarioChecks(scenario, origins).check_platform();
}

}  // namespace nvsvp::platform
