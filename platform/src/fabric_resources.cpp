#include "nvsvp/platform/fabric_resources.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "config_reader.hpp"
#include "key_origins.hpp"
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

void check_fabric_resources(const Scenario& scenario, const std::shared_ptr<const fw::MoeLayerSpec>& layer) {
  // The switch and the firmware know partitions; the runner does not yet run a layer per
  // partition, and one layer over every GPU would cross them: refused rather than ignored.
  if (!scenario.partitions.empty()) {
    const Place at = scenario.origins ? scenario.origins->at("partitions") : Place{"partitions", scenario.file, kDefault};
    config_fail(at.origin, at.path,
                "no partitions: running one MoE layer per partition is not built yet (docs/configuration.md#partitions)",
                std::to_string(scenario.partitions.size()) + " partitions");
  }
  const fw::FabricTopology topology = fabric_topology(scenario.platform);
  for (const std::string& scheme : scenario.schemes) {
    const auto planned = within_memory(scenario.file, "a plan for scheme " + scheme, [&] {
      fw::LayerPlan plan = fw::build_layer(scheme, layer);
      fw::ReplicationPhase replication = fw::build_replication_phase(*layer, plan);
      return std::make_pair(std::move(plan), std::move(replication));
    });
    const fw::LayerPlan& plan = planned.first;
    const fw::ReplicationPhase& replication = planned.second;
    RegisterModelHal hal(scenario.platform);
    fw::SwitchFabric fabric(hal);
    try {
      fw::bring_up_for_layer(hal, fabric, topology, plan, replication);
    } catch (const fw::MulticastSlotsExhausted& e) {
      // Anything else bring-up throws is a firmware or model defect, not bad input: it propagates.
      const Place at = scenario.origins ? scenario.origins->blame({"platform.switch.multicast_slots", "schemes",
                                                                   "replication.policy", "replication.broadcast"})
                                        : Place{"platform.switch.multicast_slots", scenario.file, kDefault};
      config_fail(at.origin, at.path,
                  "enough multicast slots for scheme " + scheme + ": " +
                      std::to_string(plan.multicast_groups.size() + replication.multicast_groups.size()) +
                      " groups (the layer's " + std::to_string(plan.multicast_groups.size()) + ", replication's " +
                      std::to_string(replication.multicast_groups.size()) + ")",
                  std::to_string(scenario.platform.switch_chip.multicast_slots) +
                      " slots per chip (platform.switch.multicast_slots): " + e.what());
    }
  }
}

}  // namespace nvsvp::platform
