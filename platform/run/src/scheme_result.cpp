// Collect, the rest of one scheme's result: the layer's phases, each GPU, the switch chips, the
// Hubs and source queues, token-centric fusion, hot-expert replication and the checks.
#include <algorithm>
#include <memory>

#include "nvsvp/platform/scheme_collect.hpp"

namespace nvsvp::platform {

using nlohmann::json;

const std::vector<std::string>& phase_names(const Platform& platform) {
  for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
    if (!platform.gpu(g).phase_names().empty()) return platform.gpu(g).phase_names();
  }
  return platform.gpu(0).phase_names();
}

json phases_json(const Platform& platform, const LayerWindow& layer) {
  json phases = json::object();
  const std::vector<std::string>& names = phase_names(platform);
  for (size_t p = 0; p < names.size(); ++p) {
    bool seen = false;
    sc_core::sc_time start = sc_core::sc_max_time(), end;
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      const auto& times = platform.gpu(g).phase_times();
      if (p >= times.size() || !times[p].seen) continue;
      seen = true;
      start = std::min(start, times[p].first_start);
      end = std::max(end, times[p].last_end);
    }
    if (seen) phases[names[p]] = {{"start_us", layer.since_start_us(start)}, {"end_us", layer.since_start_us(end)}};
  }
  return phases;
}

json gpus_json(const Platform& platform, const LayerWindow& layer) {
  const std::vector<std::string>& names = phase_names(platform);
  json gpus = json::array();
  for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
    const model::Gpu& gpu = platform.gpu(g);
    json gpu_phases = json::object();
    for (size_t p = 0; p < names.size() && p < gpu.phase_times().size(); ++p) {
      const model::PhaseTime& t = gpu.phase_times()[p];
      if (t.seen) {
        gpu_phases[names[p]] = {{"start_us", layer.since_start_us(t.first_start)},
                                {"end_us", layer.since_start_us(t.last_end)}};
      }
    }
    gpus.push_back({{"gpu", g},
                    {"finish_us", layer.since_start_us(gpu.finish_time())},
                    {"messages_sent", gpu.stats().messages_sent},
                    {"messages_received", gpu.stats().messages_received},
                    {"compute_us", to_us(gpu.stats().compute_time)},
                    {"phases", gpu_phases}});
  }
  return gpus;
}

json switch_json(const Platform& platform, const fw::SwitchFabric& fabric) {
  // Counters summed over the chips (static multimem's too, switch_chip.md); peaks the largest chip's.
  model::SwitchStats sum;
  for (uint32_t c = 0; c < platform.switch_count(); ++c) {
    const model::SwitchStats s = platform.chip(c).stats();
    sum.forwarded[0] += s.forwarded[0];
    sum.forwarded[1] += s.forwarded[1];
    sum.peak_buffered_messages = std::max(sum.peak_buffered_messages, s.peak_buffered_messages);
    sum.replications += s.replications;
    sum.reductions += s.reductions;
    sum.evictions += s.evictions;
    sum.access_errors += s.access_errors;
    sum.partition_errors += s.partition_errors;
    sum.evicted_partial_bytes += s.evicted_partial_bytes;
    sum.evicted_reductions += s.evicted_reductions;
    sum.peak_reduction_buffer_bytes = std::max(sum.peak_reduction_buffer_bytes, s.peak_reduction_buffer_bytes);
  }
  const fw::FabricBringUpReport& bring_up = fabric.report();
  json errors = json::array();
  for (const fw::SwitchErrorRecord& e : fabric.error_log()) errors.push_back(e.describe());
  return {{"forwarded_requests", sum.forwarded[0]},
          {"forwarded_responses", sum.forwarded[1]},
          {"peak_buffered_messages", sum.peak_buffered_messages},
          {"replications", sum.replications},
          {"reductions", sum.reductions},
          {"evictions", sum.evictions},
          {"access_errors", sum.access_errors},
          {"partition_errors", sum.partition_errors},
          {"evicted_partial_bytes", sum.evicted_partial_bytes},
          {"evicted_reductions", sum.evicted_reductions},
          // The share of in-switch reductions that completed in the reduction buffer with no
          // partial passed on to the issuer; null when the switch reduced nothing.
          {"reduction_no_eviction_rate",
           sum.reductions > 0 ? json(1.0 - static_cast<double>(sum.evicted_reductions) / static_cast<double>(sum.reductions))
                              : json(nullptr)},
          {"peak_reduction_buffer_bytes", sum.peak_reduction_buffer_bytes},
          {"reduction_context_pool", bring_up.reduction_context_pool},
          {"multicast_slots", bring_up.multicast_slots},
          {"bring_up_us", bring_up.duration_ns / 1e3},
          {"errors", errors}};
}

json hub_json(const Platform& platform) {
  model::HubStatistics hub;
  uint64_t queue_stalls = 0, queue_operations = 0;
  uint32_t queue_peak = 0;
  for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
    const model::HubStatistics& h = platform.gpu(g).hub().statistics();
    hub.dispatch_translations += h.dispatch_translations;
    hub.combine_translations += h.combine_translations;
    hub.allocations += h.allocations;
    hub.cache_hits += h.cache_hits;
    hub.cache_misses += h.cache_misses;
    const model::DynamicSourceQueueStatistics& q = platform.gpu(g).source_queue().statistics();
    queue_operations += q.operations;
    queue_stalls += q.stalls;
    queue_peak = std::max(queue_peak, q.peak_occupancy);
  }
  return {{"dispatch_translations", hub.dispatch_translations},
          {"combine_translations", hub.combine_translations},
          {"allocations", hub.allocations},
          {"cache_hits", hub.cache_hits},
          {"cache_misses", hub.cache_misses},
          // null when no translation happened (no dynamic multimem, or explicit addressing)
          {"cache_hit_rate", hub.cache_hits + hub.cache_misses > 0 ? json(hub.hit_rate()) : json(nullptr)},
          {"source_queue_operations", queue_operations},
          {"source_queue_stalls", queue_stalls},
          {"source_queue_peak", queue_peak}};
}

// The peaks are the largest GPU's.
json fusion_json(const Platform& platform, const fw::MoeCheckResult& checks) {
  uint64_t notifications = 0, notification_messages = 0;
  json tables = json::object();
  for (const auto& [name, table] : {std::pair<const char*, hw::CounterTable>{"tile_status", hw::CounterTable::tile_status},
                                    {"output_readiness", hw::CounterTable::output_readiness}}) {
    uint64_t taken = 0, spilled = 0, spilled_updates = 0;
    uint32_t peak = 0, entries = 0;
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      const model::CounterTableStats& t = platform.gpu(g).table_stats(table);
      taken += t.taken;
      spilled += t.spilled;
      spilled_updates += t.spilled_updates;
      peak = std::max(peak, t.peak_live);
      entries = t.entries;
    }
    tables[name] = {{"entries", entries},     {"peak_live", peak},
                    {"taken", taken},         {"spilled", spilled},
                    {"spilled_updates", spilled_updates}};
  }
  for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
    notifications += platform.gpu(g).stats().notifications_sent;
    notification_messages += platform.gpu(g).stats().notification_messages_received;
  }
  return {{"notifications", notifications},
          {"notification_messages", notification_messages},
          {"notifications_expected", checks.notifications_expected},
          {"notifications_delivered", checks.notifications_delivered},
          {"tile_status", tables["tile_status"]},
          {"output_readiness", tables["output_readiness"]}};
}

json replication_json(const fw::MoeLayerSpec& layer, const fw::ReplicationPhase& phase,
                      const fw::ReplicationCheck& check, const json& phases, double phase_end_us,
                      const std::vector<uint64_t>& bytes_sent) {
  const std::shared_ptr<const fw::ReplicationDecision>& d = layer.replication;
  if (!d) return json(nullptr);
  const double excess_before = fw::excess_load(d->load_before);
  const double excess_after = fw::excess_load(d->load_after);
  json replicas = json::array();
  for (const fw::ReplicaPlacement& p : d->schedule.replicas) {
    const fw::FixedGroup& g = d->groups[p.group];
    replicas.push_back({{"expert", p.expert}, {"owner", p.owner}, {"group_first_gpu", g.first_gpu},
                        {"group_size", g.size}, {"slot", p.slot}, {"gpus", p.replica_gpus}, {"kept", p.resident}});
  }
  json group_sizes = json::array();
  for (const fw::FixedGroup& g : d->groups) {
    if (std::find(group_sizes.begin(), group_sizes.end(), json(g.size)) == group_sizes.end()) group_sizes.push_back(g.size);
  }
  auto phase_end = [&phases](const char* name) {
    return phases.contains(name) ? phases[name]["end_us"].get<double>() : 0.0;
  };
  const double shared_us = phase_end("shared_expert");
  const double broadcast_us = phase_end("broadcast");
  json owners = json::array();
  std::vector<uint32_t> owner_gpus;
  for (const fw::ReplicaPlacement& p : d->schedule.replicas) {
    if (!p.resident) owner_gpus.push_back(p.owner);  // a kept replica's owner sends nothing
  }
  std::sort(owner_gpus.begin(), owner_gpus.end());
  owner_gpus.erase(std::unique(owner_gpus.begin(), owner_gpus.end()), owner_gpus.end());
  for (uint32_t o : owner_gpus) {
    owners.push_back({{"gpu", o}, {"bytes_sent", bytes_sent[o]},
                      {"bytes_expected", phase.expected_bytes_sent.empty() ? 0 : phase.expected_bytes_sent[o]}});
  }
  return {{"policy", fw::to_string(d->policy)},
          {"broadcast", d->broadcasts() ? json(fw::to_string(d->method)) : json(nullptr)},
          {"group_sizes", group_sizes},
          {"slots_per_gpu", d->slots_per_gpu},
          {"shared_experts", layer.shared_experts},
          {"expert_weight_bytes", d->weight_bytes},
          {"replicas", replicas},
          {"stop_reason", d->schedule.stop_reason},
          {"load_before", d->load_before},
          {"load_after", d->load_after},
          {"max_mean_before", fw::max_over_mean(d->load_before)},
          {"max_mean_after", fw::max_over_mean(d->load_after)},
          {"excess_before", excess_before},
          {"excess_after", excess_after},
          {"excess_load_removed", excess_before > 0 ? json(1.0 - excess_after / excess_before) : json(nullptr)},
          {"time_budget_us", d->time_budget_ns / 1e3},
          {"estimated_broadcast_us", d->schedule.estimated_broadcast_ns / 1e3},
          {"shared_expert_time_us", shared_us},
          {"broadcast_time_us", broadcast_us},
          {"replication_phase_us", phase_end_us},
          {"hidden", broadcast_us <= shared_us},
          {"exposed_broadcast_us", std::max(0.0, broadcast_us - shared_us)},
          {"bytes_sent", bytes_sent},
          {"owners", owners},
          {"weight_chunks_expected", check.chunks_expected},
          {"weight_chunks_landed", check.chunks_landed}};
}

json load_json(const fw::MoeLayerSpec& layer) {
  const fw::MoeRouting& routing = layer.routing;
  // Replicas rename an expert's copies; the gate chose the experts they compute for.
  std::vector<double> per_expert(routing.experts, 0.0);
  for (uint16_t e : routing.expert_ids) per_expert[routing.weights_of_copy(e)] += 1.0;
  std::vector<double> per_gpu(routing.gpus, 0.0);
  for (uint32_t e = 0; e < routing.experts; ++e) per_gpu[routing.gpu_of_expert(e)] += per_expert[e];
  return {{"max_mean_gpu", fw::max_over_mean(per_gpu)}, {"max_mean_expert", fw::max_over_mean(per_expert)}};
}

namespace {

// Disjoint intervals in time order, clipped to [from, to).
std::vector<model::ActiveInterval> clipped(std::vector<model::ActiveInterval> intervals, uint64_t from, uint64_t to) {
  std::vector<model::ActiveInterval> out;
  for (model::ActiveInterval i : intervals) {
    i.start_ps = std::max(i.start_ps, from);
    i.end_ps = std::min(i.end_ps, to);
    if (i.end_ps > i.start_ps) out.push_back(i);
  }
  return out;
}

// The union of a GPU's compute spans (its streams overlap), disjoint and in time order.
std::vector<model::ActiveInterval> compute_union(const model::Gpu& gpu) {
  std::vector<model::ActiveInterval> spans;
  for (const model::ComputeSpan& s : gpu.compute_spans()) {
    if (!s.delay_only) spans.push_back({s.start.value(), s.end.value()});
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) { return a.start_ps < b.start_ps; });
  std::vector<model::ActiveInterval> merged;
  for (const model::ActiveInterval& s : spans) {
    if (!merged.empty() && s.start_ps <= merged.back().end_ps) {
      merged.back().end_ps = std::max(merged.back().end_ps, s.end_ps);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

uint64_t total_ps(const std::vector<model::ActiveInterval>& intervals) {
  uint64_t sum = 0;
  for (const model::ActiveInterval& i : intervals) sum += i.end_ps - i.start_ps;
  return sum;
}

// Time both disjoint, time-ordered lists cover.
uint64_t overlap_ps(const std::vector<model::ActiveInterval>& a, const std::vector<model::ActiveInterval>& b) {
  uint64_t sum = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const uint64_t from = std::max(a[i].start_ps, b[j].start_ps);
    const uint64_t to = std::min(a[i].end_ps, b[j].end_ps);
    if (to > from) sum += to - from;
    (a[i].end_ps < b[j].end_ps ? i : j)++;
  }
  return sum;
}

}  // namespace

json time_breakdown_json(const Platform& platform, const LayerWindow& layer) {
  const uint64_t from = layer.start.value(), to = std::max<uint64_t>(layer.end.value(), from);
  const double window_us = static_cast<double>(to - from) / 1e6;
  struct Breakdown {
    double comm_only_us = 0.0, compute_only_us = 0.0, overlap_us = 0.0, idle_us = 0.0;
  };
  auto as_json = [](const Breakdown& b) {
    return json{{"comm_only_us", b.comm_only_us}, {"compute_only_us", b.compute_only_us},
                {"overlap_us", b.overlap_us}, {"idle_us", b.idle_us}};
  };
  Breakdown critical, mean;
  uint32_t critical_gpu = 0;
  const uint32_t gpus = platform.gpu_count();
  for (uint32_t g = 0; g < gpus; ++g) {
    const model::Gpu& gpu = platform.gpu(g);
    const auto comm = clipped(platform.link_activity(g).intervals(), from, to);
    const auto compute = clipped(compute_union(gpu), from, to);
    const double both = static_cast<double>(overlap_ps(comm, compute)) / 1e6;
    Breakdown b;
    b.overlap_us = both;
    b.comm_only_us = static_cast<double>(total_ps(comm)) / 1e6 - both;
    b.compute_only_us = static_cast<double>(total_ps(compute)) / 1e6 - both;
    b.idle_us = std::max(0.0, window_us - b.comm_only_us - b.compute_only_us - both);
    mean.comm_only_us += b.comm_only_us / gpus;
    mean.compute_only_us += b.compute_only_us / gpus;
    mean.overlap_us += b.overlap_us / gpus;
    mean.idle_us += b.idle_us / gpus;
    if (g == 0 || gpu.finish_time() > platform.gpu(critical_gpu).finish_time()) {
      critical = b;
      critical_gpu = g;
    }
  }
  json result = as_json(critical);
  result["gpu"] = critical_gpu;
  result["mean"] = as_json(mean);
  return result;
}

json checks_json(const fw::MoeCheckResult& checks, const fw::ReplicationCheck& replication_checks,
                 const std::string& stuck, bool passed) {
  return {{"token_copies_expected", checks.token_copies_expected},
          {"token_copies_delivered", checks.token_copies_delivered},
          {"remote_token_copies", checks.remote_token_copies},
          {"tokens_checked", checks.tokens_checked},
          {"combine_errors", checks.combine_errors},
          {"receive_count_errors", checks.receive_count_errors},
          {"violations", checks.violations},
          {"weight_chunks_expected", replication_checks.chunks_expected},
          {"weight_chunks_landed", replication_checks.chunks_landed},
          {"weight_violations", replication_checks.violations},
          {"stuck", stuck.empty() ? json(nullptr) : json(stuck)},
          {"passed", passed}};
}

}  // namespace nvsvp::platform
