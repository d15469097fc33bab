// The collectives of plain writes between pairs of GPUs: NCCL's all-to-all (p2p sends to every
// peer at once) and one GPU writing into another (one way, or both at once).
#include <stdexcept>
#include <string>

#include "collective_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

constexpr hw::PhaseId kTransfer = 0;

}  // namespace

// GPU g's block p (its send buffer's p-th 1/N) lands in GPU p's receive buffer at block g. The
// sends go message by message round the peers, so every peer's block is in flight at once (NCCL's
// p2p channels serve all peers concurrently); the own block is a local copy, counted with the rest.
std::vector<hw::WorkSequence> plan_alltoall(uint32_t gpus, const CollectiveSpec& spec) {
  const uint64_t per_block = whole_units(spec, uint64_t{gpus} * spec.message_bytes, "GPUs x messages");
  const uint64_t block_bytes = per_block * spec.message_bytes;
  const uint32_t counter = spec.first_counter;
  std::vector<hw::WorkSequence> sequences = empty_sequences(gpus, counter + 1, {"alltoall"});
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = sequences[g];
    seq.issue_sms = issuing_sms(spec, spec.channels);  // NCCL's p2p channels, one SM each
    for (uint64_t m = 0; m < per_block; ++m) {
      const uint64_t within = m * spec.message_bytes;
      for (uint32_t d = 1; d < gpus; ++d) {
        const uint32_t peer = (g + d) % gpus;
        seq.tasks.push_back(hw::Task::send(kTransfer, peer, spec.buffer_address + peer * block_bytes + within,
                                           spec.scratch_address + g * block_bytes + within, spec.message_bytes, counter));
      }
      seq.tasks.push_back(hw::Task::local_copy(kTransfer, spec.buffer_address + g * block_bytes + within,
                                               spec.scratch_address + g * block_bytes + within, spec.message_bytes, counter));
    }
    seq.tasks.push_back(hw::Task::wait(kTransfer, counter, per_block * gpus));
  }
  return sequences;
}

// The writer's buffer lands in the peer's target buffer (scratch_address) at the same offset; a
// copy engine issues it (no SM issue limit), spreading it over all the writer's links by address.
std::vector<hw::WorkSequence> plan_p2p(uint32_t gpus, const CollectiveSpec& spec) {
  if (spec.p2p_source >= gpus || spec.p2p_target >= gpus || spec.p2p_source == spec.p2p_target) {
    throw std::invalid_argument("p2p: source " + std::to_string(spec.p2p_source) + " and target " +
                                std::to_string(spec.p2p_target) + " must be two different GPUs below " +
                                std::to_string(gpus));
  }
  const uint64_t messages = whole_units(spec, spec.message_bytes, "messages");
  const uint32_t counter = spec.first_counter;
  std::vector<hw::WorkSequence> sequences = empty_sequences(gpus, counter + 1, {"p2p"});
  auto write = [&](uint32_t from, uint32_t to) {
    hw::WorkSequence& seq = sequences[from];
    for (uint64_t m = 0; m < messages; ++m) {
      const uint64_t within = m * spec.message_bytes;
      seq.tasks.push_back(hw::Task::send(kTransfer, to, spec.buffer_address + within, spec.scratch_address + within,
                                         spec.message_bytes, counter));
    }
  };
  write(spec.p2p_source, spec.p2p_target);
  if (spec.collective == Collective::p2p_write_bidir) write(spec.p2p_target, spec.p2p_source);
  sequences[spec.p2p_target].tasks.push_back(hw::Task::wait(kTransfer, counter, messages));
  if (spec.collective == Collective::p2p_write_bidir) {
    sequences[spec.p2p_source].tasks.push_back(hw::Task::wait(kTransfer, counter, messages));
  }
  return sequences;
}

}  // namespace nvsvp::fw::detail
