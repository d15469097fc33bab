#include "nvsvp/platform/platform.hpp"

namespace nvsvp::platform {

Platform::Platform(const sc_core::sc_module_name& name, const PlatformSpec& spec)
    : sc_module(name),
      spec_(spec),
      links_per_gpu_(spec.links_per_gpu()),
      chips_("switch"),
      gpus_("gpu"),
      up_("gpu_to_switch"),
      down_("switch_to_gpu") {
  for (uint32_t c = 0; c < spec.switch_chips; ++c) {
    for (uint32_t s = 0; s < spec.links_per_chip[c]; ++s) {
      chip_of_link_.push_back(c);
      slot_of_link_.push_back(s);
    }
  }
  // A chip instantiates only the ports that are cabled; spec.switch_chip.ports is its capacity.
  chips_.init(spec.switch_chips, [&](const char* n, size_t c) {
    model::SwitchParams params = spec.switch_chip;
    params.ports = spec.gpus * spec.links_per_chip[c];
    return new model::SwitchChip(n, params, static_cast<uint32_t>(c), spec.gpu.interleave_bytes);
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
      chip.out[end.port].bind(down_[i].in);
      down_[i].out.bind(gpus_[g].rx[l]);
    }
  }
  // Route tables: a destination GPU is reached over all of its ports on the chip.
  for (uint32_t c = 0; c < spec.switch_chips; ++c) {
    const uint32_t per_gpu = spec.links_per_chip[c];
    for (uint32_t g = 0; g < spec.gpus; ++g) {
      std::vector<uint16_t> ports;
      for (uint32_t s = 0; s < per_gpu; ++s) ports.push_back(static_cast<uint16_t>(g * per_gpu + s));
      chips_[c].set_route(g, ports);
    }
  }
}

LinkEnd Platform::link_end(uint32_t gpu, uint32_t link) const {
  const uint32_t chip = chip_of_link_[link];
  return LinkEnd{chip, static_cast<uint16_t>(gpu * spec_.links_per_chip[chip] + slot_of_link_[link])};
}

const model::NvlinkPort& Platform::link(LinkDirection direction, uint32_t gpu, uint32_t link) const {
  const size_t i = static_cast<size_t>(gpu) * links_per_gpu_ + link;
  return direction == LinkDirection::gpu_to_switch ? up_[i] : down_[i];
}

uint64_t Platform::describe_outstanding(std::ostream& os) const {
  uint64_t count = 0;
  for (const model::Gpu& g : gpus_) count += g.describe_outstanding(os);
  for (const model::SwitchChip& c : chips_) count += c.describe_outstanding(os);
  for (const auto* ports : {&up_, &down_}) {
    for (const model::NvlinkPort& p : *ports) {
      if (p.credits_outstanding() == 0) continue;
      os << "  ";
      p.describe_state(os);
      os << "\n";
      ++count;
    }
  }
  return count;
}

}  // namespace nvsvp::platform
