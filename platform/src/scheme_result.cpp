// Collect, the rest of one scheme's result: the layer's phases, each GPU, the switch chips, the
// Hubs and source queues, token-centric fusion, hot-expert replication and the checks.
#include <algorithm>
#include <memory>

#include "scheme_collect.hpp"

namespace nvsvp::platform {

using nlohmann::json;

json phases_json(const Platform& platform, const LayerWindow& layer) {
  json phases = json::object();
  const std::vector<std::string>& names = platform.gpu(0).phase_names();
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
  const std::vector<std::string>& names = platform.gpu(0).phase_names();
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
    sum.evicted_partial_bytes += s.evicted_partial_bytes;
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
          {"evicted_partial_bytes", sum.evicted_partial_bytes},
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
  auto max_over_mean = [](const std::vector<double>& load) {
    double total = 0.0, most = 0.0;
    for (double l : load) total += l, most = std::max(most, l);
    return total > 0 ? most * static_cast<double>(load.size()) / total : 0.0;
  };
  const double excess_before = fw::excess_load(d->load_before);
  const double excess_after = fw::excess_load(d->load_after);
  json replicas = json::array();
  for (const fw::ReplicaPlacement& p : d->schedule.replicas) {
    const fw::FixedGroup& g = d->groups[p.group];
    replicas.push_back({{"expert", p.expert}, {"owner", p.owner}, {"group_first_gpu", g.first_gpu},
                        {"group_size", g.size}, {"slot", p.slot}, {"gpus", p.replica_gpus}});
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
  for (const fw::ReplicaPlacement& p : d->schedule.replicas) owner_gpus.push_back(p.owner);
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
          {"max_mean_before", max_over_mean(d->load_before)},
          {"max_mean_after", max_over_mean(d->load_after)},
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
