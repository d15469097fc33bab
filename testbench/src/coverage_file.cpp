#include "nvsvp/testbench/coverage_file.hpp"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>

namespace nvsvp::testbench {

namespace {

constexpr const char* kHeader = "# SystemC::Coverage-3";

std::string field(const std::string& name, const std::string& value) {
  return "\001" + name + "\002" + value;
}

// The key of a functional bin; the fields in the order Verilator writes its own points.
std::string bin_key(const CoverageBin& bin, std::size_t row) {
  return field("f", kFunctionalCoverageFile) + field("l", std::to_string(row)) + field("n", "0") +
         field("page", "v_user/reduction_unit") + field("o", bin.name) + field("h", "reduction_unit");
}

// The value of the field `name` in a point's key; false when it has none.
bool field_value(const std::string& key, const std::string& name, std::string& value) {
  const std::string start = "\001" + name + "\002";
  const std::size_t at = key.find(start);
  if (at == std::string::npos) return false;
  const std::size_t begin = at + start.size();
  const std::size_t end = key.find('\001', begin);
  value = key.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  return true;
}

const std::map<std::string, CoverageBin>& bins_by_name() {
  static const std::map<std::string, CoverageBin> bins = [] {
    std::map<std::string, CoverageBin> by_name;
    for (const CoverageBin& bin : Coverage().bin_list()) by_name.emplace(bin.name, bin);
    return by_name;
  }();
  return bins;
}

bool is_functional(const std::string& key) {
  std::string file;
  return field_value(key, "f", file) && file == kFunctionalCoverageFile;
}

bool add_count(std::uint64_t& total, std::uint64_t n) {
  if (total > std::numeric_limits<std::uint64_t>::max() - n) return false;
  total += n;
  return true;
}

CoveragePoints read_points(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CoverageFileError(path + ": cannot open the coverage file");
  std::error_code size_error;
  const std::uintmax_t size = std::filesystem::file_size(path, size_error);
  if (!size_error && size > kMaxCoverageFileBytes) {
    throw CoverageFileError(path + ": expected a coverage file of at most " + std::to_string(kMaxCoverageFileBytes) +
                            " bytes (an input limit), got " + std::to_string(size));
  }
  CoveragePoints points;
  std::string text;
  std::uint64_t bytes = 0;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    bytes += text.size() + 1;
    if (bytes > kMaxCoverageFileBytes) {
      throw CoverageFileError(path + ":" + std::to_string(line) + ": expected a coverage file of at most " +
                              std::to_string(kMaxCoverageFileBytes) + " bytes (an input limit), got more");
    }
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const std::string where = path + ":" + std::to_string(line) + ": ";
    if (line == 1) {
      if (text != kHeader) {
        throw CoverageFileError(where + "expected the header of Verilator's coverage data format '" +
                                std::string(kHeader) + "'");
      }
      continue;
    }
    if (text.empty() || text[0] == '#') continue;
    const std::size_t close = text.rfind("' ");
    if (text.compare(0, 3, "C '") != 0 || close == std::string::npos || close < 3) {
      throw CoverageFileError(where + "expected a coverage point \"C '<key>' <count>\"");
    }
    const std::string key = text.substr(3, close - 3);
    const std::string count_text = text.substr(close + 2);
    std::uint64_t count = 0;
    bool ok = !count_text.empty();
    for (const char c : count_text) {
      const auto digit = static_cast<std::uint64_t>(c - '0');
      if (!std::isdigit(static_cast<unsigned char>(c)) ||
          count > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        ok = false;
        break;
      }
      count = count * 10 + digit;
    }
    if (!ok) {
      throw CoverageFileError(where + "count '" + count_text + "': expected a decimal count below 2^64");
    }
    if (is_functional(key)) {
      std::string name;
      if (!field_value(key, "o", name) || bins_by_name().count(name) == 0) {
        throw CoverageFileError(where + "a point of " + kFunctionalCoverageFile + " named '" + name +
                                "': expected the name of a bin of the reduction unit's functional coverage "
                                "(\"add f16 nan C=2 evicted\", ...)");
      }
    }
    if (!add_count(points[key], count)) {
      throw CoverageFileError(where + "expected counts whose sum fits 64 bits: this point is given twice");
    }
  }
  if (line == 0) {
    throw CoverageFileError(path + ": expected the header of Verilator's coverage data format '" +
                            std::string(kHeader) + "', found an empty file");
  }
  return points;
}

}  // namespace

CoveragePoints to_points(const Coverage& coverage) {
  CoveragePoints points;
  std::size_t row = 0;
  for (const CoverageBin& bin : coverage.bin_list()) points[bin_key(bin, ++row)] = bin.count;
  return points;
}

Coverage functional_coverage(const CoveragePoints& points) {
  Coverage coverage;
  for (const auto& [key, count] : points) {
    if (!is_functional(key)) continue;
    std::string name;
    field_value(key, "o", name);
    const auto bin = bins_by_name().find(name);
    if (bin == bins_by_name().end()) continue;  // read_coverage_file refuses these
    const CoverageBin& b = bin->second;
    coverage.add_to_bin(b.op, b.type, b.operand_class, b.contribution_bin, b.evicted, count);
  }
  return coverage;
}

std::size_t functional_point_count(const CoveragePoints& points) {
  std::size_t n = 0;
  for (const auto& point : points) n += is_functional(point.first) ? 1 : 0;
  return n;
}

CoveragePoints read_coverage_file(const std::string& path) {
  try {
    return read_points(path);
  } catch (const std::bad_alloc&) {
    throw CoverageFileError(path + ": expected a coverage file that fits in this machine's memory, ran out of memory reading it");
  }
}

void write_coverage_file(const std::string& path, const CoveragePoints& points) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) throw CoverageFileError(path + ": cannot write the coverage file (" + temporary + ")");
    out << kHeader << "\n";
    for (const auto& [key, count] : points) out << "C '" << key << "' " << count << "\n";
    out.flush();
    if (!out) throw CoverageFileError(path + ": cannot write the coverage file (" + temporary + ")");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    throw CoverageFileError(path + ": cannot write the coverage file (renaming " + temporary + ")");
  }
}

void merge_points(CoveragePoints& into, const CoveragePoints& from, const std::string& from_name) {
  for (const auto& [key, count] : from) {
    if (!add_count(into[key], count)) {
      throw CoverageFileError(from_name + ": expected counts whose merged sum fits 64 bits, got more");
    }
  }
}

}  // namespace nvsvp::testbench
