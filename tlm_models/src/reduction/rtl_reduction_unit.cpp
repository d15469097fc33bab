#include "nvsvp/reduction/rtl_reduction_unit.hpp"

#include <random>
#include <stdexcept>

#include "Vreduction_unit.h"
#include "verilated.h"
#include "verilated_vcd_c.h"

namespace nvsvp::reduction {
namespace {

// Clocks with the output ready and no progress after which the pipeline is declared stuck: it
// drains in 5, so this only fires on an RTL bug, and turns a hang into an error.
constexpr std::uint64_t stall_limit_clocks = 1000;
constexpr int reset_clocks = 2;
// VCD time stamps: a notional 1 GHz clock, falling edge at 0 ps, rising edge at 500 ps.
constexpr std::uint64_t clock_period_ps = 1000;

bool default_structure(const ReductionUnitConfig& config) {
  const ReductionUnitConfig defaults{};
  return config.buffer_bytes == defaults.buffer_bytes && config.contexts == defaults.contexts &&
         config.ways == defaults.ways && config.context_max_beats == defaults.context_max_beats;
}

// A 128-bit Verilator port is four 32-bit words, word i holding bits [32i+31:32i]; beat byte i is
// bits [8i+7:8i].
void beat_to_words(const Beat& beat, VlWide<4>& words) {
  for (int w = 0; w < 4; ++w) {
    words[w] = static_cast<std::uint32_t>(beat[4 * w]) |
               static_cast<std::uint32_t>(beat[4 * w + 1]) << 8 |
               static_cast<std::uint32_t>(beat[4 * w + 2]) << 16 |
               static_cast<std::uint32_t>(beat[4 * w + 3]) << 24;
  }
}

Beat words_to_beat(const VlWide<4>& words) {
  Beat beat{};
  for (int i = 0; i < 16; ++i) beat[i] = static_cast<std::uint8_t>(words[i / 4] >> (8 * (i % 4)));
  return beat;
}

}  // namespace

struct RtlReductionUnit::Impl {
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vreduction_unit> top;
  std::unique_ptr<VerilatedVcdC> vcd;
  std::uint64_t cycles = 0;  // counted clocks
  std::uint64_t clocks = 0;  // every clock, reset included (VCD time)
  double ready_probability = 1.0;
  std::mt19937_64 ready_random{0};

  Impl() : context(std::make_unique<VerilatedContext>()) {
    context->traceEverOn(true);  // a VCD may be opened later
    top = std::make_unique<Vreduction_unit>(context.get(), "reduction_unit");
    top->clk = 0;
    top->rst_n = 0;
    top->cmd_valid = 0;
    top->res_ready = 1;
    top->status_clear = 0;
    for (int i = 0; i < reset_clocks; ++i) clock();
    top->rst_n = 1;
    top->eval();
  }

  ~Impl() {
    if (vcd) vcd->close();
    top->final();
  }

  bool output_ready() {
    if (ready_probability >= 1.0) return true;
    // 53 random bits as a fraction in [0, 1): portable, unlike std::uniform_real_distribution.
    const double draw = static_cast<double>(ready_random() >> 11) * 0x1.0p-53;
    return draw < ready_probability;
  }

  // A clock is a low phase, in which the inputs settle and the handshakes are sampled, and then
  // the rising edge.
  void low_phase() {
    top->clk = 0;
    top->eval();
    if (vcd) vcd->dump(clocks * clock_period_ps);
  }
  void rising_edge() {
    top->clk = 1;
    top->eval();
    if (vcd) vcd->dump(clocks * clock_period_ps + clock_period_ps / 2);
    ++clocks;
  }
  void clock() {
    low_phase();
    rising_edge();
  }

  void drive(const Command& command) {
    top->cmd_is_open = command.kind == Command::Kind::open_context;
    if (command.kind == Command::Kind::open_context) {
      const OpenContext& open = command.open;
      top->cmd_context = open.context;
      top->cmd_contributions = open.contributions;
      top->cmd_op = static_cast<std::uint8_t>(open.op);
      top->cmd_dtype = static_cast<std::uint8_t>(open.type);
      top->cmd_length_beats = open.length_beats;
    } else {
      const Contribution& in = command.contribution;
      top->cmd_context = in.context;
      top->cmd_beat = in.beat;
      beat_to_words(in.data, top->cmd_data);
    }
  }

  ResultBeat sample_result() const {
    ResultBeat result;
    result.context = top->res_context;
    result.beat = top->res_beat;
    result.data = words_to_beat(top->res_data);
    result.contributions = top->res_contributions;
    result.partial = top->res_partial != 0;
    return result;
  }
};

RtlReductionUnit::RtlReductionUnit(const ReductionUnitConfig& config) {
  if (!default_structure(config)) {
    const ReductionUnitConfig defaults{};
    throw std::invalid_argument(
        "the rtl reduction backend is built for the default structure only (buffer_bytes " +
        std::to_string(defaults.buffer_bytes) + ", contexts " + std::to_string(defaults.contexts) +
        ", ways " + std::to_string(defaults.ways) + ", context_max_beats " +
        std::to_string(defaults.context_max_beats) + "); use the model backend for others");
  }
  impl_ = std::make_unique<Impl>();
}

RtlReductionUnit::~RtlReductionUnit() = default;

void RtlReductionUnit::process(const std::vector<Command>& commands,
                               std::vector<ResultBeat>& results) {
  Impl& unit = *impl_;
  Vreduction_unit& top = *unit.top;
  std::size_t next = 0;
  std::uint64_t clocks_without_progress = 0;
  while (next < commands.size() || !top.idle) {
    const bool offering = next < commands.size();
    top.cmd_valid = offering;
    if (offering) unit.drive(commands[next]);
    top.res_ready = unit.output_ready();
    unit.low_phase();
    const bool command_taken = offering && top.cmd_ready;
    const bool result_taken = top.res_valid && top.res_ready;
    if (result_taken) results.push_back(unit.sample_result());
    const bool output_ready = top.res_ready;
    unit.rising_edge();
    ++unit.cycles;
    if (command_taken) ++next;
    if (command_taken || result_taken || !output_ready) {
      clocks_without_progress = 0;
    } else if (++clocks_without_progress > stall_limit_clocks) {
      throw std::runtime_error("rtl reduction unit: no progress in " +
                               std::to_string(stall_limit_clocks) +
                               " clocks with the output ready (command " + std::to_string(next) +
                               " of " + std::to_string(commands.size()) + ")");
    }
  }
  top.cmd_valid = 0;
}

ReductionStatus RtlReductionUnit::status() const {
  const Vreduction_unit& top = *impl_->top;
  ReductionStatus status;
  status.sticky = top.status_sticky;
  status.counters.contributions = top.count_contributions;
  status.counters.completed_beats = top.count_completed_beats;
  status.counters.evicted_beats = top.count_evicted_beats;
  status.counters.passthrough_beats = top.count_passthrough_beats;
  status.counters.errors = top.count_errors;
  status.counters.contexts_opened = top.count_contexts_opened;
  status.counters.contexts_completed = top.count_contexts_completed;
  return status;
}

void RtlReductionUnit::clear_status(std::uint32_t mask) {
  Vreduction_unit& top = *impl_->top;
  top.cmd_valid = 0;
  top.res_ready = 1;
  top.status_clear = static_cast<std::uint8_t>(mask & 0x3Fu);
  impl_->clock();
  ++impl_->cycles;
  top.status_clear = 0;
  top.eval();
}

std::uint64_t RtlReductionUnit::cycles() const { return impl_->cycles; }

void RtlReductionUnit::set_output_ready_probability(double ready_probability, std::uint64_t seed) {
  if (!(ready_probability > 0.0 && ready_probability <= 1.0))
    throw std::invalid_argument("output ready probability " + std::to_string(ready_probability) +
                                " is outside (0, 1]");
  impl_->ready_probability = ready_probability;
  impl_->ready_random.seed(seed);
}

void RtlReductionUnit::enable_vcd(const std::string& path) {
  disable_vcd();
  auto vcd = std::make_unique<VerilatedVcdC>();
  impl_->top->trace(vcd.get(), 99);
  vcd->open(path.c_str());
  if (!vcd->isOpen()) throw std::runtime_error("cannot open VCD file '" + path + "' for writing");
  impl_->vcd = std::move(vcd);
}

void RtlReductionUnit::disable_vcd() {
  if (!impl_->vcd) return;
  impl_->vcd->close();
  impl_->vcd.reset();
}

}  // namespace nvsvp::reduction
