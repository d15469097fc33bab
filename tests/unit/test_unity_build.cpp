// The sanitized build compiles each target's sources in batches (a unity build: Makefile,
// sanitize-configure). A file-local function of one source is then visible to the sources after it
// in the batch, and a call that needed a conversion to reach its own file's helper can silently
// bind to another file's better-matching one, so that the sanitized build tests other code than
// the release build. The rule that rules it out: no two sources of one folder define file-local
// functions (in an anonymous namespace, or static) of the same name.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../common/source_tree.hpp"

namespace {

namespace fs = std::filesystem;
using nvsvp::test::read_text;
using nvsvp::test::source_root;

// The file-local functions `text` defines: definitions starting in column 0 (the tree's style)
// inside `namespace {` or declared static.
std::set<std::string> file_local_functions(const std::string& text) {
  static const std::regex anonymous_open(R"(^namespace\s*\{)");
  static const std::regex named_open(R"(^namespace\s+[\w:]+\s*\{)");
  static const std::regex close(R"(^\}\s*//\s*namespace)");
  static const std::regex function(
      R"(^(?:static\s+|inline\s+|constexpr\s+|\[\[nodiscard\]\]\s+)*(?:[\w:<>,]+[\s*&]+)+(\w+)\([^;]*$)");
  std::set<std::string> names;
  std::vector<bool> anonymous;  // the open namespaces, innermost last
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, anonymous_open)) {
      anonymous.push_back(true);
    } else if (std::regex_search(line, named_open)) {
      anonymous.push_back(false);
    } else if (std::regex_search(line, close)) {
      if (!anonymous.empty()) anonymous.pop_back();
    } else if (std::smatch m; std::regex_search(line, m, function)) {
      const bool local = (!anonymous.empty() && anonymous.back()) || line.rfind("static ", 0) == 0;
      const std::string name = m[1];
      if (local && line.rfind("return", 0) != 0 && name != "if" && name != "for" && name != "while") {
        names.insert(name);
      }
    }
  }
  return names;
}

// name -> the sources of `folder` (not its sub-folders: each is a target of its own) defining it.
std::map<std::string, std::set<std::string>> shared_local_names(const fs::path& folder) {
  std::map<std::string, std::set<std::string>> defined_in;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    for (const std::string& name : file_local_functions(read_text(entry.path()))) {
      defined_in[name].insert(entry.path().filename().string());
    }
  }
  for (auto it = defined_in.begin(); it != defined_in.end();) {
    it = it->second.size() > 1 ? std::next(it) : defined_in.erase(it);
  }
  return defined_in;
}

TEST(UnityBuild, NoTwoSourcesOfAFolderDefineALocalFunctionOfTheSameName) {
  std::set<fs::path> folders;
  for (const char* top : {"tlm_models", "firmware", "platform", "testbench", "tests", "fuzz"}) {
    if (!fs::exists(source_root() / top)) continue;
    for (const fs::path& file : nvsvp::test::cpp_sources_under(top)) {
      if (file.extension() == ".cpp") folders.insert(file.parent_path());
    }
  }
  ASSERT_GE(folders.size(), 15u) << "the scan found too few source folders to mean anything";
  for (const fs::path& folder : folders) {
    for (const auto& [name, files] : shared_local_names(folder)) {
      std::string list;
      for (const std::string& f : files) list += " " + f;
      ADD_FAILURE() << fs::relative(folder, source_root()).string() << ": " << name << "() is defined in" << list
                    << " (give each its own name, or share one in a header)";
    }
  }
}

TEST(UnityBuild, TheRuleFindsAnAnonymousHelperAndAStaticOne) {
  const std::set<std::string> found = file_local_functions(
      "namespace nvsvp {\n"
      "namespace {\n"
      "std::string scenario_text(const std::string& schemes) {\n"
      "  return schemes;\n"
      "}\n"
      "int declared_only(int x);\n"
      "}  // namespace\n"
      "double public_function(double x) {\n"
      "  return x;\n"
      "}\n"
      "static const json& result_of(const json& report,\n"
      "                             const std::string& scheme) {\n"
      "}  // namespace nvsvp\n");
  EXPECT_EQ(found, (std::set<std::string>{"scenario_text", "result_of"}));
}

}  // namespace
