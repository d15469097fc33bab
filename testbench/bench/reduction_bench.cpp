// Speed of the reduction unit: the Verilated RTL through its transactor (clock cycles and
// contribution beats per wall-second) and the C++ model (beats per wall-second), on two command
// streams prepared before timing:
//   random    - the testbench's constrained-random mix (every op and type, interleaved contexts,
//               evictions, passthrough, a few illegal commands), seed 1
//   streaming - one f32 add context at a time, 4 contributions per beat, beats in order (the
//               NCCL-like steady state: every command a hit or a completion)
// Each iteration is one process() call of 4096 commands; the stream restarts on a fresh unit when
// used up (outside the timing). Rates are per wall-second (UseRealTime): run on an idle machine.
//
// build/nvsvp_reduction_bench                      # all
// build/nvsvp_reduction_bench --benchmark_filter=Rtl
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "nvsvp/reduction/reduction_model.hpp"
#include "nvsvp/reduction/rtl_reduction_unit.hpp"
#include "nvsvp/testbench/stimulus.hpp"

namespace {

using nvsvp::reduction::Command;
using nvsvp::reduction::ReductionUnit;
using nvsvp::reduction::ResultBeat;

constexpr std::size_t kBatch = 4096;

struct Stream {
  std::vector<std::vector<Command>> batches;
  std::uint64_t contributions = 0;
};

const Stream& random_stream() {
  static const Stream stream = [] {
    Stream s;
    nvsvp::testbench::StimulusOptions options;
    nvsvp::testbench::StimulusGenerator generator(1, options);
    std::vector<std::uint32_t> expected_error;
    while (!generator.finished()) {
      if (generator.stats().contributions >= 2000000) generator.start_draining();
      std::vector<Command> batch;
      generator.generate(kBatch, batch, expected_error);
      if (batch.empty()) break;
      s.batches.push_back(std::move(batch));
    }
    s.contributions = generator.stats().contributions;
    return s;
  }();
  return stream;
}

const Stream& streaming_stream() {
  static const Stream stream = [] {
    Stream s;
    std::vector<Command> all;
    for (int round = 0; round < 500; ++round) {
      Command open;
      open.kind = Command::Kind::open_context;
      open.open = {static_cast<std::uint16_t>(round % 64), 4, nvsvp::reduction::ReduceOp::add,
                   nvsvp::reduction::ReduceType::f32, 1024};
      all.push_back(open);
      for (std::uint32_t beat = 0; beat < 1024; ++beat) {
        for (int j = 0; j < 4; ++j) {
          Command c;
          c.kind = Command::Kind::contribution;
          c.contribution.context = open.open.context;
          c.contribution.beat = beat;
          for (std::size_t i = 0; i < 16; ++i) c.contribution.data[i] = static_cast<std::uint8_t>(beat * 7 + j + i);
          all.push_back(c);
          ++s.contributions;
        }
      }
    }
    for (std::size_t i = 0; i < all.size(); i += kBatch) {
      s.batches.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(i),
                             all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + kBatch)));
    }
    return s;
  }();
  return stream;
}

std::unique_ptr<ReductionUnit> make(bool rtl, double ready_probability) {
  if (!rtl) return std::make_unique<nvsvp::reduction::ReductionModel>();
  auto unit = std::make_unique<nvsvp::reduction::RtlReductionUnit>();
  unit->set_output_ready_probability(ready_probability, 1);
  return unit;
}

void run(benchmark::State& state, const Stream& stream, bool rtl, double ready_probability) {
  std::unique_ptr<ReductionUnit> unit = make(rtl, ready_probability);
  std::vector<ResultBeat> results;
  std::size_t next = 0;
  std::uint64_t cycles = 0, beats = 0, outputs = 0;
  for (auto _ : state) {
    if (next == stream.batches.size()) {
      state.PauseTiming();
      cycles += unit->cycles();
      unit = make(rtl, ready_probability);
      next = 0;
      state.ResumeTiming();
    }
    const std::vector<Command>& batch = stream.batches[next++];
    results.clear();
    unit->process(batch, results);
    outputs += results.size();
    for (const Command& c : batch) beats += c.kind == Command::Kind::contribution ? 1 : 0;
  }
  cycles += unit->cycles();
  state.counters["beats/s"] = benchmark::Counter(static_cast<double>(beats), benchmark::Counter::kIsRate);
  state.counters["outputs/s"] = benchmark::Counter(static_cast<double>(outputs), benchmark::Counter::kIsRate);
  if (rtl) {
    state.counters["cycles/s"] = benchmark::Counter(static_cast<double>(cycles), benchmark::Counter::kIsRate);
    state.counters["cycles/beat"] = static_cast<double>(cycles) / static_cast<double>(std::max<std::uint64_t>(beats, 1));
  }
}

void BM_RtlRandom(benchmark::State& state) { run(state, random_stream(), true, 1.0); }
void BM_RtlRandomBackPressure50(benchmark::State& state) { run(state, random_stream(), true, 0.5); }
void BM_RtlStreaming(benchmark::State& state) { run(state, streaming_stream(), true, 1.0); }
void BM_ModelRandom(benchmark::State& state) { run(state, random_stream(), false, 1.0); }
void BM_ModelStreaming(benchmark::State& state) { run(state, streaming_stream(), false, 1.0); }

BENCHMARK(BM_RtlRandom)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_RtlRandomBackPressure50)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_RtlStreaming)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_ModelRandom)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
BENCHMARK(BM_ModelStreaming)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
