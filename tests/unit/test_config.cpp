// Scenario and preset loading: every shipped file loads; every kind of bad input is rejected with
// "FILE:LINE: key.path: expected ..., got ..." naming the right file, line and key.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/source_paths.hpp"
#include "nvsvp/platform/routing_generator.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

namespace fs = std::filesystem;

const std::string kConfigDir = std::string(NVSVP_SOURCE_DIR) + "/configs";

// A directory of its own for each test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("nvsvp_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `name` (subdirectories created) and returns the file's path.
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// A valid scenario; tests replace one line to make it bad. Line numbers are stated in comments.
const char* const kGood =
    "name: good\n"                    // 1
    "platform: dgx-h100\n"            // 2
    "workload:\n"                     // 3
    "  model: S\n"                    // 4
    "  tokens_per_gpu: 128\n"         // 5
    "  routing:\n"                    // 6
    "    kind: uniform\n"             // 7
    "    seed: 3\n"                   // 8
    "schemes: [deepep]\n";            // 9

// Runs `load` and returns the ConfigError's message (fails the test if nothing is thrown).
template <class Load>
std::string config_error_of(Load load) {
  try {
    load();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

std::string load_error(const std::string& file, const std::vector<std::string>& overrides = {},
                       const std::string& config_dir = kConfigDir) {
  return config_error_of([&] { load_scenario(file, overrides, config_dir); });
}

// The message begins with "FILE:LINE: PATH: expected" and contains every one of `more`.
void expect_message(const std::string& message, const std::string& where, const std::string& path,
                    const std::vector<std::string>& more = {}) {
  const std::string head = where + ": " + path + ": expected ";
  EXPECT_EQ(message.rfind(head, 0), 0u) << "message: " << message << "\nwanted prefix: " << head;
  for (const std::string& part : more) {
    EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nwanted: " << part;
  }
}

// Every key a parameter struct declares.
struct KeyCollector {
  std::vector<std::string> keys;
  template <class T, class L>
  void operator()(const char* key, T&, const char*, const L&) {
    keys.push_back(key);
  }
};
template <class Params>
std::vector<std::string> keys_of(Params params) {
  KeyCollector collector;
  params.visit(collector);
  return collector.keys;
}

// ---------------------------------------------------------------------------------------------
// Shipped files

TEST(Config, ListsEveryPreset) {
  const std::vector<PresetInfo> presets = list_presets(kConfigDir);
  std::vector<std::string> platforms, models;
  for (const PresetInfo& p : presets) {
    EXPECT_FALSE(p.summary.empty()) << p.name;
    (p.kind == "platform" ? platforms : models).push_back(p.name);
  }
  for (const char* name : {"dgx-h100", "gh200-nvl32", "nvl64", "hgx-h800", "gb200-nvl72", "hgx-b200"}) {
    EXPECT_NE(std::find(platforms.begin(), platforms.end(), name), platforms.end()) << name;
  }
  for (const char* name : {"S", "M", "L", "gpt-oss-120b", "qwen3-235b", "deepseek-v4-pro-like"}) {
    EXPECT_NE(std::find(models.begin(), models.end(), name), models.end()) << name;
  }
}

TEST(Config, LoadsEveryPlatformPreset) {
  TempDir dir;
  struct Expected {
    std::string name;
    uint32_t gpus, chips;
    std::vector<uint32_t> links;
    uint32_t ports;
    double line_rate_gbps;
  };
  const std::vector<Expected> expected = {
      {"dgx-h100", 8, 4, {5, 4, 4, 5}, 64, 25.0},
      {"gh200-nvl32", 32, 9, std::vector<uint32_t>(9, 2), 64, 25.0},
      {"nvl64", 64, 18, std::vector<uint32_t>(18, 1), 64, 25.0},
      {"hgx-h800", 8, 4, {2, 2, 2, 2}, 64, 25.0},  // 8 links per H800 GPU: nvlink_nvswitch.md
      // NVLink5 at 50 GB/s, 72-port chips: nvlink_nvswitch.md#blackwell-generation
      {"gb200-nvl72", 72, 18, std::vector<uint32_t>(18, 1), 72, 50.0},
      {"hgx-b200", 8, 2, {9, 9}, 72, 50.0},
  };
  for (const PresetInfo& preset : list_presets(kConfigDir)) {
    if (preset.kind != "platform") continue;
    // 576 experts spread evenly over every preset's GPUs (8, 32, 64, 72).
    const std::string file = dir.write(preset.name + ".yaml",
        "name: t\nplatform: " + preset.name + "\nworkload:\n  model: {preset: S, experts: 576}\n"
        "  routing: {kind: uniform}\nschemes: [deepep]\n");
    const Scenario s = load_scenario(file, {}, kConfigDir);
    EXPECT_EQ(s.platform.preset, preset.name);
    // 18 links per Hopper GPU, 8 per H800 (its export cut): nvlink_nvswitch.md
    EXPECT_EQ(s.platform.links_per_gpu(), preset.name == "hgx-h800" ? 8u : 18u) << preset.name;
    for (const Expected& e : expected) {
      if (e.name != preset.name) continue;
      EXPECT_EQ(s.platform.gpus, e.gpus);
      EXPECT_EQ(s.platform.switch_chips, e.chips);
      EXPECT_EQ(s.platform.links_per_chip, e.links);
      EXPECT_EQ(s.platform.switch_chip.ports, e.ports);
      EXPECT_DOUBLE_EQ(s.platform.link.line_rate_gbps, e.line_rate_gbps);
      EXPECT_DOUBLE_EQ(s.platform.link.latency_ns, 250.0);
    }
  }
}

TEST(Config, LoadsEveryModelPreset) {
  TempDir dir;
  struct Expected { std::string name; uint32_t hidden, moe_hidden, heads, seq, experts, top_k, shared; };
  const std::vector<Expected> expected = {
      {"S", 2048, 512, 32, 2048, 64, 8, 0},          {"M", 4096, 1024, 64, 4096, 128, 8, 0},
      {"L", 7168, 2048, 128, 8192, 256, 8, 0},       {"gpt-oss-120b", 2880, 2880, 64, 4096, 64, 4, 0},
      {"qwen3-235b", 4096, 1536, 128, 4096, 128, 8, 0},
      {"deepseek-v4-pro-like", 7168, 2048, 128, 8192, 384, 6, 1},  // hot_expert_replication.md: 384 experts, 6 + 1 shared
  };
  for (const PresetInfo& preset : list_presets(kConfigDir)) {
    if (preset.kind != "model") continue;
    const std::string file = dir.write(preset.name + ".yaml",
        "name: t\nplatform: dgx-h100\nworkload:\n  model: " + preset.name +
        "\n  routing: {kind: uniform}\nschemes: [deepep]\n");
    const Scenario s = load_scenario(file, {}, kConfigDir);
    const fw::MoeModel& m = s.workload.model;
    EXPECT_EQ(m.name, preset.name);
    EXPECT_EQ(s.workload.top_k, m.top_k);
    EXPECT_EQ(s.workload.tokens_per_gpu, m.sequence_length);
    for (const Expected& e : expected) {
      if (e.name != preset.name) continue;
      EXPECT_EQ(m.hidden, e.hidden);
      EXPECT_EQ(m.moe_hidden, e.moe_hidden);
      EXPECT_EQ(m.heads, e.heads);
      EXPECT_EQ(m.sequence_length, e.seq);
      EXPECT_EQ(m.experts, e.experts);
      EXPECT_EQ(m.top_k, e.top_k);
      EXPECT_EQ(m.shared_experts, e.shared);
      EXPECT_EQ(s.workload.shared_experts, e.shared);
    }
  }
}

// Platform presets spell out every parameter, so a new parameter is a conscious choice per preset.
TEST(Config, PlatformPresetsSpellOutEveryParameter) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> sections = {
      {"link", keys_of(model::LinkParams{})},
      {"switch", keys_of(model::SwitchParams{})},
      {"gpu", keys_of(model::GpuParams{})},
  };
  for (const PresetInfo& preset : list_presets(kConfigDir)) {
    if (preset.kind != "platform") continue;
    const YAML::Node doc = YAML::LoadFile(kConfigDir + "/platforms/" + preset.name + ".yaml");
    for (const auto& [section, keys] : sections) {
      for (const std::string& key : keys) {
        EXPECT_TRUE(doc[section] && doc[section][key]) << preset.name << ": " << section << "." << key;
      }
    }
  }
}

TEST(Config, LoadsEveryScenarioFile) {
  size_t count = 0;
  for (const auto& entry : fs::directory_iterator(kConfigDir + "/scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    try {
      const Scenario s = load_scenario(entry.path().string(), {}, kConfigDir);
      EXPECT_FALSE(s.name.empty());
      EXPECT_FALSE(s.schemes.empty());
    } catch (const ConfigError& e) {
      ADD_FAILURE() << entry.path() << ": " << e.what();
    }
  }
  EXPECT_GE(count, 1u);
}

TEST(Config, TraceExampleGeneratesItsRouting) {
  const Scenario s = load_scenario(kConfigDir + "/scenarios/trace_example.yaml", {}, kConfigDir);
  ASSERT_EQ(s.workload.routing.kind, "trace");
  const fw::MoeRouting routing = generate_routing(s.workload, s.platform.gpus);
  EXPECT_EQ(routing.tokens(), 8u * 64u);
  EXPECT_EQ(routing.expert_ids.size(), 8u * 64u * 8u);
}

// ---------------------------------------------------------------------------------------------
// Defaults, overrides, dump

TEST(Config, DefaultsComeFromTheModelAndTheStructs) {
  TempDir dir;
  const Scenario s = load_scenario(dir.write("s.yaml", kGood), {}, kConfigDir);
  EXPECT_EQ(s.name, "good");
  EXPECT_EQ(s.workload.top_k, 8u);
  EXPECT_EQ(s.workload.tokens_per_gpu, 128u);
  EXPECT_EQ(s.workload.dispatch_dtype, fw::DataType::fp8);
  EXPECT_EQ(s.workload.combine_dtype, fw::DataType::bf16);
  EXPECT_EQ(s.workload.weight_dtype, fw::WeightDtype::fp8);
  EXPECT_EQ(s.workload.routing.kind, "uniform");
  EXPECT_EQ(s.workload.routing.seed, 3u);
  EXPECT_EQ(s.workload.routing.origin, dir.path() + "/s.yaml:6");
  EXPECT_EQ(s.schemes, std::vector<std::string>{"deepep"});
  EXPECT_DOUBLE_EQ(s.simulation.max_time_us, SimulationSpec{}.max_time_us);
}

TEST(Config, MappingOverridesApplyOnTopOfThePreset) {
  TempDir dir;
  const std::string file = dir.write("s.yaml",
      "name: o\n"
      "platform:\n"
      "  preset: gh200-nvl32\n"
      "  link: {latency_ns: 300}\n"
      "  switch: {arbiter: oldest_first}\n"
      "workload:\n"
      "  model: {preset: L, experts: 128}\n"
      "  top_k: 16\n"
      "  dispatch_dtype: bf16\n"
      "  combine_dtype: fp32\n"
      "  weight_dtype: fp4\n"
      "  routing: {kind: zipf, exponent: 2.0}\n"
      "schemes: [deepep]\n"
      "simulation: {max_time_us: 500}\n");
  const Scenario s = load_scenario(file, {}, kConfigDir);
  EXPECT_EQ(s.platform.gpus, 32u);
  EXPECT_DOUBLE_EQ(s.platform.link.latency_ns, 300.0);
  EXPECT_DOUBLE_EQ(s.platform.link.line_rate_gbps, 25.0);  // kept from the preset
  EXPECT_EQ(s.platform.switch_chip.arbiter, "oldest_first");
  EXPECT_EQ(s.workload.model.experts, 128u);
  EXPECT_EQ(s.workload.model.hidden, 7168u);
  EXPECT_EQ(s.workload.top_k, 16u);
  EXPECT_EQ(s.workload.tokens_per_gpu, 8192u);
  EXPECT_EQ(s.workload.dispatch_dtype, fw::DataType::bf16);
  EXPECT_EQ(s.workload.combine_dtype, fw::DataType::fp32);
  EXPECT_EQ(s.workload.weight_dtype, fw::WeightDtype::fp4);
  EXPECT_DOUBLE_EQ(s.workload.routing.exponent, 2.0);
  EXPECT_DOUBLE_EQ(s.simulation.max_time_us, 500.0);
}

// Past 64 GPUs and ports (a GB200 NVL72-like fabric: 72 GPUs, one link to each of 18 chips of 72
// ports); the model's experts a multiple of the GPUs.
TEST(Config, SeventyTwoGpusOnSeventyTwoPortChipsLoad) {
  TempDir dir;
  const std::string file = dir.write("s.yaml",
      "name: nvl72\n"
      "platform:\n"
      "  preset: nvl64\n"
      "  gpus: 72\n"
      "  switch: {ports: 72}\n"
      "workload:\n"
      "  model: {preset: S, experts: 288}\n"
      "  tokens_per_gpu: 32\n"
      "  routing: {kind: uniform, seed: 3}\n"
      "schemes: [deepep]\n");
  const Scenario s = load_scenario(file, {}, kConfigDir);
  EXPECT_EQ(s.platform.gpus, 72u);
  EXPECT_EQ(s.platform.switch_chips, 18u);
  EXPECT_EQ(s.platform.switch_chip.ports, 72u);
  EXPECT_EQ(s.workload.model.experts, 288u);
  // One port more than a route entry names; one GPU more than a route table holds.
  expect_message(load_error(file, {"platform.switch.ports=129"}), "command line (--set platform.switch.ports=129)",
                 "platform.switch.ports", {"128"});
  expect_message(load_error(file, {"platform.gpus=144", "platform.switch.ports=128"}),
                 "command line (--set platform.gpus=144)", "platform.gpus",
                 {"at most 128 GPUs (a switch chip's route table, ROUTE_ENTRIES)", "144 GPUs"});
}

TEST(Config, SetOverridesModifyTheTreeBeforeChecking) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", kGood);
  const Scenario s = load_scenario(file,
                                   {"platform.link.latency_ns=300", "workload.model.experts=128",
                                    "workload.routing.seed=42", "schemes=[deepep]",
                                    "simulation.max_time_us=20", "workload.routing={kind: normal, std: 0.05}"},
                                   kConfigDir);
  EXPECT_EQ(s.platform.preset, "dgx-h100");
  EXPECT_DOUBLE_EQ(s.platform.link.latency_ns, 300.0);
  EXPECT_EQ(s.workload.model.name, "S");
  EXPECT_EQ(s.workload.model.experts, 128u);
  EXPECT_EQ(s.workload.routing.kind, "normal");
  EXPECT_EQ(s.workload.routing.seed, 1u);  // the whole routing mapping was replaced
  EXPECT_DOUBLE_EQ(s.workload.routing.std, 0.05);
  EXPECT_DOUBLE_EQ(s.simulation.max_time_us, 20.0);

  const Scenario p = load_scenario(file, {"platform=nvl64"}, kConfigDir);
  EXPECT_EQ(p.platform.gpus, 64u);
}

TEST(Config, DumpIsCompleteAndLoadsBackToTheSameScenario) {
  TempDir dir;
  const Scenario s = load_scenario(dir.write("s.yaml", kGood), {"platform.gpu.sms=100"}, kConfigDir);
  const std::string dump = dump_effective(s);
  for (const char* key : {"max_packet_payload_bytes:", "crossbar_speedup:", "gemm_efficiency:",
                          "sequence_length:", "tokens_per_gpu:", "dispatch_dtype:", "max_time_us:"}) {
    EXPECT_NE(dump.find(key), std::string::npos) << key;
  }
  EXPECT_NE(dump.find("# one hop GPU->switch or switch->GPU, ns"), std::string::npos);

  const Scenario back = load_scenario(dir.write("back.yaml", dump), {}, kConfigDir);
  EXPECT_EQ(back.platform.gpu.sms, 100u);
  EXPECT_EQ(back.platform.links_per_chip, s.platform.links_per_chip);
  EXPECT_EQ(back.workload.tokens_per_gpu, 128u);
  EXPECT_EQ(back.workload.routing.seed, 3u);
  // Same scenario, same dump (but for the file named in the header comment).
  const std::string again = dump_effective(back);
  EXPECT_EQ(again.substr(again.find('\n')), dump.substr(dump.find('\n')));
}

TEST(Config, PartitionsLoadAndDumpBackAndDefaultToNone) {
  TempDir dir;
  const Scenario plain = load_scenario(dir.write("plain.yaml", kGood), {}, kConfigDir);
  EXPECT_TRUE(plain.partitions.empty());
  EXPECT_NE(dump_effective(plain).find("\npartitions: []"), std::string::npos);

  // GPU 7 left out: allowed (isolated).
  const Scenario s = load_scenario(dir.write("s.yaml", std::string(kGood) + "partitions:\n  - [3, 0, 1, 2]\n  - [4, 6, 5]\n"),
                                   {}, kConfigDir);
  const std::vector<std::vector<uint32_t>> expected{{3, 0, 1, 2}, {4, 6, 5}};
  EXPECT_EQ(s.partitions, expected);
  const std::string dump = dump_effective(s);
  EXPECT_NE(dump.find("\npartitions: [[3, 0, 1, 2], [4, 6, 5]]"), std::string::npos) << dump;
  EXPECT_EQ(load_scenario(dir.write("back.yaml", dump), {}, kConfigDir).partitions, expected);
  EXPECT_EQ(load_scenario(dir.write("set.yaml", kGood), {"partitions=[[0, 1], [2]]"}, kConfigDir).partitions,
            (std::vector<std::vector<uint32_t>>{{0, 1}, {2}}));
}

// ---------------------------------------------------------------------------------------------
// Bad input: one test per kind, each checking file, line and key path.

std::string config_with_line(std::string text, int line, const std::string& replacement) {
  size_t start = 0;
  for (int i = 1; i < line; ++i) start = text.find('\n', start) + 1;
  const size_t end = text.find('\n', start);
  return text.replace(start, end - start, replacement);
}

TEST(ConfigErrors, UnknownTopLevelKey) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", std::string(kGood) + "shemes: [deepep]\n");
  expect_message(load_error(file), file + ":10", "shemes", {"unknown key shemes", "schemes"});
}

TEST(ConfigErrors, UnknownKeyInPlatformLink) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 2,
      "platform:\n  preset: dgx-h100\n  link:\n    latancy_ns: 10"));
  expect_message(load_error(file), file + ":5", "platform.link.latancy_ns",
                 {"one of the keys line_rate_gbps", "latency_ns"});
}

TEST(ConfigErrors, UnknownKeyInRouting) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 8, "    sed: 3"));
  expect_message(load_error(file), file + ":8", "workload.routing.sed", {"unknown key sed"});
}

TEST(ConfigErrors, KeyOfAnotherRoutingKind) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 8, "    exponent: 1.5"));
  expect_message(load_error(file), file + ":8", "workload.routing.exponent",
                 {"keys of kind uniform", "belongs to kind zipf"});
}

TEST(ConfigErrors, WrongTypes) {
  TempDir dir;
  const std::string text = config_with_line(kGood, 2, "platform:\n  preset: dgx-h100\n  link:\n    latency_ns: X");
  struct Case { std::string value; std::string got; };
  // Line 5 of `text` is platform.link.latency_ns (a double).
  for (const Case& c : std::vector<Case>{{"abc", "got abc"}, {"\"250\"", "got \"250\""},
                                         {"[1, 2]", "got a list"}, {"", "got nothing"},
                                         {"2e9", "got 2e9"}, {".inf", "got .inf"}}) {
    const std::string file = dir.write("s.yaml", config_with_line(text, 5, "    latency_ns: " + c.value));
    expect_message(load_error(file), file + ":5", "platform.link.latency_ns", {"a number in [0, 1000000000]", c.got});
  }
  // uint32_t: no fractions, no negatives; line 5 is workload.tokens_per_gpu.
  for (const char* value : {"1.5", "-3", "abc", "4294967296"}) {
    const std::string file = dir.write("s.yaml", config_with_line(kGood, 5, std::string("  tokens_per_gpu: ") + value));
    expect_message(load_error(file), file + ":5", "workload.tokens_per_gpu", {"an integer in [1, ", std::string("got ") + value});
  }
  // A string not among its choices.
  const std::string arbiter = dir.write("a.yaml", config_with_line(kGood, 2,
      "platform:\n  preset: dgx-h100\n  switch: {arbiter: lottery}"));
  expect_message(load_error(arbiter), arbiter + ":4", "platform.switch.arbiter",
                 {"one of round_robin, fixed_priority, oldest_first", "got lottery"});
  const std::string dtype = dir.write("d.yaml", config_with_line(kGood, 5, "  dispatch_dtype: fp4"));
  expect_message(load_error(dtype), dtype + ":5", "workload.dispatch_dtype", {"one of fp8, bf16, fp32"});
  // A mapping where a section is expected.
  const std::string section = dir.write("m.yaml", config_with_line(config_with_line(config_with_line(kGood, 8, ""), 7, ""), 6, "  routing: uniform"));
  expect_message(load_error(section), section + ":6", "workload.routing", {"a mapping", "got uniform"});
}

TEST(ConfigErrors, TopKAboveExperts) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 4, "  model: {preset: S, experts: 8, top_k: 4}\n  top_k: 9"));
  expect_message(load_error(file), file + ":5", "workload.top_k", {"top_k <= experts", "top_k 9 with 8 experts"});
}

TEST(ConfigErrors, ZeroGpus) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 2, "platform:\n  preset: dgx-h100\n  gpus: 0"));
  expect_message(load_error(file), file + ":4", "platform.gpus", {"an integer in [1, 4096]", "got 0"});
}

TEST(ConfigErrors, ExpertsNotDivisibleOverGpus) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 4, "  model: {preset: S, experts: 60}"));
  expect_message(load_error(file), file + ":4", "workload.model.experts", {"divisible", "60 experts over 8 GPUs"});
  // Changing the GPU count instead blames the GPU count.
  const std::string gpus = dir.write("g.yaml", config_with_line(kGood, 2, "platform: {preset: dgx-h100, gpus: 6}"));
  expect_message(load_error(gpus), gpus + ":2", "platform.gpus", {"64 experts over 6 GPUs"});
}

TEST(ConfigErrors, NotEnoughSwitchPorts) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 2,
      "platform:\n  preset: gh200-nvl32\n  switch:\n    ports: 32"));
  expect_message(load_error(file), file + ":5", "platform.switch.ports", {"32 x 2 = 64", "got 32 ports"});
}

TEST(ConfigErrors, PartitionsNameEachGpuOfThePlatformOnce) {
  TempDir dir;
  const std::string range = dir.write("r.yaml", std::string(kGood) + "partitions: [[0, 1], [2, 8]]\n");
  expect_message(load_error(range), range + ":10", "partitions[1][1]", {"a GPU of the platform, 0 .. 7", "got 8"});
  const std::string twice = dir.write("t.yaml", std::string(kGood) + "partitions:\n  - [0, 1]\n  - [2, 1]\n");
  expect_message(load_error(twice), twice + ":12", "partitions[1][1]", {"each GPU in one partition", "in partitions[0]"});
  const std::string empty = dir.write("e.yaml", std::string(kGood) + "partitions:\n  - [0, 1]\n  - []\n");
  expect_message(load_error(empty), empty + ":12", "partitions[1]", {"at least one GPU", "got an empty list"});
  const std::string flat = dir.write("f.yaml", std::string(kGood) + "partitions: [0, 1]\n");
  expect_message(load_error(flat), flat + ":10", "partitions[0]", {"a list of GPU indices", "got 0"});
}

TEST(ConfigErrors, LinksPerChipDoesNotMatchSwitchChips) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 2,
      "platform:\n  preset: dgx-h100\n  links_per_chip: [5, 4, 4]"));
  expect_message(load_error(file), file + ":4", "platform.links_per_chip", {"switch_chips = 4", "got 3 entries"});
  const std::string zero = dir.write("z.yaml", config_with_line(kGood, 2,
      "platform:\n  preset: dgx-h100\n  links_per_chip: [5, 0, 4, 5]"));
  expect_message(load_error(zero), zero + ":4", "platform.links_per_chip[1]", {"got 0"});
}

TEST(ConfigErrors, MissingTraceFile) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", config_with_line(config_with_line(kGood, 7, "    kind: trace"), 8,
                                                         "    file: nowhere.csv"));
  expect_message(load_error(file), file + ":8", "workload.routing.file",
                 {"a readable trace file", dir.path() + "/nowhere.csv (no such file)"});
  const std::string missing = dir.write("m.yaml", config_with_line(config_with_line(kGood, 7, "    kind: trace"), 8, ""));
  expect_message(load_error(missing), missing + ":6", "workload.routing.file", {"(required key)"});
}

// A trace scenario for 8 GPUs x 2 tokens, top_k 2, over `trace` (the file's text).
Scenario trace_scenario(const TempDir& dir, const std::string& trace) {
  dir.write("t.csv", trace);
  const std::string file = dir.write("t.yaml",
      "name: t\nplatform: dgx-h100\nworkload:\n  model: S\n  top_k: 2\n  tokens_per_gpu: 2\n"
      "  routing: {kind: trace, file: t.csv}\nschemes: [deepep]\n");
  return load_scenario(file, {}, kConfigDir);
}

std::string trace_lines(int tokens) {
  std::string text = "# header comment\n\n";
  for (int t = 0; t < tokens; ++t) text += std::to_string(t % 64) + ", " + std::to_string((t + 1) % 64) + "\n";
  return text;
}

TEST(ConfigErrors, MalformedTraceLines) {
  TempDir dir;
  const std::string csv = dir.path() + "/t.csv";
  auto trace_error = [&](const std::string& text) {
    const Scenario s = trace_scenario(dir, text);
    return config_error_of([&] { generate_routing(s.workload, s.platform.gpus); });
  };
  // Lines 1-2 are a comment and a blank line, so token t is on line t + 3.
  std::string text = config_with_line(trace_lines(16), 7, "4, x5");
  EXPECT_EQ(trace_error(text).rfind(csv + ":7: token 4: expected expert IDs (integers)", 0), 0u) << trace_error(text);
  text = config_with_line(trace_lines(16), 8, "5");
  EXPECT_EQ(trace_error(text), csv + ":8: token 5: expected 2 expert IDs (top_k), got 1");
  text = config_with_line(trace_lines(16), 9, "6 6");
  EXPECT_EQ(trace_error(text), csv + ":9: token 6: expected 2 distinct expert IDs, got 6 twice");
  text = config_with_line(trace_lines(16), 10, "7,64");
  EXPECT_EQ(trace_error(text), csv + ":10: token 7: expected expert IDs in [0, 64), got 64");
  text = config_with_line(trace_lines(16), 11, "1 2 3");
  EXPECT_EQ(trace_error(text), csv + ":11: token 8: expected 2 expert IDs (top_k), got more");
  EXPECT_EQ(trace_error(trace_lines(15)), csv + ":18: expected 16 token lines (8 GPUs x 2 tokens per GPU), got 15");
  EXPECT_EQ(trace_error(trace_lines(17)).rfind(csv + ":19: expected exactly 16 token lines", 0), 0u);
}

TEST(ConfigErrors, UnknownPreset) {
  TempDir dir;
  const std::string platform = dir.write("p.yaml", config_with_line(kGood, 2, "platform: dgx-h200"));
  expect_message(load_error(platform), platform + ":2", "platform",
                 {"one of the platform presets dgx-h100, gb200-nvl72, gh200-nvl32, hgx-b200, hgx-h800, nvl64", "got dgx-h200"});
  const std::string model = dir.write("m.yaml", config_with_line(kGood, 4, "  model:\n    preset: XL"));
  expect_message(load_error(model), model + ":5", "workload.model.preset",
                 {"one of the model presets", "got XL"});
}

TEST(ConfigErrors, BadPresetFileNamesThePresetFile) {
  TempDir dir;
  const std::string preset = dir.write("configs/platforms/broken.yaml",
      "name: broken\nsummary: x\ngpus: 8\nswitch_chips: 1\nlinks_per_chip: [1]\nlink:\n  flit_byte: 16\n");
  const std::string file = dir.write("s.yaml", config_with_line(kGood, 2, "platform: broken"));
  expect_message(load_error(file, {}, dir.path() + "/configs"), preset + ":7", "link.flit_byte",
                 {"unknown key flit_byte"});
}

TEST(ConfigErrors, UnknownAndDuplicateScheme) {
  TempDir dir;
  const std::string unknown = dir.write("u.yaml", config_with_line(kGood, 9, "schemes:\n  - deepep\n  - dysharp-magic"));
  expect_message(load_error(unknown), unknown + ":11", "schemes[1]", {"one of the schemes deepep", "got dysharp-magic"});
  const std::string dup = dir.write("d.yaml", config_with_line(kGood, 9, "schemes: [deepep, deepep]"));
  expect_message(load_error(dup), dup + ":9", "schemes[1]", {"each scheme once"});
  const std::string empty = dir.write("e.yaml", config_with_line(kGood, 9, "schemes: []"));
  expect_message(load_error(empty), empty + ":9", "schemes", {"a non-empty list"});
}

TEST(ConfigErrors, BadSetOverrides) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", kGood);
  EXPECT_EQ(load_error(file, {"platform.gpus"}),
            "command line (--set platform.gpus): expected a.b.c=value, got \"platform.gpus\"");
  EXPECT_EQ(load_error(file, {"=8"}).rfind("command line (--set =8): expected a.b.c=value", 0), 0u);
  EXPECT_EQ(load_error(file, {"platform..gpus=8"}).rfind("command line (--set platform..gpus=8): expected a.b.c=value", 0), 0u);
  // A valid override with a bad value is reported at the command line, with its key path.
  expect_message(load_error(file, {"platform.gpus=0"}), "command line (--set platform.gpus=0)", "platform.gpus",
                 {"got 0"});
  expect_message(load_error(file, {"workload.routing.exponent=2"}),
                 "command line (--set workload.routing.exponent=2)", "workload.routing.exponent",
                 {"belongs to kind zipf"});
  // A path through a list.
  expect_message(load_error(file, {"schemes.x=1"}), "command line (--set schemes.x=1)", "schemes",
                 {"a mapping to hold the key x", "got a list"});
  // A value that is not YAML.
  EXPECT_EQ(load_error(file, {"schemes=[deepep"}).rfind("command line (--set schemes=[deepep): expected a YAML value", 0), 0u);
}

TEST(ConfigErrors, MissingFileAndSyntaxError) {
  TempDir dir;
  const std::string missing = dir.path() + "/none.yaml";
  EXPECT_EQ(load_error(missing), missing + ": expected an existing file, got no such file");
  const std::string syntax = dir.write("s.yaml", "name: x\nplatform: [dgx-h100\nworkload: {}\n");
  EXPECT_EQ(load_error(syntax).rfind(syntax + ":", 0), 0u);
  EXPECT_NE(load_error(syntax).find("expected valid YAML"), std::string::npos) << load_error(syntax);
  const std::string dup = dir.write("d.yaml", std::string(kGood) + "name: again\n");
  expect_message(load_error(dup), dup + ":10", "name", {"each key once", "first at " + dup + ":1"});
}

TEST(ConfigErrors, RequiredKeysAndBadName) {
  TempDir dir;
  const std::string no_kind = dir.write("k.yaml", config_with_line(kGood, 7, "    # no kind"));
  expect_message(load_error(no_kind), no_kind + ":6", "workload.routing.kind", {"(required key)"});
  const std::string no_name = dir.write("n.yaml", config_with_line(kGood, 1, ""));
  expect_message(load_error(no_name), no_name + ":1", "name", {"(required key)"});
  const std::string bad_name = dir.write("b.yaml", config_with_line(kGood, 1, "name: a/b"));
  expect_message(load_error(bad_name), bad_name + ":1", "name", {"letters, digits", "got a/b"});
  const std::string std_zero = dir.write("z.yaml", config_with_line(config_with_line(kGood, 7, "    kind: normal"), 8, "    std: 0"));
  expect_message(load_error(std_zero), std_zero + ":8", "workload.routing.std", {"a number > 0", "got 0"});
}

// ---------------------------------------------------------------------------------------------
// Input limits (issue 20): an alias that names itself is a cycle, nested aliases multiply; both
// are refused with the limit named instead of overflowing the stack or the memory.
TEST(ConfigLimits, SelfReferringAliasIsBadInput) {
  TempDir dir;
  const std::string list = dir.write("list.yaml", std::string(kGood) + "x: &a [*a]\n");
  EXPECT_NE(load_error(list).find("nesting at most 64 levels deep"), std::string::npos) << load_error(list);
  const std::string map = dir.write("map.yaml", std::string(kGood) + "x: &a {k: *a}\n");
  EXPECT_NE(load_error(map).find("nesting at most 64 levels deep"), std::string::npos) << load_error(map);
  const std::string good = dir.write("good.yaml", kGood);
  const std::string message = load_error(good, {"workload.routing=&a [*a]"});
  EXPECT_NE(message.find("nesting at most 64 levels deep"), std::string::npos) << message;
}

TEST(ConfigLimits, AliasExpansionIsBounded) {
  // Nine levels of ten: 10^9 values once expanded, from a file of a few hundred bytes.
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", " : "") + prev;
    laughs += "]\n";
  }
  TempDir dir;
  const std::string file = dir.write("laughs.yaml", std::string(kGood) + laughs);
  const std::string message = load_error(file);
  EXPECT_NE(message.find("at most 1000000 values once aliases are expanded"), std::string::npos) << message;
  EXPECT_EQ(message.rfind(file + ":", 0), 0u) << message;
}

TEST(ConfigLimits, NestingBeyondTheParserNamesTheLimit) {
  // yaml-cpp stops at 2000 levels with the message "bad file"; the error names nvsvp's limit.
  TempDir dir;
  const std::string file = dir.write("deep.yaml", "name: x\nplatform: " + std::string(3000, '[') + std::string(3000, ']') + "\n");
  EXPECT_EQ(load_error(file).rfind(file + ":2: expected nesting at most 64 levels deep (an input limit), got deeper than "
                                          "the YAML parser goes", 0),
            0u)
      << load_error(file);
  const std::string good = dir.write("good.yaml", kGood);
  const std::string message = load_error(good, {"platform=" + std::string(3000, '[') + std::string(3000, ']')});
  EXPECT_NE(message.find("expected nesting at most 64 levels deep (an input limit), got deeper than the YAML parser goes"),
            std::string::npos)
      << message;
}

TEST(ConfigLimits, OnlyOneDocumentAndNoNulByte) {
  TempDir dir;
  const std::string two = dir.write("two.yaml", std::string(kGood) + "---\nshemes: [deepep]\n");
  EXPECT_EQ(load_error(two).rfind(two + ":11: expected one YAML document, got a second document", 0), 0u) << load_error(two);
  const std::string broken = dir.write("broken.yaml", std::string(kGood) + "---\n: : [\n");
  EXPECT_NE(load_error(broken).find(broken + ":"), std::string::npos) << load_error(broken);
  const std::string leading = dir.write("leading.yaml", "---\n" + std::string(kGood));
  EXPECT_NO_THROW(load_scenario(leading, {}, kConfigDir));
  const std::string nul = dir.write("nul.yaml", std::string(kGood) + "# a comment " + '\0' + " with a NUL\n");
  EXPECT_EQ(load_error(nul).rfind(nul + ":10: expected a text file, got a NUL byte", 0), 0u) << load_error(nul);
}

TEST(ConfigLimits, FileSizeIsBounded) {
  TempDir dir;
  // A valid scenario padded with comments past 4 MiB: refused before it is parsed.
  std::string padded = kGood;
  const std::string comment = "# " + std::string(1022, 'x') + "\n";
  while (padded.size() <= (4u << 20)) padded += comment;
  const std::string file = dir.write("big.yaml", padded);
  EXPECT_EQ(load_error(file), file + ": expected a configuration file of at most 4194304 bytes (an input limit), got a larger one");
  const std::string fits = dir.write("fits.yaml", padded.substr(0, 4u << 20));
  EXPECT_NO_THROW(load_scenario(fits, {}, kConfigDir));
}

TEST(ConfigLimits, UnsignedValuesHaveNoSign) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", kGood);
  const std::string message = load_error(file, {"workload.tokens_per_gpu=+32"});
  EXPECT_NE(message.find("workload.tokens_per_gpu: expected an integer in [1, 1048576], got +32"), std::string::npos)
      << message;
}

TEST(ConfigLimits, TraceTokensAreBoundedBeforeAnythingIsAllocated) {
  TempDir dir;
  Scenario s = trace_scenario(dir, trace_lines(16));
  s.workload.tokens_per_gpu = 1u << 20;  // 8 GPUs x 2^20 tokens: 2^23 token lines, within the limit
  s.platform.gpus = 32;                  // 32 x 2^20 = 2^25: beyond it
  const std::string message = config_error_of([&] { generate_routing(s.workload, s.platform.gpus); });
  EXPECT_NE(message.find("workload.routing.file: expected a trace of at most 16777216 token lines (an input limit), "
                         "got a layer of 33554432 tokens"),
            std::string::npos)
      << message;
}

TEST(ConfigLimits, ATraceFieldIsShownPrintably) {
  TempDir dir;
  const Scenario s = trace_scenario(dir, config_with_line(trace_lines(16), 7, std::string("4, 5") + '\0' + "1"));
  const std::string message = config_error_of([&] { generate_routing(s.workload, s.platform.gpus); });
  EXPECT_NE(message.find("got '5\\x001'"), std::string::npos) << message;
}

TEST(ConfigLimits, TokenThatCannotStartAValueIsBadInputNotAHang) {
  // yaml-cpp 0.7's LoadAll looped forever on these (found by tests/fuzz/, the scenario harness).
  TempDir dir;
  const std::string comma = dir.write("comma.yaml", ",[\n");
  EXPECT_EQ(load_error(comma).rfind(comma + ":1: expected valid YAML, got ',' where a value should start", 0), 0u)
      << load_error(comma);
  const std::string fuzzed = dir.write("fuzzed.yaml", " ,[,2 2,[,2 \nN\n");
  EXPECT_EQ(load_error(fuzzed).rfind(fuzzed + ":1: expected valid YAML", 0), 0u) << load_error(fuzzed);
}

TEST(ConfigErrors, ReceiveRingSmallerThanAChunk) {
  TempDir dir;
  const std::string file = dir.write("s.yaml", kGood);
  const std::string message = load_error(file, {"software.recv_queue_tokens=3"});
  EXPECT_NE(message.find("software.recv_queue_tokens: expected 0 (no rings) or a ring of at least one chunk"),
            std::string::npos) << message;
  EXPECT_NE(message.find("3 tokens, chunks of 6"), std::string::npos) << message;
}

}  // namespace
}  // namespace nvsvp::platform
