#include "nvsvp/testbench/vector_file.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include "nvsvp/testbench/lanes.hpp"

namespace nvsvp::testbench {

using reduction::Command;
using reduction::ReduceOp;
using reduction::ReduceType;
using reduction::ResultBeat;

namespace {

// A hexadecimal token of at most `max_digits` digits (after an optional 0x); false otherwise.
bool parse_hex(const std::string& token, int max_digits, std::uint32_t& value) {
  std::size_t start = 0;
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) start = 2;
  const std::size_t digits = token.size() - start;
  if (digits == 0 || digits > static_cast<std::size_t>(max_digits)) return false;
  std::uint32_t v = 0;
  for (std::size_t i = start; i < token.size(); ++i) {
    const int c = std::tolower(static_cast<unsigned char>(token[i]));
    int d = 0;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else return false;
    v = (v << 4) | static_cast<std::uint32_t>(d);
  }
  value = v;
  return true;
}

// A "# dtype: X" comment: true, with X in `value` (trimmed), when `text` is one.
bool dtype_declaration(const std::string& text, std::string& value) {
  std::size_t i = text.find_first_not_of(" \t");
  if (i == std::string::npos || text[i] != '#') return false;
  i = text.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || text.compare(i, 6, "dtype:") != 0) return false;
  std::istringstream rest(text.substr(i + 6));
  value.clear();
  rest >> value;
  std::string extra;
  if (rest >> extra) value += " " + extra;  // refused below, as an unknown type
  return true;
}

// Hexadecimal digits of a token, less its 0x prefix.
std::size_t hex_digits(const std::string& token) {
  const bool prefixed = token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X');
  return token.size() - (prefixed ? 2 : 0);
}

// The reading itself; read_vector_file turns running out of memory into a VectorFileError.
std::vector<TestVector> read_vectors(const std::string& path, ReduceType type) {
  std::ifstream in(path);
  if (!in) throw VectorFileError(path + ": cannot open the vector file");
  std::error_code size_error;
  const std::uintmax_t size = std::filesystem::file_size(path, size_error);
  if (!size_error && size > kMaxVectorFileBytes) {
    throw VectorFileError(path + ": expected a vector file of at most " + std::to_string(kMaxVectorFileBytes) +
                          " bytes (an input limit), got " + std::to_string(size));
  }
  const int digits = lane_bytes(type) * 2;
  const std::string what = std::string("a hexadecimal ") + type_name(type) + " encoding of at most " +
                           std::to_string(digits) + " digits";
  const std::string expected_file = std::string("expected ") + type_name(type) + " vectors (--dtype " +
                                    type_name(type) + ")";
  static const char* const field_names[] = {"A", "B", "RESULT", "FLAGS"};
  std::vector<TestVector> vectors;
  std::string text;
  std::uint64_t bytes = 0;  // a FIFO has no size to check up front
  std::size_t declared_line = 0;  // the "# dtype:" line, 0 if none
  std::size_t widest_digits = 0;  // of the A, B and RESULT fields, to tell a 32-bit file from a 16-bit one
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    bytes += text.size() + 1;
    if (bytes > kMaxVectorFileBytes) {
      throw VectorFileError(path + ":" + std::to_string(line) + ": expected a vector file of at most " +
                            std::to_string(kMaxVectorFileBytes) + " bytes (an input limit), got more");
    }
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const std::string where = path + ":" + std::to_string(line) + ": ";
    std::string declared;
    if (dtype_declaration(text, declared)) {
      if (declared_line != 0) {
        throw VectorFileError(where + "expected one '# dtype:' line, found a second (the first is line " +
                              std::to_string(declared_line) + ")");
      }
      if (declared != "f16" && declared != "bf16" && declared != "f32") {
        throw VectorFileError(where + "dtype '" + declared + "': expected f16, bf16 or f32");
      }
      if (declared != type_name(type)) {
        throw VectorFileError(where + expected_file + ", the file declares dtype " + declared);
      }
      declared_line = line;
      continue;
    }
    std::istringstream fields(text);
    std::vector<std::string> tokens;
    for (std::string token; fields >> token;) tokens.push_back(token);
    if (tokens.empty() || tokens[0][0] == '#') continue;
    if (tokens.size() < 3 || tokens.size() > 4) {
      throw VectorFileError(where + "expected 3 or 4 fields 'A B RESULT [FLAGS]', found " +
                            std::to_string(tokens.size()));
    }
    std::uint32_t values[4] = {};
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const int max_digits = i == 3 ? 8 : digits;
      if (!parse_hex(tokens[i], max_digits, values[i])) {
        throw VectorFileError(where + "field " + std::to_string(i + 1) + " (" + field_names[i] + ") '" + tokens[i] +
                              "': expected " + (i == 3 ? std::string("hexadecimal flags") : what));
      }
      if (i < 3) widest_digits = std::max(widest_digits, hex_digits(tokens[i]));
    }
    if (vectors.size() == kMaxVectors) {
      throw VectorFileError(path + ":" + std::to_string(line) + ": expected at most " + std::to_string(kMaxVectors) +
                            " vectors (an input limit), got more");
    }
    vectors.push_back({line, values[0], values[1], values[2]});
  }
  if (vectors.empty()) throw VectorFileError(path + ": expected at least one vector line 'A B RESULT [FLAGS]'");
  // Without a declaration the widths must imply the type: a 16-bit one for f32 does not match,
  // and 16-bit encodings cannot tell f16 from bf16.
  if (declared_line == 0 && widest_digits <= 4) {
    if (type == ReduceType::f32) {
      throw VectorFileError(path + ":" + std::to_string(vectors.front().line) + ": " + expected_file +
                            ", the file's encodings are 16-bit (at most 4 hexadecimal digits) and it declares no "
                            "dtype (a line '# dtype: f32' would)");
    }
    throw VectorFileError(path + ": " + expected_file +
                          ", the file declares no dtype and its 16-bit encodings fit f16 and bf16 alike: "
                          "expected a line '# dtype: " + type_name(type) + "'");
  }
  return vectors;
}

}  // namespace

std::vector<TestVector> read_vector_file(const std::string& path, ReduceType type) {
  try {
    return read_vectors(path, type);
  } catch (const std::bad_alloc&) {
    throw VectorFileError(path + ": expected a vector file that fits in this machine's memory, ran out of memory reading it");
  }
}

VectorCheckReport check_vectors(const std::vector<TestVector>& vectors, ReduceOp op, ReduceType type,
                                reduction::ReductionUnit& unit, std::size_t max_listed) {
  if (!is_float(type) || (op != ReduceOp::add && op != ReduceOp::min && op != ReduceOp::max)) {
    throw std::invalid_argument("vector files take add, min or max on f16, bf16 or f32");
  }
  VectorCheckReport report;
  auto fail = [&](const VectorFailure& failure) {
    ++report.failed;
    if (report.first_failures.size() < max_listed) report.first_failures.push_back(failure);
  };
  // One context per vector (contexts 0..63 in turn; each has completed before it is reused), in
  // chunks so that a long file streams through the unit without a huge command vector.
  constexpr std::size_t chunk = 1024;
  constexpr std::uint16_t contexts = 64;
  std::vector<Command> commands;
  std::vector<ResultBeat> results;
  for (std::size_t first = 0; first < vectors.size(); first += chunk) {
    const std::size_t last = std::min(vectors.size(), first + chunk);
    commands.clear();
    results.clear();
    for (std::size_t i = first; i < last; ++i) {
      const auto context = static_cast<std::uint16_t>(i % contexts);
      Command open;
      open.kind = Command::Kind::open_context;
      open.open = {context, 2, op, type, 1};
      commands.push_back(open);
      for (const std::uint32_t operand : {vectors[i].a, vectors[i].b}) {
        Command c;
        c.kind = Command::Kind::contribution;
        c.contribution.context = context;
        c.contribution.beat = 0;
        c.contribution.data = splat(type, operand);
        commands.push_back(c);
      }
    }
    unit.process(commands, results);
    for (std::size_t i = first; i < last; ++i) {
      VectorFailure failure;
      failure.vector = vectors[i];
      const std::size_t k = i - first;
      if (k >= results.size()) {
        failure.problem = "no result beat";
        fail(failure);
        continue;
      }
      const ResultBeat& r = results[k];
      if (r.context != i % contexts || r.beat != 0 || r.partial || r.contributions != 2) {
        failure.problem = "result beat of context " + std::to_string(r.context) + " beat " + std::to_string(r.beat) +
                          " partial " + std::to_string(r.partial) + " contributions " +
                          std::to_string(r.contributions) + ", expected context " +
                          std::to_string(i % contexts) + " beat 0 complete with 2";
        fail(failure);
        continue;
      }
      const std::uint64_t expected = is_nan(type, vectors[i].result) ? canonical_nan(type) : vectors[i].result;
      bool ok = true;
      for (int lane = 0; lane < lane_count(type) && ok; ++lane) {
        const std::uint64_t actual = get_lane(r.data, type, lane);
        if (actual != expected) {
          failure.actual = static_cast<std::uint32_t>(actual);
          failure.lane = lane;
          ok = false;
        }
      }
      if (ok) {
        ++report.passed;
      } else {
        fail(failure);
      }
    }
    if (results.size() > last - first) {
      VectorFailure failure;
      failure.vector = vectors[last - 1];
      failure.problem = std::to_string(results.size() - (last - first)) + " result beats more than vectors";
      fail(failure);
    }
  }
  report.final_sticky = unit.status().sticky;
  return report;
}

std::string describe(const VectorFailure& failure, ReduceType type) {
  const int digits = lane_bytes(type) * 2;
  std::ostringstream os;
  os << "line " << failure.vector.line << ": " << hex(failure.vector.a, digits) << " " << hex(failure.vector.b, digits)
     << ": expected " << hex(failure.vector.result, digits);
  if (!failure.problem.empty()) {
    os << ", " << failure.problem;
  } else {
    os << ", actual " << hex(failure.actual, digits) << " (lane " << failure.lane << ")";
  }
  return os.str();
}

}  // namespace nvsvp::testbench
