// The MoE-phase measure of the anchor cases (anchor_measures.hpp): DeepEP's bandwidth convention
// applied to one phase of a scheme run.
#include <algorithm>
#include <vector>

#include "anchor_measures.hpp"
#include "nvsvp/fw/moe_workload.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/runner.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

// Per GPU: the (token, GPU) pairs it receives in dispatch, its own tokens included, and those that
// cross its links (from other homes).
struct PairCounts {
  std::vector<uint64_t> received;
  std::vector<uint64_t> remote_in;
  std::vector<uint64_t> remote_out;  // per home: its tokens' copies to other GPUs
};

PairCounts count_pairs(const fw::MoeRouting& routing) {
  PairCounts counts{std::vector<uint64_t>(routing.gpus), std::vector<uint64_t>(routing.gpus),
                    std::vector<uint64_t>(routing.gpus)};
  std::vector<uint32_t> destinations;
  for (uint64_t t = 0; t < static_cast<uint64_t>(routing.gpus) * routing.tokens_per_gpu; ++t) {
    const uint32_t home = routing.home_of_token(t);
    fw::destination_gpus(routing, t, destinations);
    for (uint32_t d : destinations) {
      counts.received[d]++;
      if (d != home) {
        counts.remote_in[d]++;
        counts.remote_out[home]++;
      }
    }
  }
  return counts;
}

double mean(const std::vector<uint64_t>& v) {
  double sum = 0.0;
  for (uint64_t x : v) sum += static_cast<double>(x);
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

}  // namespace

json measure_moe_phase(const Scenario& scenario, const std::string& scheme, const std::string& phase) {
  using fw::DataType;
  const std::shared_ptr<const fw::MoeLayerSpec> layer = make_layer_spec(scenario);
  const SchemeRun run = run_scheme(plan_scheme(scenario, scheme, resolve_layer(scenario, layer)), false);
  const json& r = run.result;
  if (r.contains("error")) return {{"passed", false}, {"failure", r["error"]}, {"metric", nullptr}};

  const PairCounts pairs = count_pairs(layer->routing);
  const bool dispatch = phase == "dispatch";
  // Dispatch moves each pair's token in the dispatch format; combine sends each back as a partial.
  const uint64_t pair_bytes = fw::vector_bytes(dispatch ? layer->dispatch_dtype : layer->combine_dtype,
                                               layer->model.hidden);
  const double start_us = r["phases"][phase]["start_us"].get<double>();
  const double end_us = r["phases"][phase]["end_us"].get<double>();
  const double time_us = end_us - start_us;
  const double logical_bytes = mean(pairs.received) * static_cast<double>(pair_bytes);
  const double metric = logical_bytes / (time_us * 1e3);  // GB/s = bytes/ns

  // The wire bytes the phase implies per GPU and direction (every copy keeps its own packets),
  // and the best time the links allow: the busiest GPU's busier direction at the links' rate.
  const model::LinkParams& link = scenario.platform.link;
  // DeepEP's copies are SM stores (the packet fabric cuts them into its SM packets).
  const uint32_t packet_bytes = scenario.platform.gpu.wire_packet_bytes(true, link.max_packet_payload_bytes);
  const double wire_per_pair = static_cast<double>(link.wire_flits(pair_bytes, packet_bytes)) * link.flit_bytes;
  const double link_gbps = scenario.platform.links_per_gpu() * link.line_rate_gbps * link.efficiency;
  // Dispatch: a GPU receives remote_in, sends remote_out; combine the other way round.
  const std::vector<uint64_t>& into = dispatch ? pairs.remote_in : pairs.remote_out;
  const std::vector<uint64_t>& out_of = dispatch ? pairs.remote_out : pairs.remote_in;
  uint64_t busiest = 0;
  for (size_t g = 0; g < into.size(); ++g) busiest = std::max({busiest, into[g], out_of[g]});
  const double bound_us = static_cast<double>(busiest) * wire_per_pair / link_gbps / 1e3;
  // Every byte on the wire is one the algorithm implies: both phases' copies to other GPUs (each
  // keeps its own packets) and the count exchange's 16 bytes from every GPU to every other.
  uint64_t remote_pairs = 0;
  for (uint64_t n : pairs.remote_in) remote_pairs += n;
  double implied_layer_wire = 0.0;
  for (const DataType type : {layer->dispatch_dtype, layer->combine_dtype}) {
    implied_layer_wire += static_cast<double>(remote_pairs) *
                          static_cast<double>(link.wire_flits(fw::vector_bytes(type, layer->model.hidden), packet_bytes)) *
                          link.flit_bytes;
  }
  const uint32_t gpus = layer->routing.gpus;
  implied_layer_wire += static_cast<double>(gpus) * (gpus - 1) * link.wire_flits(16) * link.flit_bytes;
  double measured_layer_wire[2] = {0.0, 0.0};  // gpu_to_switch, switch_to_gpu
  for (const LinkStatistics& l : run.links) measured_layer_wire[l.gpu_to_switch ? 0 : 1] += static_cast<double>(l.wire_bytes);
  const bool bytes_ok = measured_layer_wire[0] == implied_layer_wire && measured_layer_wire[1] == implied_layer_wire;
  const json& checks = r["checks"];
  const bool passed = checks["passed"].get<bool>() && bytes_ok;
  json details = {
      {"scheme", scheme},
      {"phase", phase},
      {"time_us", time_us},
      {"metric", metric},
      {"logical_bytes_per_gpu", logical_bytes},
      {"pair_bytes", pair_bytes},
      {"pairs_received_per_gpu", {{"mean", mean(pairs.received)},
                                  {"max", *std::max_element(pairs.received.begin(), pairs.received.end())}}},
      {"physical",
       {{"wire_bytes_per_gpu_in", mean(into) * wire_per_pair},
        {"wire_bytes_per_gpu_out", mean(out_of) * wire_per_pair},
        {"rate_per_gpu_in_gbps", mean(into) * wire_per_pair / (time_us * 1e3)},
        {"link_capacity_per_gpu_gbps", link_gbps},
        {"layer_wire_bytes_implied", implied_layer_wire},
        {"layer_wire_bytes_gpu_to_switch", measured_layer_wire[0]},
        {"layer_wire_bytes_switch_to_gpu", measured_layer_wire[1]}}},
      {"link_bound_time_us", bound_us},
      {"link_bound_metric", logical_bytes / (bound_us * 1e3)},
      {"layer_time_us", r["layer_time_us"]},
      {"checks", checks},
      {"passed", passed && time_us >= bound_us},
  };
  if (!checks["passed"].get<bool>()) details["failure"] = "the scheme run's checks failed";
  else if (!bytes_ok) details["failure"] = "the wire bytes differ from those the algorithm implies";
  else if (time_us < bound_us) details["failure"] = "faster than its link bound";
  return details;
}

}  // namespace nvsvp::platform
