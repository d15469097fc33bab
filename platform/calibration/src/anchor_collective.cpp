// The collective measure of the anchor cases (anchor_measures.hpp).
#include "anchor_measures.hpp"
#include "nvsvp/platform/collectives.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

json link_load_json(const LinkLoad& load) {
  return {{"busiest_wire_bytes", load.busiest_wire_bytes},
          {"busiest_gpu", load.busiest_gpu},
          {"busiest_link", load.busiest_link},
          {"mean_wire_bytes", load.mean_wire_bytes},
          {"implied_wire_bytes_even_spread", load.implied_wire_bytes}};
}

}  // namespace

json measure_collective(const PlatformSpec& platform, const fw::CollectiveSpec& spec) {
  const CollectiveResult r = run_collective(platform, spec);
  json details = {
      {"collective", r.algorithm},
      {"bytes", r.bytes},
      {"time_us", r.time_us},
      {"metric", r.bus_bandwidth_gbps},
      {"algorithm_bandwidth_gbps", r.algorithm_bandwidth_gbps},
      {"bus_bandwidth_gbps", r.bus_bandwidth_gbps},
      {"link_bound_metric", r.bound.bus_bandwidth_gbps},
      {"link_bound_time_us", r.bound.time_us},
      {"physical", {{"gpu_to_switch", link_load_json(r.gpu_to_switch)}, {"switch_to_gpu", link_load_json(r.switch_to_gpu)}}},
      {"values_ok", r.values_ok},
      {"bytes_ok", r.bytes_ok},
      {"within_link_bound", r.within_link_bound},
      {"passed", r.ok()},
  };
  if (!r.ok()) details["failure"] = r.problems.empty() ? r.check_message : r.problems;
  return details;
}

}  // namespace nvsvp::platform
