// Running a layer through the HAL: its buffers and inputs, the dynamic objects' bindings, and
// the submission of every GPU's sequences.
#include <stdexcept>
#include <string>

#include "moe_plan.hpp"
#include "nvsvp/fw/moe_data.hpp"
#include "nvsvp/hw/switch_registers.hpp"

namespace nvsvp::fw {

void load_inputs(Hal& hal, const LayerPlan& plan) {
  const MoeRouting& routing = plan.spec->routing;
  const MoeBuffers& b = plan.buffers;
  const uint64_t tokens = routing.tokens_per_gpu;
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    hw::MemoryAccess& memory = hal.memory(g);
    // Dynamic schemes pack a block per (token, local expert); the others a slot per token copy.
    const uint64_t slots = plan.dispatch_per_expert ? plan.dynamic_objects.front().binding.local_blocks(g)
                                                     : (*plan.received)[g].size();
    const uint64_t copies = detail::copies_of_home(plan, g);
    memory.declare_buffer(b.input, b.dispatch_stride, tokens);
    memory.declare_buffer(b.dispatch_rx, b.dispatch_stride, slots);
    memory.declare_buffer(b.partial, b.combine_stride, slots);
    // A combine reduced in the switch never writes combine_rx; left undeclared it costs no memory.
    if (!plan.combine_reduced_in_switch) memory.declare_buffer(b.combine_rx, b.combine_stride, copies);
    memory.declare_buffer(b.output, b.combine_stride, tokens);
    // Fused schemes' notifications land in each home's output-readiness table, an entry per token.
    if (plan.expected_notifications[g] > 0) memory.declare_buffer(detail::kReadinessTable, hw::kCounterEntryBytes, tokens);
    if (plan.receive_ring_slots > 0) {
      memory.declare_buffer(detail::kDispatchRings, b.dispatch_stride, plan.receive_ring_slots);
      memory.declare_buffer(detail::kCombineRings, b.combine_stride, plan.receive_ring_slots);
    }
    memory.declare_buffer(b.counts_tx, 16, routing.gpus);
    memory.declare_buffer(b.counts_rx, 16, routing.gpus);
    for (const LayerPlan::RowRegion& region : plan.row_regions) {
      memory.declare_buffer(region.base, region.stride, region.writes[g].size());
    }
  }
  // What each GPU tells each peer in the count exchange: how many tokens it will send there.
  const std::vector<std::vector<uint64_t>> counts = detail::copies_between(plan);
  for (uint32_t g = 0; g < routing.gpus; ++g) {
    for (uint32_t p = 0; p < routing.gpus; ++p) {
      const uint64_t count = counts[g][p];
      hal.memory(g).write(b.counts_tx + 16ull * p, &count, sizeof count);
    }
  }
  uint8_t raw[2 * kLanes];
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    pack_lanes(token_lanes(t), raw);
    const uint64_t local = t % routing.tokens_per_gpu;
    hal.memory(routing.home_of_token(t)).write(plan.buffers.input + local * plan.buffers.dispatch_stride,
                                               raw, sizeof raw);
  }
}

void install_dynamic_objects(Hal& hal, const LayerPlan& plan) {
  if (plan.dynamic_objects.empty()) return;
  const uint32_t per_gpu = plan.spec->routing.experts_per_gpu();
  for (uint32_t chip = 0; chip < hal.switch_count(); ++chip) {
    hal.write_register(chip, hw::switch_regs::kDynamicExpertsPerGpu, per_gpu);
    if (hal.read_register(chip, hw::switch_regs::kDynamicExpertsPerGpu) != per_gpu) {
      throw std::runtime_error("switch chip " + std::to_string(chip) + " refused DYN_EXPERTS_PER_GPU = " +
                               std::to_string(per_gpu));
    }
  }
  for (const DynamicObjectRequest& object : plan.dynamic_objects) {
    for (uint32_t g = 0; g < hal.gpu_count(); ++g) hal.bind_dynamic_object(g, object.binding, object.local_base);
  }
}

void wait_servicing_interrupts(Hal& hal, const InterruptService& service) {
  uint32_t services_at_same_time = 0;
  double last_service_ns = -1.0;
  while (!hal.wait_finished_or_interrupt()) {
    const double now = hal.now_ns();
    services_at_same_time = now == last_service_ns ? services_at_same_time + 1 : 1;
    last_service_ns = now;
    if (services_at_same_time > kMaxServicesWithoutProgress) {
      throw std::runtime_error("runtime service loop: a switch interrupt line stayed high after " +
                               std::to_string(kMaxServicesWithoutProgress) + " services at " + std::to_string(now) +
                               " ns (the service does not clear what raises it)");
    }
    service();
  }
}

void submit_layer(Hal& hal, LayerPlan& plan) {
  for (uint32_t g = 0; g < plan.sequences.size(); ++g) hal.submit(g, std::move(plan.sequences[g]));
  for (uint32_t g = 0; g < plan.extra_sequences.size(); ++g) {
    for (hw::WorkSequence& sequence : plan.extra_sequences[g]) hal.submit(g, std::move(sequence));
  }
  plan.sequences.clear();
  plan.extra_sequences.clear();
}

void run_layer(Hal& hal, LayerPlan& plan, const InterruptService& service) {
  submit_layer(hal, plan);
  if (service) {
    wait_servicing_interrupts(hal, service);
  } else {
    hal.wait_all_finished();
  }
}

}  // namespace nvsvp::fw
