// Collect, links and timeline: what one scheme's layer did on the links (links_<scheme>.csv and
// the result's link figures) and, when asked for, the timeline files' data.
#include <algorithm>

#include "nvsvp/platform/scheme_collect.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

LinkDirection direction_of(int d) { return d == 0 ? LinkDirection::gpu_to_switch : LinkDirection::switch_to_gpu; }

}  // namespace

std::vector<LinkStatistics> link_statistics(const Platform& platform, double layer_s, DirectionTotals totals[2]) {
  std::vector<LinkStatistics> links;
  for (int d = 0; d < 2; ++d) {
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      double gpu_busy_s = 0.0;
      for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
        const model::NvlinkPort& port = platform.link(direction_of(d), g, l);
        const model::LinkStats& s = port.stats();
        const LinkEnd end = platform.link_end(g, l);
        const uint64_t messages = s.messages[0] + s.messages[1];
        const uint64_t packets = s.packets[0] + s.packets[1];
        DirectionTotals& t = totals[d];
        gpu_busy_s += s.busy_time.to_seconds();
        t.wire_bytes += s.wire_bytes;
        t.payload_bytes += s.payload_bytes;
        t.messages += messages;
        t.packets += packets;
        t.sends += port.hop_stats().sends[0] + port.hop_stats().sends[1];
        t.busy_s += s.busy_time.to_seconds();
        t.links++;
        LinkStatistics& row = links.emplace_back();
        row.gpu_to_switch = d == 0;
        row.gpu = g;
        row.link = l;
        row.chip = end.chip;
        row.port = end.port;
        row.messages = messages;
        row.packets = packets;
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

json link_figures(const DirectionTotals totals[2], double layer_s) {
  auto utilization = [&](const DirectionTotals& t) {
    return (t.links > 0 && layer_s > 0) ? t.busy_s / (t.links * layer_s) : 0.0;
  };
  // Payload bytes per wire byte (headers, and for multimem the target lists, are the rest).
  auto efficiency = [](uint64_t payload, uint64_t wire) {
    return wire > 0 ? static_cast<double>(payload) / static_cast<double>(wire) : 0.0;
  };
  const double ideal_s = std::max(totals[0].ideal_s, totals[1].ideal_s);
  return {
      // The layer cannot beat its busiest GPU's wire time in the busier direction (traffic over
      // bandwidth); comm_efficiency = that ideal over the layer time.
      {"ideal_comm_time_us", ideal_s * 1e6},
      {"ideal_comm",
       {{"gpu_to_switch_us", totals[0].ideal_s * 1e6},
        {"gpu_to_switch_gpu", totals[0].ideal_gpu},
        {"switch_to_gpu_us", totals[1].ideal_s * 1e6},
        {"switch_to_gpu_gpu", totals[1].ideal_gpu}}},
      {"comm_efficiency", layer_s > 0 ? ideal_s / layer_s : 0.0},
      {"payload_efficiency",
       {{"gpu_to_switch", efficiency(totals[0].payload_bytes, totals[0].wire_bytes)},
        {"switch_to_gpu", efficiency(totals[1].payload_bytes, totals[1].wire_bytes)},
        {"total", efficiency(totals[0].payload_bytes + totals[1].payload_bytes,
                             totals[0].wire_bytes + totals[1].wire_bytes)}}},
      {"traffic_bytes", {{"gpu_to_switch", totals[0].wire_bytes}, {"switch_to_gpu", totals[1].wire_bytes}}},
      {"payload_bytes", {{"gpu_to_switch", totals[0].payload_bytes}, {"switch_to_gpu", totals[1].payload_bytes}}},
      {"messages", {{"gpu_to_switch", totals[0].messages}, {"switch_to_gpu", totals[1].messages}}},
      {"packets", {{"gpu_to_switch", totals[0].packets}, {"switch_to_gpu", totals[1].packets}}},
      {"utilization", {{"gpu_to_switch", utilization(totals[0])}, {"switch_to_gpu", utilization(totals[1])}}},
  };
}

Timeline timeline_of(const Platform& platform, uint64_t bin_ps, const LayerWindow& layer) {
  const std::vector<std::string>& names_of_phases = phase_names(platform);
  const uint64_t first_bin = layer.start.value() / bin_ps;
  const uint64_t end_bin = (layer.end.value() + bin_ps - 1) / bin_ps;
  const double capacity_ps = static_cast<double>(bin_ps) * platform.links_per_gpu();
  Timeline timeline;
  timeline.bin_us = static_cast<double>(bin_ps) / 1e6;
  // Bins are aligned to time 0; the first one may start before the layer.
  timeline.first_bin_start_us = static_cast<double>(first_bin * bin_ps) / 1e6 - to_us(layer.start);
  timeline.gpus = platform.gpu_count();
  timeline.bins = end_bin > first_bin ? end_bin - first_bin : 0;
  for (int d = 0; d < 2; ++d) {
    std::vector<double>& utilization = timeline.utilization[d];
    utilization.assign(timeline.bins * timeline.gpus, 0.0);
    for (uint32_t g = 0; g < timeline.gpus; ++g) {
      const std::vector<uint64_t>& busy = platform.link_timeline(direction_of(d), g)->busy_ps();
      for (uint64_t bin = first_bin; bin < end_bin && bin < busy.size(); ++bin) {
        utilization[(bin - first_bin) * timeline.gpus + g] = static_cast<double>(busy[bin]) / capacity_ps;
      }
    }
  }
  timeline.names = names_of_phases;
  // A compute span of a phase without a name is named by its number.
  auto name_index = [&](uint32_t phase) {
    if (phase < names_of_phases.size()) return phase;
    const std::string name = std::to_string(phase);
    const auto known = std::find(timeline.names.begin(), timeline.names.end(), name);
    if (known != timeline.names.end()) return static_cast<uint32_t>(known - timeline.names.begin());
    timeline.names.push_back(name);
    return static_cast<uint32_t>(timeline.names.size() - 1);
  };
  for (uint32_t g = 0; g < timeline.gpus; ++g) {
    const model::Gpu& gpu = platform.gpu(g);
    for (size_t p = 0; p < gpu.phase_times().size() && p < names_of_phases.size(); ++p) {
      const model::PhaseTime& t = gpu.phase_times()[p];
      if (t.seen) {
        timeline.phases.push_back({layer.since_start_us(t.first_start), layer.since_start_us(t.last_end), g,
                                   static_cast<uint32_t>(p), 0});
      }
    }
    for (const model::ComputeSpan& span : gpu.compute_spans()) {
      timeline.compute.push_back({layer.since_start_us(span.start), layer.since_start_us(span.end), g,
                                  name_index(span.phase), span.stream});
    }
  }
  return timeline;
}

}  // namespace nvsvp::platform
