// Every file a doc or a comment names exists in the repository, so that a reader who has only the
// repository can follow every reference (docs/decisions.md, "Cited files and the background
// pages"). The rule:
//
// Scanned: every Markdown file (all of its text); the comments of C++ and SystemVerilog files
// (// and /* */, outside string literals); the comments of YAML, CMake, shell and Python files,
// the Makefile and scripts with a shell or Python #! line (# to the end of the line; Python
// docstrings too). Not scanned: .git, build trees (a directory holding CMake's cache), out/ (run
// output) and docs/study_results/ (data).
//
// A cited name is a token that ends in .md .cpp .hpp .h .sv .svh .yaml .yml .csv .sh .py .json
// .txt or .cmake (URLs are skipped). With leading "./" and "../" dropped (and the "<" of an
// #include <...>), it resolves when
//   - it is a path from the repository root, or from the citing file's directory, or
//   - some file of the repository has it as its path or as the end of its path after a "/" (a bare
//     file name, or a shortened path such as model/gpu_hub.hpp, matches wherever the file is), or
//   - it holds "*" or a <placeholder>, each standing for characters other than "/", and at least
//     one file matches (configs/studies/*.yaml, configs/platforms/<NAME>.yaml), or
//   - its file name is in kAllowed below.
// A Markdown link "](target)" outside code is stricter: its target must exist relative to the
// page, as a renderer resolves it. A "#section" after a .md name must be the anchor of one of that
// page's headings (GitHub's rule: lower case, punctuation dropped, spaces become hyphens;
// non-ASCII characters are dropped, which agrees with GitHub for every heading today).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../common/source_tree.hpp"

namespace {

namespace fs = std::filesystem;

using nvsvp::test::source_root;

// File names that need not exist in the repository. Keep it short: each entry says why.
const std::set<std::string> kAllowed = {
    // Written by the tool at run time (README.md, docs/configuration.md).
    "report.json", "links_<scheme>.csv", "utilization_<scheme>.csv", "trace_<scheme>.json", "study.csv",
    "transactions_<scheme>.csv", "registers_<scheme>.csv",  // `nvsvp run --trace`
    "stats_<scheme>.csv", "latency_<scheme>.csv", "occupancy_<scheme>.csv",  // the statistics files
    "stream.csv",  // a run's replication stream (docs/configuration.md#stream)
    "summary.json", "anchors.json", "<case>.json",  // `nvsvp anchors`: the table and each case's entry
    "scenario.yaml",  // a run's (and a study point's) effective scenario
    "build_info.cpp",  // generated at build time by cmake/NvsvpBuildInfo.cmake
    "nvsvp_plot.py",   // the plot script of another part of issue 21; copied and installed once it exists
    // Headers of installed packages.
    "systemc.h", "tlm.h", "gtest.h", "gmock.h",
    "verilated_trace_imp.h",  // Verilator's runtime (rtl/CMakeLists.txt, docs/reliability.md)
    "verilated_fst_c.cpp", "fstapi.c",  // Verilator's FST writer (rtl/CMakeLists.txt, docs/reliability.md)
    // Files the worked examples of docs/firmware.md have the reader create.
    "ping.hpp", "ping.cpp", "test_ping.cpp", "scheme_my_scheme.cpp",
    // Written into a study's folder by scripts/study-parallel.sh and study-slurm.sh: the emitted
    // commands, the array task's script, the shards' commands.
    "commands.txt", "point.sh", "shards.txt",
    // A study's records and wall times in its folder (`nvsvp study`, `study-merge`).
    "study.json", "point.json", "wall_times.csv", "DIR/study.json",
    // The made-up files of the error samples in docs/configuration.md.
    "s.yaml", "t.csv", "no-such-box.yaml",
};

enum class Syntax { none, markdown, c_like, verilog, hash, python };

struct Citation {
  size_t line = 0;
  std::string name;    // as written, leading "<", "./", "../" kept
  std::string anchor;  // after '#', or empty
  bool link = false;   // the target of a Markdown link
};

using nvsvp::test::read_text;

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The comment text of each line of a C++ or SystemVerilog file (empty where there is none).
// Strings are skipped, C++ raw strings and character literals too (SystemVerilog's ' is not one).
std::vector<std::string> c_comments(const std::string& text, bool char_literals) {
  std::vector<std::string> lines(1);
  enum class State { code, line_comment, block_comment } state = State::code;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      lines.emplace_back();
      if (state == State::line_comment) state = State::code;
      continue;
    }
    if (state != State::code) {
      if (state == State::block_comment && text.compare(i, 2, "*/") == 0) {
        state = State::code;
        ++i;
      } else {
        lines.back() += c;
      }
      continue;
    }
    if (text.compare(i, 2, "//") == 0) {
      state = State::line_comment;
      ++i;
    } else if (text.compare(i, 2, "/*") == 0) {
      state = State::block_comment;
      ++i;
    } else if (c == '"' && i > 0 && text[i - 1] == 'R') {  // R"delim( ... )delim"
      const size_t open = text.find('(', i);
      if (open == std::string::npos) break;
      const size_t close = text.find(")" + text.substr(i + 1, open - i - 1) + "\"", open);
      if (close == std::string::npos) break;
      lines.resize(lines.size() + std::count(text.begin() + i, text.begin() + close, '\n'));
      i = close + (open - i);
    } else if (c == '"' || (c == '\'' && char_literals && (i == 0 || !is_word_char(text[i - 1])))) {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i < text.size() && text[i] == '\n') lines.emplace_back();
    }
  }
  return lines;
}

// The comment text of each line of a file whose comments run from '#' to the end of the line
// (a '#' at the start of a word, outside quotes); Python docstrings count as comments.
std::vector<std::string> hash_comments(const std::string& text, bool python) {
  std::vector<std::string> out;
  bool in_docstring = false;
  for (const std::string& line : split_lines(text)) {
    std::string comment;
    char quote = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (in_docstring) {
        if (line.compare(i, 3, "\"\"\"") == 0) {
          in_docstring = false;
          i += 2;
        } else {
          comment += line[i];
        }
        continue;
      }
      const char c = line[i];
      const bool word_start = i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])) ||
                              std::string("([{=,:").find(line[i - 1]) != std::string::npos;
      if (quote != 0) {
        if (c == '\\') ++i;
        else if (c == quote) quote = 0;
      } else if (python && line.compare(i, 3, "\"\"\"") == 0) {
        in_docstring = true;
        i += 2;
      } else if (c == '#' && word_start) {
        comment += line.substr(i + 1);
        break;
      } else if (c == '"' || (c == '\'' && word_start)) {
        quote = c;
      }
    }
    out.push_back(comment);
  }
  return out;
}

Syntax syntax_of(const fs::path& relative, const std::string& text) {
  const std::string name = relative.filename().string();
  const std::string ext = relative.extension().string();
  if (ext == ".md") return Syntax::markdown;
  if (ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cc") return Syntax::c_like;
  if (ext == ".sv" || ext == ".svh") return Syntax::verilog;
  if (ext == ".py") return Syntax::python;
  if (ext == ".yaml" || ext == ".yml" || ext == ".cmake" || ext == ".sh" || name == "CMakeLists.txt" ||
      name == "Makefile")
    return Syntax::hash;
  if (ext.empty() && text.rfind("#!", 0) == 0) {
    const std::string first = text.substr(0, text.find('\n'));
    if (first.find("python") != std::string::npos) return Syntax::python;
    if (first.find("sh") != std::string::npos) return Syntax::hash;
  }
  return Syntax::none;
}

const std::regex& name_pattern() {
  static const std::regex pattern(
      R"([A-Za-z0-9_./*<>+-]*[A-Za-z0-9_*>-]\.(md|cpp|hpp|h|sv|svh|yaml|yml|csv|sh|py|json|txt|cmake)(?![A-Za-z0-9_])(#[A-Za-z0-9_-]+)?)");
  return pattern;
}

// The cited names of one line of comment or Markdown text (Markdown links already taken out).
void add_names(const std::string& text, size_t line, std::vector<Citation>& out) {
  static const std::regex url(R"([A-Za-z][A-Za-z0-9+.-]*://\S*)");
  const std::string plain = std::regex_replace(text, url, " ");
  for (std::sregex_iterator it(plain.begin(), plain.end(), name_pattern()), end; it != end; ++it) {
    const std::string anchor = (*it)[2].matched ? (*it)[2].str().substr(1) : "";
    out.push_back({line, (*it)[0].str().substr(0, (*it)[0].length() - (*it)[2].length()), anchor, false});
  }
}

// Markdown: the link targets outside code (fences and inline code), and every name in the text.
void markdown_citations(const std::string& text, std::vector<Citation>& out) {
  static const std::regex inline_code("`[^`]*`");
  static const std::regex link(R"(\]\(([^()\s]*)\))");
  static const std::regex scheme("^[A-Za-z][A-Za-z0-9+.-]*:");
  bool in_fence = false;
  size_t number = 0;
  for (const std::string& line : split_lines(text)) {
    ++number;
    if (line.find("```") != std::string::npos) in_fence = !in_fence;
    std::string rest = line;
    if (!in_fence) {
      const std::string prose = std::regex_replace(line, inline_code, " ");
      for (std::sregex_iterator it(prose.begin(), prose.end(), link), end; it != end; ++it) {
        const std::string target = (*it)[1];
        if (std::regex_search(target, scheme)) continue;  // a URL
        const size_t hash = target.find('#');
        out.push_back({number, target.substr(0, hash), hash == std::string::npos ? "" : target.substr(hash + 1),
                       true});
        const size_t at = rest.find("](" + target + ")");
        if (at != std::string::npos) rest.replace(at, target.size() + 3, "] ");
      }
    }
    add_names(rest, number, out);
  }
}

std::vector<Citation> citations_in(Syntax syntax, const std::string& text) {
  std::vector<Citation> out;
  if (syntax == Syntax::markdown) {
    markdown_citations(text, out);
    return out;
  }
  const std::vector<std::string> comments = syntax == Syntax::c_like    ? c_comments(text, true)
                                            : syntax == Syntax::verilog ? c_comments(text, false)
                                                                        : hash_comments(text, syntax == Syntax::python);
  for (size_t i = 0; i < comments.size(); ++i) add_names(comments[i], i + 1, out);
  return out;
}

// GitHub's anchors of the headings of a Markdown text (outside code fences).
std::set<std::string> anchors_of(const std::string& text) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  bool in_fence = false;
  for (const std::string& line : split_lines(text)) {
    if (line.find("```") != std::string::npos) in_fence = !in_fence;
    if (in_fence || line.empty() || line[0] != '#') continue;
    const size_t start = line.find_first_not_of('#');
    if (start == std::string::npos || line[start] != ' ') continue;
    std::string slug;
    for (char c : line.substr(start + 1)) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (u >= 0x80) continue;
      if (std::isalnum(u) || c == '_' || c == '-') slug += static_cast<char>(std::tolower(u));
      else if (c == ' ') slug += '-';
    }
    const int n = seen[slug]++;
    anchors.insert(n == 0 ? slug : slug + "-" + std::to_string(n));
  }
  return anchors;
}

// The repository's files and directories, as paths from its root.
struct Repository {
  std::set<std::string> files;
  std::set<std::string> dirs;
};

bool is_build_tree(const fs::path& dir) { return fs::exists(dir / "CMakeCache.txt"); }

Repository scan_repository(const fs::path& root) {
  Repository repo;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string relative = fs::relative(it->path(), root).generic_string();
    const std::string name = it->path().filename().string();
    if (it->is_directory()) {
      if (name == ".git" || (it.depth() == 0 && name == "out") || is_build_tree(it->path())) {
        it.disable_recursion_pending();
        continue;
      }
      repo.dirs.insert(relative);
    } else if (name != ".git") {
      repo.files.insert(relative);
    }
  }
  return repo;
}

// A name with '*' or <...> as a regex over paths: both stand for characters other than '/'.
std::regex wildcard_regex(const std::string& name) {
  std::string pattern = "(^|.*/)";
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '*') {
      pattern += "[^/]*";
    } else if (c == '<' && name.find('>', i) != std::string::npos) {
      pattern += "[^/]+";
      i = name.find('>', i);
    } else {
      if (std::string(".+()[]{}^$|\\?").find(c) != std::string::npos) pattern += '\\';
      pattern += c;
    }
  }
  return std::regex(pattern + "$");
}

// The files of `repo` that a cited `name` in file `citing` can mean (empty: none).
std::vector<std::string> resolve(const Repository& repo, const std::string& citing, std::string name) {
  if (!name.empty() && name[0] == '<' && name.find('>') == std::string::npos) name.erase(0, 1);  // #include <...>
  const std::string as_written = name;
  while (name.rfind("./", 0) == 0 || name.rfind("../", 0) == 0) name.erase(0, name.find('/') + 1);
  std::vector<std::string> found;
  const std::string relative =
      (fs::path(citing).parent_path() / as_written).lexically_normal().generic_string();
  if (repo.files.count(relative) != 0) return {relative};
  const bool wildcard = name.find('*') != std::string::npos || name.find('<') != std::string::npos;
  const std::regex pattern = wildcard ? wildcard_regex(name) : std::regex();
  for (const std::string& file : repo.files) {
    const bool suffix = file.size() > name.size() && file.compare(file.size() - name.size(), name.size(), name) == 0 &&
                        file[file.size() - name.size() - 1] == '/';
    if (wildcard ? std::regex_match(file, pattern) : (file == name || suffix)) found.push_back(file);
  }
  return found;
}

// Why `c`, cited in `citing`, does not resolve; empty when it does.
std::string problem(const Repository& repo, const std::string& citing, const Citation& c) {
  const std::string base = fs::path(c.name).filename().string();
  if (!c.link && kAllowed.count(base) != 0) return "";
  std::vector<std::string> candidates;
  if (c.link) {
    const std::string target =
        c.name.empty() ? citing : (fs::path(citing).parent_path() / c.name).lexically_normal().generic_string();
    const std::string bare = !target.empty() && target.back() == '/' ? target.substr(0, target.size() - 1) : target;
    if (repo.files.count(bare) != 0) candidates.push_back(bare);
    else if (repo.dirs.count(bare) == 0 && bare != ".") return "link target does not exist";
  } else {
    candidates = resolve(repo, citing, c.name);
    if (candidates.empty()) return "no such file in the repository";
  }
  if (c.anchor.empty()) return "";
  for (const std::string& file : candidates) {
    if (fs::path(file).extension() != ".md") return "";
    if (anchors_of(read_text(source_root() / file)).count(c.anchor) != 0) return "";
  }
  return candidates.empty() ? "" : "no heading with anchor #" + c.anchor + " in " + candidates.front();
}

bool scanned(const std::string& relative) { return relative.rfind("docs/study_results/", 0) != 0; }

TEST(CitedFiles, CommentScannerSkipsCodeAndStrings) {
  const std::string cpp =
      "#include \"a/b.hpp\"  // see docs/x.md\n"
      "const char* s = \"// not/a/comment.md\"; char q = '\"'; int n = 1'000;\n"
      "auto r = R\"(// raw.md)\";  /* block y.hpp\n"
      "   still z.cpp */ int k;  // and w.yaml#anchor\n";
  std::vector<std::string> names;
  std::vector<std::string> anchors;
  for (const Citation& c : citations_in(Syntax::c_like, cpp)) {
    names.push_back(std::to_string(c.line) + ":" + c.name);
    anchors.push_back(c.anchor);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"1:docs/x.md", "3:y.hpp", "4:z.cpp", "4:w.yaml"}));
  EXPECT_EQ(anchors.back(), "anchor");

  const std::string yaml = "key: \"a # b.md\"  # c.md\nurl: x  # https://host/d.md and ./e.sh\n";
  names.clear();
  for (const Citation& c : citations_in(Syntax::hash, yaml)) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"c.md", "./e.sh"}));

  const std::string md = "See [p](../q.md#sec) and `code/r.md`.\n```\n[s](t.md)\n```\n";
  std::vector<std::string> described;
  for (const Citation& c : citations_in(Syntax::markdown, md)) {
    described.push_back((c.link ? "link " : "name ") + c.name + "#" + c.anchor);
  }
  EXPECT_EQ(described, (std::vector<std::string>{"link ../q.md#sec", "name code/r.md#", "name t.md#"}));
}

TEST(CitedFiles, AnchorsFollowGitHubsRule) {
  const std::set<std::string> anchors =
      anchors_of("# Title\n## The study: models × top-k (issue 5)\n```\n# not a heading\n```\n## Title\n");
  EXPECT_EQ(anchors, (std::set<std::string>{"title", "the-study-models--top-k-issue-5", "title-1"}));
}

TEST(CitedFiles, ResolutionRule) {
  Repository repo;
  repo.files = {"docs/models/gpu.md", "docs/background/nvlink_nvswitch.md", "configs/studies/a.yaml",
                "tlm_models/include/nvsvp/model/gpu_hub.hpp"};
  repo.dirs = {"docs", "docs/models", "docs/background", "configs", "configs/studies"};
  const auto resolves = [&](const std::string& citing, const std::string& name) {
    return !resolve(repo, citing, name).empty();
  };
  EXPECT_TRUE(resolves("README.md", "docs/models/gpu.md"));          // from the root
  EXPECT_TRUE(resolves("docs/background/x.md", "../models/gpu.md"));  // from the citing file
  EXPECT_TRUE(resolves("firmware/a.cpp", "model/gpu_hub.hpp"));       // the end of a path
  EXPECT_TRUE(resolves("firmware/a.cpp", "nvlink_nvswitch.md"));      // a file name
  EXPECT_TRUE(resolves("x.md", "configs/studies/*.yaml"));
  EXPECT_TRUE(resolves("x.md", "configs/studies/<NAME>.yaml"));
  EXPECT_FALSE(resolves("x.md", "configs/platforms/*.yaml"));
  EXPECT_FALSE(resolves("tlm_models/src/gpu.cpp", "dysharp.md"));
  EXPECT_FALSE(resolves("x.md", "hub.hpp"));  // a name matches whole path components only
  EXPECT_FALSE(resolves("x.md", "models/nvlink_nvswitch.md"));
}

TEST(CitedFiles, EveryCitedFileExists) {
  const Repository repo = scan_repository(source_root());
  ASSERT_GE(repo.files.size(), 100u) << "the scan of " << source_root() << " found too few files to mean anything";
  size_t files_scanned = 0;
  size_t citations = 0;
  std::ostringstream offenders;
  size_t offending = 0;
  for (const std::string& file : repo.files) {
    if (!scanned(file)) continue;
    const std::string text = read_text(source_root() / file);
    const Syntax syntax = syntax_of(file, text);
    if (syntax == Syntax::none) continue;
    ++files_scanned;
    for (const Citation& c : citations_in(syntax, text)) {
      ++citations;
      const std::string why = problem(repo, file, c);
      if (why.empty()) continue;
      ++offending;
      offenders << "  " << file << ":" << c.line << ": " << c.name << (c.anchor.empty() ? "" : "#" + c.anchor)
                << " (" << why << ")\n";
    }
  }
  EXPECT_GE(files_scanned, 150u);
  EXPECT_GE(citations, 500u) << "the scanner finds too few citations to mean anything";
  EXPECT_EQ(offending, 0u) << offending << " of " << citations << " citations in " << files_scanned
                           << " files name files or sections that are not in the repository (rule: "
                              "tests/unit/test_cited_files.cpp):\n"
                           << offenders.str();
}

}  // namespace
