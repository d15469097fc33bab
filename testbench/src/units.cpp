#include "nvsvp/testbench/units.hpp"

#include <stdexcept>

#include "nvsvp/reduction/reduction_factory.hpp"
#include "nvsvp/reduction/reduction_model.hpp"
#include "nvsvp/reduction/rtl_reduction_unit.hpp"

namespace nvsvp::testbench {

using reduction::ReductionUnit;
using reduction::RtlReductionUnit;

std::unique_ptr<ReductionUnit> make_unit_under_test(const UnitOptions& options) {
  std::unique_ptr<ReductionUnit> unit = reduction::make_reduction_unit(options.backend, options.config);
  RtlReductionUnit* rtl = rtl_of(*unit);
  if (rtl != nullptr) {
    rtl->set_output_ready_probability(options.ready_probability, options.ready_seed);
    if (!options.vcd_path.empty()) rtl->enable_vcd(options.vcd_path);
  } else if (!options.vcd_path.empty()) {
    throw std::runtime_error("a VCD needs the RTL: backend '" + options.backend + "' has none");
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
