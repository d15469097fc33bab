#include "nvsvp/platform/config_reader.hpp"

#include <unistd.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nvsvp::platform {

namespace {

std::string file_origin(const std::string& file, int zero_based_line) {
  return file + ":" + std::to_string(zero_based_line < 0 ? 1 : zero_based_line + 1);
}

std::string nesting_limit() {
  return "nesting at most " + std::to_string(kMaxNestingDepth) + " levels deep (an input limit)";
}

// yaml-cpp resolves an alias to the node it names, so a self-referring alias (`x: &a [*a]`) is a
// cycle and a few nested aliases ("billion laughs") name billions of nodes: the conversion stops
// at kMaxNestingDepth and kMaxNodesAfterAliases instead of overflowing the stack or the memory.
struct ConversionBudget {
  uint64_t nodes = 0;
};

// Converts a yaml-cpp tree. `origin_of` maps a node's mark to its origin string; `path` is the
// key path of the node, for duplicate-key errors.
template <class OriginOf>
ConfigNode convert(const YAML::Node& yaml, const OriginOf& origin_of, const std::string& path,
                   const std::string& key_origin, ConversionBudget& budget, int depth = 0) {
  ConfigNode node;
  // A null value ("key:" with nothing) carries the mark of the next token, so it takes the line
  // of its key instead.
  node.origin = yaml.IsNull() || yaml.Mark().is_null() ? key_origin : origin_of(yaml.Mark());
  node.key_origin = key_origin.empty() ? node.origin : key_origin;
  if (depth > kMaxNestingDepth) config_fail(node.origin, path, nesting_limit(), "deeper (a self-referring alias?)");
  if (++budget.nodes > kMaxNodesAfterAliases) {
    config_fail(node.origin, path, "at most " + std::to_string(kMaxNodesAfterAliases) + " values once aliases are expanded",
                "more (aliases that multiply each other?)");
  }
  switch (yaml.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      node.kind = ConfigNode::Kind::null;
      break;
    case YAML::NodeType::Scalar:
      node.kind = ConfigNode::Kind::scalar;
      node.text = yaml.Scalar();
      // yaml-cpp tags plain scalars "?"; quoted ones "!" and explicit tags (!!str) by name.
      node.quoted = yaml.Tag() != "?";
      break;
    case YAML::NodeType::Sequence: {
      node.kind = ConfigNode::Kind::sequence;
      size_t i = 0;
      for (const YAML::Node& item : yaml) {
        const std::string item_path = path + "[" + std::to_string(i++) + "]";
        ConfigNode child = convert(item, origin_of, item_path, "", budget, depth + 1);
        if (child.origin.empty()) child.origin = child.key_origin = node.origin;
        node.items.push_back(std::move(child));
      }
      break;
    }
    case YAML::NodeType::Map:
      node.kind = ConfigNode::Kind::mapping;
      for (auto it = yaml.begin(); it != yaml.end(); ++it) {
        const std::string k_origin = origin_of(it->first.Mark());
        if (!it->first.IsScalar()) config_fail(k_origin, path, "a plain key", "a complex key");
        const std::string key = it->first.Scalar();
        const std::string child_path = join_path(path, key);
        if (const ConfigNode* first = node.find(key)) {
          config_fail(k_origin, child_path, "each key once", "a second " + key + " (first at " + first->key_origin + ")");
        }
        node.entries.emplace_back(key, convert(it->second, origin_of, child_path, k_origin, budget, depth + 1));
      }
      break;
  }
  return node;
}

// Where each document of a YAML stream starts and where its root value is, from yaml-cpp's event
// parser.
class DocumentMarks : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  std::vector<YAML::Mark> roots;

  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { value(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { value(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
    value(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value(mark);
  }
  void OnMapEnd() override {}

 private:
  void value(const YAML::Mark& mark) {
    if (roots.size() < starts.size()) roots.push_back(mark);
  }
};

// Refuses a stream of more than one document (yaml-cpp's Load reads the first and drops the rest,
// syntax errors included). Not YAML::LoadAll: on a token that cannot start a value (a leading
// ',' before a flow collection, say) yaml-cpp 0.7's parser reports an empty document without
// consuming the token, and LoadAll loops forever, allocating. Here at most two documents are
// asked for, and a second that starts where the first did is that token.
void require_one_document(const std::string& content, const std::string& file) {
  std::istringstream stream(content);
  YAML::Parser parser(stream);
  DocumentMarks documents;
  if (!parser.HandleNextDocument(documents) || !parser.HandleNextDocument(documents)) return;
  const YAML::Mark& start = documents.starts.back();
  if (documents.starts.size() == 2 && start.pos == documents.starts.front().pos && start.pos >= 0 &&
      static_cast<size_t>(start.pos) < content.size()) {
    config_fail(file_origin(file, start.line), "", "valid YAML",
                std::string("'") + content[static_cast<size_t>(start.pos)] + "' where a value should start");
  }
  const YAML::Mark& root = documents.roots.size() == 2 ? documents.roots.back() : start;
  config_fail(file_origin(file, root.line), "", "one YAML document", "a second document (after ---)");
}

// Plain decimal number: [+-]digits[.digits][(e|E)[+-]digits], at least one digit before the
// exponent. Excludes YAML's .inf/.nan, hex and anything strtod would accept only in part.
bool is_decimal(const std::string& text) {
  size_t i = 0;
  const size_t n = text.size();
  if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
  size_t digits = 0;
  while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < n && text[i] == '.') {
    ++i;
    while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == n;
}

bool is_null_word(const std::string& text) {
  return text == "~" || text == "null" || text == "Null" || text == "NULL";
}

// A scalar usable as a number or boolean: present, plain (not quoted), not a mapping.
const std::string* plain_scalar(const ConfigNode& node) {
  if (!node.is_scalar() || node.quoted || is_null_word(node.text)) return nullptr;
  return &node.text;
}

}  // namespace

const ConfigNode* ConfigNode::find(const std::string& key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

ConfigNode* ConfigNode::find(const std::string& key) {
  for (auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

void config_fail(const std::string& origin, const std::string& path, const std::string& expected,
                 const std::string& got) {
  std::string message = origin + ": ";
  if (!path.empty()) message += path + ": ";
  message += "expected " + expected + ", got " + got;
  throw ConfigError(message);
}

std::string describe(const ConfigNode& node) {
  switch (node.kind) {
    case ConfigNode::Kind::null: return "nothing";
    case ConfigNode::Kind::sequence: return "a list";
    case ConfigNode::Kind::mapping: return "a mapping";
    case ConfigNode::Kind::scalar: break;
  }
  if (node.quoted) return "\"" + node.text + "\"";
  if (is_null_word(node.text)) return "nothing (" + node.text + ")";
  return node.text;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string read_at_most(std::istream& in, uint64_t max_bytes, const std::string& file, const std::string& what) {
  std::string content;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    content.append(buffer, static_cast<size_t>(in.gcount()));
    if (content.size() > max_bytes) {
      config_fail(file, "", what + " of at most " + std::to_string(max_bytes) + " bytes (an input limit)",
                  "a larger one");
    }
  }
  if (in.bad()) config_fail(file, "", "a readable file", "a read error");
  return content;
}

std::string non_regular_file_kind(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return "";
  switch (status.type()) {
    case fs::file_type::regular: return "";
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO (a named pipe: reading it waits for a writer)";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    default: return "not a regular file";
  }
}

void make_output_folder(const std::string& dir, const std::string& option) {
  namespace fs = std::filesystem;
  const std::string expected = "an output folder nvsvp can create and write";
  if (dir.empty()) config_fail("command line", option, expected, "an empty name");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) config_fail("command line", option, expected, dir + " (" + ec.message() + ")");
  if (!fs::is_directory(dir, ec)) config_fail("command line", option, expected, dir + " (not a folder)");
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    config_fail("command line", option, expected, dir + " (" + std::strerror(errno) + ")");
  }
}

std::string unreadable_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return "no such file";
  if (std::string kind = non_regular_file_kind(path); !kind.empty()) return kind;
  return std::ifstream(path) ? "" : "not readable";
}

ConfigNode load_config_file(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) config_fail(file, "", "an existing file", "no such file");
  if (std::filesystem::is_directory(file, ec)) config_fail(file, "", "a file", "a directory");
  if (const std::string kind = non_regular_file_kind(file); !kind.empty()) config_fail(file, "", "a regular file", kind);
  std::ifstream in(file, std::ios::binary);
  if (!in) config_fail(file, "", "a readable file", std::strerror(errno));
  const std::string content = read_at_most(in, kMaxConfigFileBytes, file, "a configuration file");
  if (const size_t nul = content.find('\0'); nul != std::string::npos) {
    const auto line = static_cast<int>(std::count(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    config_fail(file_origin(file, line), "", "a text file", "a NUL byte");
  }
  YAML::Node yaml;
  try {
    require_one_document(content, file);  // before Load, which would drop a second one
    yaml = YAML::Load(content);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own depth guard, whose message is only "bad file": far beyond kMaxNestingDepth.
    config_fail(file_origin(file, e.mark.line), "", nesting_limit(), "deeper than the YAML parser goes");
  } catch (const YAML::ParserException& e) {
    config_fail(file_origin(file, e.mark.line), "", "valid YAML", e.msg);
  } catch (const YAML::Exception& e) {
    config_fail(file, "", "valid YAML", e.what());
  }
  const auto origin_of = [&file](const YAML::Mark& mark) { return file_origin(file, mark.line); };
  ConversionBudget budget;
  return convert(yaml, origin_of, "", file_origin(file, 0), budget);
}

ConfigNode parse_config_text(const std::string& text, const std::string& origin) {
  YAML::Node yaml;
  try {
    yaml = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    config_fail(origin, "", nesting_limit(), "deeper than the YAML parser goes");
  } catch (const YAML::Exception& e) {
    config_fail(origin, "", "a YAML value", e.msg.empty() ? std::string(e.what()) : e.msg);
  }
  const auto origin_of = [&origin](const YAML::Mark&) { return origin; };
  ConversionBudget budget;
  return convert(yaml, origin_of, "", origin, budget);
}

std::string format_number(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string describe_number(const hw::Range& range, bool integer, double type_min, double type_max) {
  const double lo = std::max(range.min, type_min);
  const double hi = std::min(range.max, type_max);
  const bool unsigned_type = integer && type_min == 0.0;
  const bool has_lo = lo > type_min;
  const bool has_hi = hi < type_max;
  const std::string noun = integer ? "an integer" : "a number";
  if (has_hi && (has_lo || unsigned_type)) {
    return noun + " in [" + format_number(lo) + ", " + format_number(hi) + "]";
  }
  if (has_lo) return noun + " >= " + format_number(lo);
  if (has_hi) return noun + " <= " + format_number(hi);
  return unsigned_type ? "a non-negative integer" : noun;
}

std::string read_string(const ConfigNode& node, const std::string& path) {
  if (!node.is_scalar() || (!node.quoted && is_null_word(node.text))) {
    config_fail(node.origin, path, "a string", describe(node));
  }
  return node.text;
}

double read_double(const ConfigNode& node, const std::string& path, const hw::Range& range) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::string expected = describe_number(range, false, -inf, inf);
  const std::string* text = plain_scalar(node);
  if (!text || !is_decimal(*text)) config_fail(node.origin, path, expected, describe(node));
  const double value = std::strtod(text->c_str(), nullptr);
  if (!std::isfinite(value) || value < range.min || value > range.max) {
    config_fail(node.origin, path, expected, describe(node));
  }
  return value;
}

uint64_t read_unsigned(const ConfigNode& node, const std::string& path, const hw::Range& range,
                       uint64_t type_max) {
  const std::string expected =
      describe_number(range, true, 0.0, static_cast<double>(type_max));
  const std::string* text = plain_scalar(node);
  if (!text) config_fail(node.origin, path, expected, describe(node));
  // No sign: an unsigned value is plain digits (docs/configuration.md), as in a trace file.
  if (text->empty()) config_fail(node.origin, path, expected, describe(node));
  size_t i = 0;
  uint64_t value = 0;
  for (; i < text->size(); ++i) {
    const char c = (*text)[i];
    if (c < '0' || c > '9') config_fail(node.origin, path, expected, describe(node));
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (type_max - digit) / 10) config_fail(node.origin, path, expected, describe(node));
    value = value * 10 + digit;
  }
  const double as_double = static_cast<double>(value);
  if (as_double < range.min || as_double > range.max) {
    config_fail(node.origin, path, expected, describe(node));
  }
  return value;
}

int64_t read_signed(const ConfigNode& node, const std::string& path, const hw::Range& range,
                    int64_t type_min, int64_t type_max) {
  const std::string expected = describe_number(range, true, static_cast<double>(type_min),
                                               static_cast<double>(type_max));
  const std::string* text = plain_scalar(node);
  if (!text || text->empty()) config_fail(node.origin, path, expected, describe(node));
  const bool negative = (*text)[0] == '-';
  size_t i = ((*text)[0] == '-' || (*text)[0] == '+') ? 1 : 0;
  if (i == text->size()) config_fail(node.origin, path, expected, describe(node));
  // Accumulate the magnitude as unsigned so that type_min itself parses.
  const uint64_t limit = negative ? static_cast<uint64_t>(-(type_min + 1)) + 1 : static_cast<uint64_t>(type_max);
  uint64_t magnitude = 0;
  for (; i < text->size(); ++i) {
    const char c = (*text)[i];
    if (c < '0' || c > '9') config_fail(node.origin, path, expected, describe(node));
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (limit - digit) / 10) config_fail(node.origin, path, expected, describe(node));
    magnitude = magnitude * 10 + digit;
  }
  const int64_t value = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  const double as_double = static_cast<double>(value);
  if (as_double < range.min || as_double > range.max) {
    config_fail(node.origin, path, expected, describe(node));
  }
  return value;
}

bool read_bool(const ConfigNode& node, const std::string& path) {
  const std::string* text = plain_scalar(node);
  if (text && *text == "true") return true;
  if (text && *text == "false") return false;
  config_fail(node.origin, path, "true or false", describe(node));
}

YamlReader::YamlReader(const ConfigNode& node, std::string path)
    : node_(node), path_(std::move(path)) {
  if (!node_.is_mapping()) config_fail(node_.origin, path_, "a mapping of keys", describe(node_));
}

void YamlReader::operator()(const char* key, double& value, const char*, const hw::Range& range) {
  declare(key);
  if (const ConfigNode* node = take(key)) value = read_double(*node, join_path(path_, key), range);
}

void YamlReader::operator()(const char* key, std::string& value, const char*,
                            const hw::Choices& choices) {
  declare(key);
  const ConfigNode* node = take(key);
  if (!node) return;
  const std::string path = join_path(path_, key);
  if (choices.values.empty()) {
    value = read_string(*node, path);
    return;
  }
  const std::string expected = "one of " + join(choices.values, ", ");
  if (!node->is_scalar()) config_fail(node->origin, path, expected, describe(*node));
  if (std::find(choices.values.begin(), choices.values.end(), node->text) == choices.values.end()) {
    config_fail(node->origin, path, expected, describe(*node));
  }
  value = node->text;
}

void YamlReader::operator()(const char* key, bool& value, const char*, const hw::Range&) {
  declare(key);
  if (const ConfigNode* node = take(key)) value = read_bool(*node, join_path(path_, key));
}

void YamlReader::declare(const std::string& key) {
  if (std::find(declared_.begin(), declared_.end(), key) == declared_.end()) declared_.push_back(key);
}

const ConfigNode* YamlReader::take(const std::string& key) {
  declare(key);
  return node_.find(key);
}

void YamlReader::finish() const {
  for (const auto& [key, value] : node_.entries) {
    if (std::find(declared_.begin(), declared_.end(), key) != declared_.end()) continue;
    const std::string expected =
        declared_.empty() ? "no keys here" : "one of the keys " + join(declared_, ", ");
    config_fail(value.key_origin, join_path(path_, key), expected, "unknown key " + (key.empty() ? std::string("\"\"") : key));
  }
}

void YamlDumper::operator()(const char* key, const std::string& value, const char* description,
                            const hw::Choices& choices) {
  std::string comment = description;
  if (!choices.values.empty()) {
    const std::string values = join(choices.values, " | ");
    comment = comment.empty() ? values : comment + " (" + values + ")";
  }
  line(key, yaml_quote(value), comment);
}

void YamlDumper::line(const std::string& key, const std::string& value, const std::string& comment) {
  std::string text = std::string(static_cast<size_t>(indent_), ' ') + key + ": " + value;
  if (!comment.empty()) {
    // Align comments into a column where the line is short enough, for readability.
    constexpr size_t kCommentColumn = 40;
    text += text.size() < kCommentColumn ? std::string(kCommentColumn - text.size(), ' ') : "  ";
    text += "# " + comment;
  }
  out_ += text + "\n";
}

void YamlDumper::section(const std::string& key, const std::string& comment) {
  std::string text = std::string(static_cast<size_t>(indent_), ' ') + key + ":";
  if (!comment.empty()) text += "  # " + comment;
  out_ += text + "\n";
}

std::string yaml_quote(const std::string& text) {
  static const char* const kReserved[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
  bool plain = !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_' ||
                                 text[0] == '/');
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/')) {
      plain = false;
    }
  }
  if (plain) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char* word : kReserved) {
      if (lower == word) plain = false;
    }
  }
  if (plain) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (c == '\n') {
      quoted += "\\n";
    } else if (c == '\t') {
      quoted += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      quoted += buf;
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

}  // namespace nvsvp::platform
