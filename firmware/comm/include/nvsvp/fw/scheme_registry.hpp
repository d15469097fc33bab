// The scheme registry: every communication scheme by name, with the traits the platform, the
// command line and the tests read. A scheme's trait lives here and nowhere else: code that needs
// to know whether a scheme runs on NCCL's channels, searches Tutel's degree, needs multicast in
// the switch or runs under DualPipe asks its SchemeTraits, never its name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvsvp::fw {

// What a scheme asks of the switch chips beyond unicast routes.
enum class SwitchMulticast {
  none,             // unicast stores and reads only
  groups,           // static multicast groups (multimem.st / ld_reduce over a group's address range)
  dynamic_objects,  // dynamic multicast objects (dymultimem: targets per request, the Hubs' tables)
};
const char* to_string(SwitchMulticast multicast);

// The pipeline schedule a training step runs the scheme under.
enum class StepSchedule {
  of_the_step,  // the step's step.pipeline.schedule (1F1B unless it says dualpipe)
  dualpipe,     // DualPipe always: forward and backward of two micro batches overlapped
};

struct SchemeTraits {
  const char* name;
  const char* summary;  // one line for `nvsvp presets`
  // The scheme whose layer plan this one runs: its own name, or another's (dualpipe runs
  // DeepEP's layers; only the step's schedule differs).
  const char* plan;
  // The fused kernel whose four SM groups are software.fusion_*_sms.
  bool fused_kernel = false;
  // Its all-to-all runs on NCCL's channels: software.nccl_channels SMs.
  bool nccl_channels = false;
  // With software.tutel_degree 0 its pipelining degree is searched: each of
  // tutel_degree_candidates() simulated in turn, the fastest kept.
  bool searches_degree = false;
  SwitchMulticast multicast = SwitchMulticast::none;
  StepSchedule schedule = StepSchedule::of_the_step;
  // Runs only in a training step (it is a schedule over layers, not a layer's own).
  bool training_step_only = false;
};

// Every scheme, in the order `nvsvp presets` lists them.
const std::vector<SchemeTraits>& scheme_registry();
// The traits of `scheme`, or null for a name the registry does not hold.
const SchemeTraits* find_scheme(const std::string& scheme);
// The traits of `scheme`; throws std::invalid_argument for an unknown name.
const SchemeTraits& scheme_traits(const std::string& scheme);
// The names of every scheme (scheme_registry() order).
const std::vector<std::string>& scheme_names();
// The names of the schemes that run a layer on their own (every scheme but the training-step-only
// ones): what a layer scenario may list.
const std::vector<std::string>& layer_scheme_names();

// Tutel's adaptive pipelining degrees, tried in turn when software.tutel_degree is 0 (Tutel's
// online search over {1, 2, 4, 8}; github microsoft/tutel, a2a_ffn_overlap_degree).
const std::vector<uint32_t>& tutel_degree_candidates();

}  // namespace nvsvp::fw
