// The layering rules, checked on the source tree: firmware sees only nvsvp/hw and nvsvp/fw (no
// SystemC, TLM or model headers) and the switch firmware only itself; the models know nothing of
// platform/ or fw/; headers that say they are SystemC-free include nothing that pulls SystemC in;
// each folder of platform/ includes only the folders docs/ARCHITECTURE.md allows it, and the
// SystemC-free ones no SystemC; and no module (a header with its source) reaches itself again
// through the modules it includes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../common/source_tree.hpp"

namespace {

namespace fs = std::filesystem;
using nvsvp::test::read_text;

using nvsvp::test::source_root;

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
    files[fs::relative(file, source_root()).string()] = includes_of(read_text(file));
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
  const fs::path own = source_root() / "firmware/switch/include";
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
  const fs::path include_dir = source_root() / "tlm_models/include";
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

// ---- platform/'s folders ----------------------------------------------------------------------

// The folders of platform/ and the folders each may include (besides itself), as
// docs/ARCHITECTURE.md draws them. cli is the command; the others are libraries.
const std::map<std::string, std::set<std::string>>& platform_directions() {
  static const std::map<std::string, std::set<std::string>> directions{
      {"support", {}},
      {"config", {"support"}},
      {"layer", {"support", "config"}},
      {"machine", {"support", "config"}},
      {"report", {"support", "config", "layer"}},
      {"run", {"support", "config", "layer", "machine", "report"}},
      {"workload", {"support", "config", "layer", "machine", "report", "run"}},
      {"study", {"support", "config", "layer", "report"}},
      {"calibration", {"support", "config", "layer", "machine", "report", "run"}},
      {"cli", {"support", "config", "layer", "machine", "report", "run", "workload", "study", "calibration"}}};
  return directions;
}

// The folders whose libraries link no SystemC (the fuzz harnesses of the readers link them).
const std::set<std::string> kSystemCFreePlatformFolders{"support", "config", "layer", "report", "study"};

// The folder of platform/ that holds the public header `include` (nvsvp/platform/...), or "".
std::string owner_of(const std::string& include) {
  for (const auto& [folder, allowed] : platform_directions()) {
    if (fs::exists(source_root() / "platform" / folder / "include" / include)) return folder;
  }
  return "";
}

// A model header that pulls SystemC in: one not marked SystemC-free, or one that reaches SystemC.
bool model_header_pulls_in_systemc(const std::string& include) {
  const fs::path file = source_root() / "tlm_models/include" / include;
  return !fs::exists(file) || read_text(file).find("SystemC-free") == std::string::npos;
}

// Every include of nvsvp/platform/ by a file of `folder` that the folder may not make.
std::vector<std::string> platform_violations(const std::string& folder,
                                             const std::map<std::string, std::vector<std::string>>& files) {
  std::vector<std::string> found;
  const std::set<std::string>& allowed = platform_directions().at(folder);
  for (const auto& [file, includes] : files) {
    for (const std::string& inc : includes) {
      if (starts_with(inc, "nvsvp/platform/")) {
        const std::string owner = owner_of(inc);
        if (owner.empty()) {
          found.push_back(file + " includes " + inc + ", which no folder of platform/ holds");
        } else if (owner != folder && allowed.count(owner) == 0) {
          found.push_back(file + " (" + folder + ") includes " + inc + " of " + owner);
        }
      }
      if (kSystemCFreePlatformFolders.count(folder) != 0 &&
          (pulls_in_systemc(inc) || (starts_with(inc, "nvsvp/model/") && model_header_pulls_in_systemc(inc)))) {
        found.push_back(file + " (" + folder + ", SystemC-free) includes " + inc);
      }
    }
  }
  return found;
}

TEST(Layering, PlatformFoldersIncludeOnlyTheFoldersBelowThem) {
  size_t scanned = 0;
  for (const auto& [folder, allowed] : platform_directions()) {
    const auto files = scan(fs::path("platform") / folder);
    EXPECT_FALSE(files.empty()) << "platform/" << folder << " holds no source";
    scanned += files.size();
    for (const std::string& violation : platform_violations(folder, files)) ADD_FAILURE() << violation;
  }
  // Every source of platform/ is in one of the folders.
  EXPECT_EQ(scanned, scan("platform").size()) << "a file of platform/ lies outside its folders";
}

// The rule catches what it is for: a config file including run/'s runner, a report file including
// the machine, and a SystemC header in study/.
TEST(Layering, PlatformRuleRefusesAnUpwardInclude) {
  const std::map<std::string, std::vector<std::string>> config{{"x.cpp", {"nvsvp/platform/runner.hpp"}}};
  EXPECT_EQ(platform_violations("config", config).size(), 1u);
  const std::map<std::string, std::vector<std::string>> report{{"y.cpp", {"nvsvp/platform/platform.hpp"}}};
  EXPECT_EQ(platform_violations("report", report).size(), 1u);
  const std::map<std::string, std::vector<std::string>> study{{"z.cpp", {"systemc", "nvsvp/model/gpu.hpp"}}};
  EXPECT_EQ(platform_violations("study", study).size(), 2u);
  const std::map<std::string, std::vector<std::string>> run{{"w.cpp", {"nvsvp/platform/report.hpp", "systemc"}}};
  EXPECT_TRUE(platform_violations("run", run).empty());
}

// ---- modules ------------------------------------------------------------------------------------

// A module is a header and the source of the same name in one folder tree (platform/, firmware/,
// testbench/, tlm_models/); module A uses module B when a file of A includes B's header. The
// cycles of that graph (its strongly connected components of more than one module), each as a
// list of module names.
using ModuleGraph = std::map<std::string, std::set<std::string>>;

std::vector<std::vector<std::string>> module_cycles(const ModuleGraph& graph) {
  std::map<std::string, int> index, low;
  std::vector<std::string> stack;
  std::set<std::string> on_stack;
  std::vector<std::vector<std::string>> cycles;
  int next = 0;
  std::function<void(const std::string&)> visit = [&](const std::string& v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    const auto edges = graph.find(v);
    if (edges != graph.end()) {
      for (const std::string& w : edges->second) {
        if (index.count(w) == 0) {
          visit(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w) != 0) {
          low[v] = std::min(low[v], index[w]);
        }
      }
    }
    if (low[v] != index[v]) return;
    std::vector<std::string> component;
    std::string w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack.erase(w);
      component.push_back(w);
    } while (w != v);
    if (component.size() > 1) cycles.push_back(component);
  };
  for (const auto& [v, edges] : graph) {
    if (index.count(v) == 0) visit(v);
  }
  return cycles;
}

ModuleGraph module_graph(const std::string& tree) {
  const auto files = scan(tree);
  std::map<std::string, std::string> module_of_header;  // header file name -> module
  for (const auto& [file, includes] : files) {
    const fs::path path(file);
    if (path.extension() == ".hpp") module_of_header[path.filename().string()] = tree + ":" + path.stem().string();
  }
  ModuleGraph graph;
  for (const auto& [file, includes] : files) {
    const std::string module = tree + ":" + fs::path(file).stem().string();
    graph[module];
    for (const std::string& inc : includes) {
      const auto target = module_of_header.find(fs::path(inc).filename().string());
      if (target != module_of_header.end() && target->second != module) graph[module].insert(target->second);
    }
  }
  return graph;
}

TEST(Layering, CycleFinderFindsACycleAndOnlyIt) {
  const ModuleGraph graph{{"a", {"b"}}, {"b", {"c"}}, {"c", {"a"}}, {"d", {"a"}}, {"e", {}}};
  const auto cycles = module_cycles(graph);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(std::set<std::string>(cycles[0].begin(), cycles[0].end()), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(module_cycles({{"a", {"b"}}, {"b", {}}}).empty());
}

TEST(Layering, NoModuleReachesItselfThroughAnother) {
  for (const char* tree : {"platform", "firmware", "testbench"}) {
    const ModuleGraph graph = module_graph(tree);
    EXPECT_GE(graph.size(), 10u) << tree;
    for (const auto& cycle : module_cycles(graph)) {
      std::string names;
      for (const std::string& m : cycle) names += (names.empty() ? "" : ", ") + m;
      ADD_FAILURE() << "modules that include each other: " << names;
    }
  }
}

}  // namespace
