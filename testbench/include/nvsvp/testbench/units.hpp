// Builds the units the testbench drives: the unit under test by backend name ("rtl", "model",
// "both") and the reference model, and reaches the RTL transactor inside either for back-pressure
// and waveforms.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "nvsvp/reduction/reduction_unit.hpp"
#include "nvsvp/reduction/rtl_reduction_unit.hpp"

namespace nvsvp::testbench {

struct UnitOptions {
  std::string backend = "rtl";  // rtl | model | both
  reduction::ReductionUnitConfig config{};
  double ready_probability = 1.0;  // output back-pressure of the RTL (1: always ready)
  std::uint64_t ready_seed = 1;
  std::string wave_path;           // non-empty: dump the RTL's clocks to this waveform file
  reduction::WaveFormat wave_format = reduction::WaveFormat::vcd;
  reduction::WaveWindow wave_window{};
};

// Throws std::invalid_argument for an unknown backend; std::runtime_error when the waveform file
// cannot be opened or when a waveform is asked of a backend without RTL.
std::unique_ptr<reduction::ReductionUnit> make_unit_under_test(const UnitOptions& options);
std::unique_ptr<reduction::ReductionUnit> make_reference(const reduction::ReductionUnitConfig& config);

// The RTL transactor inside `unit` ("rtl" itself, or the checked side of "both"), or nullptr.
reduction::RtlReductionUnit* rtl_of(reduction::ReductionUnit& unit);

}  // namespace nvsvp::testbench
