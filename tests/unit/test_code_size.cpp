// The size rules, checked on every product folder's sources (tlm_models/, firmware/, platform/,
// testbench/; rtl/ aside): no source file over 600 lines, no function over 100 lines (from the line
// of its opening brace to the line of its closing one), and no class local to a source file over
// 300 lines (from its `class`/`struct` line to its closing brace). A model file is one hardware
// block, a function one step and a local class one helper; past these sizes they have stopped
// being either.
//
// Functions are found by brace matching on the text with comments, string and character literals
// blanked: a brace opens a function body when the text before it (since the last `;`, `{` or `}`)
// ends in a parameter list, optionally followed by qualifiers or a constructor's initializer list,
// and is not a control statement; a brace right after a name is an initializer. Lambdas and local
// classes count towards the function around them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../common/source_tree.hpp"

namespace {

namespace fs = std::filesystem;
using nvsvp::test::read_text;

using nvsvp::test::source_root;
constexpr size_t kMaxFileLines = 600;
constexpr size_t kMaxFunctionLines = 100;
constexpr size_t kMaxLocalClassLines = 300;
// The folders of the product's C++ sources.
const char* const kProductFolders[] = {"tlm_models", "firmware", "platform", "testbench"};

// `text` with comments and literals replaced by spaces (newlines kept, so lines still count).
std::string blank_comments_and_literals(const std::string& text) {
  std::string out = text;
  size_t i = 0;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
  };
  while (i < text.size()) {
    if (text.compare(i, 2, "//") == 0) {
      const size_t end = std::min(text.find('\n', i), text.size());
      blank(i, end);
      i = end;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = std::min(text.find("*/", i + 2), text.size() - 2) + 2;
      blank(i, end);
      i = end;
    } else if (text.compare(i, 2, "R\"") == 0) {  // raw string R"delim( ... )delim"
      const size_t open = text.find('(', i);
      const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      const size_t end = std::min(text.find(close, open), text.size()) + close.size();
      blank(i + 1, end - 1);
      i = end;
    } else if (text[i] == '"' || (text[i] == '\'' && (i == 0 || !std::isxdigit(static_cast<unsigned char>(text[i - 1]))))) {
      const char quote = text[i];
      size_t end = i + 1;
      while (end < text.size() && text[end] != quote && text[end] != '\n') end += text[end] == '\\' ? 2 : 1;
      blank(i + 1, end);
      i = end + 1;
    } else {
      ++i;
    }
  }
  return out;
}

// Whether `head` (the text before a `{`) is the header of a function definition.
bool is_function_header(const std::string& head) {
  static const std::regex control(R"(\b(if|for|while|switch|catch|do|else)\s*(\(|$))");
  static const std::regex parameters(R"(\)\s*(const|noexcept|override|final|mutable|\s)*(->\s*[\w:<>&*, ]+)?\s*$)");
  static const std::regex initializers(R"(\)\s*(noexcept\s*)?:[^;]*$)");
  const size_t paren = head.find('(');
  if (paren == std::string::npos) return false;
  const std::string before = head.substr(0, paren);
  // An assignment or a subscript before the first parenthesis: a lambda or an initializer.
  if (before.find('=') != std::string::npos || before.find('[') != std::string::npos) return false;
  if (std::regex_search(head, control)) return false;
  return std::regex_search(head, parameters) || std::regex_search(head, initializers);
}

struct LongFunction {
  std::string file;
  size_t line;
  size_t lines;
};

std::vector<LongFunction> long_functions(const fs::path& file, size_t limit) {
  const std::string text = blank_comments_and_literals(read_text(file));
  std::vector<LongFunction> found;
  struct Open {
    bool function;
    size_t line;
  };
  std::vector<Open> open;
  size_t line = 1;
  size_t head_start = 0;
  bool inside_function = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (c != '{' && c != '}' && c != ';') continue;
    if (c == '{' && i > 0 && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_')) {
      // A brace initializer (`member_{value}`, `Type{}`): skipped whole, the header goes on.
      for (int depth = 0; i < text.size(); ++i) {
        if (text[i] == '\n') ++line;
        depth += text[i] == '{' ? 1 : text[i] == '}' ? -1 : 0;
        if (depth == 0) break;
      }
      continue;
    }
    if (c == '{') {
      const bool function = !inside_function && is_function_header(text.substr(head_start, i - head_start));
      open.push_back(Open{function, line});
      inside_function = inside_function || function;
    } else if (c == '}' && !open.empty()) {
      const Open closed = open.back();
      open.pop_back();
      if (closed.function) {
        inside_function = false;
        if (line - closed.line + 1 > limit) {
          found.push_back(LongFunction{fs::relative(file, source_root()).string(), closed.line, line - closed.line + 1});
        }
      }
    }
    head_start = i + 1;
  }
  return found;
}

// The classes and structs defined in `file` (a source file: its classes are local to it) of more
// than `limit` lines: a `class` or `struct` keyword followed by a name and, before any `;`, an
// opening brace; measured to its matching closing brace.
std::vector<LongFunction> long_local_classes(const fs::path& file, size_t limit) {
  const std::string text = blank_comments_and_literals(read_text(file));
  static const std::regex head(R"(\b(class|struct)\s+[A-Za-z_]\w*[^;{()]*\{)");
  std::vector<LongFunction> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), head); it != std::sregex_iterator(); ++it) {
    const size_t open = static_cast<size_t>(it->position() + it->length() - 1);
    int depth = 0;
    size_t close = open;
    for (; close < text.size(); ++close) {
      depth += text[close] == '{' ? 1 : text[close] == '}' ? -1 : 0;
      if (depth == 0) break;
    }
    const size_t first = static_cast<size_t>(std::count(text.begin(), text.begin() + it->position(), '\n')) + 1;
    const size_t last = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(close), '\n')) + 1;
    if (last - first + 1 > limit) found.push_back(LongFunction{fs::relative(file, source_root()).string(), first, last - first + 1});
  }
  return found;
}

size_t line_count(const fs::path& file) {
  const std::string text = read_text(file);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(CodeSize, FunctionFinderMeasuresDefinitionsOnly) {
  const fs::path file = fs::temp_directory_path() / ("nvsvp_code_size_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".cpp");
  std::ofstream(file) << "struct S {\n  int f() const {\n    return 1;\n  }\n};\n"
                         "S::S(int a) : a_(a), b_{a} {\n  if (a) {\n    x();\n  }\n  auto l = [&] {\n    y();\n  };\n}\n"
                         "int g(int x) {  // not } counted: \"}\" '}'\n  for (;;) {\n  }\n  return x;\n}\n"
                         "namespace n {\nint table[] = {1, 2};\n}\n";
  const std::vector<LongFunction> over_two = long_functions(file, 2);
  fs::remove(file);
  ASSERT_EQ(over_two.size(), 3u);
  EXPECT_EQ(over_two[0].line, 2u);   // S::f, 3 lines
  EXPECT_EQ(over_two[0].lines, 3u);
  EXPECT_EQ(over_two[1].line, 6u);   // the constructor with its lambda, 8 lines
  EXPECT_EQ(over_two[1].lines, 8u);
  EXPECT_EQ(over_two[2].line, 14u);  // g, 5 lines
  EXPECT_EQ(over_two[2].lines, 5u);
}

TEST(CodeSize, LocalClassFinderMeasuresClassBodies) {
  const fs::path file = fs::temp_directory_path() / ("nvsvp_class_size_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".cpp");
  std::ofstream(file) << "class Fwd;\nstruct A {\n  int f() { return 1; }\n};\n"
                         "namespace {\nclass B : public A {\n public:\n  void g();\n\n};\n}\nstruct C c{};\n";
  const std::vector<LongFunction> over_two = long_local_classes(file, 2);
  fs::remove(file);
  ASSERT_EQ(over_two.size(), 2u);
  EXPECT_EQ(over_two[0].line, 2u);  // A, 3 lines
  EXPECT_EQ(over_two[0].lines, 3u);
  EXPECT_EQ(over_two[1].line, 6u);  // B, 5 lines
  EXPECT_EQ(over_two[1].lines, 5u);
}

TEST(CodeSize, NoSourceFileOver600Lines) {
  for (const char* dir : kProductFolders) {
    for (const fs::path& file : nvsvp::test::cpp_sources_under(dir)) {
      EXPECT_LE(line_count(file), kMaxFileLines) << fs::relative(file, source_root()).string();
    }
  }
}

TEST(CodeSize, NoFunctionOver100Lines) {
  for (const char* dir : kProductFolders) {
    for (const fs::path& file : nvsvp::test::cpp_sources_under(dir)) {
      for (const LongFunction& f : long_functions(file, kMaxFunctionLines)) {
        ADD_FAILURE() << f.file << ":" << f.line << ": a function of " << f.lines << " lines (at most "
                      << kMaxFunctionLines << ")";
      }
    }
  }
}

TEST(CodeSize, NoLocalClassOver300Lines) {
  for (const char* dir : kProductFolders) {
    for (const fs::path& file : nvsvp::test::cpp_sources_under(dir)) {
      if (file.extension() != ".cpp") continue;
      for (const LongFunction& c : long_local_classes(file, kMaxLocalClassLines)) {
        ADD_FAILURE() << c.file << ":" << c.line << ": a local class of " << c.lines << " lines (at most "
                      << kMaxLocalClassLines << ")";
      }
    }
  }
}

}  // namespace
