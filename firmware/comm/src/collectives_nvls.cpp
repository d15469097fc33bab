// The NVLS collectives: the switch does the reduction (multimem.ld_reduce) and the replication
// (multimem.st) of a multicast group over every GPU's buffer.
//   all-reduce: each GPU owns 1/N of the buffer; for its share it loads the switch's sum into a
//               scratch area and stores it to the group (every member's buffer gets it), chunk by
//               chunk with the next chunk's loads in flight;
//   all-gather: each GPU stores its share to the group once (NCCL issue 1506: the switch sends
//               every GPU the whole buffer, its own share included, so the time is that of the
//               ring; only the GPU-to-switch traffic is less).
#include <algorithm>

#include "collective_plan.hpp"

namespace nvsvp::fw::detail {

namespace {

// Counters of the NVLS sequences, relative to CollectiveSpec::first_counter.
constexpr uint32_t kStoreCounter = 0;      // store copies landing here (every share)
constexpr uint32_t kFirstLoadCounter = 1;  // all-reduce: then one per chunk, this GPU's ld_reduce results

}  // namespace

std::vector<hw::WorkSequence> plan_nvls_allreduce(uint32_t gpus, const CollectiveSpec& spec) {
  const uint64_t per_share = whole_units(spec, uint64_t{gpus} * spec.message_bytes, "GPUs x messages");
  const uint64_t share_bytes = per_share * spec.message_bytes;
  // Messages per chunk (at least one; the whole share when chunking is off).
  const uint64_t per_chunk = spec.chunk_bytes == 0 ? per_share
                                                   : std::clamp<uint64_t>(spec.chunk_bytes / spec.message_bytes, 1, per_share);
  const uint64_t chunks = (per_share + per_chunk - 1) / per_chunk;
  // Each chunk's loads count on a counter of their own, so that waiting for chunk k means its
  // own results have landed (results of different chunks may arrive in any order).
  const uint32_t base = spec.first_counter;
  const uint32_t store_counter = base + kStoreCounter;
  std::vector<hw::WorkSequence> sequences =
      empty_sequences(gpus, static_cast<uint32_t>(base + kFirstLoadCounter + chunks), {"reduce", "gather"});
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = sequences[g];
    seq.issue_sms = issuing_sms(spec, spec.nvls_channels);
    const uint64_t share = g * share_bytes;
    auto messages_of = [&](uint64_t chunk) { return std::min(per_chunk, per_share - chunk * per_chunk); };
    auto load_chunk = [&](uint64_t chunk) {
      for (uint64_t m = chunk * per_chunk; m < chunk * per_chunk + messages_of(chunk); ++m) {
        const uint64_t offset = share + m * spec.message_bytes;
        seq.tasks.push_back(hw::Task::multimem_ld_reduce(kReduce, spec.multimem_base + offset,
                                                         spec.scratch_address + offset, spec.message_bytes,
                                                         hw::MultimemOp::add, hw::MultimemType::f32,
                                                         static_cast<uint32_t>(base + kFirstLoadCounter + chunk)));
      }
    };
    load_chunk(0);
    for (uint64_t chunk = 0; chunk < chunks; ++chunk) {
      if (chunk + 1 < chunks) load_chunk(chunk + 1);
      seq.tasks.push_back(hw::Task::wait(kReduce, static_cast<uint32_t>(base + kFirstLoadCounter + chunk), messages_of(chunk)));
      for (uint64_t m = chunk * per_chunk; m < chunk * per_chunk + messages_of(chunk); ++m) {
        const uint64_t offset = share + m * spec.message_bytes;
        seq.tasks.push_back(hw::Task::multimem_store(kGather, spec.scratch_address + offset, spec.multimem_base + offset,
                                                     spec.message_bytes, store_counter));
      }
    }
    // Every share's stores land in every member, this GPU's buffer included.
    seq.tasks.push_back(hw::Task::wait(kGather, store_counter, per_share * gpus));
  }
  return sequences;
}

std::vector<hw::WorkSequence> plan_nvls_allgather(uint32_t gpus, const CollectiveSpec& spec) {
  const uint64_t per_share = whole_units(spec, uint64_t{gpus} * spec.message_bytes, "GPUs x messages");
  const uint64_t share_bytes = per_share * spec.message_bytes;
  const uint32_t store_counter = spec.first_counter + kStoreCounter;
  std::vector<hw::WorkSequence> sequences = empty_sequences(gpus, store_counter + 1, {"reduce", "gather"});
  for (uint32_t g = 0; g < gpus; ++g) {
    hw::WorkSequence& seq = sequences[g];
    seq.issue_sms = issuing_sms(spec, spec.nvls_channels);
    for (uint64_t m = 0; m < per_share; ++m) {
      const uint64_t offset = g * share_bytes + m * spec.message_bytes;
      seq.tasks.push_back(hw::Task::multimem_store(kGather, spec.buffer_address + offset, spec.multimem_base + offset,
                                                   spec.message_bytes, store_counter));
    }
    seq.tasks.push_back(hw::Task::wait(kGather, store_counter, per_share * gpus));
  }
  return sequences;
}

}  // namespace nvsvp::fw::detail
