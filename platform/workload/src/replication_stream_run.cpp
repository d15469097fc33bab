// The `stream` section's run: hot-expert replication's policies over a serving run's iterations
// (replication_stream_run.hpp; the policies' arithmetic is fw::LayerReplicationStream).
#include "replication_stream_run.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <cmath>
#include <fstream>
#include <numeric>
#include <stdexcept>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/fw/replication_stream.hpp"
#include "nvsvp/platform/model_prefill.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/routing_generator.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

constexpr size_t kMaxStreamViolations = 20;  // report.json lists the first ones

// One policy's figures summed over iterations (one layer's, or the whole stream's).
struct PolicyTotals {
  double excess_before = 0.0;
  double excess_after = 0.0;
  double max_over_mean_before = 0.0;  // summed: divided by `iterations` when written
  double max_over_mean_after = 0.0;
  uint64_t replicas = 0;
  uint64_t kept = 0;
  uint64_t evicted = 0;
  uint64_t weight_bytes_broadcast = 0;
  double max_estimated_broadcast_ns = 0.0;
  uint64_t refreshes = 0;
  uint64_t iterations = 0;

  void add(const fw::StreamPolicyStep& s) {
    excess_before += s.excess_before;
    excess_after += s.excess_after;
    max_over_mean_before += s.max_over_mean_before;
    max_over_mean_after += s.max_over_mean_after;
    replicas += s.replicas;
    kept += s.kept;
    evicted += s.evicted;
    weight_bytes_broadcast += s.weight_bytes_broadcast;
    max_estimated_broadcast_ns = std::max(max_estimated_broadcast_ns, s.estimated_broadcast_ns);
    refreshes += s.refreshed ? 1 : 0;
    ++iterations;
  }

  json to_json(fw::ReplicationPolicy policy, double budget_ns) const {
    const double n = std::max<uint64_t>(iterations, 1);
    json j = {{"excess_before", excess_before},
              {"excess_after", excess_after},
              // The stream's excess removed: 1 - summed after / summed before.
              {"removed_fraction", excess_before > 0.0 ? json(1.0 - excess_after / excess_before) : json()},
              {"mean_max_over_mean_before", max_over_mean_before / n},
              {"mean_max_over_mean_after", max_over_mean_after / n},
              {"mean_replicas", static_cast<double>(replicas) / n}};
    if (policy == fw::ReplicationPolicy::fixed) j["refreshes"] = refreshes;
    if (policy == fw::ReplicationPolicy::iser) {
      j["kept"] = kept;
      j["evicted"] = evicted;
      j["new_replicas"] = replicas - kept;
      j["weight_bytes_broadcast"] = weight_bytes_broadcast;
      j["max_estimated_broadcast_us"] = max_estimated_broadcast_ns / 1e3;
      j["budget_us"] = budget_ns / 1e3;
    }
    return j;
  }
};

void write_csv_row(std::ofstream& csv, uint32_t layer, uint32_t iteration, const char* name,
                   const fw::StreamPolicyStep& s) {
  const double removed = s.excess_before > 0.0 ? 1.0 - s.excess_after / s.excess_before : 0.0;
  csv << layer << ',' << iteration << ',' << name << ',' << fixed(s.excess_before, 1) << ','
      << fixed(s.excess_after, 1) << ',' << fixed(removed, 6) << ',' << fixed(s.max_over_mean_before, 6) << ','
      << fixed(s.max_over_mean_after, 6) << ',' << s.replicas << ',' << s.kept << ',' << s.evicted << ','
      << s.weight_bytes_broadcast << ',' << fixed(s.estimated_broadcast_ns / 1e3, 3) << ','
      << fixed(s.budget_ns / 1e3, 3) << ',' << (s.refreshed ? 1 : 0) << ',' << s.stop_reason << '\n';
}

// The simulated runs of sampled iterations: each scheme under each policy, and per scheme the
// layer times summed per policy.
class StreamSimulations {
 public:
  StreamSimulations(const Scenario& scenario, const std::function<void(const std::string&)>& on_progress)
      : scenario_(scenario), on_progress_(on_progress) {
    for (const std::string& scheme : scenario.schemes) time_us_[scheme] = {0.0, 0.0, 0.0};
  }

  void run(uint32_t layer, uint32_t iteration, const fw::StreamStep& step) {
    for (size_t p = 0; p < fw::kStreamPolicies.size(); ++p) {
      const std::string policy = fw::to_string(fw::kStreamPolicies[p]);
      const auto spec = make_layer_spec(scenario_, *step.routings[p], step.decisions[p]);
      for (const std::string& scheme : scenario_.schemes) {
        if (on_progress_) {
          on_progress_("stream: layer " + std::to_string(layer) + " iteration " + std::to_string(iteration) + " " +
                       policy + " " + scheme);
        }
        const json result = run_scheme_in_child(scenario_, scheme, spec).result;
        json entry = {{"layer", layer}, {"iteration", iteration}, {"policy", policy}, {"scheme", scheme}};
        const std::string where = "layer " + std::to_string(layer) + " iteration " + std::to_string(iteration) +
                                  ", policy " + policy + ", scheme " + scheme;
        if (result.contains("error")) {
          entry["error"] = result["error"];
          failures_.push_back(where + ": " + result["error"].get<std::string>());
          passed_ = false;
          runs_.push_back(entry);
          continue;
        }
        const json& rep = result["replication"];
        uint32_t kept = 0;
        for (const json& r : rep["replicas"]) kept += r["kept"].get<bool>() ? 1 : 0;
        entry["layer_time_us"] = result["layer_time_us"];
        entry["passed"] = result["checks"]["passed"];
        entry["replicas"] = rep["replicas"].size();
        entry["kept"] = kept;
        entry["excess_load_removed"] = rep["excess_load_removed"];
        entry["shared_expert_time_us"] = rep["shared_expert_time_us"];
        entry["broadcast_time_us"] = rep["broadcast_time_us"];
        entry["hidden"] = rep["hidden"];
        entry["exposed_broadcast_us"] = rep["exposed_broadcast_us"];
        if (!result["checks"]["passed"].get<bool>()) {
          failures_.push_back(where + ": the simulated layer failed its checks");
          passed_ = false;
        }
        time_us_[scheme][p] += result["layer_time_us"].get<double>();
        runs_.push_back(entry);
      }
    }
    ++points_;
  }

  // Per scheme: the mean layer time per policy over the simulated iterations, and iser's gain
  // (a layer processes the same tokens under every policy, so throughput goes as 1 / time).
  json gains() const {
    json out = json::object();
    if (points_ == 0) return out;
    for (const auto& [scheme, times] : time_us_) {
      const double none = times[0] / points_, fixed = times[1] / points_, iser = times[2] / points_;
      out[scheme] = {{"none_layer_time_us", none},
                     {"static_layer_time_us", fixed},
                     {"iser_layer_time_us", iser},
                     {"iser_gain_over_none", iser > 0.0 ? json(none / iser - 1.0) : json()},
                     {"iser_gain_over_static", iser > 0.0 ? json(fixed / iser - 1.0) : json()}};
    }
    return out;
  }

  const json& runs() const { return runs_; }
  bool passed() const { return passed_; }
  // The stream's own violations (`arithmetic`), then the simulated runs' failures, the first ones.
  json violations(std::vector<std::string> arithmetic) const {
    for (const std::string& f : failures_) {
      if (arithmetic.size() >= kMaxStreamViolations) break;
      arithmetic.push_back(f);
    }
    return arithmetic;
  }

 private:
  const Scenario& scenario_;
  const std::function<void(const std::string&)>& on_progress_;
  std::map<std::string, std::array<double, 3>> time_us_;
  json runs_ = json::array();
  std::vector<std::string> failures_;
  uint32_t points_ = 0;
  bool passed_ = true;
};

}  // namespace

json run_replication_stream(const Scenario& scenario, const std::string& out_dir,
                            const std::function<void(const std::string&)>& on_progress) {
  const StreamSpec& stream = scenario.stream;
  fw::StreamSettings settings;
  settings.params = scenario.replication;
  settings.model = scenario.workload.model;
  settings.weight_dtype = scenario.workload.weight_dtype;
  settings.costs = replication_broadcast_costs(scenario);
  settings.shared_expert_ns = shared_expert_budget_ns(scenario, fw::uses_multicast(scenario.replication));
  settings.static_refresh = stream.static_refresh;

  const std::string path = out_dir + "/stream.csv";
  std::ofstream csv(path);
  csv << "layer,iteration,policy,excess_before,excess_after,removed_fraction,max_over_mean_before,"
         "max_over_mean_after,replicas,kept,evicted,weight_bytes_broadcast,estimated_broadcast_us,budget_us,"
         "refreshed,stop_reason\n";
  PolicyTotals totals[3];
  StreamSimulations simulations(scenario, on_progress);
  json layers = json::array();
  bool pairs_conserved = true;
  std::vector<std::string> violations;  // the first ones
  for (uint32_t layer = 0; layer < stream.layers; ++layer) {
    WorkloadSpec workload = scenario.workload;
    workload.routing.layer = layer;
    workload.routing.iteration = 0;
    fw::MoeRouting first = generate_routing(workload, scenario.platform.gpus);
    std::unique_ptr<fw::LayerReplicationStream> policies;
    try {
      policies = std::make_unique<fw::LayerReplicationStream>(settings, expected_expert_loads(workload, first));
    } catch (const std::invalid_argument& e) {
      throw ConfigError(scenario.file + ": stream: " + e.what());
    }
    PolicyTotals layer_totals[3];
    for (uint32_t iteration = 0; iteration < stream.iterations; ++iteration) {
      workload.routing.iteration = iteration;
      const fw::MoeRouting routing = iteration == 0 ? std::move(first) : generate_routing(workload, scenario.platform.gpus);
      const bool simulate = stream.simulate_every > 0 && iteration % stream.simulate_every == 0;
      if (on_progress && !simulate) {
        on_progress("stream: layer " + std::to_string(layer) + " iteration " + std::to_string(iteration));
      }
      fw::StreamStep step;
      try {
        step = policies->step(routing, simulate);
      } catch (const std::invalid_argument& e) {
        throw ConfigError(scenario.file + ": stream: " + e.what());
      }
      for (size_t p = 0; p < fw::kStreamPolicies.size(); ++p) {
        const fw::StreamPolicyStep& s = step.policies[p];
        const std::string lost = fw::pairs_violation(s, static_cast<double>(routing.expert_ids.size()));
        if (!lost.empty() && violations.size() < kMaxStreamViolations) {
          violations.push_back("layer " + std::to_string(layer) + " iteration " + std::to_string(iteration) + ", " + lost);
        }
        pairs_conserved = pairs_conserved && lost.empty();
        write_csv_row(csv, layer, iteration, fw::to_string(fw::kStreamPolicies[p]), s);
        totals[p].add(s);
        layer_totals[p].add(s);
      }
      if (simulate) simulations.run(layer, iteration, step);
    }
    json per_policy = json::object();
    for (size_t p = 0; p < fw::kStreamPolicies.size(); ++p) {
      per_policy[fw::to_string(fw::kStreamPolicies[p])] =
          layer_totals[p].to_json(fw::kStreamPolicies[p], settings.shared_expert_ns);
    }
    layers.push_back({{"layer", layer}, {"policies", per_policy}});
  }
  csv.close();
  if (!csv) throw std::runtime_error("cannot write " + path);

  json summary = json::object();
  for (size_t p = 0; p < fw::kStreamPolicies.size(); ++p) {
    summary[fw::to_string(fw::kStreamPolicies[p])] = totals[p].to_json(fw::kStreamPolicies[p], settings.shared_expert_ns);
  }
  return {{"iterations", stream.iterations},
          {"layers", stream.layers},
          {"static_refresh", stream.static_refresh},
          {"file", "stream.csv"},
          {"policies", summary},
          {"per_layer", layers},
          {"simulate_every", stream.simulate_every},
          {"simulated", simulations.runs()},
          {"layer_time_gains", simulations.gains()},
          {"prefill", prefill_estimate(scenario, simulations.gains())},
          {"passed", pairs_conserved && simulations.passed()},
          {"violations", simulations.violations(violations)}};
}

}  // namespace nvsvp::platform
