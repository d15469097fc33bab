#include "nvsvp/reduction/rtl_reduction_unit.hpp"

#include <random>
#include <stdexcept>

#include "Vreduction_unit.h"
#include "Vreduction_unit_fst.h"
#include "verilated.h"
#include "verilated_fst_c.h"
#include "verilated_vcd_c.h"

namespace nvsvp::reduction {
namespace {

// Clocks with the output ready and no progress after which the pipeline is declared stuck: it
// drains in 5, so this only fires on an RTL bug, and turns a hang into an error.
constexpr std::uint64_t stall_limit_clocks = 1000;
constexpr int reset_clocks = 2;
// Waveform time stamps: a notional 1 GHz clock, falling edge at 0 ps, rising edge at 500 ps.
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

// The transactor's state and clocking, whatever the Verilated model; the model itself lives in
// VerilatedImpl below (the process loop is compiled once per model, so it calls no virtual function
// per clock).
struct RtlReductionUnit::Impl {
  std::uint64_t cycles = 0;  // counted clocks
  std::uint64_t clocks = 0;  // every clock, reset included (waveform time)
  double ready_probability = 1.0;
  std::mt19937_64 ready_random{0};

  virtual ~Impl() = default;
  virtual void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) = 0;
  virtual ReductionStatus status() const = 0;
  virtual void clear_status(std::uint32_t mask) = 0;
  virtual void enable_wave(const std::string& path, WaveWindow window) = 0;
  virtual void disable_wave() = 0;
  virtual WaveFormat wave_format() const = 0;

  bool output_ready() {
    if (ready_probability >= 1.0) return true;
    // 53 random bits as a fraction in [0, 1): portable, unlike std::uniform_real_distribution.
    const double draw = static_cast<double>(ready_random() >> 11) * 0x1.0p-53;
    return draw < ready_probability;
  }
};

namespace {

template <class Model, class Trace, WaveFormat kFormat>
class VerilatedImpl final : public RtlReductionUnit::Impl {
 public:
  VerilatedImpl() : context_(std::make_unique<VerilatedContext>()) {
    context_->traceEverOn(true);  // a waveform may be opened later
    top_ = std::make_unique<Model>(context_.get(), "reduction_unit");
    top_->clk = 0;
    top_->rst_n = 0;
    top_->cmd_valid = 0;
    top_->res_ready = 1;
    top_->status_clear = 0;
    for (int i = 0; i < reset_clocks; ++i) clock();
    top_->rst_n = 1;
    top_->eval();
  }

  ~VerilatedImpl() override {
    disable_wave();
    top_->final();
  }

  void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) override {
    Model& top = *top_;
    std::size_t next = 0;
    std::uint64_t clocks_without_progress = 0;
    while (next < commands.size() || !top.idle) {
      const bool offering = next < commands.size();
      top.cmd_valid = offering;
      if (offering) drive(commands[next]);
      top.res_ready = output_ready();
      low_phase();
      const bool command_taken = offering && top.cmd_ready;
      const bool result_taken = top.res_valid && top.res_ready;
      if (result_taken) results.push_back(sample_result());
      const bool ready = top.res_ready;
      rising_edge();
      ++cycles;
      if (command_taken) ++next;
      if (command_taken || result_taken || !ready) {
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

  ReductionStatus status() const override {
    const Model& top = *top_;
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

  void clear_status(std::uint32_t mask) override {
    Model& top = *top_;
    top.cmd_valid = 0;
    top.res_ready = 1;
    top.status_clear = static_cast<std::uint8_t>(mask & 0x3Fu);
    clock();
    ++cycles;
    top.status_clear = 0;
    top.eval();
  }

  void enable_wave(const std::string& path, WaveWindow window) override {
    disable_wave();
    auto trace = std::make_unique<Trace>();
    top_->trace(trace.get(), 99);
    trace->open(path.c_str());
    if (!trace->isOpen()) {
      throw std::runtime_error(std::string("cannot open ") + (kFormat == WaveFormat::fst ? "FST" : "VCD") +
                               " file '" + path + "' for writing");
    }
    trace_ = std::move(trace);
    window_ = window;
  }

  void disable_wave() override {
    if (!trace_) return;
    trace_->close();
    trace_.reset();
  }

  WaveFormat wave_format() const override { return kFormat; }

 private:
  // Dumps at `time_ps` when its clock is inside the window; closes the file once past it.
  void dump(std::uint64_t time_ps) {
    if (!trace_) return;
    const std::uint64_t clock_ns = time_ps / clock_period_ps;
    if (clock_ns >= window_.to_ns) {
      disable_wave();
    } else if (clock_ns >= window_.from_ns) {
      trace_->dump(time_ps);
    }
  }

  // A clock is a low phase, in which the inputs settle and the handshakes are sampled, and then
  // the rising edge.
  void low_phase() {
    top_->clk = 0;
    top_->eval();
    dump(clocks * clock_period_ps);
  }
  void rising_edge() {
    top_->clk = 1;
    top_->eval();
    dump(clocks * clock_period_ps + clock_period_ps / 2);
    ++clocks;
  }
  void clock() {
    low_phase();
    rising_edge();
  }

  void drive(const Command& command) {
    Model& top = *top_;
    top.cmd_is_open = command.kind == Command::Kind::open_context;
    if (command.kind == Command::Kind::open_context) {
      const OpenContext& open = command.open;
      top.cmd_context = open.context;
      top.cmd_contributions = open.contributions;
      top.cmd_op = static_cast<std::uint8_t>(open.op);
      top.cmd_dtype = static_cast<std::uint8_t>(open.type);
      top.cmd_length_beats = open.length_beats;
    } else {
      const Contribution& in = command.contribution;
      top.cmd_context = in.context;
      top.cmd_beat = in.beat;
      beat_to_words(in.data, top.cmd_data);
    }
  }

  ResultBeat sample_result() const {
    const Model& top = *top_;
    ResultBeat result;
    result.context = top.res_context;
    result.beat = top.res_beat;
    result.data = words_to_beat(top.res_data);
    result.contributions = top.res_contributions;
    result.partial = top.res_partial != 0;
    return result;
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> top_;
  std::unique_ptr<Trace> trace_;
  WaveWindow window_;
};

}  // namespace

RtlReductionUnit::RtlReductionUnit(const ReductionUnitConfig& config, WaveFormat wave_format) {
  if (!default_structure(config)) {
    const ReductionUnitConfig defaults{};
    throw std::invalid_argument(
        "the rtl reduction backend is built for the default structure only (buffer_bytes " +
        std::to_string(defaults.buffer_bytes) + ", contexts " + std::to_string(defaults.contexts) +
        ", ways " + std::to_string(defaults.ways) + ", context_max_beats " +
        std::to_string(defaults.context_max_beats) + "); use the model backend for others");
  }
  if (wave_format == WaveFormat::fst) {
    impl_ = std::make_unique<VerilatedImpl<Vreduction_unit_fst, VerilatedFstC, WaveFormat::fst>>();
  } else {
    impl_ = std::make_unique<VerilatedImpl<Vreduction_unit, VerilatedVcdC, WaveFormat::vcd>>();
  }
}

RtlReductionUnit::~RtlReductionUnit() = default;

void RtlReductionUnit::process(const std::vector<Command>& commands,
                               std::vector<ResultBeat>& results) {
  impl_->process(commands, results);
}

ReductionStatus RtlReductionUnit::status() const { return impl_->status(); }

void RtlReductionUnit::clear_status(std::uint32_t mask) { impl_->clear_status(mask); }

std::uint64_t RtlReductionUnit::cycles() const { return impl_->cycles; }

void RtlReductionUnit::set_output_ready_probability(double ready_probability, std::uint64_t seed) {
  if (!(ready_probability > 0.0 && ready_probability <= 1.0))
    throw std::invalid_argument("output ready probability " + std::to_string(ready_probability) +
                                " is outside (0, 1]");
  impl_->ready_probability = ready_probability;
  impl_->ready_random.seed(seed);
}

void RtlReductionUnit::enable_wave(const std::string& path, WaveWindow window) {
  impl_->enable_wave(path, window);
}

void RtlReductionUnit::disable_wave() { impl_->disable_wave(); }

WaveFormat RtlReductionUnit::wave_format() const { return impl_->wave_format(); }

std::uint64_t RtlReductionUnit::wave_time_ns() const { return impl_->clocks; }

}  // namespace nvsvp::reduction
