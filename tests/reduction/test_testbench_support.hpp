// Test doubles for the testbench's own tests: a unit that wraps a real one and corrupts what it
// reports, so that the scoreboard and the vector checker can be shown to catch a wrong unit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nvsvp/reduction/reduction_unit.hpp"

namespace nvsvp::testbench::test {

using reduction::Command;
using reduction::ReductionStatus;
using reduction::ReductionUnit;
using reduction::ResultBeat;

class CorruptingUnit : public ReductionUnit {
 public:
  enum class Fault {
    none,
    flip_data_bit,      // output number `at`: one bit of byte `byte` flipped
    flip_partial,       // output number `at`: the partial flag inverted
    drop_output,        // output number `at` never appears
    extra_output,       // a copy of output number `at` appears twice
    count_extra_error,  // the error counter reads one too high from output `at` on
    ignore_clear,       // clear_status does nothing
    replace_data,       // every output's lanes replaced by `data` (vector-file tests)
  };

  CorruptingUnit(std::unique_ptr<ReductionUnit> inner, Fault fault, std::uint64_t at = 0)
      : inner_(std::move(inner)), fault_(fault), at_(at) {}

  void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) override {
    const std::size_t first = results.size();
    inner_->process(commands, results);
    std::vector<ResultBeat> out(results.begin() + static_cast<std::ptrdiff_t>(first), results.end());
    results.resize(first);
    for (ResultBeat& beat : out) {
      const std::uint64_t k = outputs_++;
      if (fault_ == Fault::replace_data) beat.data = data;
      if (k == at_) {
        switch (fault_) {
          case Fault::flip_data_bit: beat.data[byte] ^= 0x01; break;
          case Fault::flip_partial: beat.partial = !beat.partial; break;
          case Fault::drop_output: continue;
          case Fault::extra_output: results.push_back(beat); break;
          default: break;
        }
      }
      results.push_back(beat);
    }
  }
  ReductionStatus status() const override {
    ReductionStatus s = inner_->status();
    if (fault_ == Fault::count_extra_error && outputs_ > at_) ++s.counters.errors;
    return s;
  }
  void clear_status(std::uint32_t mask) override {
    if (fault_ != Fault::ignore_clear) inner_->clear_status(mask);
  }
  std::uint64_t cycles() const override { return inner_->cycles(); }
  std::string backend_name() const override { return "corrupted " + inner_->backend_name(); }

  std::size_t byte = 0;
  reduction::Beat data{};

 private:
  std::unique_ptr<ReductionUnit> inner_;
  Fault fault_;
  std::uint64_t at_;
  std::uint64_t outputs_ = 0;
};

}  // namespace nvsvp::testbench::test
