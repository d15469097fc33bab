#include "nvsvp/platform/runner.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/routing_generator.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

double peak_rss_mb(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

double to_us(const sc_core::sc_time& t) { return t.to_seconds() * 1e6; }

struct DirectionTotals {
  uint64_t wire_bytes = 0;
  uint64_t payload_bytes = 0;
  uint64_t messages = 0;
  double busy_s = 0.0;
  uint64_t links = 0;
  // The ideal time of this direction: the busiest GPU's wire time with its links as one pipe
  // (its links' serialization time summed, over the number of links), and that GPU.
  double ideal_s = 0.0;
  uint32_t ideal_gpu = 0;
};

std::vector<LinkStatistics> link_statistics(const Platform& platform, double layer_s, DirectionTotals totals[2]) {
  std::vector<LinkStatistics> links;
  for (int d = 0; d < 2; ++d) {
    const auto direction = d == 0 ? LinkDirection::gpu_to_switch : LinkDirection::switch_to_gpu;
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      double gpu_busy_s = 0.0;
      for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
        const model::NvlinkPort& port = platform.link(direction, g, l);
        const model::LinkStats& s = port.stats();
        const LinkEnd end = platform.link_end(g, l);
        const uint64_t messages = s.messages[0] + s.messages[1];
        DirectionTotals& t = totals[d];
        gpu_busy_s += s.busy_time.to_seconds();
        t.wire_bytes += s.wire_bytes;
        t.payload_bytes += s.payload_bytes;
        t.messages += messages;
        t.busy_s += s.busy_time.to_seconds();
        t.links++;
        LinkStatistics& row = links.emplace_back();
        row.gpu_to_switch = d == 0;
        row.gpu = g;
        row.link = l;
        row.chip = end.chip;
        row.port = end.port;
        row.messages = messages;
        row.wire_bytes = s.wire_bytes;
        row.payload_bytes = s.payload_bytes;
        row.busy_us = s.busy_time.to_seconds() * 1e6;
        row.utilization = layer_s > 0 ? s.busy_time.to_seconds() / layer_s : 0.0;
      }
      const double gpu_ideal_s = gpu_busy_s / platform.links_per_gpu();
      if (gpu_ideal_s > totals[d].ideal_s) {
        totals[d].ideal_s = gpu_ideal_s;
        totals[d].ideal_gpu = g;
      }
    }
  }
  return links;
}

// What the timeline files need: per GPU and direction the links' utilization per bin from the
// layer's start to its end, and every GPU's phases and compute intervals.
Timeline timeline_of(const Platform& platform, const std::vector<std::string>& phase_names, uint64_t bin_ps,
                     const sc_core::sc_time& layer_start, const sc_core::sc_time& layer_end) {
  const uint64_t first_bin = layer_start.value() / bin_ps;
  const uint64_t end_bin = (layer_end.value() + bin_ps - 1) / bin_ps;
  const double capacity_ps = static_cast<double>(bin_ps) * platform.links_per_gpu();
  Timeline timeline;
  timeline.bin_us = static_cast<double>(bin_ps) / 1e6;
  // Bins are aligned to time 0; the first one may start before the layer.
  timeline.first_bin_start_us = static_cast<double>(first_bin * bin_ps) / 1e6 - to_us(layer_start);
  timeline.gpus = platform.gpu_count();
  timeline.bins = end_bin > first_bin ? end_bin - first_bin : 0;
  for (int d = 0; d < 2; ++d) {
    const auto direction = d == 0 ? LinkDirection::gpu_to_switch : LinkDirection::switch_to_gpu;
    std::vector<double>& utilization = timeline.utilization[d];
    utilization.assign(timeline.bins * timeline.gpus, 0.0);
    for (uint32_t g = 0; g < timeline.gpus; ++g) {
      const std::vector<uint64_t>& busy = platform.link_timeline(direction, g)->busy_ps();
      for (uint64_t bin = first_bin; bin < end_bin && bin < busy.size(); ++bin) {
        utilization[(bin - first_bin) * timeline.gpus + g] = static_cast<double>(busy[bin]) / capacity_ps;
      }
    }
  }
  auto since_start_us = [&](const sc_core::sc_time& t) { return t > layer_start ? to_us(t - layer_start) : 0.0; };
  timeline.names = phase_names;
  // A compute span of a phase without a name is named by its number.
  auto name_index = [&](uint32_t phase) {
    if (phase < phase_names.size()) return phase;
    const std::string name = std::to_string(phase);
    const auto known = std::find(timeline.names.begin(), timeline.names.end(), name);
    if (known != timeline.names.end()) return static_cast<uint32_t>(known - timeline.names.begin());
    timeline.names.push_back(name);
    return static_cast<uint32_t>(timeline.names.size() - 1);
  };
  for (uint32_t g = 0; g < timeline.gpus; ++g) {
    const model::Gpu& gpu = platform.gpu(g);
    for (size_t p = 0; p < gpu.phase_times().size() && p < phase_names.size(); ++p) {
      const model::PhaseTime& t = gpu.phase_times()[p];
      if (t.seen) {
        timeline.phases.push_back({since_start_us(t.first_start), since_start_us(t.last_end), g,
                                   static_cast<uint32_t>(p), 0});
      }
    }
    for (const model::ComputeSpan& span : gpu.compute_spans()) {
      timeline.compute.push_back(
          {since_start_us(span.start), since_start_us(span.end), g, name_index(span.phase), span.stream});
    }
  }
  return timeline;
}

// The report's `replication` section: what the scheduler decided, the loads before and after,
// and what the broadcasts cost (times from the layer's start, which the replication phase opens).
json replication_report(const fw::MoeLayerSpec& layer, const fw::ReplicationPhase& phase,
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

}  // namespace

std::shared_ptr<const fw::MoeLayerSpec> make_layer_spec(const Scenario& scenario) {
  auto spec = std::make_shared<fw::MoeLayerSpec>();
  spec->software = scenario.software;
  spec->model = scenario.workload.model;
  spec->top_k = scenario.workload.top_k;
  spec->tokens_per_gpu = scenario.workload.tokens_per_gpu;
  spec->dispatch_dtype = scenario.workload.dispatch_dtype;
  spec->combine_dtype = scenario.workload.combine_dtype;
  spec->pure_communication = scenario.pure_communication;
  spec->gpu_sms = scenario.platform.gpu.sms;
  spec->shared_experts = scenario.workload.shared_experts;
  const fw::MoeRouting routing = generate_routing(scenario.workload, scenario.platform.gpus);

  // Hot-expert replication decides the copies, then the tokens go over them.
  const PlatformSpec& p = scenario.platform;
  const fw::ReplicationParams& r = scenario.replication;
  fw::BroadcastCosts costs;
  costs.link_gbps = p.link.line_rate_gbps * p.link.efficiency;
  costs.gpu_link_gbps = costs.link_gbps * p.links_per_gpu();
  costs.hop_ns = p.link.latency_ns;
  costs.sm_store_gbps = p.gpu.sm_store_gbps;
  costs.broadcast_sms = r.broadcast_sms;
  costs.chunk_bytes = r.chunk_bytes;
  // The budget: the shared experts' GEMMs on the SMs the broadcast leaves them.
  const bool sm_broadcast = fw::uses_multicast(r);
  const double sms = p.gpu.sms - (r.policy == "iser" && sm_broadcast ? std::min(r.broadcast_sms, p.gpu.sms - 1) : 0u);
  const double shared_flops = spec->shared_experts * spec->model.expert_flops_per_token() * spec->tokens_per_gpu;
  const double flops_per_ns = p.gpu.fp8_tflops * 1e3 * p.gpu.gemm_efficiency * sms / p.gpu.sms;
  const double shared_ns = spec->pure_communication ? 0.0 : shared_flops / flops_per_ns;
  // Only the static policy places from expected loads (they take sampling to estimate).
  WorkloadSpec history = scenario.workload;  // what the static placement was made from
  if (r.static_seed != 0) history.routing.seed = r.static_seed;
  const std::vector<double> expected_loads =
      r.policy == "static" ? expected_expert_loads(history, routing) : std::vector<double>{};
  auto decision = std::make_shared<fw::ReplicationDecision>();
  try {
    spec->routing = fw::decide_replication(routing, r, spec->model, expected_loads, costs, shared_ns, *decision);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(scenario.file + ": replication: " + e.what());
  }
  spec->replication = std::move(decision);
  return spec;
}

SchemeRun run_scheme(const Scenario& scenario, const std::string& scheme, std::shared_ptr<const fw::MoeLayerSpec> layer,
                     bool with_timeline, const std::function<void(Platform&)>& inspect) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  fw::LayerPlan plan = fw::build_layer(scheme, layer);
  // Shared experts and hot-expert broadcasts run before the layer's dispatch.
  fw::ReplicationPhase replication = fw::build_replication_phase(*layer, plan);
  for (size_t g = 0; g < replication.expected_link_arrivals.size(); ++g) {
    plan.expected_link_arrivals[g] += replication.expected_link_arrivals[g];
  }
  const double plan_seconds = seconds_since(wall_start);

  // The modules live as long as the process (SystemC elaborates once per process, and modules
  // are not destroyed while the kernel knows them); leaving them to the process's end also spares
  // tearing down hundreds of MB of model state. The firmware thread never runs after this
  // function returns: the simulation is over by then.
  Platform& platform = *new Platform("platform", scenario.platform);
  const auto timeline_bin_ps = static_cast<uint64_t>(std::llround(scenario.simulation.timeline_bin_us * 1e6));
  if (with_timeline) platform.record_link_timelines(timeline_bin_ps);
  TlmHal hal(platform);
  fw::SwitchFabric fabric(hal);
  // The switch is brought up through firmware and registers before the layer; the layer is timed
  // from its own start, so register access time never shows in the layer's figures.
  sc_core::sc_time layer_start, layer_end, replication_end;
  std::vector<uint64_t> broadcast_bytes_sent(platform.gpu_count(), 0);
  std::string bring_up_error;
  FirmwareHost& host = *new FirmwareHost("firmware", [&] {
    try {
      fabric.bring_up(platform.fabric_topology());
      // Static multimem schemes bind their groups once, at start-up, as a fabric manager does.
      // So do the fixed groups of hot-expert replication (iser.md).
      std::vector<fw::MulticastGroupRequest> groups = plan.multicast_groups;
      groups.insert(groups.end(), replication.multicast_groups.begin(), replication.multicast_groups.end());
      if (!groups.empty()) {
        fw::MulticastAllocator allocator(hal, fabric.report().chips);
        for (const fw::MulticastGroupRequest& g : groups) allocator.create_group(g.base, g.size, g.local_base, g.members);
      }
      // Dynamic multimem schemes bind their objects in every Hub and switch.
      fw::install_dynamic_objects(hal, plan);
    } catch (const std::exception& e) {
      bring_up_error = e.what();
      return;
    }
    layer_start = sc_core::sc_time_stamp();
    fw::load_inputs(hal, plan);
    if (!replication.empty()) {
      fw::load_expert_weights(hal, replication, *layer);
      fw::run_replication_phase(hal, replication);
      replication_end = sc_core::sc_time_stamp();
      // Nothing else has used the links yet: what each GPU sent so far is its broadcasts.
      for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
        for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
          broadcast_bytes_sent[g] += platform.link(LinkDirection::gpu_to_switch, g, l).stats().payload_bytes;
        }
      }
    }
    fw::run_layer(hal, plan);
    layer_end = sc_core::sc_time_stamp();
    fabric.service_interrupts();  // errors the layer raised, for the report
  });

  const sc_core::sc_time limit(scenario.simulation.max_time_us, sc_core::SC_US);
  const auto simulate_start = std::chrono::steady_clock::now();
  sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);
  const double simulate_seconds = seconds_since(simulate_start);
  if (!bring_up_error.empty()) throw std::runtime_error("switch bring-up failed: " + bring_up_error);
  const auto verify_start = std::chrono::steady_clock::now();

  std::ostringstream stuck;
  const uint64_t outstanding = platform.describe_outstanding(stuck);
  std::string stuck_report;
  if (!host.done() || outstanding > 0) {
    std::ostringstream os;
    if (sc_core::sc_pending_activity()) {
      os << "simulated-time limit of " << scenario.simulation.max_time_us
         << " us reached with work outstanding:\n";
    } else {
      os << "simulation ended at " << to_us(sc_core::sc_time_stamp())
         << " us with work outstanding (nothing left that could make progress):\n";
    }
    os << stuck.str();
    stuck_report = os.str();
  }

  const fw::MoeCheckResult checks = fw::verify_layer(hal, plan);
  const fw::ReplicationCheck replication_checks = fw::verify_replication(hal, replication);
  if (inspect) inspect(platform);
  const double verify_seconds = seconds_since(verify_start);
  const double layer_s = ((host.done() ? layer_end : sc_core::sc_time_stamp()) - layer_start).to_seconds();
  // Times in the result are measured from the layer's start.
  auto layer_us = [&](const sc_core::sc_time& t) { return t > layer_start ? to_us(t - layer_start) : 0.0; };

  DirectionTotals totals[2];
  std::vector<LinkStatistics> links = link_statistics(platform, layer_s, totals);
  uint64_t transactions = totals[0].messages + totals[1].messages;

  json phases = json::object();
  const auto& names = platform.gpu(0).phase_names();
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
    if (seen) phases[names[p]] = {{"start_us", layer_us(start)}, {"end_us", layer_us(end)}};
  }

  json per_gpu = json::array();
  for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
    const model::Gpu& gpu = platform.gpu(g);
    json gpu_phases = json::object();
    for (size_t p = 0; p < names.size() && p < gpu.phase_times().size(); ++p) {
      const model::PhaseTime& t = gpu.phase_times()[p];
      if (t.seen) gpu_phases[names[p]] = {{"start_us", layer_us(t.first_start)}, {"end_us", layer_us(t.last_end)}};
    }
    per_gpu.push_back({{"gpu", g},
                       {"finish_us", layer_us(gpu.finish_time())},
                       {"messages_sent", gpu.stats().messages_sent},
                       {"messages_received", gpu.stats().messages_received},
                       {"compute_us", to_us(gpu.stats().compute_time)},
                       {"phases", gpu_phases}});
  }

  const fw::FabricBringUpReport& bring_up = fabric.report();
  json switch_errors = json::array();
  for (const fw::SwitchErrorRecord& e : fabric.error_log()) switch_errors.push_back(e.describe());
  json switch_stats = {{"forwarded_requests", 0},
                       {"forwarded_responses", 0},
                       {"peak_buffered_messages", 0},
                       {"replications", 0},
                       {"reductions", 0},
                       {"evictions", 0},
                       {"access_errors", 0},
                       {"reduction_context_pool", bring_up.reduction_context_pool},
                       {"multicast_slots", bring_up.multicast_slots},
                       {"bring_up_us", bring_up.duration_ns / 1e3},
                       {"errors", switch_errors}};
  // Dynamic multimem: the destination Hubs' table-entry caches and the source queues, over GPUs.
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
  json hub_stats = {{"dispatch_translations", hub.dispatch_translations},
                    {"combine_translations", hub.combine_translations},
                    {"allocations", hub.allocations},
                    {"cache_hits", hub.cache_hits},
                    {"cache_misses", hub.cache_misses},
                    // null when no translation happened (no dynamic multimem, or explicit addressing)
                    {"cache_hit_rate", hub.cache_hits + hub.cache_misses > 0 ? json(hub.hit_rate()) : json(nullptr)},
                    {"source_queue_operations", queue_operations},
                    {"source_queue_stalls", queue_stalls},
                    {"source_queue_peak", queue_peak}};
  // Token-centric fusion: notifications and the fused kernel's tables, over GPUs (peaks: the
  // largest GPU's).
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
  json fusion_stats = {{"notifications", notifications},
                       {"notification_messages", notification_messages},
                       {"notifications_expected", checks.notifications_expected},
                       {"notifications_delivered", checks.notifications_delivered},
                       {"tile_status", tables["tile_status"]},
                       {"output_readiness", tables["output_readiness"]}};
  switch_stats["evicted_partial_bytes"] = 0;
  switch_stats["peak_reduction_buffer_bytes"] = 0;
  for (uint32_t c = 0; c < scenario.platform.switch_chips; ++c) {
    const model::SwitchStats s = platform.chip(c).stats();
    switch_stats["evicted_partial_bytes"] = switch_stats["evicted_partial_bytes"].get<uint64_t>() + s.evicted_partial_bytes;
    switch_stats["peak_reduction_buffer_bytes"] =
        std::max(switch_stats["peak_reduction_buffer_bytes"].get<uint64_t>(), s.peak_reduction_buffer_bytes);
    switch_stats["forwarded_requests"] = switch_stats["forwarded_requests"].get<uint64_t>() + s.forwarded[0];
    switch_stats["forwarded_responses"] = switch_stats["forwarded_responses"].get<uint64_t>() + s.forwarded[1];
    switch_stats["peak_buffered_messages"] =
        std::max(switch_stats["peak_buffered_messages"].get<uint64_t>(), s.peak_buffered_messages);
    // Static multimem (switch_chip.md): summed over chips.
    switch_stats["replications"] = switch_stats["replications"].get<uint64_t>() + s.replications;
    switch_stats["reductions"] = switch_stats["reductions"].get<uint64_t>() + s.reductions;
    switch_stats["evictions"] = switch_stats["evictions"].get<uint64_t>() + s.evictions;
    switch_stats["access_errors"] = switch_stats["access_errors"].get<uint64_t>() + s.access_errors;
  }

  const bool passed = checks.passed() && replication_checks.passed() && stuck_report.empty();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  auto utilization = [&](const DirectionTotals& t) {
    return (t.links > 0 && layer_s > 0) ? t.busy_s / (t.links * layer_s) : 0.0;
  };
  // Payload bytes per wire byte (headers, and for multimem the target lists, are the rest).
  auto efficiency = [](uint64_t payload, uint64_t wire) {
    return wire > 0 ? static_cast<double>(payload) / static_cast<double>(wire) : 0.0;
  };
  SchemeRun run;
  run.result = {
      {"scheme", scheme},
      {"layer_time_us", layer_s * 1e6},
      // The layer cannot beat its busiest GPU's wire time in the busier direction (traffic over
      // bandwidth, dysharp.md §4); comm_efficiency = that ideal over the layer time.
      {"ideal_comm_time_us", std::max(totals[0].ideal_s, totals[1].ideal_s) * 1e6},
      {"ideal_comm",
       {{"gpu_to_switch_us", totals[0].ideal_s * 1e6},
        {"gpu_to_switch_gpu", totals[0].ideal_gpu},
        {"switch_to_gpu_us", totals[1].ideal_s * 1e6},
        {"switch_to_gpu_gpu", totals[1].ideal_gpu}}},
      {"comm_efficiency", layer_s > 0 ? std::max(totals[0].ideal_s, totals[1].ideal_s) / layer_s : 0.0},
      {"payload_efficiency",
       {{"gpu_to_switch", efficiency(totals[0].payload_bytes, totals[0].wire_bytes)},
        {"switch_to_gpu", efficiency(totals[1].payload_bytes, totals[1].wire_bytes)},
        {"total", efficiency(totals[0].payload_bytes + totals[1].payload_bytes,
                             totals[0].wire_bytes + totals[1].wire_bytes)}}},
      {"phases", phases},
      {"traffic_bytes", {{"gpu_to_switch", totals[0].wire_bytes}, {"switch_to_gpu", totals[1].wire_bytes}}},
      {"payload_bytes", {{"gpu_to_switch", totals[0].payload_bytes}, {"switch_to_gpu", totals[1].payload_bytes}}},
      {"messages", {{"gpu_to_switch", totals[0].messages}, {"switch_to_gpu", totals[1].messages}}},
      {"utilization", {{"gpu_to_switch", utilization(totals[0])}, {"switch_to_gpu", utilization(totals[1])}}},
      {"switch", switch_stats},
      {"hub", hub_stats},
      {"fusion", fusion_stats},
      {"replication", replication_report(*layer, replication, replication_checks, phases,
                                         replication.empty() ? 0.0 : layer_us(replication_end), broadcast_bytes_sent)},
      {"gpus", per_gpu},
      {"checks",
       {{"token_copies_expected", checks.token_copies_expected},
        {"token_copies_delivered", checks.token_copies_delivered},
        {"remote_token_copies", checks.remote_token_copies},
        {"tokens_checked", checks.tokens_checked},
        {"combine_errors", checks.combine_errors},
        {"receive_count_errors", checks.receive_count_errors},
        {"violations", checks.violations},
        {"weight_chunks_expected", replication_checks.chunks_expected},
        {"weight_chunks_landed", replication_checks.chunks_landed},
        {"weight_violations", replication_checks.violations},
        {"stuck", stuck_report.empty() ? json(nullptr) : json(stuck_report)},
        {"passed", passed}}},
      {"sim",
       {{"wall_seconds", wall},
        {"plan_seconds", plan_seconds},
        {"simulate_seconds", simulate_seconds},
        {"verify_seconds", verify_seconds},
        {"transactions", transactions},
        {"simulated_us", to_us(sc_core::sc_time_stamp())},
        {"peak_rss_mb", peak_rss_mb(RUSAGE_SELF)},
        {"remote_token_copies_per_wall_second", wall > 0 ? checks.remote_token_copies / wall : 0.0}}},
  };
  run.links = std::move(links);
  if (with_timeline) {
    run.timeline = timeline_of(platform, names, timeline_bin_ps, layer_start, host.done() ? layer_end : sc_core::sc_time_stamp());
  }
  return run;
}

json simulate_scheme(const Scenario& scenario, const std::string& scheme,
                     std::shared_ptr<const fw::MoeLayerSpec> layer, const std::function<void(Platform&)>& inspect) {
  return run_scheme(scenario, scheme, std::move(layer), false, inspect).result;
}

namespace {

// What a child sends its parent through the pipe: the result as JSON text, then the links and the
// timeline as raw bytes. Parent and child are the same program, so the bytes mean the same on
// both sides, and the bulky parts are neither formatted as JSON nor parsed back.
class ResultWriter {
 public:
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  void values(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    value(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void text(const std::string& t) {
    value(t.size());
    bytes_ += t;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what ResultWriter wrote; throws std::runtime_error when the bytes end early (a child that
// died while writing).
class ResultReader {
 public:
  explicit ResultReader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T value() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  template <typename T>
  std::vector<T> values() {
    const auto size = value<size_t>();
    if (size > (bytes_.size() - at_) / sizeof(T)) throw std::runtime_error("truncated result");
    std::vector<T> v(size);
    std::memcpy(v.data(), take(size * sizeof(T)), size * sizeof(T));
    return v;
  }
  std::string text() {
    const auto size = value<size_t>();
    const char* start = take(size);
    return std::string(start, size);
  }

 private:
  const char* take(size_t size) {
    if (size > bytes_.size() - at_) throw std::runtime_error("truncated result");
    const char* start = bytes_.data() + at_;
    at_ += size;
    return start;
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

std::string encode(const SchemeRun& run) {
  ResultWriter out;
  out.text(run.result.dump());
  out.values(run.links);
  out.value(run.timeline.has_value());
  if (run.timeline) {
    const Timeline& t = *run.timeline;
    out.value(t.bin_us);
    out.value(t.first_bin_start_us);
    out.value(t.gpus);
    out.value(t.bins);
    out.values(t.utilization[0]);
    out.values(t.utilization[1]);
    out.value(t.names.size());
    for (const std::string& name : t.names) out.text(name);
    out.values(t.phases);
    out.values(t.compute);
  }
  return out.bytes();
}

SchemeRun decode(const std::string& bytes) {
  ResultReader in(bytes);
  SchemeRun run;
  run.result = json::parse(in.text());
  run.links = in.values<LinkStatistics>();
  if (in.value<bool>()) {
    Timeline& t = run.timeline.emplace();
    t.bin_us = in.value<double>();
    t.first_bin_start_us = in.value<double>();
    t.gpus = in.value<uint32_t>();
    t.bins = in.value<uint64_t>();
    t.utilization[0] = in.values<double>();
    t.utilization[1] = in.values<double>();
    t.names.resize(in.value<size_t>());
    for (std::string& name : t.names) name = in.text();
    t.phases = in.values<Timeline::Span>();
    t.compute = in.values<Timeline::Span>();
  }
  return run;
}

}  // namespace

SchemeRun run_scheme_in_child(const Scenario& scenario, const std::string& scheme,
                              const std::shared_ptr<const fw::MoeLayerSpec>& layer, bool with_timeline) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    int code = 0;
    std::string bytes;
    try {
      const SchemeRun run = run_scheme(scenario, scheme, layer, with_timeline);
      code = run.result["checks"]["passed"].get<bool>() ? 0 : 1;
      bytes = encode(run);
    } catch (const std::exception& e) {
      SchemeRun failed;
      failed.result = {{"scheme", scheme}, {"error", e.what()}};
      bytes = encode(failed);
      code = 1;
    }
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = write(fds[1], bytes.data() + written, bytes.size() - written);
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    close(fds[1]);
    exit(code);
  }
  close(fds[1]);
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  SchemeRun run;
  bool complete = false;
  if (!WIFSIGNALED(status)) {
    try {
      run = decode(bytes);
      complete = true;
    } catch (const std::exception&) {  // nothing, or part of a result: as good as none
    }
  }
  if (!complete) {
    std::ostringstream os;
    os << "the simulation process of scheme '" << scheme << "' died";
    if (WIFSIGNALED(status)) os << " (signal " << WTERMSIG(status) << ")";
    else os << " (exit code " << WEXITSTATUS(status) << ", no result)";
    SchemeRun died;
    died.result = {{"scheme", scheme}, {"error", os.str()}};
    return died;
  }
  if (run.result.contains("sim")) run.result["sim"]["peak_rss_mb"] = usage.ru_maxrss / 1024.0;
  return run;
}

int run_scenario(const Scenario& scenario, const RunOptions& options, std::ostream& console) {
  const auto wall_start = std::chrono::steady_clock::now();
  const auto layer = make_layer_spec(scenario);
  std::vector<SchemeRun> runs;
  for (const std::string& scheme : scenario.schemes) {
    runs.push_back(run_scheme_in_child(scenario, scheme, layer, options.timelines));
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const std::string out_dir = options.out_dir.empty() ? "out/" + scenario.name : options.out_dir;
  const Report report = make_report(scenario, *layer, std::move(runs), wall);
  write_report_files(report, out_dir);
  if (!options.quiet) print_summary(report, out_dir, console);
  return report.passed ? 0 : 1;
}

}  // namespace nvsvp::platform
