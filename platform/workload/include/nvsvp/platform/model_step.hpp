// A training step of the whole model (the scenario's `step` section, docs/configuration.md#step):
// every MoE layer's forward and backward pass simulated (one child process per layer, pass and
// scheme; a sample of them with step.sample_layers), the parts around them (attention, the dense
// layers' FFN, the output head) timed on the GPU model's roofline (docs/models/model_parts.md),
// composed over the pipeline's stages by its schedule (pipeline_schedule.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvsvp/platform/pipeline_schedule.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/step_parts.hpp"

namespace nvsvp::platform {

struct TrainingStep {
  PipelineTiming timing;
  StepParts busy;  // per stage on average over the step: timing's busy time by part
  std::vector<uint32_t> first_layer;  // per stage: its first layer (and one past the last stage's last)
};

// The model's `layers` split evenly over `spec.stages` stages (stage s: layers [s L / P,
// (s + 1) L / P)), `head` on the last stage, timed by the 1F1B schedule. Throws
// std::invalid_argument for more stages than layers.
TrainingStep compose_training_step(const std::vector<LayerPasses>& layers, const LayerPasses& head,
                                   const PipelineSpec& spec);

// DualPipe over one NVLink domain (`dualpipe`): one micro batch's forward runs beside another's
// backward, the forward's k-th layer beside the backward's k-th (the head first backward, last
// forward), each one's communication behind the other's compute. A pair takes the longer of its
// two computes together (slowed by `compute_slowdown`: the SMs the communication kernels hold) and
// its two communications together (the MoE layers' exposed communication); the first micro
// batch's forward and the last one's backward run alone. Throws std::invalid_argument for no
// layers or micro batches.
TrainingStep compose_dualpipe_step(const std::vector<LayerPasses>& layers, const LayerPasses& head,
                                   uint32_t micro_batches, double compute_slowdown);

// DualPipe across `spec.stages` pipeline ranks (even; micro batches even and at least twice the
// ranks): the layers split over the stages as compose_training_step splits them, rank r holding
// stage r of the micro batches that enter at rank 0 and stage P - 1 - r of those that enter at the
// last rank, timed by time_dualpipe. A forward-backward pair overlaps as compose_dualpipe_step's
// (one stage's forward layers beside the other stage's backward layers, k-th beside k-th, the
// layers beyond the shorter list alone); a zero-bubble backward leaves its `weight` parts for
// later. Throws std::invalid_argument as time_dualpipe, or for more stages than layers.
TrainingStep compose_dualpipe_pipeline_step(const std::vector<LayerPasses>& layers, const LayerPasses& head,
                                            const PipelineSpec& spec, double compute_slowdown);

// Runs the scenario's step for every scheme: report.json's `step`. `on_progress` (may be empty) is
// told what runs. `passed` is false when a simulated layer failed its checks or its process.
nlohmann::json run_model_step(const Scenario& scenario, const std::function<void(const std::string&)>& on_progress);

}  // namespace nvsvp::platform
