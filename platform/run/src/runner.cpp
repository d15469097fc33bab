// One scheme's run as named steps (elaborate, firmware script, simulate, collect) of a job planned
// before it (scheme_job.hpp), and a scheme's run as a scenario configures it (a degree search).
// The child process each scheme runs in is scheme_process.cpp's; collect's pieces are in
// link_statistics.cpp and scheme_result.cpp.
#include "nvsvp/platform/runner.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <sstream>

#include "nvsvp/fw/layer_bring_up.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/fw/replication_phase.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/fw/switch_bringup.hpp"
#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/scheme_collect.hpp"
#include "nvsvp/platform/text.hpp"
#include "nvsvp/platform/tlm_hal.hpp"
#include "layer_parts.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

// What the firmware thread records for collect.
struct FirmwareRecord {
  sc_core::sc_time layer_start;
  sc_core::sc_time layer_end;
  std::vector<sc_core::sc_time> part_end;  // per layer part (partition): when its last GPU finished
  sc_core::sc_time replication_end;
  std::vector<uint64_t> broadcast_bytes_sent;  // per GPU: what its links sent in the replication phase
  std::string bring_up_error;                  // empty when the switch came up
  std::string firmware_error;                  // empty unless the runtime service gave up
};

// One scheme's run. Call its steps once each, in order: elaborate, simulate, collect (the
// firmware script runs in the firmware thread during simulate). One per process.
class SchemeSimulation {
 public:
  // Takes the job's plans: the firmware submits their work (moves it out).
  SchemeSimulation(SchemeJob job, bool with_timeline, const Observability& observe)
      : wall_start_(Clock::now()),
        machine_(std::move(job.machine)),
        scheme_(std::move(job.scheme)),
        parts_(std::move(*job.parts)),
        plan_seconds_(job.plan_seconds),
        with_timeline_(with_timeline),
        observe_(observe) {}

  // The platform, the HAL over it and the firmware thread. The modules live as long as the
  // process (SystemC elaborates once per process, and modules are not destroyed while the kernel
  // knows them); leaving them to the process's end also spares tearing down hundreds of MB of
  // model state. The firmware thread never runs after the run is over: the simulation is over by
  // then.
  void elaborate() {
    platform_ = new Platform("platform", machine_->platform);
    timeline_bin_ps_ = static_cast<uint64_t>(std::llround(machine_->simulation.timeline_bin_us * 1e6));
    if (with_timeline_) platform_->record_link_timelines(timeline_bin_ps_);
    hal_.emplace(*platform_);
    part_hals_.emplace(*hal_, parts_, !machine_->partitions.empty());
    fabric_.emplace(*hal_);
    record_.broadcast_bytes_sent.assign(platform_->gpu_count(), 0);
    host_ = new FirmwareHost("firmware", [this] { firmware_script(); });
    // Only the components the patterns name get a level or an observer: nothing else is touched.
    configure_logs(*platform_, *hal_, observe_.logs);
    if (!observe_.traces.empty()) {
      trace_.emplace(*platform_, observe_.traces, observe_.trace_dir,
                     observe_.file_label.empty() ? scheme_ : observe_.file_label);
    }
  }

  // Runs the kernel until nothing is left to do or the time limit. A switch that did not come up
  // is an error (the run has no result). With `simulated_ps`, in slices, storing the time reached
  // after each: the kernel runs the same events in the same order, paused between slices.
  void simulate(std::atomic<uint64_t>* simulated_ps) {
    const sc_core::sc_time limit(machine_->simulation.max_time_us, sc_core::SC_US);
    const auto start = Clock::now();
    if (simulated_ps == nullptr) {
      sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);
    } else {
      simulate_in_slices(limit, *simulated_ps);
    }
    simulate_seconds_ = seconds_since(start);
    if (trace_) trace_->close();  // the child process ends with _exit: nothing flushes a file then
    if (!record_.bring_up_error.empty()) throw std::runtime_error("switch bring-up failed: " + record_.bring_up_error);
    if (!record_.firmware_error.empty()) {
      throw std::runtime_error("firmware stopped the layer at " + fixed(to_us(sc_core::sc_time_stamp()), 3) +
                               " us: " + record_.firmware_error);
    }
  }

  // The checks, then the statistics and (when asked for) the timeline. `inspect` (tests) sees the
  // platform after the checks.
  SchemeRun collect(const std::function<void(Platform&)>& inspect);

 private:
  // sc_start in slices of kProgressSliceUs, each reaching at least the next pending event (a slice
  // that ends before it returns without moving the time, under SC_EXIT_ON_STARVATION), the last
  // ending at `limit` as the single sc_start would; none once the next event lies past `limit`
  // (the single sc_start stops before it too, and an empty one would only print a warning).
  static void simulate_in_slices(const sc_core::sc_time& limit, std::atomic<uint64_t>& simulated_ps) {
    const sc_core::sc_time slice(kProgressSliceUs, sc_core::SC_US);
    const sc_core::sc_time one_tick = sc_core::sc_get_time_resolution();
    for (bool started = false;; started = true) {
      const sc_core::sc_time now = sc_core::sc_time_stamp();
      sc_core::sc_time until = now + slice;
      if (started) {  // before the first sc_start, nothing is scheduled yet
        if (now + sc_core::sc_time_to_pending_activity() > limit) return;
        until = std::max(until, now + sc_core::sc_time_to_pending_activity() + one_tick);
      }
      const bool last = until >= limit;
      sc_core::sc_start((last ? limit : until) - now, sc_core::SC_EXIT_ON_STARVATION);
      simulated_ps.store(sc_core::sc_time_stamp().value(), std::memory_order_relaxed);
      if (last || !sc_core::sc_pending_activity() || sc_core::sc_get_status() == sc_core::SC_STOPPED) return;
    }
  }

  // What the firmware thread does. The switch is brought up through firmware and registers
  // before the layer; the layer is timed from its own start, so register access time never shows
  // in the layer's figures.
  void firmware_script() {
    try {
      bring_up_fabric();
    } catch (const std::exception& e) {
      record_.bring_up_error = e.what();
      return;
    }
    record_.layer_start = sc_core::sc_time_stamp();
    platform_->inject_faults(machine_->faults, record_.layer_start);
    for (size_t p = 0; p < parts_.size(); ++p) fw::load_inputs((*part_hals_)[p], parts_[p].plan);
    if (replicating()) run_replication_phase();
    // Every partition's layer starts at once; then the runtime service loop: switch interrupts
    // raised while the layers run (link errors among them) are serviced as they come, in the
    // firmware thread, beside the GPUs' work.
    for (size_t p = 0; p < parts_.size(); ++p) fw::submit_layer((*part_hals_)[p], parts_[p].plan);
    try {
      fw::wait_servicing_interrupts(*hal_, [this] { fabric_->service_interrupts(); });
    } catch (const std::exception& e) {
      // Firmware gave up (a GPU with no link left, say): the run ends here, with its reason.
      record_.firmware_error = e.what();
      sc_core::sc_stop();
      return;
    }
    // A layer ends when its last GPU does, not when the firmware, perhaps still in a service
    // when that happened, gets back.
    record_.part_end.assign(parts_.size(), sc_core::SC_ZERO_TIME);
    for (size_t p = 0; p < parts_.size(); ++p) {
      for (uint32_t g : parts_[p].gpus) record_.part_end[p] = std::max(record_.part_end[p], platform_->gpu(g).finish_time());
    }
    record_.layer_end = *std::max_element(record_.part_end.begin(), record_.part_end.end());
    fabric_->service_interrupts();  // errors raised as the layer ended, for the report
  }

  void bring_up_fabric() {
    part_hals_->bring_up(*fabric_, platform_->fabric_topology(), parts_, machine_->partitions);
  }

  bool replicating() const {
    return std::any_of(parts_.begin(), parts_.end(), [](const LayerPart& part) { return !part.replication.empty(); });
  }

  // Shared experts and hot-expert broadcasts, before the layer's dispatch (every partition's at once).
  void run_replication_phase() {
    for (size_t p = 0; p < parts_.size(); ++p) {
      fw::load_expert_weights((*part_hals_)[p], parts_[p].replication, *parts_[p].layer);
    }
    for (size_t p = 0; p < parts_.size(); ++p) fw::submit_replication_phase((*part_hals_)[p], parts_[p].replication);
    hal_->wait_all_finished();
    record_.replication_end = sc_core::sc_time_stamp();
    // Nothing else has used the links yet: what each GPU sent so far is its broadcasts.
    for (uint32_t g = 0; g < platform_->gpu_count(); ++g) {
      for (uint32_t l = 0; l < platform_->links_per_gpu(); ++l) {
        record_.broadcast_bytes_sent[g] += platform_->link(LinkDirection::gpu_to_switch, g, l).stats().payload_bytes;
      }
    }
  }

  // What is left undone and why the simulation stopped; empty when the layer finished cleanly.
  std::string stuck_report() const {
    std::ostringstream stuck;
    const uint64_t outstanding = platform_->describe_outstanding(stuck);
    if (host_->done() && outstanding == 0) return "";
    std::ostringstream os;
    if (sc_core::sc_pending_activity()) {
      os << "simulated-time limit of " << machine_->simulation.max_time_us << " us reached with work outstanding:\n";
    } else {
      os << "simulation ended at " << to_us(sc_core::sc_time_stamp())
         << " us with work outstanding (nothing left that could make progress):\n";
    }
    os << stuck.str();
    return os.str();
  }

  // The host's view of the run: the wall time of its steps, the transactions, the memory.
  json sim_json(double verify_seconds, uint64_t transactions, uint64_t remote_token_copies) const {
    const double wall = plan_seconds_ + seconds_since(wall_start_);  // the scheme's run, its plans included
    return {{"wall_seconds", wall},
            {"plan_seconds", plan_seconds_},  // the plans' making, before this process
            {"simulate_seconds", simulate_seconds_},
            {"verify_seconds", verify_seconds},
            {"transactions", transactions},
            {"simulated_us", to_us(sc_core::sc_time_stamp())},
            {"peak_rss_mb", peak_rss_mb()},
            {"remote_token_copies_per_wall_second", wall > 0 ? remote_token_copies / wall : 0.0}};
  }

  const Clock::time_point wall_start_;
  const std::shared_ptr<const MachineSetup> machine_;
  const std::string scheme_;
  std::vector<LayerPart> parts_;  // one, or one per partition
  const double plan_seconds_;
  const bool with_timeline_;
  const Observability& observe_;
  std::optional<ComponentTrace> trace_;
  double simulate_seconds_ = 0.0;
  uint64_t timeline_bin_ps_ = 0;
  Platform* platform_ = nullptr;
  std::optional<TlmHal> hal_;
  std::optional<LayerPartHals> part_hals_;
  std::optional<fw::SwitchFabric> fabric_;
  FirmwareHost* host_ = nullptr;
  FirmwareRecord record_;
};

// The checks of every part as one: counts summed, each violation prefixed with its partition
// when there are several.
fw::MoeCheckResult merged_checks(const std::vector<fw::MoeCheckResult>& parts) {
  if (parts.size() == 1) return parts[0];
  fw::MoeCheckResult all;
  for (size_t p = 0; p < parts.size(); ++p) {
    const fw::MoeCheckResult& c = parts[p];
    all.token_copies_expected += c.token_copies_expected;
    all.token_copies_delivered += c.token_copies_delivered;
    all.remote_token_copies += c.remote_token_copies;
    all.tokens_checked += c.tokens_checked;
    all.combine_errors += c.combine_errors;
    all.receive_count_errors += c.receive_count_errors;
    all.notifications_expected += c.notifications_expected;
    all.notifications_delivered += c.notifications_delivered;
    for (const std::string& v : c.violations) all.violations.push_back("partition " + std::to_string(p) + ": " + v);
  }
  return all;
}

fw::ReplicationCheck merged_checks(const std::vector<fw::ReplicationCheck>& parts) {
  if (parts.size() == 1) return parts[0];
  fw::ReplicationCheck all;
  for (size_t p = 0; p < parts.size(); ++p) {
    all.chunks_expected += parts[p].chunks_expected;
    all.chunks_landed += parts[p].chunks_landed;
    for (const std::string& v : parts[p].violations) all.violations.push_back("partition " + std::to_string(p) + ": " + v);
  }
  return all;
}

// The `plan` section: the scheme's plan figures (none: null).
json plan_figures_json(const fw::LayerPlan& plan) {
  if (plan.figures.empty()) return json();
  json figures = json::object();
  for (const auto& [name, value] : plan.figures) figures[name] = value;
  return figures;
}

// `software_delays_us`: the scheme's fixed software costs per phase (the plan's, the largest over
// the partitions), and their sum.
json software_delays_json(const std::vector<LayerPart>& parts, const std::vector<std::string>& phase_names) {
  json delays = json::object();
  double total = 0.0;
  for (size_t p = 0; p < phase_names.size(); ++p) {
    double largest = 0.0;
    for (const LayerPart& part : parts) {
      if (p < part.plan.software_delay_ns.size()) largest = std::max(largest, part.plan.software_delay_ns[p] / 1e3);
    }
    if (largest > 0.0) delays[phase_names[p]] = largest;
    total += largest;
  }
  delays["total"] = total;
  return delays;
}

SchemeRun SchemeSimulation::collect(const std::function<void(Platform&)>& inspect) {
  const auto verify_start = Clock::now();
  const std::string stuck = stuck_report();
  std::vector<fw::MoeCheckResult> part_checks;
  std::vector<fw::ReplicationCheck> part_replication_checks;
  for (size_t p = 0; p < parts_.size(); ++p) {
    part_checks.push_back(fw::verify_layer((*part_hals_)[p], parts_[p].plan));
    part_replication_checks.push_back(fw::verify_replication((*part_hals_)[p], parts_[p].replication));
  }
  const fw::MoeCheckResult checks = merged_checks(part_checks);
  const fw::ReplicationCheck replication_checks = merged_checks(part_replication_checks);
  if (inspect) inspect(*platform_);
  const double verify_seconds = seconds_since(verify_start);

  const Platform& platform = *platform_;
  const bool finished = host_->done();
  const LayerWindow layer{record_.layer_start, finished ? record_.layer_end : sc_core::sc_time_stamp()};
  DirectionTotals totals[2];
  SchemeRun run;
  run.links = link_statistics(platform, layer.seconds(), totals);
  uint64_t padding_wire_bytes = 0;
  for (const LayerPart& part : parts_) padding_wire_bytes += part.plan.padding_wire_bytes;
  for (DirectionTotals& t : totals) t.payload_bytes -= std::min(t.payload_bytes, padding_wire_bytes);  // wire, not payload
  const json phases = phases_json(platform, layer);
  const double replication_end_us = replicating() ? layer.since_start_us(record_.replication_end) : 0.0;
  bool faults_accounted = true;
  const json faults = machine_->faults.empty() ? json()
                                               : faults_json(platform, machine_->faults, *fabric_,
                                                              record_.layer_start.to_seconds() * 1e9,
                                                              layer.seconds() * 1e6, faults_accounted);
  const bool passed = checks.passed() && replication_checks.passed() && stuck.empty() && faults_accounted;
  // Per part: its load, its replication, its plan's figures, its checks and its own layer time.
  std::vector<json> part_json;
  for (size_t p = 0; p < parts_.size(); ++p) {
    const LayerPart& part = parts_[p];
    std::vector<uint64_t> broadcast_bytes;  // the part's GPUs' in its own numbering
    for (uint32_t g : part.gpus) broadcast_bytes.push_back(record_.broadcast_bytes_sent[g]);
    const sc_core::sc_time end = finished ? record_.part_end[p] : sc_core::sc_time_stamp();
    part_json.push_back(
        {{"gpus", part.gpus},
         {"layer_time_us", LayerWindow{record_.layer_start, end}.seconds() * 1e6},
         {"load", load_json(*part.layer)},
         {"replication", replication_json(*part.layer, part.replication, part_replication_checks[p], phases,
                                          replication_end_us, broadcast_bytes)},
         {"plan", plan_figures_json(part.plan)},
         {"checks", checks_json(part_checks[p], part_replication_checks[p], stuck,
                                part_checks[p].passed() && part_replication_checks[p].passed() && stuck.empty())}});
  }
  const bool partitioned = !machine_->partitions.empty();
  json& result = run.result = link_figures(totals, layer.seconds());
  result["scheme"] = scheme_;
  result["layer_time_us"] = layer.seconds() * 1e6;
  result["phases"] = phases;
  result["software_delays_us"] = software_delays_json(parts_, phase_names(platform));
  result["switch"] = switch_json(platform, *fabric_);
  result["hub"] = hub_json(platform);
  result["fusion"] = fusion_json(platform, checks);
  // Partitioned, these are each partition's (under `partitions`): null here.
  result["replication"] = partitioned ? json() : part_json[0]["replication"];
  result["load"] = partitioned ? json() : part_json[0]["load"];
  result["time_breakdown"] = time_breakdown_json(platform, layer);
  result["gpus"] = gpus_json(platform, layer);
  result["checks"] = checks_json(checks, replication_checks, stuck, passed);
  if (partitioned) result["partitions"] = part_json;
  if (!machine_->faults.empty()) {
    result["faults"] = faults;
    result["checks"]["faults_accounted"] = faults_accounted;
  }
  run.hops = hop_statistics(platform, layer);
  run.latency = latency_bins(platform);
  result["statistics"] = statistics_json(platform, run.hops, layer);
  if (!partitioned && !part_json[0]["plan"].is_null()) result["plan"] = part_json[0]["plan"];
  result["sim"] = sim_json(verify_seconds, totals[0].sends + totals[1].sends, checks.remote_token_copies);
  if (with_timeline_) {
    run.timeline = timeline_of(platform, timeline_bin_ps_, layer);
    add_occupancy(platform, timeline_bin_ps_, layer, *run.timeline);
  }
  return run;
}

}  // namespace

SchemeRun run_scheme(SchemeJob job, bool with_timeline, const std::function<void(Platform&)>& inspect,
                     const Observability& observe, std::atomic<uint64_t>* simulated_ps) {
  SchemeSimulation run(std::move(job), with_timeline, observe);
  run.elaborate();
  run.simulate(simulated_ps);
  return run.collect(inspect);
}

json simulate_scheme(const Scenario& scenario, const std::string& scheme,
                     std::shared_ptr<const fw::MoeLayerSpec> layer, const std::function<void(Platform&)>& inspect) {
  return run_scheme(plan_scheme(scenario, scheme, resolve_layer(scenario, std::move(layer))), false, inspect).result;
}

namespace {

// A scheme's progress callback: `on_progress` with the scheme's label, or none.
std::function<void(double)> progress_of(const std::function<void(const std::string&, double)>& on_progress,
                                        const std::string& label) {
  if (!on_progress) return {};
  return [on_progress, label](double simulated_us) { on_progress(label, simulated_us); };
}

// Tutel's adaptive pipelining (software.tutel_degree 0, a scheme whose traits search the degree):
// Tutel tries the degrees online and keeps the fastest; the platform plans and simulates each
// candidate, each in its own process, and reports the fastest run with every candidate's time
// under "tutel_search" (docs/decisions.md).
SchemeRun run_degree_search(const SchemeJob& job, bool timelines, const Observability& observe,
                            const std::function<void(const std::string&, double)>& on_progress) {
  const std::string& scheme = job.scheme;
  std::optional<SchemeRun> best;
  json candidates = json::array();
  double wall = 0.0;
  for (uint32_t degree : fw::tutel_degree_candidates()) {
    fw::SoftwareParams software = job.layer.layer->software;
    software.tutel_degree = degree;
    const SchemeJob candidate = plan_scheme(job.machine, scheme, with_software(job.layer, software));
    // Every candidate's traces, each in files of its own: <scheme>_degree<d>.
    Observability candidate_observe = observe;
    candidate_observe.file_label = degree_candidate_label(scheme, degree);
    SchemeRun run = run_scheme_in_child(candidate, timelines, candidate_observe,
                                        progress_of(on_progress, scheme + " (degree " + std::to_string(degree) + ")"));
    const double time = run.result.at("layer_time_us").get<double>();
    const json planned = run.result.value("plan", json::object()).value("degree", json(degree));
    wall += run.result.at("sim").at("wall_seconds").get<double>();
    candidates.push_back({{"degree", degree}, {"planned_degree", planned}, {"layer_time_us", time}});
    const bool passed = run.result.at("checks").at("passed").get<bool>();
    if (!best || (passed && time < best->result.at("layer_time_us").get<double>())) best = std::move(run);
  }
  best->result["tutel_search"] = {{"candidates", candidates}};
  best->result["sim"]["tutel_search"] = {{"wall_seconds", wall}};  // every candidate's run
  return std::move(*best);
}

}  // namespace

SchemeRun run_scheme_as_configured(const SchemeJob& job, bool timelines, const Observability& observe,
                                   const std::function<void(const std::string&, double)>& on_progress) {
  const bool search = fw::scheme_traits(job.scheme).searches_degree && job.layer.layer->software.tutel_degree == 0;
  return search ? run_degree_search(job, timelines, observe, on_progress)
                : run_scheme_in_child(job, timelines, observe, progress_of(on_progress, job.scheme));
}

}  // namespace nvsvp::platform
