// The measures of the anchor cases (anchors.cpp), private to platform/: each runs its case's
// simulation in this process (once per process) and returns its figures as JSON, with "metric"
// (the figure compared with the anchor), "passed" and, when a check failed, "failure".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "nvsvp/fw/collectives.hpp"
#include "nvsvp/platform/gemm_case.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// Scheme `scheme` on the scenario's layer; the figures of phase `phase` (dispatch or combine) in
// DeepEP's convention: the logical bandwidth per GPU (the bytes of every (token, GPU) pair the GPU
// receives in dispatch, its own included, in the phase's format, over the phase's time), beside
// the physical wire bytes per GPU and link direction the phase implies, its rate, and the link
// bound of the metric. The wire bytes of the whole layer must be those the software all-to-all
// implies (`deepep`'s: both phases' copies and the count exchange), or the case fails.
nlohmann::json measure_moe_phase(const Scenario& scenario, const std::string& scheme, const std::string& phase);

// NCCL's collective `spec` on `platform` (platform/collectives.hpp): its bus bandwidth in
// nccl-tests' convention, its algorithm bandwidth, the link loads and the link bound; it passes
// when the values are right, every GPU's payload is exactly what the collective implies, and it
// does not beat the link bound.
nlohmann::json measure_collective(const PlatformSpec& platform, const fw::CollectiveSpec& spec);

// One grouped GEMM `spec` on GPU 0 of `platform`: its TFLOPS (2 M N K groups / time); it passes
// when the TFLOPS stay below the GPU's peak x gemm_efficiency. (That its time is the wave model's,
// waves of tiles at the SM's share of that, is tests/sim/test_gemm_case.cpp's check.)
nlohmann::json measure_gemm(const PlatformSpec& platform, const GemmCaseSpec& spec);

}  // namespace nvsvp::platform
