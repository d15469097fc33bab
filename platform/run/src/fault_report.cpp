// report.json's `faults` section of one scheme: what the scenario injected, what the links did
// about it (replays, lost and resynchronised credits), what firmware read of it from the switch
// chips' registers as it serviced their interrupts, and whether the two agree.
#include <algorithm>
#include <cmath>

#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/platform/scheme_collect.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

json injected_json(const FaultSpec& f) {
  json entry = {{"kind", f.kind}, {"direction", f.direction}};
  if (f.gpu) entry["gpu"] = *f.gpu;
  if (f.link) entry["link"] = *f.link;
  if (f.chip) entry["chip"] = *f.chip;
  if (f.kind == "bit_errors") {
    entry["rate_per_flit"] = f.rate_per_flit;
    entry["seed"] = f.seed;
  } else if (f.kind == "credit_loss") {
    entry["at_us"] = f.at_us;
    entry["credits"] = f.credits;
  } else {
    entry["at_us"] = f.at_us;
    if (f.kind == "chip_down") entry.erase("direction");
    if (f.up_at_us) entry["up_at_us"] = *f.up_at_us;
  }
  return entry;
}

// When the fault that firmware's record answers happened, us from the layer's start; negative
// when no injected fault matches.
double fault_time_of(const fw::RecoveryRecord& record, const std::vector<FaultSpec>& faults, const Platform& platform) {
  double at = -1.0;
  for (const FaultSpec& f : faults) {
    switch (record.kind) {
      case fw::RecoveryKind::link_down:
        if (f.kind == "link_down" && *f.gpu == record.gpu && *f.link == record.gpu_link) at = f.at_us;
        break;
      case fw::RecoveryKind::link_up:
        if (f.kind == "link_down" && *f.gpu == record.gpu && *f.link == record.gpu_link && f.up_at_us) at = *f.up_at_us;
        break;
      case fw::RecoveryKind::chip_down:
        if (f.kind == "chip_down" && *f.chip == record.chip) at = f.at_us;
        break;
      case fw::RecoveryKind::chip_retired:
        // The link down that left the chip without a port to a GPU: the latest of its chip's.
        if (f.kind == "link_down" && platform.link_end(*f.gpu, *f.link).chip == record.chip) at = std::max(at, f.at_us);
        break;
    }
  }
  return at;
}

// Link and chip outages: what firmware did (its recovery records, each with the time from its
// fault to the recovery) and what the chips lost and the GPUs re-issued.
json outages_json(const Platform& platform, const std::vector<FaultSpec>& faults, const fw::SwitchFabric& fabric,
                  double layer_start_ns, double layer_us, bool& accounted) {
  // Firmware's clock is in ns as a double: rounded to the picosecond, so that a record at the
  // fault's own time reads as that time.
  const auto us_since_start = [&](double ns) { return std::round((ns - layer_start_ns) * 1e3) * 1e-6; };
  json recoveries = json::array();
  for (const fw::RecoveryRecord& r : fabric.recovery_log()) {
    json entry = {{"kind", fw::recovery_kind_name(r.kind)}, {"chip", r.chip}};
    if (r.kind == fw::RecoveryKind::link_down || r.kind == fw::RecoveryKind::link_up) {
      entry["port"] = r.port;
      entry["gpu"] = r.gpu;
      entry["link"] = r.gpu_link;
    } else if (r.kind == fw::RecoveryKind::chip_retired) {
      entry["gpu"] = r.gpu;  // the GPU the chip could no longer reach
    }
    const double at = fault_time_of(r, faults, platform);
    const double recovered_us = us_since_start(r.recovered_ns);
    entry["fault_at_us"] = at >= 0.0 ? json(at) : json();
    entry["detected_us"] = us_since_start(r.detected_ns);
    entry["recovered_us"] = recovered_us;
    entry["fault_to_recovery_us"] = at >= 0.0 ? json(recovered_us - at) : json();
    entry["operations_reissued"] = r.operations_reissued;
    recoveries.push_back(entry);
  }
  // Every outage that happened within the layer must have been seen by firmware.
  bool detected = true;
  for (const FaultSpec& f : faults) {
    if ((f.kind != "link_down" && f.kind != "chip_down") || f.at_us >= layer_us) continue;
    const auto kind = f.kind == "link_down" ? fw::RecoveryKind::link_down : fw::RecoveryKind::chip_down;
    bool seen = false;
    for (const fw::RecoveryRecord& r : fabric.recovery_log()) {
      seen |= r.kind == kind && (kind == fw::RecoveryKind::chip_down ? r.chip == *f.chip
                                                                      : r.gpu == *f.gpu && r.gpu_link == *f.link);
    }
    detected &= seen;
  }
  const Platform::LossTotals loss = platform.loss_totals();
  accounted = detected && loss.messages_lost + loss.loads_lost == loss.operations_reissued && loss.operations_held == 0;
  return {
      {"recoveries", recoveries},
      {"messages_moved", loss.messages_moved},
      {"lost",
       {{"messages", loss.messages_lost},
        {"loads", loss.loads_lost},
        {"dropped_in_switch", loss.messages_dropped},
        {"responses_dropped", loss.responses_dropped}}},
      {"reissued", loss.operations_reissued},
      {"held", loss.operations_held},
      {"every_outage_detected", detected},
      {"accounted", accounted},
  };
}

}  // namespace

json faults_json(const Platform& platform, const std::vector<FaultSpec>& faults, const fw::SwitchFabric& fabric,
                 double layer_start_ns, double layer_us, bool& accounted) {
  const uint32_t flit_bytes = platform.spec().link.flit_bytes;
  model::LinkFaultStats total;
  uint64_t failed[2] = {0, 0};     // per direction: gpu_to_switch, switch_to_gpu
  uint64_t resyncs[2] = {0, 0};
  for (const LinkDirection direction : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    const size_t d = direction == LinkDirection::gpu_to_switch ? 0 : 1;
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
        const model::LinkFaultStats s = platform.link(direction, g, l).fault_stats();
        failed[d] += s.corrupted_packets;
        resyncs[d] += s.credit_resyncs;
        total += s;
      }
    }
  }
  // What firmware learnt from the chips' port counters as it serviced their interrupts: every GPU
  // link ends at one switch port, so its totals must equal the links' own counts.
  uint64_t counted[model::kPortLinkCounters] = {};
  for (uint32_t c = 0; c < platform.switch_count(); ++c) {
    for (uint32_t p = 0; p < platform.chip(c).registers().config().ports; ++p) {
      const fw::LinkErrorTotals totals = fabric.link_error_totals(c, p);
      counted[0] += totals.rx_crc_errors;
      counted[1] += totals.tx_replays;
      counted[2] += totals.rx_credit_resyncs;
      counted[3] += totals.tx_credit_resyncs;
    }
  }
  namespace regs = hw::switch_regs;
  uint64_t interrupts[2] = {0, 0};  // serviced records with link_crc, with credit_resync
  for (const fw::SwitchErrorRecord& record : fabric.error_log()) {
    if ((record.bits & regs::error_link_crc) != 0) ++interrupts[0];
    if ((record.bits & regs::error_credit_resync) != 0) ++interrupts[1];
  }
  const auto index = [](model::PortLinkCounter k) { return static_cast<size_t>(k); };
  accounted = counted[index(model::PortLinkCounter::rx_crc_errors)] == failed[0] &&
              counted[index(model::PortLinkCounter::tx_replays)] == failed[1] &&
              counted[index(model::PortLinkCounter::rx_credit_resyncs)] == resyncs[0] &&
              counted[index(model::PortLinkCounter::tx_credit_resyncs)] == resyncs[1] &&
              (failed[0] + failed[1] == 0 || interrupts[0] > 0) && (resyncs[0] + resyncs[1] == 0 || interrupts[1] > 0);

  bool outages_accounted = true;
  json outages = outages_json(platform, faults, fabric, layer_start_ns, layer_us, outages_accounted);
  const bool links_accounted = accounted;
  accounted = links_accounted && outages_accounted;

  json injected = json::array();
  for (const FaultSpec& f : faults) injected.push_back(injected_json(f));
  const double resync_count = static_cast<double>(total.credit_resyncs);
  return {
      {"injected", injected},
      {"replays",
       {{"packets", total.corrupted_packets},
        {"gpu_to_switch", failed[0]},
        {"switch_to_gpu", failed[1]},
        {"flits", total.replayed_flits},
        {"bytes", total.replayed_flits * flit_bytes},
        {"link_time_us", static_cast<double>(total.replay_time_ps) * 1e-6},
        {"mean_delay_ns", total.corrupted_packets > 0
                              ? json(static_cast<double>(total.replay_time_ps) * 1e-3 /
                                     static_cast<double>(total.corrupted_packets))
                              : json()}}},
      {"credit_loss",
       {{"losses", total.credit_losses},
        {"flits_lost", total.credit_flits_lost},
        {"resyncs", total.credit_resyncs},
        {"flits_resynchronised", total.credit_flits_resynchronised},
        {"flits_never_resynchronised", total.credit_flits_unresolved()},
        {"loss_to_resync_us",
         {{"mean", resync_count > 0 ? json(static_cast<double>(total.loss_to_resync_ps) * 1e-6 / resync_count) : json()},
          {"max", resync_count > 0 ? json(static_cast<double>(total.max_loss_to_resync_ps) * 1e-6) : json()}}}}},
      {"detected",
       {{"rx_crc_errors", counted[index(model::PortLinkCounter::rx_crc_errors)]},
        {"tx_replays", counted[index(model::PortLinkCounter::tx_replays)]},
        {"rx_credit_resyncs", counted[index(model::PortLinkCounter::rx_credit_resyncs)]},
        {"tx_credit_resyncs", counted[index(model::PortLinkCounter::tx_credit_resyncs)]},
        {"link_crc_interrupts_serviced", interrupts[0]},
        {"credit_resync_interrupts_serviced", interrupts[1]},
        {"accounted", links_accounted}}},
      {"outages", outages},
  };
}

}  // namespace nvsvp::platform
