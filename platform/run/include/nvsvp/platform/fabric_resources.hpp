// Whether the fabric can hold what each scheme's plan needs: the firmware's own bring-up for the
// layer (fw::bring_up_for_layer: discovery, route tables, reduction contexts, the static multicast
// groups of the plan and of hot-expert replication, the dynamic objects in every Hub) run against
// the switch chips' register models and the GPUs' Hubs alone, with nothing simulated. A plan the
// fabric cannot hold (more multicast groups than slots, say) is then bad input at `validate` and
// before `run` starts any scheme, not a failed bring-up inside the run.
#pragma once

#include <memory>

#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {

// Throws ConfigError naming the scenario's place of the key that sizes the exhausted resource
// (platform.switch.multicast_slots, ...), the scheme and the firmware's own message. Plans each
// scheme (scheme_job.hpp's plan_scheme) and keeps none.
void check_fabric_resources(const Scenario& scenario, const ResolvedLayer& layer);

}  // namespace nvsvp::platform
