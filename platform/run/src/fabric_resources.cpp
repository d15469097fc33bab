#include "nvsvp/platform/fabric_resources.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/key_origins.hpp"
#include "layer_parts.hpp"
#include "nvsvp/fw/layer_bring_up.hpp"
#include "nvsvp/model/gpu_hub.hpp"
#include "nvsvp/model/switch_chip.hpp"
#include "nvsvp/model/switch_csr.hpp"
#include "nvsvp/platform/platform.hpp"

namespace nvsvp::platform {

namespace {

// The HAL over the chips' register blocks and the GPUs' Hubs, without a simulation: register
// accesses go straight to the register model, and nothing takes time. Bring-up never submits work
// or touches GPU memory, so those calls are logic errors here.
class RegisterModelHal final : public fw::Hal {
 public:
  explicit RegisterModelHal(const PlatformSpec& spec) {
    for (uint32_t c = 0; c < spec.switch_chips; ++c) {
      chips_.emplace_back(model::SwitchChip::csr_config(switch_chip_params(spec, c), c));
    }
    for (uint32_t g = 0; g < spec.gpus; ++g) hubs_.emplace_back(g, spec.gpu.hub);
  }

  uint32_t gpu_count() const override { return static_cast<uint32_t>(hubs_.size()); }
  void submit(uint32_t, hw::WorkSequence) override { unavailable("submit"); }
  void wait_all_finished() override {}
  bool wait_finished_or_interrupt() override { return true; }  // no work ever runs here
  double now_ns() const override { return 0.0; }
  hw::MemoryAccess& memory(uint32_t) override { unavailable("memory"); }
  uint64_t received_messages(uint32_t) const override { return 0; }
  uint64_t received_notifications(uint32_t) const override { return 0; }
  void bind_dynamic_object(uint32_t gpu, const hw::DynamicMulticastBinding& binding, uint64_t local_base) override {
    model::GpuHub& hub = hubs_.at(gpu);
    try {
      if (!hub.is_bound(binding.object.id)) hub.create(binding.object);
      hub.bind(binding, local_base);
    } catch (const model::HubError& e) {
      throw std::invalid_argument(e.what());
    }
  }
  bool dynamic_local_address(uint32_t gpu, uint64_t multimem_address, uint16_t expert,
                             uint64_t& local_address) override {
    return hubs_.at(gpu).lookup(multimem_address, expert, local_address);
  }
  void set_gpu_link_enabled(uint32_t, uint32_t, bool) override { unavailable("set_gpu_link_enabled"); }
  uint64_t gpu_links_down(uint32_t) override { return 0; }  // no link has failed at bring-up
  uint64_t reissue_lost_operations(uint32_t) override { return 0; }  // nothing ran, nothing was lost
  uint32_t switch_count() const override { return static_cast<uint32_t>(chips_.size()); }
  uint32_t read_register(uint32_t chip, uint32_t offset) override {
    uint32_t value = 0;
    chips_.at(chip).read(offset, value);
    return value;
  }
  void write_register(uint32_t chip, uint32_t offset, uint32_t value) override { chips_.at(chip).write(offset, value); }
  bool wait_interrupt(double) override { return false; }

 private:
  [[noreturn]] static void unavailable(const char* what) {
    throw std::logic_error(std::string("fabric resource check: bring-up called ") + what);
  }

  std::vector<model::SwitchCsr> chips_;
  std::vector<model::GpuHub> hubs_;
};

}  // namespace

namespace {

// Brings `job`'s plans up on the register models alone; throws ConfigError when they cannot run
// within the scenario's partitions or the fabric cannot hold them.
void check_job(const Scenario& scenario, const SchemeJob& job) {
  const std::string& scheme = job.scheme;
  const std::vector<LayerPart>& parts = *job.parts;
  RegisterModelHal hal(scenario.platform);
  LayerPartHals hals(hal, parts, !scenario.partitions.empty());
  try {
    hals.check_plans(parts);
  } catch (const std::invalid_argument& e) {
    const Place at = scenario.origins ? scenario.origins->blame({"schemes", "partitions"})
                                      : Place{"schemes", scenario.file, kDefault};
    config_fail(at.origin, at.path, "schemes that run within a partition (with partitions: no dynamic multimem)",
                scheme + ": " + e.what());
  }
  fw::SwitchFabric fabric(hal);
  try {
    hals.bring_up(fabric, fabric_topology(scenario.platform), parts, scenario.partitions);
  } catch (const fw::MulticastSlotsExhausted& e) {
    // Anything else bring-up throws is a firmware or model defect, not bad input: it propagates.
    size_t layer_groups = 0, replication_groups = 0;
    for (const LayerPart& part : parts) {
      layer_groups += part.plan.multicast_groups.size();
      replication_groups += part.replication.multicast_groups.size();
    }
    const Place at = scenario.origins ? scenario.origins->blame({"platform.switch.multicast_slots", "schemes",
                                                                 "replication.policy", "replication.broadcast"})
                                      : Place{"platform.switch.multicast_slots", scenario.file, kDefault};
    config_fail(at.origin, at.path,
                "enough multicast slots for scheme " + scheme + ": " +
                    std::to_string(layer_groups + replication_groups) + " groups (the layer's " +
                    std::to_string(layer_groups) + ", replication's " + std::to_string(replication_groups) + ")",
                std::to_string(scenario.platform.switch_chip.multicast_slots) +
                    " slots per chip (platform.switch.multicast_slots): " + e.what());
  }
}

}  // namespace

void check_fabric_resources(const Scenario& scenario, const ResolvedLayer& layer) {
  // One plan at a time, and none kept: holding every scheme's plans would cost more memory (in
  // the run and in every scheme's process) than planning each once more takes time
  // (docs/decisions.md).
  const auto machine = std::make_shared<const MachineSetup>(machine_setup(scenario));
  for (const std::string& scheme : scenario.schemes) {
    check_job(scenario, within_memory(scenario.file, "a plan for scheme " + scheme,
                                      [&] { return plan_scheme(machine, scheme, layer); }));
  }
}

}  // namespace nvsvp::platform
