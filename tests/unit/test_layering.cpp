// The layering rules, checked on the source tree: firmware sees only nvsvp/hw and nvsvp/fw (no
// SystemC, TLM or model headers); the models know nothing of platform/ or fw/; headers that say
// they are SystemC-free include nothing that pulls SystemC in.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../common/source_tree.hpp"

namespace {

namespace fs = std::filesystem;
using nvsvp::test::read_text;

const fs::path kRoot = NVSVP_SOURCE_DIR;

// The targets of the #include directives in `text`.
std::vector<std::string> includes_of(const std::string& text) {
  static const std::regex directive(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, directive)) found.push_back(m[1]);
  }
  return found;
}

// Every C++ source and header under `dir`, with its includes.
std::map<std::string, std::vector<std::string>> scan(const fs::path& dir) {
  std::map<std::string, std::vector<std::string>> files;
  for (const fs::path& file : nvsvp::test::cpp_sources_under(dir)) {
    files[fs::relative(file, kRoot).string()] = includes_of(read_text(file));
  }
  return files;
}

bool pulls_in_systemc(const std::string& include) {
  return include == "systemc" || include == "systemc.h" || include == "tlm" || include == "tlm.h" ||
         include.rfind("sysc/", 0) == 0 || include.rfind("tlm_core/", 0) == 0 ||
         include.rfind("tlm_utils/", 0) == 0;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Layering, IncludeScannerFindsDirectives) {
  const auto found = includes_of("#include <systemc>\n  #  include \"nvsvp/model/gpu.hpp\"\n// #include x\nint a;\n");
  EXPECT_EQ(found, (std::vector<std::string>{"systemc", "nvsvp/model/gpu.hpp"}));
}

TEST(Layering, FirmwareUsesOnlyHwAndFwHeaders) {
  const auto files = scan("firmware");
  ASSERT_GE(files.size(), 5u) << "the scan found too few firmware files to mean anything";
  for (const auto& [file, includes] : files) {
    for (const std::string& inc : includes) {
      EXPECT_FALSE(pulls_in_systemc(inc)) << file << " includes " << inc;
      if (starts_with(inc, "nvsvp/")) {
        EXPECT_TRUE(starts_with(inc, "nvsvp/hw/") || starts_with(inc, "nvsvp/fw/"))
            << file << " includes " << inc << " (firmware may only use nvsvp/hw and nvsvp/fw)";
      }
      EXPECT_FALSE(inc.find("model/") != std::string::npos || inc.find("platform/") != std::string::npos)
          << file << " includes " << inc;
    }
  }
}

// The switch firmware (firmware/switch/) stands alone: of nvsvp's headers it includes only nvsvp/hw
// and its own, never the communication library's (firmware/comm/), so that it builds for the
// switch's management core without the host's code.
TEST(Layering, SwitchFirmwareStandsAlone) {
  const auto files = scan("firmware/switch");
  ASSERT_GE(files.size(), 8u) << "the scan found too few switch firmware files to mean anything";
  const fs::path own = kRoot / "firmware/switch/include";
  for (const auto& [file, includes] : files) {
    for (const std::string& inc : includes) {
      if (!starts_with(inc, "nvsvp/")) continue;
      EXPECT_TRUE(starts_with(inc, "nvsvp/hw/") || fs::exists(own / inc))
          << file << " includes " << inc << " (the switch firmware may only use nvsvp/hw and its own headers)";
    }
  }
}

TEST(Layering, ModelsKnowNothingOfPlatformOrFirmware) {
  const auto files = scan("tlm_models");
  ASSERT_GE(files.size(), 10u);
  for (const auto& [file, includes] : files) {
    for (const std::string& inc : includes) {
      EXPECT_FALSE(starts_with(inc, "nvsvp/platform/")) << file << " includes " << inc;
      EXPECT_FALSE(starts_with(inc, "nvsvp/fw/")) << file << " includes " << inc;
    }
  }
}

// The reduction unit (model, transactor, factory) and its testbench stand alone: no SystemC, no
// TLM models, no platform or firmware, so the testbench and rtl-check run without a simulator.
TEST(Layering, ReductionUnitAndTestbenchAreSystemCFree) {
  for (const char* dir : {"tlm_models/include/nvsvp/reduction", "tlm_models/src/reduction", "testbench"}) {
    const auto files = scan(dir);
    ASSERT_GE(files.size(), 3u) << dir;
    for (const auto& [file, includes] : files) {
      for (const std::string& inc : includes) {
        EXPECT_FALSE(pulls_in_systemc(inc)) << file << " includes " << inc;
        EXPECT_FALSE(starts_with(inc, "nvsvp/model/") || starts_with(inc, "nvsvp/platform/") ||
                     starts_with(inc, "nvsvp/fw/"))
            << file << " includes " << inc;
      }
    }
  }
}

// nvsvp/hw is the contract firmware compiles against: no SystemC, no model headers.
TEST(Layering, HwHeadersAreSystemCFree) {
  const auto files = scan("tlm_models/include/nvsvp/hw");
  ASSERT_GE(files.size(), 3u);
  for (const auto& [file, includes] : files) {
    for (const std::string& inc : includes) {
      EXPECT_FALSE(pulls_in_systemc(inc)) << file << " includes " << inc;
      if (starts_with(inc, "nvsvp/")) {
        EXPECT_TRUE(starts_with(inc, "nvsvp/hw/")) << file << " includes " << inc;
      }
    }
  }
}

// A model header that calls itself SystemC-free must not reach SystemC through its includes.
TEST(Layering, HeadersMarkedSystemCFreeAreSo) {
  const fs::path include_dir = kRoot / "tlm_models/include";
  int marked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(include_dir / "nvsvp/model")) {
    const std::string text = read_text(entry.path());
    if (text.find("SystemC-free") == std::string::npos) continue;
    ++marked;
    // Follow nvsvp includes transitively.
    std::vector<std::string> pending = includes_of(text);
    std::vector<std::string> seen;
    while (!pending.empty()) {
      const std::string inc = pending.back();
      pending.pop_back();
      if (std::find(seen.begin(), seen.end(), inc) != seen.end()) continue;
      seen.push_back(inc);
      EXPECT_FALSE(pulls_in_systemc(inc)) << entry.path().filename() << " reaches " << inc;
      if (starts_with(inc, "nvsvp/") && fs::exists(include_dir / inc)) {
        for (const std::string& next : includes_of(read_text(include_dir / inc))) pending.push_back(next);
      }
    }
  }
  EXPECT_GE(marked, 5) << "expected the params, arbiter, address hash and memory headers to be marked";
}

}  // namespace
