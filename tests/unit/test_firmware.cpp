// Firmware against a mocked HAL (GoogleMock) and plain GpuMemory objects: the deepep plan has the
// tasks and counts the routing implies, run_layer submits one sequence per GPU and waits once,
// and verify_layer accepts a correct run (executed by a small functional interpreter below) and
// names the token and GPU of a corrupted slot, a duplicated copy or a wrong combine result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../common/mock_hal.hpp"
#include "nvsvp/fw/hal.hpp"
#include "nvsvp/fw/moe_data.hpp"
#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/model/gpu_memory.hpp"

namespace nvsvp::fw {
namespace {

using ::testing::_;
using ::testing::Invoke;
using ::testing::NiceMock;
using ::testing::Return;

using test::MockHal;  // tests/common/mock_hal.hpp

// 4 GPUs, 8 experts (2 per GPU), top-3, 3 tokens per GPU; the routing is written out so that
// the expected counts below can be checked by hand.
constexpr uint32_t kGpus = 4;
constexpr uint32_t kTokensPerGpu = 3;
constexpr uint32_t kHidden = 256;

// `chunk_tokens` 1: every remote copy is its own message, as the hand counts below assume.
std::shared_ptr<const MoeLayerSpec> firmware_small_layer(uint32_t chunk_tokens = 1) {
  auto spec = std::make_shared<MoeLayerSpec>();
  spec->software.chunk_tokens = chunk_tokens;
  spec->model.name = "tiny";
  spec->model.hidden = kHidden;
  spec->model.moe_hidden = 64;
  spec->model.experts = 8;
  spec->model.top_k = 3;
  spec->top_k = 3;
  spec->tokens_per_gpu = kTokensPerGpu;
  spec->routing.gpus = kGpus;
  spec->routing.experts = 8;
  spec->routing.top_k = 3;
  spec->routing.tokens_per_gpu = kTokensPerGpu;
  spec->routing.expert_ids = {
      0, 1, 2,  // token 0 (GPU 0): GPUs {0, 1}
      2, 4, 6,  // token 1 (GPU 0): GPUs {1, 2, 3}
      1, 0, 7,  // token 2 (GPU 0): GPUs {0, 3}
      3, 2, 5,  // token 3 (GPU 1): GPUs {1, 2}
      0, 4, 6,  // token 4 (GPU 1): GPUs {0, 2, 3}
      7, 6, 5,  // token 5 (GPU 1): GPUs {3, 2}
      4, 5, 0,  // token 6 (GPU 2): GPUs {2, 0}
      1, 3, 7,  // token 7 (GPU 2): GPUs {0, 1, 3}
      2, 3, 1,  // token 8 (GPU 2): GPUs {1, 0}
      6, 7, 4,  // token 9 (GPU 3): GPUs {3, 2}
      0, 2, 4,  // token 10 (GPU 3): GPUs {0, 1, 2}
      6, 1, 3,  // token 11 (GPU 3): GPUs {3, 0, 1}
  };
  return spec;
}

// Destination GPUs of every token, straight from the routing.
std::vector<std::set<uint32_t>> destinations(const MoeRouting& routing) {
  std::vector<std::set<uint32_t>> d(routing.tokens());
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    for (uint32_t k = 0; k < routing.top_k; ++k) d[t].insert(routing.gpu_of_expert(routing.experts_of(t)[k]));
  }
  return d;
}

size_t count_tasks(const hw::WorkSequence& s, hw::TaskKind kind, int phase = -1) {
  return static_cast<size_t>(std::count_if(s.tasks.begin(), s.tasks.end(), [&](const hw::Task& t) {
    return t.kind == kind && (phase < 0 || t.phase == phase);
  }));
}

// Runs the GPUs' sequences functionally: a send or local copy moves the leading 16 bytes at once,
// a wait blocks its GPU until the counter has the arrivals, a compute runs its kernel. GPUs take
// turns until all are done; a GPU that can never proceed fails the test. `tamper` may change a
// send's data or deliver it twice.
struct Interpreter {
  struct Delivery {
    uint32_t from;
    const hw::Task* task;
    uint8_t* data;   // the 16 bytes about to land; may be changed
    int copies = 1;  // how many times it lands
  };
  std::vector<model::GpuMemory>& memories;
  std::vector<uint64_t> received;
  std::function<void(Delivery&)> tamper = [](Delivery&) {};

  explicit Interpreter(std::vector<model::GpuMemory>& m) : memories(m), received(m.size(), 0) {}

  // Returns which GPUs could not finish (empty when all did).
  std::string run(std::vector<hw::WorkSequence>& sequences) {
    const size_t gpus = sequences.size();
    std::vector<size_t> pc(gpus, 0);
    std::vector<std::vector<uint64_t>> counters(gpus);
    auto bump = [&](size_t gpu, uint32_t counter) {
      if (counters[gpu].size() <= counter) counters[gpu].resize(counter + 1, 0);
      counters[gpu][counter]++;
    };
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t g = 0; g < gpus; ++g) {
        while (pc[g] < sequences[g].tasks.size()) {
          const hw::Task& t = sequences[g].tasks[pc[g]];
          uint8_t data[16];
          if (t.kind == hw::TaskKind::wait_counter) {
            const uint64_t have = t.counter < counters[g].size() ? counters[g][t.counter] : 0;
            if (have < t.arrivals) break;
          } else if (t.kind == hw::TaskKind::send) {
            // One write, or a chunk of writes that arrives as one message.
            const size_t writes = t.chunk_writes == 0 ? 1 : t.chunk_writes;
            for (size_t e = 0; e < writes; ++e) {
              const hw::WriteElement w = t.chunk_writes == 0 ? hw::WriteElement{t.source_address, t.target_address}
                                                         : sequences[g].elements.at(t.first_write + e);
              memories[g].read(w.source_address, data, sizeof data);
              Delivery d{static_cast<uint32_t>(g), &t, data};
              tamper(d);
              for (int i = 0; i < d.copies; ++i) {
                memories[t.peer].write(w.target_address, data, sizeof data);
                bump(t.peer, t.counter);
                if (e == 0) received[t.peer]++;
              }
            }
          } else if (t.kind == hw::TaskKind::local_copy) {
            memories[g].read(t.source_address, data, sizeof data);
            memories[g].write(t.target_address, data, sizeof data);
            bump(g, t.counter);
          } else if (t.kind == hw::TaskKind::compute || t.kind == hw::TaskKind::gemm) {
            if (t.kernel != hw::Task::kNoKernel) sequences[g].kernels.at(t.kernel)(memories[g]);
          } else {
            ADD_FAILURE() << "deepep issued a task kind the interpreter does not know";
          }
          ++pc[g];
          progress = true;
        }
      }
    }
    std::string stuck;
    for (size_t g = 0; g < gpus; ++g) {
      if (pc[g] != sequences[g].tasks.size()) stuck += "GPU " + std::to_string(g) + " never finished; ";
    }
    return stuck;
  }
};

class FirmwareTest : public ::testing::Test {
 protected:
  FirmwareTest() : memories_(kGpus) {
    ON_CALL(hal_, gpu_count()).WillByDefault(Return(kGpus));
    ON_CALL(hal_, memory(_)).WillByDefault(Invoke([this](uint32_t g) -> hw::MemoryAccess& {
      return memories_.at(g);
    }));
    ON_CALL(hal_, received_messages(_)).WillByDefault(Invoke([this](uint32_t g) {
      return interpreter_.received.at(g);
    }));
  }

  // Builds the plan, loads inputs, runs it through run_layer (the mock hands the sequences to the
  // interpreter when firmware waits) and verifies.
  MoeCheckResult run_and_verify() {
    LayerPlan plan = build_layer("deepep", layer_);
    load_inputs(hal_, plan);
    std::vector<hw::WorkSequence> submitted(kGpus);
    EXPECT_CALL(hal_, submit(_, _)).Times(kGpus).WillRepeatedly(Invoke([&](uint32_t g, hw::WorkSequence s) {
      submitted.at(g) = std::move(s);
    }));
    EXPECT_CALL(hal_, wait_all_finished()).WillOnce(Invoke([&] { EXPECT_EQ(interpreter_.run(submitted), ""); }));
    run_layer(hal_, plan);
    return verify_layer(hal_, plan);
  }

  static bool any_violation_has(const MoeCheckResult& r, const std::vector<std::string>& parts) {
    for (const std::string& v : r.violations) {
      bool all = true;
      for (const std::string& p : parts) all = all && v.find(p) != std::string::npos;
      if (all) return true;
    }
    return false;
  }

  std::shared_ptr<const MoeLayerSpec> layer_ = firmware_small_layer();
  std::vector<model::GpuMemory> memories_;
  Interpreter interpreter_{memories_};
  NiceMock<MockHal> hal_;
};

TEST_F(FirmwareTest, DeepepPlanHasOneCopyPerDestinationGpu) {
  const LayerPlan plan = build_layer("deepep", layer_);
  const MoeRouting& routing = layer_->routing;
  const auto dests = destinations(routing);
  ASSERT_EQ(plan.sequences.size(), kGpus);

  uint64_t copies = 0, remote = 0;
  std::vector<uint64_t> remote_out(kGpus, 0), local_out(kGpus, 0), remote_in(kGpus, 0);
  std::vector<uint64_t> slots(kGpus, 0), partials_home_remote(kGpus, 0), partials_sent_remote(kGpus, 0);
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    const uint32_t home = routing.home_of_token(t);
    for (uint32_t d : dests[t]) {
      ++copies;
      slots[d]++;
      if (d == home) {
        local_out[home]++;
      } else {
        ++remote;
        remote_out[home]++;
        remote_in[d]++;
        partials_home_remote[home]++;  // the partial comes back over home's links
        partials_sent_remote[d]++;
      }
    }
  }
  // Worked by hand from the table above: 29 (token, GPU) pairs, 6 of them local.
  EXPECT_EQ(copies, 29u);
  EXPECT_EQ(remote, 23u);
  EXPECT_EQ(plan.token_copies, copies);
  EXPECT_EQ(plan.remote_token_copies, remote);

  enum { kDispatch = 0, kExperts = 1, kCombine = 2 };
  for (uint32_t g = 0; g < kGpus; ++g) {
    const hw::WorkSequence& s = plan.sequences[g];
    SCOPED_TRACE("GPU " + std::to_string(g));
    // Dispatch: a count message to every peer, then one send per remote destination of each local
    // token and one local copy when the home GPU holds one of its experts.
    EXPECT_EQ(count_tasks(s, hw::TaskKind::send, kDispatch), (kGpus - 1) + remote_out[g]);
    EXPECT_EQ(count_tasks(s, hw::TaskKind::local_copy, kDispatch), local_out[g]);
    // Combine: one partial per received token back to its home (a local copy if home is here).
    EXPECT_EQ(count_tasks(s, hw::TaskKind::send, kCombine), partials_sent_remote[g]);
    EXPECT_EQ(count_tasks(s, hw::TaskKind::local_copy, kCombine), slots[g] - partials_sent_remote[g]);
    EXPECT_EQ(count_tasks(s, hw::TaskKind::read), 0u);
    // The experts as two grouped GEMMs of 128 x 128 thread blocks, the kernel on the second: both
    // local experts have tokens (one tile row each); GEMM-1 is 256 -> 128 wide (1 block per row),
    // GEMM-2 64 -> 256 (2 blocks per row).
    ASSERT_EQ(count_tasks(s, hw::TaskKind::gemm, kExperts), 2u);
    const auto gemm1 = std::find_if(s.tasks.begin(), s.tasks.end(), [](const hw::Task& t) { return t.kind == hw::TaskKind::gemm; });
    const hw::Task& gemm2 = *(gemm1 + 1);
    EXPECT_EQ(gemm1->thread_blocks, 2u);
    EXPECT_DOUBLE_EQ(gemm1->flops_per_block, 2.0 * 128 * 128 * kHidden);
    EXPECT_EQ(gemm1->kernel, hw::Task::kNoKernel);
    EXPECT_EQ(gemm2.thread_blocks, 4u);
    EXPECT_DOUBLE_EQ(gemm2.flops_per_block, 2.0 * 128 * 128 * 64);
    EXPECT_NE(gemm2.kernel, hw::Task::kNoKernel);
    EXPECT_EQ(gemm1->sms, 0u) << "all SMs";
    // Messages this GPU's links deliver: counts, remote dispatch copies, remote partials.
    EXPECT_EQ(plan.expected_link_arrivals[g], (kGpus - 1) + remote_in[g] + partials_home_remote[g]);
    // Every send goes to another GPU.
    for (const hw::Task& t : s.tasks) {
      if (t.kind == hw::TaskKind::send) {
        EXPECT_NE(t.peer, g);
      }
    }
    EXPECT_EQ(s.phase_names, (std::vector<std::string>{"dispatch", "experts", "combine", "shared_expert", "broadcast"}));
  }
}

// Chunks of 2: the sends to one destination pair up in token order within each channel, each chunk
// one message.
TEST_F(FirmwareTest, DeepepChunksBatchTokensPerDestination) {
  layer_ = firmware_small_layer(2);
  const LayerPlan plan = build_layer("deepep", layer_);
  const MoeRouting& routing = layer_->routing;
  const auto dests = destinations(routing);
  // copies[s][d]: remote token copies from s to d, straight from the routing; dispatch_chunks[s][d]
  // the chunks they make: a sender batches per channel (DeepEP's: each a contiguous share of the
  // home's tokens, software_channels of them) and destination.
  std::vector<std::vector<uint64_t>> copies(kGpus, std::vector<uint64_t>(kGpus, 0));
  std::vector<std::vector<uint64_t>> dispatch_chunks(kGpus, std::vector<uint64_t>(kGpus, 0));
  const uint64_t channels = std::min<uint64_t>(software_channels(layer_->software), routing.tokens_per_gpu);
  const uint64_t per_channel = (routing.tokens_per_gpu + channels - 1) / channels;
  for (uint32_t home = 0; home < kGpus; ++home) {
    for (uint64_t c = 0; c < channels; ++c) {
      std::vector<uint64_t> in_channel(kGpus, 0);
      for (uint64_t i = c * per_channel; i < std::min<uint64_t>((c + 1) * per_channel, routing.tokens_per_gpu); ++i) {
        const uint64_t t = home * routing.tokens_per_gpu + i;
        for (uint32_t d : dests[t]) {
          if (d != home) in_channel[d]++;
        }
      }
      for (uint32_t d = 0; d < kGpus; ++d) {
        copies[home][d] += in_channel[d];
        dispatch_chunks[home][d] += (in_channel[d] + 1) / 2;
      }
    }
  }
  enum { kDispatch = 0, kCombine = 2 };
  std::vector<uint64_t> messages_in(kGpus, 0);
  for (uint32_t g = 0; g < kGpus; ++g) {
    SCOPED_TRACE("GPU " + std::to_string(g));
    const std::vector<hw::Task>& tasks = plan.sequences[g].tasks;
    std::vector<std::vector<uint64_t>> chunks(3, std::vector<uint64_t>(kGpus, 0));
    std::vector<std::vector<uint64_t>> sends(3, std::vector<uint64_t>(kGpus, 0));
    for (const hw::Task& t : tasks) {
      if (t.kind != hw::TaskKind::send) continue;
      messages_in[t.peer]++;
      if (t.bytes == 16) {  // a count message: one write
        EXPECT_EQ(t.chunk_writes, 0u);
        continue;
      }
      ASSERT_GE(t.chunk_writes, 1u);
      ASSERT_LE(t.chunk_writes, 2u);
      ASSERT_LE(t.first_write + t.chunk_writes, plan.sequences[g].elements.size());
      chunks[t.phase][t.peer]++;
      sends[t.phase][t.peer] += t.chunk_writes;
    }
    for (uint32_t d = 0; d < kGpus; ++d) {
      // Dispatch: all copies to d, in ceil(copies / 2) messages per channel. Combine: the
      // partials of the tokens d sent here go back to d in ceil(partials / 2) messages.
      EXPECT_EQ(sends[kDispatch][d], copies[g][d]) << "to GPU " << d;
      EXPECT_EQ(chunks[kDispatch][d], dispatch_chunks[g][d]) << "to GPU " << d;
      EXPECT_EQ(sends[kCombine][d], copies[d][g]) << "to GPU " << d;
      EXPECT_EQ(chunks[kCombine][d], (copies[d][g] + 1) / 2) << "to GPU " << d;
    }
  }
  for (uint32_t g = 0; g < kGpus; ++g) EXPECT_EQ(plan.expected_link_arrivals[g], messages_in[g]) << "GPU " << g;
}

TEST_F(FirmwareTest, VerifyPassesWithChunkedMessages) {
  layer_ = firmware_small_layer(2);
  const MoeCheckResult r = run_and_verify();
  EXPECT_TRUE(r.passed());
  EXPECT_TRUE(r.violations.empty()) << r.violations.front();
  EXPECT_EQ(r.token_copies_delivered, 29u);
  EXPECT_EQ(r.receive_count_errors, 0u);
}

TEST_F(FirmwareTest, DeepepWireSizesFollowTheDataTypes) {
  const LayerPlan plan = build_layer("deepep", layer_);
  const uint64_t dispatch_bytes = kHidden + 4 * ((kHidden + 127) / 128);  // fp8 + scales
  const uint64_t combine_bytes = 2 * kHidden;                            // bf16
  for (const hw::WorkSequence& s : plan.sequences) {
    for (const hw::Task& t : s.tasks) {
      if (t.kind != hw::TaskKind::send && t.kind != hw::TaskKind::local_copy) continue;
      if (t.phase == 0 && t.bytes != 16) {  // 16: count messages
        EXPECT_EQ(t.bytes, dispatch_bytes);
      }
      if (t.phase == 2) {
        EXPECT_EQ(t.bytes, combine_bytes);
      }
    }
  }
}

TEST_F(FirmwareTest, RunLayerSubmitsOneSequencePerGpuThenWaitsOnce) {
  LayerPlan plan = build_layer("deepep", layer_);
  ::testing::Sequence order;
  std::vector<uint32_t> submitted;
  for (uint32_t g = 0; g < kGpus; ++g) {
    EXPECT_CALL(hal_, submit(g, _)).InSequence(order).WillOnce(Invoke([&](uint32_t gpu, hw::WorkSequence s) {
      EXPECT_FALSE(s.tasks.empty());
      submitted.push_back(gpu);
    }));
  }
  EXPECT_CALL(hal_, wait_all_finished()).Times(1).InSequence(order);
  run_layer(hal_, plan);
  EXPECT_EQ(submitted.size(), kGpus);
  EXPECT_TRUE(plan.sequences.empty());  // handed over, not copied
}

TEST_F(FirmwareTest, VerifyPassesOnACorrectRun) {
  const MoeCheckResult r = run_and_verify();
  EXPECT_TRUE(r.passed());
  EXPECT_TRUE(r.violations.empty()) << r.violations.front();
  EXPECT_EQ(r.token_copies_expected, 29u);
  EXPECT_EQ(r.token_copies_delivered, 29u);
  EXPECT_EQ(r.remote_token_copies, 23u);
  EXPECT_EQ(r.tokens_checked, kGpus * kTokensPerGpu);
  EXPECT_EQ(r.combine_errors, 0u);
  EXPECT_EQ(r.receive_count_errors, 0u);
}

// The result values really are the sum of the expert outputs (the reference verify_layer uses).
TEST_F(FirmwareTest, CombineResultIsTheSumOfTheExpertOutputs) {
  ASSERT_TRUE(run_and_verify().passed());
  const LayerPlan plan = build_layer("deepep", layer_);
  const uint64_t t = 7;  // home GPU 2, experts 1, 3, 7
  const Lanes x = token_lanes(t);
  uint8_t raw[16];
  memories_[2].read(plan.buffers.output + (t % kTokensPerGpu) * plan.buffers.combine_stride, raw, 16);
  const Lanes got = unpack_lanes(raw);
  for (int i = 0; i < kLanes; ++i) {
    const float expected = expert_output(1, x)[i] + expert_output(3, x)[i] + expert_output(7, x)[i];
    EXPECT_EQ(got[i], expected) << "lane " << i;
  }
}

// ExpertSum is only a faster way to add expert outputs: same values for any set of experts.
TEST(ExpertSum, EqualsTheSumOfExpertOutputs) {
  for (uint64_t t = 0; t < 50; ++t) {
    const Lanes x = token_lanes(t);
    ExpertSum sum;
    Lanes expected{};
    for (uint32_t k = 0; k < 1 + t % 9; ++k) {
      const uint32_t expert = static_cast<uint32_t>((t * 37 + k * 101) % 256);
      sum.add(expert);
      const Lanes y = expert_output(expert, x);
      for (int i = 0; i < kLanes; ++i) expected[i] += y[i];
    }
    EXPECT_EQ(sum.of(x), expected) << "token " << t;
  }
}

TEST_F(FirmwareTest, VerifyNamesACorruptedDispatchSlot) {
  // Token 1 (home GPU 0) to GPU 2 arrives with a wrong first lane.
  interpreter_.tamper = [](Interpreter::Delivery& d) {
    if (d.from == 0 && d.task->peer == 2 && d.task->phase == 0 && d.task->bytes != 16) {
      Lanes lanes = unpack_lanes(d.data);
      lanes[0] += 1.0f;
      pack_lanes(lanes, d.data);
    }
  };
  const MoeCheckResult r = run_and_verify();
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.token_copies_delivered, r.token_copies_expected - 1);
  EXPECT_TRUE(any_violation_has(r, {"token 1 ", "at GPU 2", "data"}))
      << ::testing::PrintToString(r.violations);
}

TEST_F(FirmwareTest, VerifyNamesADuplicatedCopy) {
  // Token 4 (home GPU 1) lands twice at GPU 3.
  interpreter_.tamper = [](Interpreter::Delivery& d) {
    if (d.from == 1 && d.task->peer == 3 && d.task->phase == 0 && d.task->bytes != 16 &&
        unpack_lanes(d.data) == token_lanes(4)) {
      d.copies = 2;
    }
  };
  const MoeCheckResult r = run_and_verify();
  EXPECT_FALSE(r.passed());
  EXPECT_TRUE(any_violation_has(r, {"token 4 ", "at GPU 3", "delivered 2 times"}))
      << ::testing::PrintToString(r.violations);
  // One message too many arrived at GPU 3.
  EXPECT_EQ(r.receive_count_errors, 1u);
  EXPECT_TRUE(any_violation_has(r, {"GPU 3:", "messages arrived"})) << ::testing::PrintToString(r.violations);
}

TEST_F(FirmwareTest, VerifyNamesAWrongCombineResult) {
  const LayerPlan plan = build_layer("deepep", layer_);
  MoeCheckResult r = run_and_verify();
  ASSERT_TRUE(r.passed());
  // Token 10 is GPU 3's local token 1: spoil its output after the run.
  uint8_t raw[16];
  const uint64_t address = plan.buffers.output + 1 * plan.buffers.combine_stride;
  memories_[3].read(address, raw, 16);
  Lanes lanes = unpack_lanes(raw);
  lanes[3] += 2.0f;
  pack_lanes(lanes, raw);
  memories_[3].write(address, raw, 16);
  r = verify_layer(hal_, plan);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.combine_errors, 1u);
  EXPECT_EQ(r.token_copies_delivered, r.token_copies_expected);
  EXPECT_TRUE(any_violation_has(r, {"token 10 ", "at GPU 3", "combine result"}))
      << ::testing::PrintToString(r.violations);
}

TEST_F(FirmwareTest, VerifyNamesAMissingPartial) {
  // The partial of token 0 from GPU 1 never reaches home GPU 0.
  interpreter_.tamper = [dropped = std::make_shared<bool>(false)](Interpreter::Delivery& d) {
    if (!*dropped && d.from == 1 && d.task->peer == 0 && d.task->phase == 2) {
      d.copies = 0;
      *dropped = true;
    }
  };
  // The home GPU then waits forever for it; the others finish.
  LayerPlan plan = build_layer("deepep", layer_);
  load_inputs(hal_, plan);
  std::vector<hw::WorkSequence> sequences = std::move(plan.sequences);
  EXPECT_EQ(interpreter_.run(sequences), "GPU 0 never finished; ");
  const MoeCheckResult r = verify_layer(hal_, plan);
  EXPECT_FALSE(r.passed());
  EXPECT_TRUE(any_violation_has(r, {"from GPU 1", "home GPU 0", "0 times"})) << ::testing::PrintToString(r.violations);
}

// ---------------------------------------------------------------------------------------------
// The dynamic multimem schemes.

// Token t's dynamic task on its home GPU and the task's target list.
std::vector<uint16_t> targets_of(const hw::WorkSequence& seq, const hw::Task& task) {
  return {seq.targets.begin() + task.first_target, seq.targets.begin() + task.first_target + task.target_count};
}

TEST_F(FirmwareTest, DysharpPlanNamesEveryExpertOfEveryTokenTheIssuersOwnLast) {
  const LayerPlan plan = build_layer("dysharp-basic", layer_);
  const MoeRouting& routing = layer_->routing;
  ASSERT_EQ(plan.dynamic_objects.size(), 2u);
  const hw::DynamicMulticastBinding& dispatch = plan.dynamic_objects[0].binding;
  const hw::DynamicMulticastBinding& combine = plan.dynamic_objects[1].binding;
  EXPECT_EQ(dispatch.object.stage, hw::MultimemStage::dispatch);
  EXPECT_EQ(combine.object.stage, hw::MultimemStage::combine);
  EXPECT_EQ(dispatch.object.mapping, combine.object.mapping) << "combine reads the layout dispatch made";
  EXPECT_EQ(dispatch.token_count, routing.tokens());
  EXPECT_EQ(plan.dynamic_objects[0].local_base, plan.buffers.dispatch_rx);
  EXPECT_EQ(plan.dynamic_objects[1].local_base, plan.buffers.partial);
  // Expert 0 serves tokens 0, 2, 4, 6, 10 (the routing above).
  EXPECT_EQ(dispatch.tokens_per_expert[0], 5u);
  EXPECT_TRUE(plan.dispatch_per_expert);
  EXPECT_TRUE(plan.combine_reduced_in_switch);

  for (uint32_t g = 0; g < kGpus; ++g) {
    SCOPED_TRACE("GPU " + std::to_string(g));
    const hw::WorkSequence& seq = plan.sequences[g];
    EXPECT_EQ(count_tasks(seq, hw::TaskKind::dynamic_store), kTokensPerGpu);
    EXPECT_EQ(count_tasks(seq, hw::TaskKind::dynamic_ld_reduce), kTokensPerGpu);
    EXPECT_EQ(count_tasks(seq, hw::TaskKind::send), kGpus - 1) << "only the barrier's flags";
    // Each token's list: its experts, remote ones in routing order, then the home's own.
    size_t i = 0;
    for (const hw::Task& task : seq.tasks) {
      if (task.kind != hw::TaskKind::dynamic_store) continue;
      const uint64_t t = static_cast<uint64_t>(g) * kTokensPerGpu + i++;
      std::vector<uint16_t> expected;
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        if (routing.gpu_of_expert(routing.experts_of(t)[k]) != g) expected.push_back(routing.experts_of(t)[k]);
      }
      for (uint32_t k = 0; k < routing.top_k; ++k) {
        if (routing.gpu_of_expert(routing.experts_of(t)[k]) == g) expected.push_back(routing.experts_of(t)[k]);
      }
      EXPECT_EQ(targets_of(seq, task), expected) << "token " << t;
      EXPECT_EQ(task.target_address, dispatch.multimem_address(t));
      EXPECT_EQ(task.addressing, hw::DynamicAddressing::algebraic);
    }
    // The dispatch wait counts one block per (token, local expert).
    const auto wait = std::find_if(seq.tasks.begin(), seq.tasks.end(), [](const hw::Task& t) {
      return t.kind == hw::TaskKind::wait_counter && t.counter == kDispatchCounter;
    });
    ASSERT_NE(wait, seq.tasks.end());
    EXPECT_EQ(wait->arrivals, dispatch.local_blocks(g));
  }
  // Links: per (token, remote GPU) a copy and a load; per token with a remote GPU its result at
  // home; the barrier's 3 flags.
  const std::vector<std::set<uint32_t>> dests = destinations(routing);
  for (uint32_t g = 0; g < kGpus; ++g) {
    uint64_t expected = kGpus - 1;
    for (uint64_t t = 0; t < routing.tokens(); ++t) {
      const uint32_t home = routing.home_of_token(t);
      if (home != g && dests[t].count(g) > 0) expected += 2;
      if (home == g && (dests[t].size() > 1 || dests[t].count(g) == 0)) expected += 1;
    }
    EXPECT_EQ(plan.expected_link_arrivals[g], expected) << "GPU " << g;
  }
}

TEST_F(FirmwareTest, ExplicitAddressingPlanGivesEveryTargetItsOwnBlock) {
  const LayerPlan plan = build_layer("explicit-addressing-basic", layer_);
  const MoeRouting& routing = layer_->routing;
  ASSERT_TRUE(plan.explicit_layout);
  const hw::DynamicMulticastBinding& dispatch = plan.dynamic_objects[0].binding;
  // Per GPU, the (token, expert) pairs fill its blocks 0 .. local_blocks - 1 exactly once, each
  // expert's tokens in token order within its region.
  std::vector<std::set<uint32_t>> blocks(kGpus);
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      const uint32_t gpu = routing.gpu_of_expert(routing.experts_of(t)[k]);
      EXPECT_TRUE(blocks[gpu].insert((*plan.explicit_layout)[t * routing.top_k + k]).second) << "token " << t;
    }
  }
  for (uint32_t g = 0; g < kGpus; ++g) {
    ASSERT_EQ(blocks[g].size(), dispatch.local_blocks(g));
    EXPECT_EQ(*blocks[g].rbegin(), dispatch.local_blocks(g) - 1);
    // Stores carry dispatch_rx addresses, loads partial addresses, one per target.
    const hw::WorkSequence& seq = plan.sequences[g];
    ASSERT_EQ(seq.target_addresses.size(), seq.targets.size());
    for (const hw::Task& task : seq.tasks) {
      if (task.kind != hw::TaskKind::dynamic_store && task.kind != hw::TaskKind::dynamic_ld_reduce) continue;
      EXPECT_EQ(task.addressing, hw::DynamicAddressing::explicit_addresses);
      const uint64_t base = task.kind == hw::TaskKind::dynamic_store ? plan.buffers.dispatch_rx : plan.buffers.partial;
      const uint64_t stride =
          task.kind == hw::TaskKind::dynamic_store ? plan.buffers.dispatch_stride : plan.buffers.combine_stride;
      for (uint32_t i = task.first_target; i < task.first_target + task.target_count; ++i) {
        const uint32_t gpu = routing.gpu_of_expert(seq.targets[i]);
        EXPECT_GE(seq.target_addresses[i], base);
        EXPECT_LT((seq.target_addresses[i] - base) / stride, dispatch.local_blocks(gpu));
        EXPECT_EQ((seq.target_addresses[i] - base) % stride, 0u);
      }
    }
  }
}

TEST_F(FirmwareTest, InstallingDynamicObjectsProgramsEveryChipAndEveryHub) {
  const LayerPlan plan = build_layer("dysharp-basic", layer_);
  constexpr uint32_t kChips = 3;
  uint32_t programmed = 0;
  ON_CALL(hal_, switch_count()).WillByDefault(Return(kChips));
  EXPECT_CALL(hal_, write_register(_, hw::switch_regs::kDynamicExpertsPerGpu, 2u)).Times(kChips);
  EXPECT_CALL(hal_, read_register(_, hw::switch_regs::kDynamicExpertsPerGpu)).Times(kChips).WillRepeatedly(Return(2u));
  EXPECT_CALL(hal_, bind_dynamic_object(_, _, _))
      .Times(2 * kGpus)
      .WillRepeatedly(Invoke([&](uint32_t, const hw::DynamicMulticastBinding& binding, uint64_t local_base) {
        EXPECT_EQ(local_base, binding.object.stage == hw::MultimemStage::dispatch ? plan.buffers.dispatch_rx
                                                                                  : plan.buffers.partial);
        ++programmed;
      }));
  install_dynamic_objects(hal_, plan);
  EXPECT_EQ(programmed, 2 * kGpus);
}

TEST_F(FirmwareTest, InstallingDynamicObjectsFailsWhenAChipRefusesTheExpertSpread) {
  const LayerPlan plan = build_layer("dysharp-basic", layer_);
  ON_CALL(hal_, switch_count()).WillByDefault(Return(1u));
  ON_CALL(hal_, read_register(_, _)).WillByDefault(Return(0u));
  EXPECT_THROW(install_dynamic_objects(hal_, plan), std::runtime_error);
  const LayerPlan deepep = build_layer("deepep", layer_);
  EXPECT_CALL(hal_, write_register(_, _, _)).Times(0);
  install_dynamic_objects(hal_, deepep);  // nothing to install
}

// verify_layer on a dynamic plan: memories filled as the Hubs would (each expert's tokens in
// token order) pass; a block the Hub never mapped, wrong data and a block written twice are named.
TEST_F(FirmwareTest, VerifyOfADynamicDispatchNamesWhatIsWrong) {
  LayerPlan plan = build_layer("dysharp-basic", layer_);
  const MoeRouting& routing = layer_->routing;
  const MoeBuffers& b = plan.buffers;
  load_inputs(hal_, plan);
  const LayerPlan explicit_plan = build_layer("explicit-addressing-basic", layer_);
  const std::vector<uint32_t>& layout = *explicit_plan.explicit_layout;  // the same packing
  uint64_t hidden_block = ~0ull;  // the one (token, expert) the fake Hub does not know
  uint64_t redirected = ~0ull;     // a (token, expert) the fake Hub maps to another's block...
  uint64_t redirected_to = ~0ull;  // ...this (token, expert)'s
  ON_CALL(hal_, dynamic_local_address(_, _, _, _))
      .WillByDefault(Invoke([&](uint32_t gpu, uint64_t address, uint16_t expert, uint64_t& local) {
        const uint64_t t = (address - plan.dynamic_objects[0].binding.multimem_base) / b.dispatch_stride;
        for (uint32_t k = 0; k < routing.top_k; ++k) {
          if (routing.experts_of(t)[k] != expert || routing.gpu_of_expert(expert) != gpu) continue;
          if (t * routing.top_k + k == hidden_block) return false;
          const uint64_t copy = t * routing.top_k + k == redirected ? redirected_to : t * routing.top_k + k;
          local = b.dispatch_rx + layout[copy] * b.dispatch_stride;
          return true;
        }
        return false;
      }));
  uint8_t raw[2 * kLanes];
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    pack_lanes(token_lanes(t), raw);
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      const uint32_t gpu = routing.gpu_of_expert(routing.experts_of(t)[k]);
      memories_[gpu].write(b.dispatch_rx + layout[t * routing.top_k + k] * b.dispatch_stride, raw, sizeof raw);
    }
    ExpertSum all;
    for (uint32_t k = 0; k < routing.top_k; ++k) all.add(routing.experts_of(t)[k]);
    pack_lanes(all.of(token_lanes(t)), raw);
    memories_[routing.home_of_token(t)].write(b.output + (t % kTokensPerGpu) * b.combine_stride, raw, sizeof raw);
  }
  for (uint32_t g = 0; g < kGpus; ++g) interpreter_.received[g] = plan.expected_link_arrivals[g];
  MoeCheckResult r = verify_layer(hal_, plan);
  EXPECT_TRUE(r.passed()) << ::testing::PrintToString(r.violations);
  EXPECT_EQ(r.token_copies_delivered, plan.token_copies);

  // Token 1's expert 4 (GPU 2) unknown to the Hub.
  hidden_block = 1 * routing.top_k + 1;
  r = verify_layer(hal_, plan);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.token_copies_delivered, plan.token_copies - 1);
  EXPECT_TRUE(any_violation_has(r, {"token 1", "GPU 2", "no block for expert 4"})) << ::testing::PrintToString(r.violations);
  hidden_block = ~0ull;

  // Two tokens in one block: token 0's first expert mapped to the block of another token's
  // expert on the same GPU, which holds that token's values. Token 0's copy there is named.
  const uint32_t gpu0 = routing.gpu_of_expert(routing.experts_of(0)[0]);
  for (uint64_t t = 1; t < routing.tokens() && redirected_to == ~0ull; ++t) {
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      if (routing.gpu_of_expert(routing.experts_of(t)[k]) == gpu0) redirected_to = t * routing.top_k + k;
    }
  }
  ASSERT_NE(redirected_to, ~0ull);
  redirected = 0;
  r = verify_layer(hal_, plan);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.token_copies_delivered, plan.token_copies - 1);
  EXPECT_TRUE(any_violation_has(r, {"token 0 ", "at GPU " + std::to_string(gpu0), "data"}))
      << ::testing::PrintToString(r.violations);
  redirected = ~0ull;

  // Token 5's copy at GPU 3 (expert 7) written again with token 4's data.
  pack_lanes(token_lanes(4), raw);
  memories_[3].write(b.dispatch_rx + layout[5 * routing.top_k + 0] * b.dispatch_stride, raw, sizeof raw);
  r = verify_layer(hal_, plan);
  EXPECT_FALSE(r.passed());
  EXPECT_TRUE(any_violation_has(r, {"token 5", "GPU 3", "expert 7", "data"})) << ::testing::PrintToString(r.violations);
  EXPECT_TRUE(any_violation_has(r, {"GPU 3", "written 2 times"})) << ::testing::PrintToString(r.violations);
}

// tutel: per GPU a communication stream on NCCL's channels (the count exchange, every chunk's
// all-to-all, then each chunk's rows back once the experts signal it) and an experts stream on
// the other SMs (per chunk: the wait for all its rows, padding included, two GEMMs, a signal).
// Every (token, expert) pair is a row, every (source, expert) padded to the capacity.
TEST_F(FirmwareTest, TutelPlanPadsEveryExpertToTheCapacityAndPipelinesItsChunks) {
  auto spec = std::make_shared<MoeLayerSpec>(*firmware_small_layer());
  spec->software.tutel_degree = 2;
  spec->software.nccl_channels = 32;
  spec->gpu_sms = 132;
  const LayerPlan plan = build_layer("tutel", spec);
  const MoeRouting& routing = spec->routing;
  const uint32_t per_gpu = routing.experts_per_gpu();
  // The capacity: the largest (source GPU, expert) count.
  std::vector<std::vector<uint64_t>> count(kGpus, std::vector<uint64_t>(routing.experts, 0));
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    for (uint32_t k = 0; k < routing.top_k; ++k) count[routing.home_of_token(t)][routing.experts_of(t)[k]]++;
  }
  uint64_t capacity = 0;
  for (const auto& row : count) capacity = std::max(capacity, *std::max_element(row.begin(), row.end()));
  double planned_capacity = 0;
  double degree = 0;
  for (const auto& [name, value] : plan.figures) {
    if (name == "capacity") planned_capacity = value;
    if (name == "degree") degree = value;
  }
  EXPECT_EQ(planned_capacity, static_cast<double>(capacity));
  EXPECT_EQ(degree, std::min<double>(2.0, static_cast<double>(capacity)));
  ASSERT_EQ(plan.extra_sequences.size(), kGpus);
  for (uint32_t g = 0; g < kGpus; ++g) {
    SCOPED_TRACE("GPU " + std::to_string(g));
    const hw::WorkSequence& comm = plan.sequences[g];
    ASSERT_EQ(plan.extra_sequences[g].size(), 1u);
    const hw::WorkSequence& experts = plan.extra_sequences[g].front();
    EXPECT_EQ(comm.sms, 32u);
    EXPECT_EQ(comm.issue_sms, 32u);
    EXPECT_EQ(experts.stream, 1u);
    EXPECT_EQ(experts.sms, degree == 1.0 ? 132u : 100u);
    EXPECT_EQ(count_tasks(comm, hw::TaskKind::gemm), 0u);
    // The experts wait for every row of every chunk: GPUs x local experts x capacity, padded.
    uint64_t awaited = 0;
    for (const hw::Task& t : experts.tasks) awaited += t.kind == hw::TaskKind::wait_counter ? t.arrivals : 0;
    EXPECT_EQ(awaited, uint64_t{kGpus} * per_gpu * capacity);
    EXPECT_EQ(count_tasks(experts, hw::TaskKind::gemm), 2u * static_cast<uint64_t>(degree));
  }
  EXPECT_EQ(plan.row_regions.size(), 2u);
}

// fastermoe's smart schedule (FastMoE's smart_schedule header), here with groups of 2 of the 4 GPUs:
// after the count exchange, step 0 exchanges rows within the GPU's own group and step 1 with the
// other group, one call per local expert carrying only that expert's rows; the experts stream
// waits for every call of a step, then runs one GEMM pair per expert that has rows.
TEST_F(FirmwareTest, FastermoeExchangesWithOneGroupAtATimeAndOneCallPerExpert) {
  auto spec = std::make_shared<MoeLayerSpec>(*firmware_small_layer());
  spec->software.fastermoe_group_size = 2;
  spec->gpu_sms = 132;
  const LayerPlan plan = build_layer("fastermoe", spec);
  const MoeRouting& routing = spec->routing;
  const uint32_t per_gpu = routing.experts_per_gpu();
  std::map<std::string, double> figures(plan.figures.begin(), plan.figures.end());
  EXPECT_EQ(figures["group_size"], 2.0);
  EXPECT_EQ(figures["steps"], 2.0);
  EXPECT_EQ(figures["calls"], 2.0 * 2 * per_gpu) << "dispatch and combine, per step and local expert";
  // rows[g][d][e]: g's (token, expert) pairs on GPU d's local expert e.
  using PerExpert = std::vector<uint64_t>;
  std::vector<std::vector<PerExpert>> rows(kGpus, std::vector<PerExpert>(kGpus, PerExpert(per_gpu, 0)));
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    for (uint32_t k = 0; k < routing.top_k; ++k) {
      const uint16_t e = routing.experts_of(t)[k];
      rows[routing.home_of_token(t)][routing.gpu_of_expert(e)][e % per_gpu]++;
    }
  }
  for (uint32_t g = 0; g < kGpus; ++g) {
    SCOPED_TRACE("GPU " + std::to_string(g));
    // The dispatch's row messages (one row each, chunk_tokens 1), in order: their peers' groups
    // at distance 0 first, then 1; every remote row sent once.
    std::vector<uint32_t> distances;
    uint64_t sent = 0;
    for (const hw::Task& t : plan.sequences[g].tasks) {
      if (t.kind != hw::TaskKind::send || t.chunk_writes == 0 || t.phase != 0) continue;
      distances.push_back((t.peer / 2 + 2 - g / 2) % 2);
      sent += t.chunk_writes;
    }
    EXPECT_TRUE(std::is_sorted(distances.begin(), distances.end()));
    uint64_t remote = 0;
    for (uint32_t d = 0; d < kGpus; ++d) {
      for (uint32_t e = 0; e < per_gpu; ++e) remote += d == g ? 0 : rows[g][d][e];
    }
    EXPECT_EQ(sent, remote);
    // The experts stream: a wait per step and local expert for exactly that expert's rows from the
    // step's group, then a GEMM pair (one busy expert) per expert with rows, then a signal.
    const hw::WorkSequence& experts = plan.extra_sequences[g].front();
    EXPECT_EQ(experts.sms, 132u - spec->software.nccl_channels);
    std::vector<uint64_t> awaited;
    for (const hw::Task& t : experts.tasks) {
      if (t.kind == hw::TaskKind::wait_counter) awaited.push_back(t.arrivals);
    }
    std::vector<uint64_t> expected;
    uint64_t busy = 0;
    for (uint32_t step = 0; step < 2; ++step) {
      const uint32_t group = (g / 2 + 2 - step) % 2;
      for (uint32_t e = 0; e < per_gpu; ++e) {
        expected.push_back(rows[2 * group][g][e] + rows[2 * group + 1][g][e]);
        busy += expected.back() > 0;
      }
    }
    EXPECT_EQ(awaited, expected);
    EXPECT_EQ(count_tasks(experts, hw::TaskKind::gemm), 2 * busy);
  }
}

// NCCL's send and receive are two-sided: every GPU tells each peer it receives rows from that its
// receive is posted (a flag), and sends rows only once it has waited for the flags of its call.
// Every flag a GPU sends is awaited by its peer, so no call waits for a flag that never comes.
TEST_F(FirmwareTest, FastermoeSendsItsRowsOnlyAfterTheReceiversFlags) {
  const LayerPlan plan = build_layer("fastermoe", layer_);
  // Flags: 16-byte single writes other than the count exchange's.
  auto is_flag = [](const hw::Task& t) {
    return t.kind == hw::TaskKind::send && t.chunk_writes == 0 && t.bytes == 16 && t.counter != kCountsCounter;
  };
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> flags_to;  // (GPU, counter) -> flags it receives
  uint64_t flags = 0;
  for (uint32_t g = 0; g < kGpus; ++g) {
    for (const hw::Task& t : plan.sequences[g].tasks) {
      if (is_flag(t)) flags_to[{t.peer, t.counter}]++, flags++;
    }
  }
  ASSERT_GT(flags, 0u);
  std::map<std::string, double> figures(plan.figures.begin(), plan.figures.end());
  EXPECT_EQ(figures["clear_to_send_flags"], static_cast<double>(flags));
  for (uint32_t g = 0; g < kGpus; ++g) {
    SCOPED_TRACE("GPU " + std::to_string(g));
    std::map<uint32_t, uint64_t> awaited;
    bool cleared = false;  // the current call has waited for its flags
    for (const hw::Task& t : plan.sequences[g].tasks) {
      if (t.kind == hw::TaskKind::wait_counter && flags_to.count({g, t.counter}) != 0) {
        awaited[t.counter] += t.arrivals;
        cleared = true;
      } else if (t.kind == hw::TaskKind::wait_counter) {
        cleared = false;  // a call ends on its rows; the next one waits for its own flags
      } else if (t.kind == hw::TaskKind::send && t.chunk_writes > 0) {
        EXPECT_TRUE(cleared) << "rows to GPU " << t.peer << " before the call's flags";
      }
    }
    for (const auto& [key, n] : flags_to) {
      if (key.first == g) {
        EXPECT_EQ(awaited[key.second], n) << "counter " << key.second;
      }
    }
  }
}

// The fused schedules: four streams per GPU on their SM groups; every (token, local expert) pair
// in exactly one tile, which GEMM-1 takes when ready, waiting for exactly that tile's size (the
// software schemes: twice, a copy's data and its readiness flag); the tile-status entries counted
// by where copies (and flags) land; and, for the dynamic ones, one load per token waiting for
// top_k notifications, taken as they come.
TEST(Firmware, FusedPlansTileEveryTokenOnceAndWaitForWhatTheyNeed) {
  auto spec = std::make_shared<MoeLayerSpec>(*firmware_small_layer());
  spec->software.tile_tokens = 2;
  spec->gpu_sms = 132;
  const MoeRouting& routing = spec->routing;
  for (const char* scheme : {"comet", "fusion-only", "dysharp-comet", "explicit-addressing", "dysharp"}) {
    SCOPED_TRACE(scheme);
    const LayerPlan plan = build_layer(scheme, spec);
    const bool dynamic = std::string(scheme) != "comet" && std::string(scheme) != "fusion-only";
    const bool comet_like = std::string(scheme).find("comet") != std::string::npos;
    const uint64_t per_token = dynamic ? 1 : 2;  // software: the data and the flag of each copy
    ASSERT_EQ(plan.extra_sequences.size(), kGpus);
    for (uint32_t g = 0; g < kGpus; ++g) {
      SCOPED_TRACE("GPU " + std::to_string(g));
      ASSERT_EQ(plan.extra_sequences[g].size(), 3u);
      const hw::WorkSequence* streams[4] = {&plan.sequences[g], &plan.extra_sequences[g][0], &plan.extra_sequences[g][1],
                                            &plan.extra_sequences[g][2]};
      const uint32_t sms[4] = {comet_like ? 20u : 10u, comet_like ? 112u : 75u, comet_like ? 112u : 37u, comet_like ? 20u : 10u};
      for (uint32_t i = 0; i < 4; ++i) {
        EXPECT_EQ(streams[i]->stream, i);
        EXPECT_EQ(streams[i]->sms, sms[i]);
      }
      // (token, local expert) pairs: what the tiles must hold.
      uint64_t pairs = 0;
      for (uint16_t e : routing.expert_ids) pairs += routing.gpu_of_expert(e) == g;
      const hw::WorkSequence& gemm1 = *streams[1];
      uint64_t tiled = 0, tiles = 0;
      for (const hw::Task& task : gemm1.tasks) {
        if (task.kind != hw::TaskKind::wait_counter) continue;
        EXPECT_LE(task.arrivals, 2u * per_token) << "a tile holds at most tile_tokens";
        tiled += task.arrivals / per_token;
        ++tiles;
      }
      EXPECT_EQ(tiled, pairs);
      // The counter map sends every landing to tile counters that GEMM-1 waits on, each tile's
      // as often as it has tokens (software: a second map, the flags', alike).
      ASSERT_EQ(streams[0]->counter_maps.size(), dynamic ? 2u : 5u);
      if (!dynamic) {
        const hw::CounterMap& flags = streams[0]->counter_maps[1];
        EXPECT_EQ(flags.counters, streams[0]->counter_maps[0].counters);
        EXPECT_EQ(flags.seen_after_ps, 800'000u) << "fence_ns + flag_poll_ns";
      }
      const hw::CounterMap& arrivals = streams[0]->counter_maps[0];
      EXPECT_EQ(arrivals.base, plan.buffers.dispatch_rx);
      std::map<uint32_t, uint64_t> per_counter;
      for (uint32_t c : arrivals.counters) per_counter[c]++;
      EXPECT_EQ(per_counter.size(), tiles);
      for (const hw::Task& task : gemm1.tasks) {
        if (task.kind == hw::TaskKind::wait_counter) {
          EXPECT_EQ(per_counter[task.counter] * per_token, task.arrivals);
        }
      }
      ASSERT_FALSE(streams[0]->counter_tables.empty());
      EXPECT_EQ(streams[0]->counter_tables[0].table, hw::CounterTable::tile_status);
      EXPECT_EQ(streams[0]->counter_tables[0].counters, tiles);
      EXPECT_EQ(gemm1.tasks.front().kind, hw::TaskKind::take_ready);
      EXPECT_EQ(gemm1.tasks.front().items, tiles);
      if (!dynamic) continue;
      // Combine: one take_ready over the tokens, each a wait for top_k and its load; with the
      // COMET-style kernels, after the second kernel started (a signal from the GEMM-2 group).
      const hw::WorkSequence& combine = *streams[3];
      const size_t take = comet_like ? 1 : 0;
      if (comet_like) {
        ASSERT_EQ(combine.tasks.front().kind, hw::TaskKind::wait_counter);
        const uint32_t boundary = combine.tasks.front().counter;
        bool signalled = false;
        for (const hw::Task& task : streams[2]->tasks) signalled |= task.kind == hw::TaskKind::local_copy && task.counter == boundary;
        EXPECT_TRUE(signalled) << "the GEMM-2 group signals the kernel boundary the combine waits for";
      }
      ASSERT_EQ(combine.tasks[take].kind, hw::TaskKind::take_ready);
      EXPECT_EQ(combine.tasks[take].items, kTokensPerGpu);
      uint64_t loads = 0;
      for (size_t i = take + 1; i + 1 < combine.tasks.size(); i += 2) {
        EXPECT_EQ(combine.tasks[i].kind, hw::TaskKind::wait_counter);
        EXPECT_EQ(combine.tasks[i].arrivals, routing.top_k);
        EXPECT_EQ(combine.tasks[i + 1].kind, hw::TaskKind::dynamic_ld_reduce);
        loads += combine.tasks[i + 1].kind == hw::TaskKind::dynamic_ld_reduce;
      }
      EXPECT_EQ(loads, kTokensPerGpu);
      // Notifications: one notify per tile, over the tile's blocks.
      uint64_t notified = 0;
      for (const hw::Task& task : streams[2]->tasks) notified += task.kind == hw::TaskKind::notify_tokens ? task.blocks : 0;
      EXPECT_EQ(notified, pairs);
      // The expected notifications at this home: its tokens' remote experts.
      uint64_t remote = 0;
      for (uint64_t t = g * kTokensPerGpu; t < (g + 1) * kTokensPerGpu; ++t) {
        for (uint32_t k = 0; k < routing.top_k; ++k) remote += routing.gpu_of_expert(routing.experts_of(t)[k]) != g;
      }
      EXPECT_EQ(plan.expected_notifications[g], remote);
    }
  }
  // The software schemes share the in-switch ones' structure: per GPU the same tiles, the same
  // take_ready items in GEMM-1 and GEMM-2, the same SM groups; only what fills and follows a
  // tile differs.
  for (const auto& [software, in_switch] : {std::pair{"fusion-only", "dysharp"}, std::pair{"comet", "dysharp-comet"}}) {
    SCOPED_TRACE(software);
    const LayerPlan a = build_layer(software, spec);
    const LayerPlan b = build_layer(in_switch, spec);
    for (uint32_t g = 0; g < kGpus; ++g) {
      for (size_t i = 0; i < 2; ++i) {  // the GEMM-1 and GEMM-2 groups
        const hw::WorkSequence& x = a.extra_sequences[g][i];
        const hw::WorkSequence& y = b.extra_sequences[g][i];
        EXPECT_EQ(x.sms, y.sms);
        EXPECT_EQ(x.sm_pool, y.sm_pool);
        ASSERT_EQ(x.tasks.size(), y.tasks.size());
        for (size_t k = 0; k < x.tasks.size(); ++k) {
          EXPECT_EQ(x.tasks[k].kind == hw::TaskKind::local_copy, y.tasks[k].kind == hw::TaskKind::notify_tokens ||
                                                                    y.tasks[k].kind == hw::TaskKind::local_copy)
              << "task " << k;
          if (x.tasks[k].kind == hw::TaskKind::take_ready) { EXPECT_EQ(x.tasks[k].items, y.tasks[k].items); }
          if (x.tasks[k].kind == hw::TaskKind::gemm) { EXPECT_EQ(x.tasks[k].thread_blocks, y.tasks[k].thread_blocks); }
        }
      }
      EXPECT_EQ(a.sequences[g].sms, b.sequences[g].sms);
      EXPECT_EQ(a.extra_sequences[g][2].sms, b.extra_sequences[g][2].sms);
    }
  }
  // The fused kernel's groups must fit the GPU.
  auto crowded = std::make_shared<MoeLayerSpec>(*spec);
  crowded->software.fusion_gemm1_sms = 100;
  EXPECT_THROW(build_layer("dysharp", crowded), std::invalid_argument);
}

TEST(Firmware, UnknownSchemeAndInconsistentRoutingThrow) {
  EXPECT_THROW(build_layer("no-such-scheme", firmware_small_layer()), std::invalid_argument);
  auto bad = std::make_shared<MoeLayerSpec>(*firmware_small_layer());
  bad->routing.expert_ids.pop_back();
  EXPECT_THROW(build_layer("deepep", bad), std::invalid_argument);
  auto uneven = std::make_shared<MoeLayerSpec>(*firmware_small_layer());
  uneven->routing.experts = 6;  // not divisible by 4 GPUs
  EXPECT_THROW(build_layer("deepep", uneven), std::invalid_argument);
  const auto& names = scheme_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "deepep"), names.end());
  EXPECT_THROW(scheme_traits("no-such-scheme"), std::invalid_argument);
}

// The registry's multicast trait is what the scheme's plan asks of the switch: multicast groups
// exactly for `groups`, dynamic objects exactly for `dynamic_objects`. A scheme that runs another's
// plan gets that plan; a training-step-only scheme is no layer scheme.
TEST(SchemeRegistry, TraitsAgreeWithThePlans) {
  for (const SchemeTraits& traits : scheme_registry()) {
    SCOPED_TRACE(traits.name);
    const SchemeTraits* plan_traits = find_scheme(traits.plan);
    ASSERT_NE(plan_traits, nullptr) << "plan " << traits.plan;
    EXPECT_STREQ(plan_traits->plan, traits.plan) << "a plan scheme runs its own plan";
    const LayerPlan plan = build_layer(traits.name, firmware_small_layer());
    EXPECT_EQ(plan.scheme, traits.plan);
    EXPECT_EQ(!plan.multicast_groups.empty(), plan_traits->multicast == SwitchMulticast::groups);
    EXPECT_EQ(!plan.dynamic_objects.empty(), plan_traits->multicast == SwitchMulticast::dynamic_objects);
    const auto& layer_schemes = layer_scheme_names();
    EXPECT_EQ(std::count(layer_schemes.begin(), layer_schemes.end(), traits.name), traits.training_step_only ? 0 : 1);
    EXPECT_FALSE(std::string(traits.summary).empty());
  }
  EXPECT_EQ(scheme_names().size(), scheme_registry().size());
  EXPECT_TRUE(scheme_traits("tutel").searches_degree);
  EXPECT_TRUE(scheme_traits("dualpipe").training_step_only);
}

}  // namespace
}  // namespace nvsvp::fw

// destination_gpus reads a bit mask up to hw::kMaxGpus (128) GPUs and sorts beyond: both give
// each GPU holding one of the token's experts once, ascending.
TEST(DestinationGpus, AreTheDistinctHoldersAscendingOnEitherSideOf128Gpus) {
  for (const uint32_t gpus : {8u, 64u, 72u, 128u, 136u}) {
    nvsvp::fw::MoeRouting routing;
    routing.gpus = gpus;
    routing.experts = 2 * gpus;
    routing.top_k = 6;
    routing.tokens_per_gpu = 1;
    // Token t picks experts 0, 1 (both on GPU 0), the last expert, and three spread by t.
    for (uint64_t t = 0; t < routing.tokens(); ++t) {
      const uint32_t e = routing.experts;
      for (const uint32_t expert : {0u, 1u, e - 1, static_cast<uint32_t>((t * 7 + 3) % (e - 2) + 1),
                                    static_cast<uint32_t>((t * 13 + 5) % (e - 2) + 1), static_cast<uint32_t>(e / 2)}) {
        routing.expert_ids.push_back(static_cast<uint16_t>(expert));
      }
    }
    std::vector<uint32_t> got;
    for (uint64_t t = 0; t < routing.tokens(); ++t) {
      std::set<uint32_t> expected;
      for (uint32_t k = 0; k < routing.top_k; ++k) expected.insert(routing.experts_of(t)[k] / 2);
      nvsvp::fw::destination_gpus(routing, t, got);
      EXPECT_EQ(got, std::vector<uint32_t>(expected.begin(), expected.end())) << gpus << " GPUs, token " << t;
    }
  }
}

namespace nvsvp::fw {
namespace {

// The SMs that issue a scheme's stores pay gpu.sm_store_gbps for them (docs/models/gpu.md, SM
// store-issue limit): deepep's senders (half of software.comm_sms, DeepEP's split), tutel's and
// fastermoe's NCCL channels, and every fused kernel's dispatch and combine groups, software and in-switch alike (the
// same SM split, so that only the communication mechanism differs); GEMM streams issue nothing.
TEST(SchemeIssueSms, EverySchemeThatStoresFromSmsHoldsItsSenders) {
  const std::shared_ptr<const MoeLayerSpec> layer = firmware_small_layer();
  const SoftwareParams& s = layer->software;
  for (const hw::WorkSequence& seq : build_layer("deepep", layer).sequences) EXPECT_EQ(seq.issue_sms, s.comm_sms / 2);
  for (const char* scheme : {"tutel", "fastermoe"}) {
    const LayerPlan plan = build_layer(scheme, layer);
    for (const hw::WorkSequence& seq : plan.sequences) EXPECT_EQ(seq.issue_sms, s.nccl_channels) << scheme;
  }
  for (const char* scheme : {"fusion-only", "dysharp", "explicit-addressing"}) {
    const LayerPlan plan = build_layer(scheme, layer);
    for (size_t g = 0; g < plan.sequences.size(); ++g) {
      EXPECT_EQ(plan.sequences[g].issue_sms, s.fusion_dispatch_sms) << scheme;
      EXPECT_EQ(plan.extra_sequences[g][0].issue_sms, 0u) << scheme << ": GEMM-1";
      EXPECT_EQ(plan.extra_sequences[g][1].issue_sms, 0u) << scheme << ": GEMM-2";
      EXPECT_EQ(plan.extra_sequences[g][2].issue_sms, s.fusion_combine_sms) << scheme;
    }
  }
  for (const char* scheme : {"comet", "dysharp-comet"}) {
    const LayerPlan plan = build_layer(scheme, layer);
    for (size_t g = 0; g < plan.sequences.size(); ++g) {
      EXPECT_EQ(plan.sequences[g].issue_sms, s.comm_sms) << scheme;
      EXPECT_EQ(plan.extra_sequences[g][2].issue_sms, s.comm_sms) << scheme;
    }
  }
}

}  // namespace
}  // namespace nvsvp::fw
