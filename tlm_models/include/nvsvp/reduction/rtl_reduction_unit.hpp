// The Verilated RTL of the reduction unit (rtl/reduction_unit.sv) behind the ReductionUnit
// interface. The transactor owns the model (one VerilatedContext per instance), toggles its clock
// and calls eval() itself: no SystemC, no free-running clock. Commands stream in back to back, one
// per clock while the unit is ready; process() returns once every command has been taken and the
// pipeline has drained.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::reduction {

class RtlReductionUnit : public ReductionUnit {
 public:
  // The RTL library is Verilated once with the default parameters: any other config throws
  // std::invalid_argument.
  explicit RtlReductionUnit(const ReductionUnitConfig& config = {});
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

  // Dumps every later clock to a VCD file (until disable_vcd() or destruction). Throws
  // std::runtime_error when the file cannot be opened.
  void enable_vcd(const std::string& path);
  void disable_vcd();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nvsvp::reduction
