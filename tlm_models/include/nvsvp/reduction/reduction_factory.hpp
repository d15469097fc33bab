// Chooses the reduction unit's backend by name (the platform parameter `reduction_backend`):
// "model" (the C++ model), "rtl" (the Verilated RTL behind its transactor) or "both" (the two side
// by side, every result beat and the status compared; the first difference throws
// ReductionMismatch naming it).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_model.hpp"
#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::reduction {

// Two backends disagreed. The message names the command, its context and beat, the field and
// both values.
class ReductionMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const std::vector<std::string>& reduction_backend_names();  // model, rtl, both

// Unknown names, and a non-default structure for "rtl"/"both", throw std::invalid_argument.
std::unique_ptr<ReductionUnit> make_reduction_unit(const std::string& backend,
                                                   const ReductionUnitConfig& config);

// The "both" backend: every process() call runs `reference` and then `checked` on the same
// commands and compares their result beats one by one (and their status afterwards). The
// reference's results are the ones returned. Public so that tests can show a difference is caught.
class LockstepReductionUnit : public ReductionUnit {
 public:
  LockstepReductionUnit(std::unique_ptr<ReductionModel> reference,
                        std::unique_ptr<ReductionUnit> checked);

  void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) override;
  ReductionStatus status() const override { return reference_->status(); }
  void clear_status(std::uint32_t mask) override;
  std::uint64_t cycles() const override { return checked_->cycles(); }  // the measured one
  std::string backend_name() const override { return "both"; }

  ReductionModel& reference() { return *reference_; }
  ReductionUnit& checked() { return *checked_; }

 private:
  void compare_status(const std::string& when) const;

  std::unique_ptr<ReductionModel> reference_;
  std::unique_ptr<ReductionUnit> checked_;
  std::uint64_t commands_before_ = 0;  // commands processed by earlier calls
};

}  // namespace nvsvp::reduction
