// Collect, statistics: what waited where in the fabric over one scheme's layer (stats_<scheme>.csv,
// latency_<scheme>.csv, occupancy_<scheme>.csv and the result's `statistics` section). The
// quantities are defined in docs/models/nvlink_port.md, switch_chip.md and gpu.md ("Statistics").
#include <algorithm>
#include <string>

#include "nvsvp/platform/scheme_collect.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

constexpr model::TrafficClass kClasses[] = {model::TrafficClass::request, model::TrafficClass::response};

double ps_to_ns(double ps) { return ps / 1e3; }
double ps_to_us(double ps) { return ps / 1e6; }

// The mean, the worst and where it is of one figure over the switch ports.
struct PortFigure {
  double sum = 0.0;
  double worst = -1.0;
  uint32_t worst_chip = 0;
  uint32_t worst_port = 0;
  uint64_t ports = 0;

  void add(double value, uint32_t chip, uint32_t port) {
    sum += value;
    ++ports;
    if (value > worst) {
      worst = value;
      worst_chip = chip;
      worst_port = port;
    }
  }
  json to_json() const {
    if (ports == 0) return nullptr;
    return {{"mean", sum / static_cast<double>(ports)},
            {"worst", worst},
            {"worst_at", "switch " + std::to_string(worst_chip) + " port " + std::to_string(worst_port)}};
  }
};

}  // namespace

std::vector<HopStatistics> hop_statistics(const Platform& platform, const LayerWindow& layer) {
  std::vector<HopStatistics> hops;
  const uint64_t from_ps = layer.start.value();
  const uint64_t until_ps = layer.end.value();
  for (const LinkDirection direction : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    const bool up = direction == LinkDirection::gpu_to_switch;
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
        const model::NvlinkPort& port = platform.link(direction, g, l);
        const model::HopStats& s = port.hop_stats();
        const LinkEnd end = platform.link_end(g, l);
        const model::SwitchChip& chip = platform.chip(end.chip);
        for (const model::TrafficClass c : kClasses) {
          const auto ci = static_cast<size_t>(c);
          HopStatistics& row = hops.emplace_back();
          row.gpu_to_switch = up;
          row.gpu = g;
          row.link = l;
          row.chip = end.chip;
          row.port = end.port;
          row.traffic_class = static_cast<uint32_t>(c);
          row.messages = port.stats().messages[ci];
          row.packets = port.stats().packets[ci];
          row.sends = s.sends[ci];
          row.wire_flits = s.flits[ci];
          row.queueing_mean_ns =
              row.sends > 0 ? ps_to_ns(static_cast<double>(s.queueing_ps[ci]) / static_cast<double>(row.sends)) : 0.0;
          row.queueing_max_ns = ps_to_ns(static_cast<double>(s.max_queueing_ps[ci]));
          row.credit_stall_us = ps_to_us(static_cast<double>(s.credit_stall_ps[ci]));
          if (up) {
            const model::OccupancyStatistics& buffer = chip.input_occupancy(end.port, c);
            row.input_buffer_mean_flits = buffer.mean(from_ps, until_ps);
            row.input_buffer_max_flits = buffer.max();
          } else {
            row.arbitration_wait_us = ps_to_us(static_cast<double>(chip.arbitration_wait_ps(end.port, c)));
          }
        }
      }
    }
  }
  return hops;
}

std::vector<LatencyBin> latency_bins(const Platform& platform) {
  std::vector<LatencyBin> rows;
  const model::MessageLatencies& latencies = platform.message_latencies();
  for (int op = 0; op < model::kOpcodes; ++op) {
    const std::vector<uint64_t>& bins = latencies.by_opcode[op].bins();
    for (size_t b = 0; b < bins.size(); ++b) {
      if (bins[b] == 0) continue;
      rows.push_back({static_cast<uint32_t>(op), model::LatencyHistogram::bin_start(b),
                      model::LatencyHistogram::bin_end(b), bins[b]});
    }
  }
  return rows;
}

namespace {

// Latency percentiles per message kind with messages.
json latency_json(const model::MessageLatencies& latencies) {
  json latency = json::object();
  auto ns = [](uint64_t ps) { return ps_to_ns(static_cast<double>(ps)); };
  for (int op = 0; op < model::kOpcodes; ++op) {
    const model::LatencyHistogram& h = latencies.by_opcode[op];
    if (h.count() == 0) continue;
    latency[model::to_string(static_cast<model::Opcode>(op))] = {
        {"messages", h.count()},         {"mean", ps_to_ns(h.mean())},    {"p50", ns(h.percentile(0.50))},
        {"p90", ns(h.percentile(0.90))}, {"p99", ns(h.percentile(0.99))}, {"max", ns(h.max())}};
  }
  return latency;
}

// Per direction and VC class over all links: messages, mean and worst queueing delay, credit
// stall and (switch_to_gpu) arbitration wait summed.
json hops_json(const std::vector<HopStatistics>& hops) {
  json by_direction = json::object();
  for (const bool up : {true, false}) {
    json& direction = by_direction[up ? "gpu_to_switch" : "switch_to_gpu"];
    for (const model::TrafficClass c : kClasses) {
      uint64_t messages = 0, packets = 0, sends = 0;
      double queueing_ns = 0.0, queueing_max_ns = 0.0, stall_us = 0.0, arbitration_us = 0.0;
      for (const HopStatistics& h : hops) {
        if (h.gpu_to_switch != up || h.traffic_class != static_cast<uint32_t>(c)) continue;
        messages += h.messages;
        packets += h.packets;
        sends += h.sends;
        queueing_ns += h.queueing_mean_ns * static_cast<double>(h.sends);
        queueing_max_ns = std::max(queueing_max_ns, h.queueing_max_ns);
        stall_us += h.credit_stall_us;
        arbitration_us += h.arbitration_wait_us;
      }
      json& figures = direction[model::to_string(c)];
      figures = {{"messages", messages},
                 {"packets", packets},
                 {"queueing_mean_ns", sends > 0 ? queueing_ns / static_cast<double>(sends) : 0.0},
                 {"queueing_max_ns", queueing_max_ns},
                 {"credit_stall_us", stall_us}};
      if (!up) figures["arbitration_wait_us"] = arbitration_us;
    }
  }
  return by_direction;
}

// Per switch port (both classes together): its input buffers (the gpu_to_switch rows) and its
// output (the switch_to_gpu rows); hop_statistics gives a link's request row, then its response row.
json switch_ports_json(const std::vector<HopStatistics>& hops) {
  PortFigure buffer_mean, buffer_max, arbitration, stall, queueing;
  for (size_t i = 0; i + 1 < hops.size(); i += 2) {
    const HopStatistics& request = hops[i];
    const HopStatistics& response = hops[i + 1];
    if (request.gpu_to_switch) {
      buffer_mean.add(request.input_buffer_mean_flits + response.input_buffer_mean_flits, request.chip, request.port);
      buffer_max.add(static_cast<double>(std::max(request.input_buffer_max_flits, response.input_buffer_max_flits)),
                     request.chip, request.port);
      continue;
    }
    arbitration.add(request.arbitration_wait_us + response.arbitration_wait_us, request.chip, request.port);
    stall.add(request.credit_stall_us + response.credit_stall_us, request.chip, request.port);
    const uint64_t sends = request.sends + response.sends;
    const double queueing_ns = request.queueing_mean_ns * static_cast<double>(request.sends) +
                               response.queueing_mean_ns * static_cast<double>(response.sends);
    queueing.add(sends > 0 ? queueing_ns / static_cast<double>(sends) : 0.0, request.chip, request.port);
  }
  return {{"input_buffer_mean_flits", buffer_mean.to_json()},
          {"input_buffer_max_flits", buffer_max.to_json()},
          {"output_queueing_mean_ns", queueing.to_json()},
          {"output_credit_stall_us", stall.to_json()},
          {"output_arbitration_wait_us", arbitration.to_json()}};
}

// The reduction buffers, per chip all ports together.
json reduction_json(const Platform& platform, const LayerWindow& layer) {
  json chips = json::array();
  uint64_t evictions = 0, evicted_reductions = 0, evicted_bytes = 0, peak_port = 0, peak_chip = 0;
  for (uint32_t c = 0; c < platform.switch_count(); ++c) {
    const model::SwitchChip& chip = platform.chip(c);
    const model::SwitchStats s = chip.stats();
    const model::OccupancyStatistics& buffer = chip.reduction_occupancy();
    evictions += s.evictions;
    evicted_reductions += s.evicted_reductions;
    evicted_bytes += s.evicted_partial_bytes;
    peak_port = std::max(peak_port, s.peak_reduction_buffer_bytes);
    peak_chip = std::max(peak_chip, buffer.max());
    chips.push_back({{"mean_bytes", buffer.mean(layer.start.value(), layer.end.value())},
                     {"max_bytes", buffer.max()},
                     {"evictions", s.evictions}});
  }
  return {{"per_chip", chips},
          {"max_chip_bytes", peak_chip},
          {"max_port_bytes", peak_port},
          {"evictions", evictions},
          {"evicted_reductions", evicted_reductions},
          {"evicted_partial_bytes", evicted_bytes}};
}

}  // namespace

json statistics_json(const Platform& platform, const std::vector<HopStatistics>& hops, const LayerWindow& layer) {
  return {{"latency_ns", latency_json(platform.message_latencies())},
          {"latency_bins", "log-linear: 64 bins per power of two of picoseconds (a bin at most 1.6 % of its "
                           "start wide); a percentile is the last value of its bin, clamped to the maximum"},
          {"hops", hops_json(hops)},
          {"switch_ports", switch_ports_json(hops)},
          {"reduction_buffer", reduction_json(platform, layer)}};
}

void add_occupancy(const Platform& platform, uint64_t bin_ps, const LayerWindow& layer, Timeline& timeline) {
  const uint64_t first_bin = layer.start.value() / bin_ps;
  const uint64_t until_ps = layer.end.value();
  const uint32_t chips = platform.switch_count();
  timeline.chips = chips;
  for (auto* series : {&timeline.input_mean_flits, &timeline.input_max_flits, &timeline.reduction_mean_bytes,
                       &timeline.reduction_max_bytes}) {
    series->assign(timeline.bins * chips, 0.0);
  }
  for (uint32_t c = 0; c < chips; ++c) {
    const model::OccupancyTimeline* inputs = platform.input_occupancy_timeline(c);
    const model::OccupancyTimeline* reduction = platform.reduction_occupancy_timeline(c);
    if (inputs == nullptr || reduction == nullptr) continue;
    for (uint64_t b = 0; b < timeline.bins; ++b) {
      const size_t bin = first_bin + b;
      const size_t i = b * chips + c;
      timeline.input_mean_flits[i] = inputs->mean(bin, until_ps);
      timeline.input_max_flits[i] = static_cast<double>(inputs->max(bin, until_ps));
      timeline.reduction_mean_bytes[i] = reduction->mean(bin, until_ps);
      timeline.reduction_max_bytes[i] = static_cast<double>(reduction->max(bin, until_ps));
    }
  }
}

}  // namespace nvsvp::platform
