// The Verilated RTL of the reduction unit (rtl/reduction_unit.sv) behind the ReductionUnit
// interface. The transactor owns the model (one VerilatedContext per instance), toggles its clock
// and calls eval() itself: no SystemC, no free-running clock. Commands stream in back to back, one
// per clock while the unit is ready; process() returns once every command has been taken and the
// pipeline has drained.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::reduction {

// The waveform format a unit writes. The RTL is Verilated twice (rtl/CMakeLists.txt), once per
// format: the two models compute alike and differ only in their trace code.
enum class WaveFormat { vcd, fst };

// Which clocks a waveform holds, in ns of its time axis (a notional 1 GHz clock: clock k, counted
// from the first reset clock, spans [k, k + 1) ns): the clocks k with from_ns <= k < to_ns.
struct WaveWindow {
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = std::numeric_limits<std::uint64_t>::max();
};

class RtlReductionUnit : public ReductionUnit {
 public:
  // The RTL library is Verilated with the default parameters only: any other config throws
  // std::invalid_argument. `wave_format` picks the Verilated model, and so the format of
  // enable_wave()'s files.
  explicit RtlReductionUnit(const ReductionUnitConfig& config = {},
                            WaveFormat wave_format = WaveFormat::vcd);
  ~RtlReductionUnit() override;
  RtlReductionUnit(const RtlReductionUnit&) = delete;
  RtlReductionUnit& operator=(const RtlReductionUnit&) = delete;

  void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) override;
  ReductionStatus status() const override;
  // Pulses status_clear for one clock (counted in cycles()).
  void clear_status(std::uint32_t mask) override;
  // Clocks since reset (the reset clocks themselves are not counted).
  std::uint64_t cycles() const override;
  std::string backend_name() const override { return "rtl"; }

  // Output back-pressure for the testbench: on every clock the output is ready with probability
  // `ready_probability` (0 < p <= 1), drawn from a generator seeded with `seed`, so a run
  // reproduces exactly. The default, 1, is always ready.
  void set_output_ready_probability(double ready_probability, std::uint64_t seed);

  // Dumps the later clocks that fall in `window` to a waveform file in the unit's format (until
  // disable_wave(), the end of the window, or destruction; the first clock dumped holds every
  // signal). Throws std::runtime_error when the file cannot be opened.
  void enable_wave(const std::string& path, WaveWindow window = {});
  void disable_wave();
  WaveFormat wave_format() const;
  // Clocks since power-on, the reset clocks included: the waveform's time in ns.
  std::uint64_t wave_time_ns() const;

  // The transactor's state; the Verilated model is in a class derived from it per model
  // (rtl_reduction_unit.cpp), hence public.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvsvp::reduction
