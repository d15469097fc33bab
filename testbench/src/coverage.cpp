#include "nvsvp/testbench/coverage.hpp"

#include <cstdio>
#include <iomanip>

namespace nvsvp::testbench {

namespace {

std::size_t pair_index(ReduceOp op, ReduceType type) {
  const auto& pairs = legal_op_types();
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].op == op && pairs[i].type == type) return i;
  }
  return pairs.size();
}

// "12", "3.4k", "56M": a cell of the table in at most 5 characters.
std::string short_count(std::uint64_t n) {
  char text[16];
  if (n < 10000) {
    std::snprintf(text, sizeof text, "%llu", static_cast<unsigned long long>(n));
  } else if (n < 10000000) {
    std::snprintf(text, sizeof text, "%lluk", static_cast<unsigned long long>(n / 1000));
  } else {
    std::snprintf(text, sizeof text, "%lluM", static_cast<unsigned long long>(n / 1000000));
  }
  return text;
}

std::string bin_name(const OpType& pair, OperandClass operand_class, int bin, bool evicted) {
  return std::string(op_name(pair.op)) + " " + type_name(pair.type) + " " + to_string(operand_class) +
         " C=" + contribution_bin_name(bin) + (evicted ? " evicted" : " kept");
}

}  // namespace

int contribution_bin(std::uint32_t contributions) {
  if (contributions <= 1) return 0;
  if (contributions == 2) return 1;
  if (contributions <= 4) return 2;
  if (contributions <= 8) return 3;
  return 4;
}

const char* contribution_bin_name(int bin) {
  static const char* const names[] = {"1", "2", "3-4", "5-8", "9+"};
  return bin >= 0 && bin < contribution_bin_count ? names[bin] : "?";
}

Coverage::Coverage()
    : counts_(legal_op_types().size() * operand_class_count * contribution_bin_count * 2, 0) {}

std::size_t Coverage::index(std::size_t pair, OperandClass operand_class, int bin, bool evicted) const {
  return ((pair * operand_class_count + static_cast<std::size_t>(operand_class)) * contribution_bin_count +
          static_cast<std::size_t>(bin)) * 2 + (evicted ? 1 : 0);
}

void Coverage::hit(ReduceOp op, ReduceType type, OperandClass operand_class, std::uint32_t contributions,
                   bool evicted, std::uint64_t n) {
  const std::size_t pair = pair_index(op, type);
  if (pair >= legal_op_types().size()) return;
  counts_[index(pair, operand_class, contribution_bin(contributions), evicted)] += n;
}

void Coverage::merge(const Coverage& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
}

bool Coverage::add_to_bin(ReduceOp op, ReduceType type, OperandClass operand_class, int bin, bool evicted,
                          std::uint64_t n) {
  const std::size_t pair = pair_index(op, type);
  if (pair >= legal_op_types().size() || bin < 0 || bin >= contribution_bin_count || excluded(bin, evicted)) return false;
  counts_[index(pair, operand_class, bin, evicted)] += n;
  return true;
}

std::uint64_t Coverage::count(ReduceOp op, ReduceType type, OperandClass operand_class, int bin, bool evicted) const {
  const std::size_t pair = pair_index(op, type);
  if (pair >= legal_op_types().size()) return 0;
  return counts_[index(pair, operand_class, bin, evicted)];
}

std::size_t Coverage::bins() const {
  std::size_t total = 0;
  for (const OpType& pair : legal_op_types()) {
    total += classes_of(pair.type).size() * (contribution_bin_count * 2 - 1);
  }
  return total;
}

std::size_t Coverage::bins_hit() const {
  return bins() - missed().size();
}

std::vector<std::string> Coverage::missed() const {
  std::vector<std::string> names;
  for (const CoverageBin& bin : bin_list()) {
    if (bin.count == 0) names.push_back(bin.name);
  }
  return names;
}

std::vector<CoverageBin> Coverage::bin_list() const {
  std::vector<CoverageBin> list;
  const auto& pairs = legal_op_types();
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    for (const OperandClass c : classes_of(pairs[p].type)) {
      for (int bin = 0; bin < contribution_bin_count; ++bin) {
        for (const bool evicted : {false, true}) {
          if (excluded(bin, evicted)) continue;
          list.push_back({pairs[p].op, pairs[p].type, c, bin, evicted, bin_name(pairs[p], c, bin, evicted),
                          counts_[index(p, c, bin, evicted)]});
        }
      }
    }
  }
  return list;
}

void Coverage::print(std::ostream& out) const {
  const std::vector<std::string> never = missed();
  out << "coverage: " << (bins() - never.size()) << " of " << bins() << " bins hit"
      << " (op x type x operand class x contributions x eviction; '.' never hit, '-' excluded)\n";
  out << std::left << std::setw(20) << "op type class";
  for (int bin = 0; bin < contribution_bin_count; ++bin) {
    out << std::right << std::setw(6) << (std::string("C") + contribution_bin_name(bin)) << std::setw(6)
        << (std::string("C") + contribution_bin_name(bin) + "e");
  }
  out << "\n";
  const auto& pairs = legal_op_types();
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    for (const OperandClass c : classes_of(pairs[p].type)) {
      const std::string row = std::string(op_name(pairs[p].op)) + " " + type_name(pairs[p].type) + " " + to_string(c);
      out << std::left << std::setw(20) << row;
      for (int bin = 0; bin < contribution_bin_count; ++bin) {
        for (const bool evicted : {false, true}) {
          const std::uint64_t n = counts_[index(p, c, bin, evicted)];
          const std::string cell = excluded(bin, evicted) ? "-" : (n == 0 ? "." : short_count(n));
          out << std::right << std::setw(6) << cell;
        }
      }
      out << "\n";
    }
  }
  out << "bins never hit: " << never.size() << (never.empty() ? "" : ":") << "\n";
  for (const std::string& name : never) out << "  " << name << "\n";
}

}  // namespace nvsvp::testbench
