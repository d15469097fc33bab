// The backend factory: names, structure checks, and the "both" comparison, shown to catch a
// genuinely different backend (a model with another buffer shape) and test doubles that corrupt
// one field of one beat, drop a beat or report a different counter.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/reduction/reduction_factory.hpp"
#include "test_reduction_unit_support.hpp"

namespace nvsvp::reduction {
namespace {

using test::contribution;
using test::open_command;
using test::u32_splat;

std::string mismatch_message(ReductionUnit& unit, const std::vector<Command>& commands) {
  std::vector<ResultBeat> results;
  try {
    unit.process(commands, results);
  } catch (const ReductionMismatch& mismatch) {
    return mismatch.what();
  }
  return "";
}

// A model whose output is corrupted in one way, standing in for a faulty RTL.
class CorruptingUnit : public ReductionUnit {
 public:
  enum class Fault { flip_data_bit, drop_last_beat, extra_error_count };
  CorruptingUnit(Fault fault, std::size_t beat_index) : fault_(fault), beat_index_(beat_index) {}

  void process(const std::vector<Command>& commands, std::vector<ResultBeat>& results) override {
    std::vector<ResultBeat> mine;
    model_.process(commands, mine);
    if (fault_ == Fault::flip_data_bit && beat_index_ < mine.size()) mine[beat_index_].data[15] ^= 0x80;
    if (fault_ == Fault::drop_last_beat && !mine.empty()) mine.pop_back();
    results.insert(results.end(), mine.begin(), mine.end());
  }
  ReductionStatus status() const override {
    ReductionStatus status = model_.status();
    if (fault_ == Fault::extra_error_count) status.counters.errors++;
    return status;
  }
  void clear_status(std::uint32_t mask) override { model_.clear_status(mask); }
  std::uint64_t cycles() const override { return model_.cycles(); }
  std::string backend_name() const override { return "faulty"; }

 private:
  ReductionModel model_;
  Fault fault_;
  std::size_t beat_index_;
};

std::vector<Command> three_beats() {
  return {open_command(4, 2, ReduceOp::add, ReduceType::u32, 3),
          contribution(4, 0, u32_splat(1)),  contribution(4, 0, u32_splat(2)),   // beat 0: 3
          contribution(4, 2, u32_splat(10)), contribution(4, 2, u32_splat(20)),  // beat 2: 30
          contribution(4, 1, u32_splat(7)),  contribution(4, 1, u32_splat(8))};  // beat 1: 15
}

TEST(ReductionFactory, NamesTheThreeBackends) {
  EXPECT_EQ(reduction_backend_names(), (std::vector<std::string>{"model", "rtl", "both"}));
  for (const std::string& name : reduction_backend_names()) {
    auto unit = make_reduction_unit(name, ReductionUnitConfig{});
    ASSERT_NE(unit, nullptr);
    EXPECT_EQ(unit->backend_name(), name);
  }
}

TEST(ReductionFactory, UnknownBackendListsTheValidNames) {
  try {
    make_reduction_unit("verilog", ReductionUnitConfig{});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'verilog'"), std::string::npos) << message;
    EXPECT_NE(message.find("model, rtl, both"), std::string::npos) << message;
  }
}

TEST(ReductionFactory, RtlBackendsRefuseANonDefaultStructure) {
  ReductionUnitConfig config;
  config.ways = 4;
  EXPECT_NE(make_reduction_unit("model", config), nullptr);
  for (const char* name : {"rtl", "both"}) {
    try {
      make_reduction_unit(name, config);
      FAIL() << name << ": no exception";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("default structure"), std::string::npos)
          << error.what();
    }
  }
}

TEST(ReductionFactory, LockstepPassesWhenBothAgreeAndReturnsTheResults) {
  LockstepReductionUnit both(std::make_unique<ReductionModel>(), std::make_unique<ReductionModel>());
  std::vector<ResultBeat> results;
  both.process(three_beats(), results);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[1], test::result_beat(4, 2, u32_splat(30), 2, false));
  both.clear_status(0x3F);
  EXPECT_EQ(both.status().counters.completed_beats, 3u);
}

TEST(ReductionFactory, LockstepCatchesADifferentEvictionPolicy) {
  // The checked unit has one way per set (8 sets) against the reference's two (4 sets): beats 0
  // and 8 of context 0 share set 0 in both, so only the checked unit evicts beat 0.
  ReductionUnitConfig two_way{256, 8, 2, 64};
  ReductionUnitConfig one_way{256, 8, 1, 64};
  LockstepReductionUnit both(std::make_unique<ReductionModel>(two_way),
                             std::make_unique<ReductionModel>(one_way));
  const std::string message =
      mismatch_message(both, {open_command(0, 2, ReduceOp::add, ReduceType::u32, 16),
                              contribution(0, 0, u32_splat(1)), contribution(0, 8, u32_splat(2))});
  ASSERT_FALSE(message.empty()) << "the difference went unnoticed";
  EXPECT_NE(message.find("field presence"), std::string::npos) << message;
  EXPECT_NE(message.find("context 0, beat 0"), std::string::npos) << message;
  EXPECT_NE(message.find("commands 0 to 2"), std::string::npos) << message;
}

TEST(ReductionFactory, LockstepNamesTheCommandFieldAndBothValuesOfADataDifference) {
  LockstepReductionUnit both(std::make_unique<ReductionModel>(),
                             std::make_unique<CorruptingUnit>(CorruptingUnit::Fault::flip_data_bit, 1));
  // A first call that agrees, so the command index counts across calls.
  std::vector<ResultBeat> results;
  both.process({open_command(9, 1, ReduceOp::add, ReduceType::u32, 1)}, results);
  const std::string message = mismatch_message(both, three_beats());
  ASSERT_FALSE(message.empty()) << "the difference went unnoticed";
  // Result beat 1 (beat 2, 10 + 20 = 30 in every lane) came from command 4 of the second call,
  // command 5 overall.
  EXPECT_NE(message.find("command 5 (contribution to context 4, beat 2)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("field data"), std::string::npos) << message;
  EXPECT_NE(message.find("model 0x0000001e0000001e0000001e0000001e"), std::string::npos) << message;
  EXPECT_NE(message.find("faulty 0x8000001e0000001e0000001e0000001e"), std::string::npos) << message;
}

TEST(ReductionFactory, LockstepCatchesAMissingBeat) {
  LockstepReductionUnit both(std::make_unique<ReductionModel>(),
                             std::make_unique<CorruptingUnit>(CorruptingUnit::Fault::drop_last_beat, 0));
  const std::string message = mismatch_message(both, three_beats());
  ASSERT_FALSE(message.empty()) << "the difference went unnoticed";
  EXPECT_NE(message.find("command 6 (contribution to context 4, beat 1)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("field presence"), std::string::npos) << message;
  EXPECT_NE(message.find("faulty emitted nothing"), std::string::npos) << message;
}

TEST(ReductionFactory, LockstepComparesTheStatusAfterEveryCall) {
  LockstepReductionUnit both(std::make_unique<ReductionModel>(),
                             std::make_unique<CorruptingUnit>(CorruptingUnit::Fault::extra_error_count, 0));
  const std::string message = mismatch_message(both, three_beats());
  ASSERT_FALSE(message.empty()) << "the difference went unnoticed";
  EXPECT_NE(message.find("counters.errors: model 0, faulty 1"), std::string::npos) << message;
  EXPECT_NE(message.find("after command 6"), std::string::npos) << message;
}

TEST(ReductionFactory, MismatchIsARuntimeError) {
  LockstepReductionUnit both(std::make_unique<ReductionModel>(),
                             std::make_unique<CorruptingUnit>(CorruptingUnit::Fault::flip_data_bit, 0));
  std::vector<ResultBeat> results;
  EXPECT_THROW(both.process(three_beats(), results), std::runtime_error);
  EXPECT_TRUE(results.empty());  // nothing is returned from a failed comparison
}

}  // namespace
}  // namespace nvsvp::reduction
