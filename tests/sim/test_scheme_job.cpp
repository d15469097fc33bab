// A scheme's job (scheme_job.hpp): planned once in the parent, run in child processes that each
// consume their own copy, so that the parent's job stays whole and runs again (the fault-free
// twin), and a job run in this process consumes its plans.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "../common/test_support.hpp"
#include "nvsvp/platform/layer_spec.hpp"
#include "nvsvp/platform/runner.hpp"
#include "nvsvp/platform/scenario.hpp"
#include "nvsvp/platform/scheme_job.hpp"

namespace nvsvp::platform {
namespace {

using nlohmann::json;

const char* const kScenario =
    "name: scheme_job_test\n"
    "platform: dgx-h100\n"
    "workload:\n"
    "  model: S\n"
    "  top_k: 8\n"
    "  tokens_per_gpu: 64\n"
    "  routing: {kind: uniform, seed: 4}\n"
    "schemes: [deepep]\n"
    "faults:\n"
    "  - {kind: link_down, gpu: 1, link: 3, at_us: 2}\n";

size_t submitted_sequences(const SchemeJob& job) {
  size_t count = 0;
  for (const LayerPart& part : *job.parts) count += part.plan.sequences.size();
  return count;
}

TEST(SchemeJob, ChildrenConsumeTheirOwnCopyAndTheParentsJobRunsAgain) {
  test::TempDir dir;
  const Scenario scenario = load_scenario(dir.write("s.yaml", kScenario), {}, test::config_dir());
  const SchemeJob job = plan_scheme(scenario, "deepep", resolve_layer(scenario));
  ASSERT_EQ(job.machine->faults.size(), 1u);
  ASSERT_EQ(job.parts->size(), 1u);
  const size_t sequences = submitted_sequences(job);
  ASSERT_EQ(sequences, scenario.platform.gpus);

  const json first = run_scheme_in_child(job).result;
  EXPECT_EQ(submitted_sequences(job), sequences) << "the child's run took the parent's plans";
  const json second = run_scheme_in_child(job).result;
  ASSERT_FALSE(first.contains("error")) << first.dump();
  EXPECT_TRUE(first.at("checks").at("passed").get<bool>()) << first.at("checks").dump();
  EXPECT_EQ(first.at("layer_time_us"), second.at("layer_time_us"));
  EXPECT_EQ(first.at("faults"), second.at("faults"));

  // The fault-free twin: the same plans on the machine without the faults.
  SchemeJob fault_free = job;
  MachineSetup machine = *job.machine;
  machine.faults.clear();
  fault_free.machine = std::make_shared<const MachineSetup>(machine);
  EXPECT_EQ(fault_free.parts, job.parts);
  const json twin = run_scheme_in_child(fault_free).result;
  ASSERT_TRUE(twin.at("checks").at("passed").get<bool>()) << twin.dump();
  EXPECT_TRUE(first.contains("faults"));
  EXPECT_FALSE(twin.contains("faults"));
  EXPECT_NE(twin.at("layer_time_us"), first.at("layer_time_us")) << "the link down changes the layer's timing";

  // In this process, the run consumes the plans: their work was submitted.
  const json here = run_scheme(job, false).result;
  EXPECT_EQ(here.at("layer_time_us"), first.at("layer_time_us"));
  EXPECT_EQ(submitted_sequences(job), 0u);
}

}  // namespace
}  // namespace nvsvp::platform
