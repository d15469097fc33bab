// The constraints between a scenario's keys, checked once every key is read: each violation is a
// ConfigError at the most specific key involved (KeyOrigins::blame).
#pragma once

#include "nvsvp/platform/key_origins.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

void check_scenario(const Scenario& scenario, const KeyOrigins& origins);
// The checks of a scenario whose layer is not run (a collective or GEMM anchor case): its
// platform's alone.
void check_platform(const Scenario& scenario, const KeyOrigins& origins);

}  // namespace nvsvp::platform
