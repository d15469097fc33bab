// Usability (issue 21): presets given as paths to the user's own files, the search for the config
// directory, the dump as a scenario that loads back the same, and which files an earlier run left
// in an output folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../common/test_support.hpp"
#include "nvsvp/platform/config_search.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const char* const kOwnPlatform =
    "name: my-box\n"                    // 1
    "summary: \"4 GPUs, one chip\"\n"   // 2
    "gpus: 4\n"                         // 3
    "switch_chips: 1\n"                 // 4
    "links_per_chip: [3]\n";            // 5

const char* const kOwnModel =
    "name: my-model\n"
    "summary: \"hidden 512, 8 experts\"\n"
    "hidden: 512\n"
    "moe_hidden: 256\n"
    "heads: 8\n"
    "sequence_length: 64\n"
    "experts: 8\n"
    "top_k: 2\n";

// A scenario in dir/scenarios/ naming a platform file beside it and a model file in ../models.
std::string write_own_files(const TempDir& dir, const std::string& platform_line = "platform: my-box.yaml\n") {
  dir.write("scenarios/my-box.yaml", kOwnPlatform);
  dir.write("models/my-model.yaml", kOwnModel);
  return dir.write("scenarios/s.yaml", "name: own\n" + platform_line +
                                           "workload:\n"
                                           "  model: ../models/my-model.yaml\n"
                                           "  routing: {kind: uniform, seed: 2}\n"
                                           "schemes: [deepep]\n");
}

std::string error_of_loading(const std::string& file, const std::vector<std::string>& overrides = {}) {
  try {
    load_scenario(file, overrides, test::config_dir());
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

TEST(PathPresets, FilesRelativeToTheScenarioGiveTheValuesAndTheirAbsolutePaths) {
  TempDir dir;
  const Scenario s = load_scenario(write_own_files(dir), {}, test::config_dir());
  EXPECT_EQ(s.platform.gpus, 4u);
  EXPECT_EQ(s.platform.links_per_chip, std::vector<uint32_t>{3});
  EXPECT_EQ(s.workload.model.experts, 8u);
  EXPECT_EQ(s.workload.top_k, 2u);  // the model file's default
  EXPECT_EQ(s.platform.preset, fs::absolute(dir.path() + "/scenarios/my-box.yaml").lexically_normal().string());
  EXPECT_EQ(s.workload.model.name, fs::absolute(dir.path() + "/models/my-model.yaml").lexically_normal().string());
}

TEST(PathPresets, AMappingOverridesThePresetFile) {
  TempDir dir;
  const Scenario s =
      load_scenario(write_own_files(dir, "platform:\n  preset: my-box.yaml\n  switch: {ports: 16}\n"), {},
                    test::config_dir());
  EXPECT_EQ(s.platform.gpus, 4u);
  EXPECT_EQ(s.platform.switch_chip.ports, 16u);
}

TEST(PathPresets, ASetPathIsRelativeToTheCurrentDirectory) {
  TempDir dir;
  const std::string file = write_own_files(dir);
  const fs::path previous = fs::current_path();
  fs::current_path(dir.path());
  const Scenario s = load_scenario(file, {"platform=scenarios/my-box.yaml"}, test::config_dir());
  fs::current_path(previous);
  EXPECT_EQ(s.platform.gpus, 4u);
  // A name without '/' or .yaml is still a preset of the config directory.
  EXPECT_EQ(load_scenario(file, {"platform=dgx-h100"}, test::config_dir()).platform.gpus, 8u);
}

TEST(PathPresets, AMissingFileIsNamedAtTheKeyThatNamesIt) {
  TempDir dir;
  const std::string file = write_own_files(dir, "platform: no-such-box.yaml\n");
  const std::string message = error_of_loading(file);
  EXPECT_EQ(message.rfind(file + ":2: platform: expected a platform preset name, or the path of a platform file, got ", 0),
            0u)
      << message;
  EXPECT_NE(message.find("scenarios/no-such-box.yaml (no such file)"), std::string::npos) << message;
}

TEST(PathPresets, AnErrorInsideTheFileNamesThatFileAndLine) {
  TempDir dir;
  const std::string file = write_own_files(dir);
  const std::string own = dir.write("scenarios/my-box.yaml", std::string(kOwnPlatform) + "gpu_count: 4\n");
  const std::string message = error_of_loading(file);
  EXPECT_EQ(message.rfind(own + ":6: gpu_count: expected one of the keys", 0), 0u) << message;
  // The file's `name` must be its own, as a preset's must.
  dir.write("scenarios/other-box.yaml", kOwnPlatform);
  const std::string mismatch = error_of_loading(file, {"platform=" + dir.path() + "/scenarios/other-box.yaml"});
  EXPECT_NE(mismatch.find("other-box.yaml:1: name: expected the file's own name other-box, got my-box"),
            std::string::npos)
      << mismatch;
}

TEST(PathPresets, TheDumpLoadsBackToTheSameScenario) {
  TempDir dir;
  const Scenario s = load_scenario(write_own_files(dir), {}, test::config_dir());
  const std::string dumped = dump_effective(s);
  // Read from another directory, with no preset directory at all: the dump names the files whole.
  const Scenario again = load_scenario(dir.write("elsewhere/dump.yaml", dumped), {}, dir.path() + "/none");
  EXPECT_EQ(again.platform.preset, s.platform.preset);
  EXPECT_EQ(again.workload.model.name, s.workload.model.name);
  // Equal after the first line, the comment that names the file dumped.
  const std::string redumped = dump_effective(again);
  EXPECT_EQ(redumped.substr(redumped.find('\n')), dumped.substr(dumped.find('\n')));
}

TEST(ConfigSearch, AnExplicitDirectoryWinsAndMustExist) {
  TempDir dir;
  EXPECT_EQ(find_config_dir(dir.path(), "/elsewhere", "/opt/x/bin/nvsvp"), dir.path());
  try {
    find_config_dir(dir.path() + "/missing", nullptr, "/opt/x/bin/nvsvp");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--config-dir: expected a directory of presets"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(dir.path() + "/missing (no such directory)"), std::string::npos);
  }
}

TEST(ConfigSearch, TheSearchPathComesBeforeTheBinarysOwnData) {
  TempDir dir;
  dir.write("empty/readme.txt", "no presets here");
  dir.write("mine/models/m.yaml", "");
  dir.write("build/share/nvsvp/configs/platforms/p.yaml", "");
  const std::string executable = dir.path() + "/build/nvsvp";
  const std::string path = dir.path() + "/empty::" + dir.path() + "/mine";
  EXPECT_EQ(find_config_dir("", path.c_str(), executable), dir.path() + "/mine");
  EXPECT_EQ(find_config_dir("", (dir.path() + "/empty").c_str(), executable),
            dir.path() + "/build/share/nvsvp/configs");
}

TEST(ConfigSearch, AnInstalledBinaryReadsShareBesideItsBin) {
  TempDir dir;
  dir.write("prefix/share/nvsvp/configs/platforms/p.yaml", "");
  EXPECT_EQ(find_config_dir("", nullptr, dir.path() + "/prefix/bin/nvsvp"), dir.path() + "/prefix/share/nvsvp/configs");
}

TEST(ConfigSearch, NothingFoundNamesEveryPlaceSearched) {
  TempDir dir;
  const std::string executable = dir.path() + "/bin/nvsvp";
  try {
    find_config_dir("", (dir.path() + "/a:" + dir.path() + "/b").c_str(), executable);
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    for (const std::string& place : {dir.path() + "/a (NVSVP_CONFIG_PATH)", dir.path() + "/b (NVSVP_CONFIG_PATH)",
                                     dir.path() + "/bin/share/nvsvp/configs", dir.path() + "/share/nvsvp/configs"}) {
      EXPECT_NE(message.find(place), std::string::npos) << message << "\nwanted: " << place;
    }
  }
}

TEST(RunOutputs, AnEarlierRunsFilesAreFoundAndNothingElse) {
  TempDir dir;
  const std::vector<std::string> earlier = {"links_nvls.csv", "report.json", "stats_dysharp-basic.json",
                                            "trace_deepep.json", "utilization_explicit-addressing-basic.csv"};
  const std::vector<std::string> others = {"scenario.yaml", "notes_deepep.txt", "trace_deepep.json.bak",
                                           "links_unknown-scheme.csv", "trace_deepep", "run.log", "mine.json"};
  for (const std::string& name : earlier) dir.write(name, "");
  for (const std::string& name : others) dir.write(name, "");
  std::vector<std::string> expected;
  for (const std::string& name : earlier) expected.push_back(dir.path() + "/" + name);
  EXPECT_EQ(earlier_run_outputs(dir.path()), expected);
  remove_earlier_run_outputs(dir.path());
  for (const std::string& name : earlier) EXPECT_FALSE(fs::exists(dir.path() + "/" + name)) << name;
  for (const std::string& name : others) EXPECT_TRUE(fs::exists(dir.path() + "/" + name)) << name;
}

}  // namespace
}  // namespace nvsvp::platform
