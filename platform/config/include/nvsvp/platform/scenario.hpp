// A scenario: platform preset (+ overrides), MoE workload, schemes. Loaded from YAML with every
// key checked; bad input raises ConfigError naming file, line, key path and what was expected.
// The keys of the scenario's own sections, their descriptions and rules are declared once, in
// platform/config/include/nvsvp/platform/scenario_sections.hpp; the parameter structs declare theirs in their visit().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/model/gpu_params.hpp"
#include "nvsvp/model/nvlink_params.hpp"
#include "nvsvp/model/switch_params.hpp"
#include "nvsvp/platform/config_error.hpp"

namespace nvsvp::platform {

// Where each key of a loaded scenario was set (key_origins.hpp).
class KeyOrigins;

struct PlatformSpec {
  std::string preset;                   // name of the preset it came from
  uint32_t gpus = 0;
  uint32_t switch_chips = 0;
  std::vector<uint32_t> links_per_chip;  // links from every GPU to chip c (sum = links per GPU)
  model::LinkParams link;
  model::SwitchParams switch_chip;      // YAML key: switch
  model::GpuParams gpu;

  uint32_t links_per_gpu() const {
    uint32_t n = 0;
    for (uint32_t l : links_per_chip) n += l;
    return n;
  }
  // The chip a GPU's link `link` goes to: chips take consecutive links of every GPU.
  uint32_t chip_of_link(uint32_t gpu_link) const {
    for (uint32_t c = 0; c < links_per_chip.size(); ++c) {
      if (gpu_link < links_per_chip[c]) return c;
      gpu_link -= links_per_chip[c];
    }
    return static_cast<uint32_t>(links_per_chip.size());
  }
};

struct RoutingSpec {
  std::string kind = "uniform";  // uniform | normal | zipf | drifting | balanced | trace
  uint64_t seed = 1;
  double std = 0.032;            // normal: standard deviation of expert popularity
  double exponent = 1.5;         // zipf, drifting: power-law exponent
  // drifting: the zipf popularity of a layer at one iteration of a serving run; the expert at
  // each rank is replaced after hot_lifetime iterations on average.
  double hot_lifetime = 100.0;
  uint32_t iteration = 0;
  uint32_t layer = 0;
  std::string file;              // trace: path, resolved relative to the scenario file
  std::string origin;            // "FILE:LINE" of the routing mapping, for errors found later
};

struct WorkloadSpec {
  fw::MoeModel model;
  uint32_t top_k = 0;
  uint32_t tokens_per_gpu = 0;
  fw::DataType dispatch_dtype = fw::DataType::fp8;
  fw::DataType combine_dtype = fw::DataType::bf16;
  fw::WeightDtype weight_dtype = fw::WeightDtype::fp8;
  fw::LayerPass pass = fw::LayerPass::forward;
  fw::DataType gradient_dtype = fw::DataType::bf16;  // backward: the output gradients to the experts
  RoutingSpec routing;
  uint32_t shared_experts = 0;  // default: the model's
};

struct SimulationSpec {
  double max_time_us = 1e6;  // simulated-time limit: a run still busy then is reported as stuck
  double timeline_bin_us = 1.0;  // bins of the utilization time series and the trace's counters
  // How the fabric moves a message: "message", one transaction per message (its packets counted in
  // its wire size); "packet", one per packet, the reference engine (docs/models/packet_fabric.md).
  std::string fabric = "message";
};

// One fault injected into the run (the scenario's `faults:` list; docs/configuration.md#faults).
// Times count from the layer's start (the firmware's submission of the layer's work, replication
// phase included).
struct FaultSpec {
  std::string origin;  // where the entry is written, for messages
  std::string kind;    // "bit_errors", "credit_loss", "link_down" or "chip_down"
  // The GPU link it hits (both or neither; bit_errors without them: every link).
  std::optional<uint32_t> gpu;
  std::optional<uint32_t> link;
  std::optional<uint32_t> chip;  // chip_down: the switch chip
  std::string direction = "both";  // "both", "to_switch" (GPU->switch), "from_switch"
  double rate_per_flit = 0.0;      // bit_errors: the chance that one flit is corrupted
  uint64_t seed = 1;               // bit_errors: of the corruption draws (each link its own stream)
  double at_us = 0.0;              // credit_loss, link_down, chip_down: when, from the layer's start
  std::optional<double> up_at_us;  // link_down: when the link is up again (none: it stays down)
  uint32_t credits = 0;            // credit_loss: credit flits lost
};

// A stream of iterations (the `stream` section, docs/configuration.md#stream): hot-expert
// replication's policies compared on the same drifting routing, layer by layer, iteration by
// iteration. iterations 0: no stream.
struct StreamSpec {
  uint32_t iterations = 0;
  uint32_t layers = 1;
  // The static balancer is re-placed from the mean loads of the last this many iterations, every
  // this many iterations (0: placed once, from the popularity at iteration 0).
  uint32_t static_refresh = 0;
  // Every this many iterations (0, n, 2n, ...) of every layer, each scheme is simulated under each
  // policy (0: none).
  uint32_t simulate_every = 0;
};

// The pipeline of a training step across NVLink domains (the step's `pipeline`): each stage is
// one domain (the platform), the model's layers split evenly over the stages.
struct StepPipeline {
  uint32_t stages = 1;
  std::string schedule = "1f1b";
  // Between stages, per GPU and direction (assumed: one 400 Gb/s NIC per GPU, as DGX H100 and
  // GH200 nodes have, at its line rate, and an RDMA write's latency).
  double link_gbps = 50.0;
  double link_latency_us = 5.0;
};

// A step of the whole model (the `step` section, docs/configuration.md#step): its MoE layers
// simulated, the parts around them timed on the GPU's roofline. A training step is both passes
// composed by the pipeline's schedule; an inference request is the prefill of a batch of
// sequences, then decode_steps steps each generating one token of every sequence. kind empty: no
// step.
struct StepSpec {
  std::string kind;            // "", "training" or "inference"
  uint32_t micro_batches = 1;  // training: per step, each of workload.tokens_per_gpu tokens on every GPU of a stage
  uint32_t sample_layers = 0;  // MoE layers simulated, evenly spaced; the others take their mean (0: every one)
  StepPipeline pipeline;       // training
  // Inference: every sequence's prompt (0: the model's sequence_length); workload.tokens_per_gpu
  // prompt tokens per GPU make tokens_per_gpu / prompt_tokens sequences per GPU, the decode batch.
  uint32_t prompt_tokens = 0;
  uint32_t decode_steps = 512;
  // The prompt of a request's sequences: prompt_tokens, or the model's sequence_length.
  uint32_t prompt_of(const fw::MoeModel& model) const { return prompt_tokens != 0 ? prompt_tokens : model.sequence_length; }
};

struct Scenario {
  std::string name;
  std::string file;  // the scenario file as given
  PlatformSpec platform;
  WorkloadSpec workload;
  std::vector<std::string> schemes;
  fw::SoftwareParams software;
  SimulationSpec simulation;
  // No compute: the experts' work takes no time (their functional effect stays, so the checks
  // hold), and a layer is its communication alone.
  bool pure_communication = false;
  // Hot-expert replication (docs/background/hot_expert_replication.md): the `replication` section.
  fw::ReplicationParams replication;
  std::vector<FaultSpec> faults;  // none: nothing goes wrong
  // GPU partitions (the `partitions` section, docs/configuration.md#partitions): each a list of
  // GPU indices, as a fabric manager splits the GPUs among tenants. Empty: one partition of every
  // GPU. A GPU in no partition is isolated: every access to or from it is refused.
  std::vector<std::vector<uint32_t>> partitions;
  StreamSpec stream;
  StepSpec step;
  // Where each key was set, so that a check made after loading (check_fabric_resources) names
  // the file and line too. Null for a scenario built in code.
  std::shared_ptr<const KeyOrigins> origins;
};

// The MoE layers a step simulates: `sample` of the `moe_layers` (0: all), evenly spaced, the first
// and the last among them; indices from 0, ascending (model_layers.cpp).
std::vector<uint32_t> sampled_moe_layers(uint32_t moe_layers, uint32_t sample);

// The workload of the model's layer `layer` (0-based, dense layers counted): a seeded routing
// draws with seed + layer, a drifting or trace routing is that layer's (routing.layer).
WorkloadSpec workload_of_layer(const WorkloadSpec& workload, uint32_t layer);

// Loads a scenario. `overrides` are "a.b.c=value" strings applied to the file's tree before it is
// checked (the CLI's --set). Preset names resolve in `config_dir` (configs/ by default).
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const std::string& config_dir);

// The presets found in config_dir: platform and model names with a one-line description.
struct PresetInfo {
  std::string kind;  // "platform" or "model"
  std::string name;
  std::string summary;
};
std::vector<PresetInfo> list_presets(const std::string& config_dir);

// The effective configuration of a scenario as YAML text (every parameter, defaults included).
std::string dump_effective(const Scenario& scenario);

}  // namespace nvsvp::platform
