// Strict configuration reading, private to platform/. A YAML document becomes a ConfigNode tree
// in which every node remembers where it came from (a file and line, or a --set on the command
// line), so that every error can name the place, the key path and what was expected. YamlReader
// applies a mapping onto a parameter struct through its visit() and rejects undeclared keys;
// YamlDumper writes a struct back as YAML with the descriptions as comments.
#pragma once

#include <cstdint>
#include <istream>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nvsvp/hw/params.hpp"
#include "nvsvp/platform/config_error.hpp"

namespace nvsvp::platform {

// One node of a configuration document.
struct ConfigNode {
  enum class Kind { null, scalar, sequence, mapping };

  Kind kind = Kind::null;
  std::string text;          // scalar: the text as written (without quotes)
  bool quoted = false;       // scalar: quoted or explicitly tagged, so always a string
  std::string origin;        // where the node is: "FILE:LINE" or "command line (--set a.b=v)"
  std::string key_origin;    // where the key holding it is (= origin outside a mapping)
  std::vector<ConfigNode> items;                            // sequence
  std::vector<std::pair<std::string, ConfigNode>> entries;  // mapping, in document order

  bool is_null() const { return kind == Kind::null; }
  bool is_scalar() const { return kind == Kind::scalar; }
  bool is_sequence() const { return kind == Kind::sequence; }
  bool is_mapping() const { return kind == Kind::mapping; }

  const ConfigNode* find(const std::string& key) const;
  ConfigNode* find(const std::string& key);
};

// Throws ConfigError "ORIGIN: PATH: expected EXPECTED, got GOT" (PATH omitted when empty).
[[noreturn]] void config_fail(const std::string& origin, const std::string& path,
                              const std::string& expected, const std::string& got);

// What a node is, for the "got ..." part of a message: the scalar itself, "a mapping", ...
std::string describe(const ConfigNode& node);

// {"a", "b"} joined by ", " -> "a, b".
std::string join(const std::vector<std::string>& items, const std::string& separator);

// "a.b" + "c" -> "a.b.c"; "" + "c" -> "c".
std::string join_path(const std::string& path, const std::string& key);

// Input limits: far above any real input, they stop a hostile or mistaken one with a clear
// message before it takes the machine's memory (docs/configuration.md#input-limits).
inline constexpr uint64_t kMaxConfigFileBytes = 4ull << 20;  // a scenario, study or preset file
inline constexpr int kMaxNestingDepth = 64;                  // no scenario or study nests beyond ten
inline constexpr uint64_t kMaxNodesAfterAliases = 1'000'000; // the largest study file has a few thousand
inline constexpr size_t kMaxSectionListEntries = 1'000;        // entries of a list section (faults: a few)

// The whole of `in` (opened on `file`), or a ConfigError at `file` when it holds more than
// `max_bytes`: "expected WHAT of at most N bytes". Reads at most max_bytes + 1 bytes, so a FIFO
// or a device that never ends is refused too.
std::string read_at_most(std::istream& in, uint64_t max_bytes, const std::string& file, const std::string& what);

// What `path` is when it exists but is not a regular file (symlinks followed): "a directory",
// "a FIFO (...)", "a socket", "a character device", "a block device"; empty for a regular file
// or a path that is not there. Inputs are read only from regular files: opening a FIFO that
// nothing writes would block forever.
std::string non_regular_file_kind(const std::string& path);
// Why `path` cannot be read as an input file: "no such file", non_regular_file_kind's text, or
// "not readable"; empty when it is a regular file this process can open.
std::string unreadable_file(const std::string& path);

// Creates `dir` (and its parents) for a command's output, or throws ConfigError naming `option`
// (--out) when it cannot be a folder nvsvp writes: an empty name, a path through a file, a file or
// device of that name, a symlink loop, a read-only or unwritable place.
void make_output_folder(const std::string& dir, const std::string& option);

// Runs `read`, an input's reading; running out of memory in it is bad input at `origin` (the input
// asks for more than this machine has), never exit 1 or a crash.
template <class Read>
auto within_memory(const std::string& origin, const std::string& what, Read&& read) {
  try {
    return read();
  } catch (const std::bad_alloc&) {
    config_fail(origin, "", what + " that fits in this machine's memory", "out of memory");
  }
}

// Reads a YAML file. A missing/unreadable file, one that is not a regular file (a FIFO, a device)
// or a syntax error is a ConfigError naming the file (and line); so is a key given twice in one
// mapping.
ConfigNode load_config_file(const std::string& file);

// Parses YAML text (a --set value); every node gets `origin`.
ConfigNode parse_config_text(const std::string& text, const std::string& origin);

// Strict scalar conversions. Each throws ConfigError at node.origin naming `path`.
std::string read_string(const ConfigNode& node, const std::string& path);
double read_double(const ConfigNode& node, const std::string& path, const hw::Range& range);
uint64_t read_unsigned(const ConfigNode& node, const std::string& path, const hw::Range& range,
                       uint64_t type_max);
int64_t read_signed(const ConfigNode& node, const std::string& path, const hw::Range& range,
                    int64_t type_min, int64_t type_max);
bool read_bool(const ConfigNode& node, const std::string& path);

// What a number must be: "a number in [1, 64]", "an integer >= 1", "a non-negative integer", ...
// Range bounds are inclusive; type_min/type_max are the limits of the member's type.
std::string describe_number(const hw::Range& range, bool integer, double type_min, double type_max);
// Shortest text that reads back as the same double ("250", "0.875", "1e+06").
std::string format_number(double value);

// Applies a mapping onto a parameter struct: `params.visit(reader)` reads every declared key that
// is present (absent keys keep the struct's value), then finish() rejects every key that was not
// declared, listing the valid ones. Callers may also read keys by hand with take().
class YamlReader {
 public:
  // `node` must be a mapping (else ConfigError); `path` is its key path for messages.
  YamlReader(const ConfigNode& node, std::string path);

  void operator()(const char* key, double& value, const char* description, const hw::Range& range);
  void operator()(const char* key, std::string& value, const char* description,
                  const hw::Choices& choices);
  void operator()(const char* key, bool& value, const char* description, const hw::Range& range);

  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  void operator()(const char* key, T& value, const char* description, const hw::Range& range) {
    declare(key);
    if (const ConfigNode* node = take(key)) value = read_integer<T>(*node, join_path(path_, key), range);
  }

  // A list of numbers, every element within `range`.
  template <class T>
  void operator()(const char* key, std::vector<T>& value, const char* description,
                  const hw::Range& range) {
    declare(key);
    const ConfigNode* node = take(key);
    if (!node) return;
    const std::string path = join_path(path_, key);
    if (!node->is_sequence()) config_fail(node->origin, path, "a list", describe(*node));
    std::vector<T> result;
    for (size_t i = 0; i < node->items.size(); ++i) {
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      if constexpr (std::is_integral_v<T>) {
        result.push_back(read_integer<T>(node->items[i], item_path, range));
      } else {
        result.push_back(static_cast<T>(read_double(node->items[i], item_path, range)));
      }
    }
    value = std::move(result);
  }

  // Declares `key` as valid and returns its node (nullptr when absent).
  const ConfigNode* take(const std::string& key);
  // Declares `key` as valid without reading it.
  void declare(const std::string& key);
  // The mapping being read and its key path.
  const ConfigNode& node() const { return node_; }
  const std::string& path() const { return path_; }

  // Rejects every key of the mapping that was not declared.
  void finish() const;

 private:
  template <class T>
  static T read_integer(const ConfigNode& node, const std::string& path, const hw::Range& range) {
    if constexpr (std::is_unsigned_v<T>) {
      return static_cast<T>(read_unsigned(node, path, range, std::numeric_limits<T>::max()));
    } else {
      return static_cast<T>(read_signed(node, path, range, std::numeric_limits<T>::min(),
                                        std::numeric_limits<T>::max()));
    }
  }

  const ConfigNode& node_;
  std::string path_;
  std::vector<std::string> declared_;
};

// Reads `node` (a mapping at key path `path`) onto `params` and rejects unknown keys.
template <class Params>
void read_params(const ConfigNode& node, const std::string& path, Params& params) {
  YamlReader reader(node, path);
  params.visit(reader);
  reader.finish();
}

// Writes a struct as YAML block-mapping lines at `indent` spaces, each value followed by its
// description as a comment (and the allowed values of a string).
class YamlDumper {
 public:
  YamlDumper(std::string& out, int indent) : out_(out), indent_(indent) {}

  void operator()(const char* key, const double& value, const char* description, const hw::Range&) {
    line(key, format_number(value), description);
  }
  void operator()(const char* key, const bool& value, const char* description, const hw::Range&) {
    line(key, value ? "true" : "false", description);
  }
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  void operator()(const char* key, const T& value, const char* description, const hw::Range&) {
    line(key, std::to_string(value), description);
  }
  void operator()(const char* key, const std::string& value, const char* description,
                  const hw::Choices& choices);
  template <class T>
  void operator()(const char* key, const std::vector<T>& value, const char* description,
                  const hw::Range&) {
    std::string text = "[";
    for (size_t i = 0; i < value.size(); ++i) {
      if (i) text += ", ";
      if constexpr (std::is_integral_v<T>) text += std::to_string(value[i]);
      else text += format_number(static_cast<double>(value[i]));
    }
    line(key, text + "]", description);
  }

  // One "key: value  # comment" line; `value` must already be valid YAML.
  void line(const std::string& key, const std::string& value, const std::string& comment);
  // "key:" opening a nested mapping, with an optional comment.
  void section(const std::string& key, const std::string& comment = "");

 private:
  std::string& out_;
  int indent_;
};

// Dumps a parameter struct (visit() is non-const, so it runs on a copy).
template <class Params>
void dump_params(std::string& out, int indent, const Params& params) {
  Params copy = params;
  YamlDumper dumper(out, indent);
  copy.visit(dumper);
}

// A string as a YAML scalar: plain when that reads back as the same string, else double-quoted.
std::string yaml_quote(const std::string& text);

}  // namespace nvsvp::platform
