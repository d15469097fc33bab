// Internal to firmware (nvsvp::fw::detail): what the collectives' plans share, and the plans
// themselves, one file per family (collectives_ring.cpp, collectives_nvls.cpp,
// collectives_p2p.cpp); collectives.cpp dispatches, loads the inputs and checks the results.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "nvsvp/fw/collective_spec.hpp"
#include "nvsvp/hw/work.hpp"

namespace nvsvp::fw::detail {

// The leading 16 bytes of a message: the data that travels (gpu.functional_bytes' default).
using Lanes = std::array<float, 4>;

using fw::allreduce_input_lanes;
using fw::allreduce_result_lanes;

inline Lanes read_lanes(const hw::MemoryAccess& memory, uint64_t address) {
  Lanes lanes;
  memory.read(address, lanes.data(), sizeof lanes);
  return lanes;
}

inline void write_lanes(hw::MemoryAccess& memory, uint64_t address, const Lanes& lanes) {
  memory.write(address, lanes.data(), sizeof lanes);
}

// spec.bytes / unit_bytes, after checking that it is a positive whole number and that unit_bytes
// is whole messages; `unit` names the unit in the error ("GPUs x channels x messages").
uint64_t whole_units(const CollectiveSpec& spec, uint64_t unit_bytes, const std::string& unit);

// The phases of the ring and NVLS plans (empty_sequences names them "reduce", "gather").
enum CollectivePhase : hw::PhaseId { kReduce, kGather };

// `gpus` sequences on stream 0 with `counters` counters (from 0) and the phases named.
std::vector<hw::WorkSequence> empty_sequences(uint32_t gpus, uint32_t counters, std::initializer_list<const char*> phases);

// The SMs a plan's stores are issued from, or 0 when the spec switches the limit off.
inline uint16_t issuing_sms(const CollectiveSpec& spec, uint32_t sms) {
  return spec.sm_issue_limit ? static_cast<uint16_t>(sms) : 0;
}

std::vector<hw::WorkSequence> plan_ring(uint32_t gpus, const CollectiveSpec& spec);  // allreduce_ring, allgather_ring
std::vector<hw::WorkSequence> plan_nvls_allreduce(uint32_t gpus, const CollectiveSpec& spec);
std::vector<hw::WorkSequence> plan_nvls_allgather(uint32_t gpus, const CollectiveSpec& spec);
std::vector<hw::WorkSequence> plan_alltoall(uint32_t gpus, const CollectiveSpec& spec);
std::vector<hw::WorkSequence> plan_p2p(uint32_t gpus, const CollectiveSpec& spec);  // oneway, bidir

}  // namespace nvsvp::fw::detail
