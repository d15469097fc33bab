#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: one process per link or chip fault
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/register_names.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>


namespace nvsvp::platform {

Platform::Platform(const sc_core::sc_module_name& name, const PlatformSpec& spec)
    : sc_module(name),
      spec_(spec),
      links_per_gpu_(spec.links_per_gpu()),
      cabling_(platform::fabric_topology(spec)),
      chips_("switch"),
      gpus_("gpu"),
      up_("gpu_to_switch"),
      down_("switch_to_gpu"),
      register_bus_("register_bus", spec.switch_chips),
      register_logs_(spec.switch_chips) {
  chips_.init(spec.switch_chips, [&](const char* n, size_t c) {
    const auto chip = static_cast<uint32_t>(c);
    return new model::SwitchChip(n, switch_chip_params(spec, chip), chip, spec.gpu.interleave_bytes, spec.link);
  });
  gpus_.init(spec.gpus, [&](const char* n, size_t g) {
    return new model::Gpu(n, spec.gpu, spec.link, static_cast<uint32_t>(g), links_per_gpu_, pool_);
  });
  const size_t links = static_cast<size_t>(spec.gpus) * links_per_gpu_;
  up_.init(links, [&](const char* n, size_t) {
    return new model::NvlinkPort(n, spec.link, spec.switch_chip.vcs_per_class,
                                 spec.switch_chip.vc_depth_flits);
  });
  down_.init(links, [&](const char* n, size_t) {
    return new model::NvlinkPort(n, spec.link, spec.switch_chip.vcs_per_class,
                                 spec.gpu.rx_vc_depth_flits);
  });

  for (uint32_t g = 0; g < spec.gpus; ++g) {
    for (uint32_t l = 0; l < links_per_gpu_; ++l) {
      const size_t i = static_cast<size_t>(g) * links_per_gpu_ + l;
      const LinkEnd end = link_end(g, l);
      model::SwitchChip& chip = chips_[end.chip];
      gpus_[g].tx[l].bind(up_[i].in);
      up_[i].out.bind(chip.in[end.port]);
      chip.watch_input_link(end.port, up_[i]);  // the chip counts the link's errors at its port
      chip.out[end.port].bind(down_[i].in);
      down_[i].out.bind(gpus_[g].rx[l]);
    }
  }
  for (model::Gpu& gpu : gpus_) gpu.record_latency_in(&latencies_);
  for (model::SwitchChip& chip : chips_) chip.set_lost_operation_sink(&lost_operations_);
  for (uint32_t g = 0; g < spec.gpus; ++g) {
    std::vector<uint32_t> chip_of_link(links_per_gpu_);
    for (uint32_t l = 0; l < links_per_gpu_; ++l) chip_of_link[l] = link_end(g, l).chip;
    gpus_[g].set_link_chips(std::move(chip_of_link));
  }
  // Every GPU's links, both directions, record when they serialize (the time breakdown).
  activity_.resize(spec.gpus);
  for (uint32_t g = 0; g < spec.gpus; ++g) {
    for (uint32_t l = 0; l < links_per_gpu_; ++l) {
      const size_t i = static_cast<size_t>(g) * links_per_gpu_ + l;
      up_[i].record_activity_in(&activity_[g]);
      down_[i].record_activity_in(&activity_[g]);
    }
  }
  if (spec.gpu.fast_fabric) attach_fast_fabric();
  // The register blocks hang off the firmware's management bus. Route tables start empty: the
  // firmware programs them at bring-up from fabric_topology() (switch_bringup.hpp).
  for (uint32_t c = 0; c < spec.switch_chips; ++c) register_bus_[c].bind(chips_[c].csr);
}

void Platform::attach_fast_fabric() {
  fast_fabric_ = std::make_unique<model::FastFabric>("fast_fabric", spec_.link);
  for (model::SwitchChip& chip : chips_) fast_fabric_->attach_chip(chip);
  for (uint32_t g = 0; g < spec_.gpus; ++g) {
    std::vector<model::FastFabric::LinkWiring> links(links_per_gpu_);
    for (uint32_t l = 0; l < links_per_gpu_; ++l) {
      const LinkEnd end = link_end(g, l);
      const size_t i = static_cast<size_t>(g) * links_per_gpu_ + l;
      links[l] = model::FastFabric::LinkWiring{end.chip, end.port, &up_[i], &down_[i]};
    }
    fast_fabric_->attach_gpu(gpus_[g], std::move(links));
  }
}

fw::FabricTopology fabric_topology(const PlatformSpec& spec) {
  fw::FabricTopology topology;
  topology.gpus = spec.gpus;
  topology.switch_chips = spec.switch_chips;
  for (uint32_t g = 0; g < spec.gpus; ++g) {
    uint32_t gpu_link = 0;  // chips take consecutive links of every GPU
    for (uint32_t c = 0; c < spec.switch_chips; ++c) {
      for (uint32_t s = 0; s < spec.links_per_chip[c]; ++s, ++gpu_link) {
        topology.cables.push_back(
            fw::SwitchCable{g, c, static_cast<uint16_t>(g * spec.links_per_chip[c] + s), gpu_link});
      }
    }
  }
  return topology;
}

model::SwitchParams switch_chip_params(const PlatformSpec& spec, uint32_t chip) {
  model::SwitchParams params = spec.switch_chip;
  params.ports = spec.gpus * spec.links_per_chip[chip];
  return params;
}

fw::FabricTopology Platform::fabric_topology() const { return cabling_; }

void Platform::inject_faults(const std::vector<FaultSpec>& faults, const sc_core::sc_time& layer_start) {
  const uint64_t links = static_cast<uint64_t>(spec_.gpus) * links_per_gpu_;
  for (const FaultSpec& fault : faults) {
    if (fault.kind == "link_down") {
      schedule_link_down(fault, layer_start);
      continue;
    }
    if (fault.kind == "chip_down") {
      schedule_chip_down(fault, layer_start);
      continue;
    }
    for (const LinkDirection direction : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
      const bool hit = fault.direction == "both" ||
                       (fault.direction == "to_switch") == (direction == LinkDirection::gpu_to_switch);
      if (!hit) continue;
      for (uint32_t g = 0; g < spec_.gpus; ++g) {
        if (fault.gpu && *fault.gpu != g) continue;
        for (uint32_t l = 0; l < links_per_gpu_; ++l) {
          if (fault.link && *fault.link != l) continue;
          model::NvlinkPort& port = link(direction, g, l);
          if (fault.kind == "bit_errors") {
            // A stream per link direction: the same seed on another link draws other numbers.
            const uint64_t index = (direction == LinkDirection::gpu_to_switch ? 0 : links) + g * links_per_gpu_ + l;
            port.set_bit_error_rate(fault.rate_per_flit, fault.seed ^ (index * 0x9E3779B97F4A7C15ull));
          } else {
            port.schedule_credit_loss(layer_start + sc_core::sc_time(fault.at_us, sc_core::SC_US), fault.credits);
          }
        }
      }
    }
  }
}

void Platform::schedule_link_down(const FaultSpec& fault, const sc_core::sc_time& layer_start) {
  const uint32_t g = *fault.gpu;
  const uint32_t l = *fault.link;
  const sc_core::sc_time down = layer_start + sc_core::sc_time(fault.at_us, sc_core::SC_US);
  const sc_core::sc_time up =
      fault.up_at_us ? layer_start + sc_core::sc_time(*fault.up_at_us, sc_core::SC_US) : model::never();
  std::vector<model::NvlinkPort*> ports;
  for (const LinkDirection direction : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    if (fault.direction == "both" || (fault.direction == "to_switch") == (direction == LinkDirection::gpu_to_switch)) {
      ports.push_back(&link(direction, g, l));
      ports.back()->schedule_down(down, up);
    }
  }
  const LinkEnd end = link_end(g, l);
  // The ports know the window in advance (a sender never starts what the link cannot finish);
  // the chip and the GPU hear of the change when it happens.
  sc_core::sc_spawn_options options;
  sc_core::sc_spawn(
      [this, g, l, end, down, up, ports] {
        sc_core::wait(down - sc_core::sc_time_stamp());
        chips_[end.chip].set_port_link_down(end.port, true);
        gpus_[g].set_link_down(l, true);
        if (up == model::never()) return;
        sc_core::wait(up - sc_core::sc_time_stamp());
        for (model::NvlinkPort* port : ports) port->went_up();
        chips_[end.chip].set_port_link_down(end.port, false);
        gpus_[g].set_link_down(l, false);
      },
      sc_core::sc_gen_unique_name("link_down"), &options);
}

void Platform::schedule_chip_down(const FaultSpec& fault, const sc_core::sc_time& layer_start) {
  const uint32_t c = *fault.chip;
  const sc_core::sc_time down = layer_start + sc_core::sc_time(fault.at_us, sc_core::SC_US);
  std::vector<std::pair<uint32_t, uint32_t>> links;  // (gpu, link) of every link to the chip
  for (uint32_t g = 0; g < spec_.gpus; ++g) {
    for (uint32_t l = 0; l < links_per_gpu_; ++l) {
      if (link_end(g, l).chip != c) continue;
      links.emplace_back(g, l);
      link(LinkDirection::gpu_to_switch, g, l).schedule_down(down, model::never());
      link(LinkDirection::switch_to_gpu, g, l).schedule_down(down, model::never());
    }
  }
  sc_core::sc_spawn_options options;
  sc_core::sc_spawn(
      [this, c, down, links] {
        sc_core::wait(down - sc_core::sc_time_stamp());
        chips_[c].fail();
        for (const auto& [g, l] : links) gpus_[g].set_link_down(l, true);
      },
      sc_core::sc_gen_unique_name("chip_down"), &options);
}

void Platform::LostOperations::message_lost(tlm::tlm_generic_payload& message) {
  const model::NvlinkExtension& ext = model::extension_of(message);
  model::TxItem item;
  item.payload = &message;
  item.opcode = ext.opcode;
  item.peer = ext.target_gpu;
  item.counter = ext.counter;
  item.wire_flits = ext.wire_flits;
  item.target_address = ext.target_address;
  item.bytes = ext.payload_bytes;
  message.acquire();  // the item's reference, which launch (or a drop) gives back
  platform_.gpus_[ext.source_gpu].link_engines().hold_lost(ext.traffic_class, item);
}

void Platform::LostOperations::load_lost(tlm::tlm_generic_payload& request, const hw::GpuMask& members_read) {
  const model::NvlinkExtension& ext = model::extension_of(request);
  platform_.void_member_reads_.resize(platform_.spec_.gpus, 0);
  for (uint32_t gpu : members_read) platform_.void_member_reads_.at(gpu)++;
  model::Gpu& issuer = platform_.gpus_[ext.source_gpu];
  model::GpuLinkEngines& engines = issuer.link_engines();
  engines.release_lost_load(ext.issuer_link, ext.read_bytes);
  issuer.discard_partials(ext.return_address);
  model::TxItem item;
  item.payload = &request;
  item.opcode = ext.opcode;
  item.peer = ext.target_gpu;
  item.counter = ext.counter;
  item.wire_flits = ext.wire_flits;
  item.source_address = ext.target_address;  // the multimem address: the link it goes on
  item.target_address = ext.return_address;
  item.bytes = ext.read_bytes;
  item.for_switch = true;
  request.acquire();
  engines.hold_lost(model::TrafficClass::request, item);
}

Platform::LossTotals Platform::loss_totals() const {
  LossTotals totals;
  for (const model::SwitchChip& chip : chips_) {
    totals.messages_lost += chip.loss_stats().messages_lost;
    totals.loads_lost += chip.loss_stats().loads_lost;
    totals.messages_dropped += chip.loss_stats().messages_dropped;
  }
  for (const model::Gpu& gpu : gpus_) {
    totals.responses_dropped += gpu.link_engines().responses_dropped();
    totals.operations_reissued += gpu.link_engines().operations_reissued();
    totals.operations_held += gpu.link_engines().lost_held();
    totals.messages_moved += gpu.link_engines().messages_moved();
  }
  return totals;
}

void Platform::register_transport(uint32_t chip, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  if (chip >= spec_.switch_chips) {
    throw std::out_of_range("register access to switch chip " + std::to_string(chip) + "; the platform has " +
                            std::to_string(spec_.switch_chips));
  }
  const sc_core::sc_time before = delay;
  register_bus_[chip]->b_transport(payload, delay);
  if (observer_ != nullptr) observer_->register_accessed(chip, payload, delay - before);
  if (register_logs_[chip].on(hw::LogLevel::debug)) {
    uint32_t data = 0;
    if (payload.get_data_length() >= 4) std::memcpy(&data, payload.get_data_ptr(), 4);
    const uint64_t offset = payload.get_address();
    NVSVP_LOG(register_logs_[chip], debug,
              (payload.get_command() == tlm::TLM_READ_COMMAND ? "read " : "write ")
                  << switch_register_name(static_cast<uint32_t>(offset)) << " (0x" << std::hex << offset << ") = 0x"
                  << data << std::dec << ": " << payload.get_response_string());
  }
}

void Platform::attach_observer(model::MessageObserver* observer) {
  observer_ = observer;
  for (model::NvlinkPort& port : up_) port.attach_observer(observer);
  for (model::NvlinkPort& port : down_) port.attach_observer(observer);
}

LinkEnd Platform::link_end(uint32_t gpu, uint32_t link) const {
  const fw::SwitchCable& cable = cabling_.cables[static_cast<size_t>(gpu) * links_per_gpu_ + link];
  return LinkEnd{cable.chip, cable.port};
}

const model::NvlinkPort& Platform::link(LinkDirection direction, uint32_t gpu, uint32_t link) const {
  const size_t i = static_cast<size_t>(gpu) * links_per_gpu_ + link;
  return direction == LinkDirection::gpu_to_switch ? up_[i] : down_[i];
}

model::NvlinkPort& Platform::link(LinkDirection direction, uint32_t gpu, uint32_t link) {
  const size_t i = static_cast<size_t>(gpu) * links_per_gpu_ + link;
  return direction == LinkDirection::gpu_to_switch ? up_[i] : down_[i];
}

void Platform::record_link_timelines(uint64_t bin_ps) {
  for (auto& per_gpu : timelines_) per_gpu.assign(spec_.gpus, model::BusyTimeline(bin_ps));
  for (uint32_t g = 0; g < spec_.gpus; ++g) {
    for (uint32_t l = 0; l < links_per_gpu_; ++l) {
      const size_t i = static_cast<size_t>(g) * links_per_gpu_ + l;
      up_[i].record_busy_in(&timelines_[0][g]);
      down_[i].record_busy_in(&timelines_[1][g]);
    }
  }
  input_occupancy_.assign(spec_.switch_chips, model::OccupancyTimeline(bin_ps));
  reduction_occupancy_.assign(spec_.switch_chips, model::OccupancyTimeline(bin_ps));
  for (uint32_t c = 0; c < spec_.switch_chips; ++c) {
    chips_[c].record_occupancy_in(&input_occupancy_[c], &reduction_occupancy_[c]);
  }
}

const model::BusyTimeline* Platform::link_timeline(LinkDirection direction, uint32_t gpu) const {
  const auto& per_gpu = timelines_[direction == LinkDirection::gpu_to_switch ? 0 : 1];
  return gpu < per_gpu.size() ? &per_gpu[gpu] : nullptr;
}

uint64_t Platform::describe_outstanding(std::ostream& os, uint64_t max_lines) const {
  auto more = [&](uint64_t shown, uint64_t total, const char* what) {
    if (total > shown) os << "  ... and " << total - shown << " more " << what << "\n";
  };
  uint64_t count = 0;
  uint64_t busy_gpus = 0;
  for (const model::Gpu& g : gpus_) {
    std::ostringstream line;
    const uint64_t items = g.describe_outstanding(line);
    if (items == 0) continue;
    if (busy_gpus++ < max_lines) os << line.str();
    count += items;
  }
  more(std::min(busy_gpus, max_lines), busy_gpus, "GPUs with work left");
  uint64_t buffered = 0;
  for (const model::SwitchChip& c : chips_) {
    const uint64_t shown = buffered < max_lines ? max_lines - buffered : 0;
    buffered += c.describe_outstanding(os, shown);
  }
  more(std::min(buffered, max_lines), buffered, "messages buffered in switches");
  count += buffered;
  if (fast_fabric_ != nullptr) {
    const uint64_t in_flight = fast_fabric_->describe_outstanding(os, max_lines);
    more(std::min(in_flight, max_lines), in_flight, "messages in the fast fabric");
    count += in_flight;
  }
  uint64_t holding = 0;
  for (const auto* ports : {&up_, &down_}) {
    for (const model::NvlinkPort& p : *ports) {
      if (p.credits_outstanding() == 0) continue;
      if (holding++ < max_lines) {
        os << "  ";
        p.describe_state(os);
        os << "\n";
      }
    }
  }
  more(std::min(holding, max_lines), holding, "links whose receiver holds credits");
  return count + holding;
}

}  // namespace nvsvp::platform
