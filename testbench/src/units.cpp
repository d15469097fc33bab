#include "nvsvp/testbench/units.hpp"

#include <stdexcept>

#include "nvsvp/reduction/reduction_factory.hpp"
#include "nvsvp/reduction/reduction_model.hpp"
#include "nvsvp/reduction/rtl_reduction_unit.hpp"

namespace nvsvp::testbench {

using reduction::ReductionUnit;
using reduction::RtlReductionUnit;

namespace {

// The backend by name, its RTL (if any) being the Verilated model that writes `format`.
std::unique_ptr<ReductionUnit> make_backend(const UnitOptions& options) {
  if (options.wave_path.empty() || options.wave_format == reduction::WaveFormat::vcd) {
    return reduction::make_reduction_unit(options.backend, options.config);
  }
  if (options.backend == "rtl") return std::make_unique<RtlReductionUnit>(options.config, options.wave_format);
  if (options.backend == "both") {
    return std::make_unique<reduction::LockstepReductionUnit>(
        std::make_unique<reduction::ReductionModel>(options.config),
        std::make_unique<RtlReductionUnit>(options.config, options.wave_format));
  }
  return reduction::make_reduction_unit(options.backend, options.config);  // no RTL: refused below
}

}  // namespace

std::unique_ptr<ReductionUnit> make_unit_under_test(const UnitOptions& options) {
  std::unique_ptr<ReductionUnit> unit = make_backend(options);
  RtlReductionUnit* rtl = rtl_of(*unit);
  if (rtl != nullptr) {
    rtl->set_output_ready_probability(options.ready_probability, options.ready_seed);
    if (!options.wave_path.empty()) rtl->enable_wave(options.wave_path, options.wave_window);
  } else if (!options.wave_path.empty()) {
    throw std::runtime_error("a waveform needs the RTL: backend '" + options.backend + "' has none");
  }
  return unit;
}

std::unique_ptr<ReductionUnit> make_reference(const reduction::ReductionUnitConfig& config) {
  return std::make_unique<reduction::ReductionModel>(config);
}

RtlReductionUnit* rtl_of(ReductionUnit& unit) {
  if (auto* rtl = dynamic_cast<RtlReductionUnit*>(&unit)) return rtl;
  if (auto* both = dynamic_cast<reduction::LockstepReductionUnit*>(&unit)) {
    return dynamic_cast<RtlReductionUnit*>(&both->checked());
  }
  return nullptr;
}

}  // namespace nvsvp::testbench
