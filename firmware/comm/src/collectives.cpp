// The collectives' names, bandwidth conventions, implied traffic, and the run: inputs, plan,
// timing, check. The plans are in collectives_ring.cpp, collectives_nvls.cpp, collectives_p2p.cpp.
#include "nvsvp/fw/collectives.hpp"

#include <limits>
#include <sstream>
#include <stdexcept>

#include "collective_plan.hpp"

namespace nvsvp::fw {

using detail::Lanes;

namespace {

constexpr uint64_t kGroupGranule = 2ull << 20;  // multicast memory is bound in 2 MiB units

bool is_nvls(Collective c) { return c == Collective::allreduce_nvls || c == Collective::allgather_nvls; }
bool is_p2p(Collective c) { return c == Collective::p2p_write_oneway || c == Collective::p2p_write_bidir; }

// Every message of the collective's input (result = false) or of its result (true), as
// visit(gpu, address, lanes); a visit returning false ends the walk. The lanes name where the
// data came from, so that a misplaced, lost or wrongly summed message shows:
//   all-reduce: allreduce_input_lanes and allreduce_result_lanes (collectives.hpp);
//   all-gather: message m of the gathered buffer is (owner+1, m, 2, 0), the owner's to begin with;
//   all-to-all: GPU g's block p, message i is (g+1, p+1, i, 3), in GPU p's receive block g after;
//   p2p: the writer w's message m is (w+1, m, 4, 0), in the peer's target buffer after.
template <class Visit>
void visit_data(uint32_t gpus, const CollectiveSpec& spec, bool result, Visit&& visit) {
  const uint64_t messages = spec.bytes / spec.message_bytes;
  const uint64_t per_gpu = messages / gpus;  // a share or a block
  auto address = [&](uint64_t base, uint64_t message) { return base + message * spec.message_bytes; };
  switch (spec.collective) {
    case Collective::allreduce_ring:
    case Collective::allreduce_nvls:
      for (uint32_t g = 0; g < gpus; ++g) {
        for (uint64_t m = 0; m < messages; ++m) {
          const Lanes lanes = result ? detail::allreduce_result_lanes(gpus, m) : detail::allreduce_input_lanes(g, m);
          if (!visit(g, address(spec.buffer_address, m), lanes)) return;
        }
      }
      return;
    case Collective::allgather_ring:
    case Collective::allgather_nvls:
      for (uint32_t g = 0; g < gpus; ++g) {
        const uint64_t first = result ? 0 : g * per_gpu;
        const uint64_t end = result ? messages : first + per_gpu;
        for (uint64_t m = first; m < end; ++m) {
          const Lanes lanes{static_cast<float>(m / per_gpu) + 1.0f, static_cast<float>(m), 2.0f, 0.0f};
          if (!visit(g, address(spec.buffer_address, m), lanes)) return;
        }
      }
      return;
    case Collective::alltoall:
      for (uint32_t g = 0; g < gpus; ++g) {
        for (uint32_t p = 0; p < gpus; ++p) {
          for (uint64_t i = 0; i < per_gpu; ++i) {
            const Lanes lanes{g + 1.0f, p + 1.0f, static_cast<float>(i), 3.0f};
            const bool ok = result ? visit(p, address(spec.scratch_address, g * per_gpu + i), lanes)
                                   : visit(g, address(spec.buffer_address, p * per_gpu + i), lanes);
            if (!ok) return;
          }
        }
      }
      return;
    case Collective::p2p_write_oneway:
    case Collective::p2p_write_bidir: {
      auto one_way = [&](uint32_t from, uint32_t to) {
        for (uint64_t m = 0; m < messages; ++m) {
          const Lanes lanes{from + 1.0f, static_cast<float>(m), 4.0f, 0.0f};
          const bool ok = result ? visit(to, address(spec.scratch_address, m), lanes)
                                 : visit(from, address(spec.buffer_address, m), lanes);
          if (!ok) return false;
        }
        return true;
      };
      if (one_way(spec.p2p_source, spec.p2p_target) && spec.collective == Collective::p2p_write_bidir) {
        one_way(spec.p2p_target, spec.p2p_source);
      }
      return;
    }
  }
}

// The first message of the result that is not what the collective defines, or "" when all are.
std::string first_wrong_value(Hal& hal, const CollectiveSpec& spec) {
  std::string wrong;
  visit_data(hal.gpu_count(), spec, true, [&](uint32_t g, uint64_t address, const Lanes& expected) {
    const Lanes got = detail::read_lanes(hal.memory(g), address);
    if (got == expected) return true;
    std::ostringstream msg;
    msg.precision(std::numeric_limits<float>::max_digits10);  // values that differ print differently
    msg << to_string(spec.collective) << ": GPU " << g << " at 0x" << std::hex << address << std::dec << " holds ("
        << got[0] << ", " << got[1] << ", " << got[2] << ", " << got[3] << "), expected (" << expected[0] << ", "
        << expected[1] << ", " << expected[2] << ", " << expected[3] << ")";
    wrong = msg.str();
    return false;
  });
  return wrong;
}

}  // namespace

namespace detail {

uint64_t whole_units(const CollectiveSpec& spec, uint64_t unit_bytes, const std::string& unit) {
  if (spec.message_bytes == 0 || unit_bytes == 0 || spec.bytes == 0 || spec.bytes % unit_bytes != 0) {
    std::ostringstream msg;
    msg << to_string(spec.collective) << ": " << spec.bytes << " bytes is not a positive multiple of " << unit << " ("
        << unit_bytes << " bytes with " << spec.message_bytes << "-byte messages)";
    throw std::invalid_argument(msg.str());
  }
  return spec.bytes / unit_bytes;
}

std::vector<hw::WorkSequence> empty_sequences(uint32_t gpus, uint32_t counters, std::initializer_list<const char*> phases) {
  std::vector<hw::WorkSequence> sequences(gpus);
  for (hw::WorkSequence& seq : sequences) {
    seq.phase_names.assign(phases.begin(), phases.end());
    seq.counters = counters;
  }
  return sequences;
}

}  // namespace detail

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> all = {Collective::allreduce_ring, Collective::allreduce_nvls,
                                              Collective::allgather_ring, Collective::allgather_nvls,
                                              Collective::alltoall,       Collective::p2p_write_oneway,
                                              Collective::p2p_write_bidir};
  return all;
}

const char* to_string(Collective collective) {
  switch (collective) {
    case Collective::allreduce_ring: return "allreduce_ring";
    case Collective::allreduce_nvls: return "allreduce_nvls";
    case Collective::allgather_ring: return "allgather_ring";
    case Collective::allgather_nvls: return "allgather_nvls";
    case Collective::alltoall: return "alltoall";
    case Collective::p2p_write_oneway: return "p2p_write_oneway";
    case Collective::p2p_write_bidir: return "p2p_write_bidir";
  }
  return "?";
}

bool collective_from_string(const std::string& name, Collective& collective) {
  for (Collective c : all_collectives()) {
    if (name == to_string(c)) {
      collective = c;
      return true;
    }
  }
  return false;
}

double bus_bandwidth_factor(Collective collective, uint32_t gpus) {
  const double n = gpus;
  switch (collective) {
    case Collective::allreduce_ring:
    case Collective::allreduce_nvls: return 2.0 * (n - 1) / n;
    case Collective::allgather_ring:
    case Collective::allgather_nvls:
    case Collective::alltoall: return (n - 1) / n;
    case Collective::p2p_write_oneway: return 1.0;
    case Collective::p2p_write_bidir: return 2.0;
  }
  return 1.0;
}

double algorithm_bandwidth_gbps(uint64_t bytes, double time_us) {
  return static_cast<double>(bytes) / (time_us * 1e-6) / 1e9;
}

double bus_bandwidth_gbps(Collective collective, uint32_t gpus, uint64_t bytes, double time_us) {
  return bus_bandwidth_factor(collective, gpus) * algorithm_bandwidth_gbps(bytes, time_us);
}

std::vector<GpuTraffic> implied_traffic(uint32_t gpus, const CollectiveSpec& spec) {
  std::vector<GpuTraffic> traffic(gpus);
  const uint64_t share = spec.bytes / gpus;  // all-reduce / all-gather share, all-to-all block
  auto set = [&](GpuTraffic& t, uint64_t sent, uint64_t received, uint64_t requests_sent = 0,
                 uint64_t requests_received = 0) {
    t.payload_bytes_sent = sent;
    t.payload_bytes_received = received;
    t.requests_sent = requests_sent;
    t.requests_received = requests_received;
    t.messages_sent = sent / spec.message_bytes + requests_sent;
    t.messages_received = received / spec.message_bytes + requests_received;
  };
  for (GpuTraffic& t : traffic) {
    switch (spec.collective) {
      // Every chunk but its own goes out and comes in twice: reduce-scatter, all-gather.
      case Collective::allreduce_ring: set(t, 2 * (gpus - 1) * share, 2 * (gpus - 1) * share); break;
      // Per message of its share a GPU sends a load (a request without payload) and a store; the
      // load's sum comes back. For every member's loads the switch reads this GPU's copy (a read
      // request in, the copy out: the whole buffer over all shares), and every share's store
      // lands in every member, this one included.
      case Collective::allreduce_nvls: {
        const uint64_t loads = share / spec.message_bytes;
        const uint64_t member_reads = spec.bytes / spec.message_bytes;
        set(t, share + spec.bytes, share + spec.bytes, loads, member_reads);
        break;
      }
      case Collective::allgather_ring:
      case Collective::alltoall: set(t, (gpus - 1) * share, (gpus - 1) * share); break;
      case Collective::allgather_nvls: set(t, share, spec.bytes); break;
      case Collective::p2p_write_oneway:
      case Collective::p2p_write_bidir: break;
    }
  }
  if (is_p2p(spec.collective) && spec.p2p_source < gpus && spec.p2p_target < gpus) {
    const bool bidir = spec.collective == Collective::p2p_write_bidir;
    set(traffic[spec.p2p_source], spec.bytes, bidir ? spec.bytes : 0);
    set(traffic[spec.p2p_target], bidir ? spec.bytes : 0, spec.bytes);
  }
  return traffic;
}

std::vector<hw::WorkSequence> plan_collective(uint32_t gpus, const CollectiveSpec& spec) {
  if (gpus < 2) throw std::invalid_argument(std::string(to_string(spec.collective)) + ": needs at least 2 GPUs");
  switch (spec.collective) {
    case Collective::allreduce_ring:
    case Collective::allgather_ring: return detail::plan_ring(gpus, spec);
    case Collective::allreduce_nvls: return detail::plan_nvls_allreduce(gpus, spec);
    case Collective::allgather_nvls: return detail::plan_nvls_allgather(gpus, spec);
    case Collective::alltoall: return detail::plan_alltoall(gpus, spec);
    case Collective::p2p_write_oneway:
    case Collective::p2p_write_bidir: return detail::plan_p2p(gpus, spec);
  }
  throw std::invalid_argument("unknown collective");
}

CollectiveRun run_collective(Hal& hal, MulticastAllocator& allocator, const CollectiveSpec& spec) {
  const uint32_t gpus = hal.gpu_count();
  std::vector<hw::WorkSequence> sequences = plan_collective(gpus, spec);
  visit_data(gpus, spec, false, [&](uint32_t g, uint64_t address, const Lanes& lanes) {
    detail::write_lanes(hal.memory(g), address, lanes);
    return true;
  });
  MulticastGroupHandle group;
  const bool multicast = is_nvls(spec.collective);
  if (multicast) {
    const uint64_t size = (spec.bytes + kGroupGranule - 1) / kGroupGranule * kGroupGranule;
    group = allocator.create_group(spec.multimem_base, size, spec.buffer_address, hw::GpuMask::first(gpus));
  }
  CollectiveRun run;
  run.counters_end = sequences[0].counters;
  const double start_ns = hal.now_ns();
  for (uint32_t g = 0; g < gpus; ++g) {
    if (!sequences[g].tasks.empty()) hal.submit(g, std::move(sequences[g]));  // p2p: the others idle
  }
  hal.wait_all_finished();
  const double end_ns = hal.now_ns();
  if (multicast) allocator.destroy_group(group);

  run.algorithm = to_string(spec.collective);
  run.gpus = gpus;
  run.bytes = spec.bytes;
  run.time_us = (end_ns - start_ns) / 1000.0;
  run.algorithm_bandwidth_gbps = algorithm_bandwidth_gbps(spec.bytes, run.time_us);
  run.bus_bandwidth_gbps = bus_bandwidth_gbps(spec.collective, gpus, spec.bytes, run.time_us);
  run.check_message = first_wrong_value(hal, spec);
  run.values_ok = run.check_message.empty();
  return run;
}

}  // namespace nvsvp::fw
