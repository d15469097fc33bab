#include "nvsvp/platform/run_comparison.hpp"

#include <cmath>
#include <fstream>
#include <initializer_list>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nvsvp/platform/config_error.hpp"
#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

double FigurePair::relative_difference() const {
  if (a == b) return 0;
  if (a == 0) return std::numeric_limits<double>::infinity();
  return std::fabs(b / a - 1);
}

namespace {

// What a run folder holds, read strictly: a missing key names the file and the key.
class RunFolder {
 public:
  explicit RunFolder(const std::filesystem::path& folder) : folder_(folder) {
    const std::filesystem::path report = folder / "report.json";
    if (!std::filesystem::is_directory(folder)) {
      throw ConfigError(folder.string() + ": expected the output folder of `nvsvp run`; there is no such folder");
    }
    std::ifstream in(report);
    if (!in) {
      throw ConfigError(folder.string() + ": expected the output folder of `nvsvp run`; it has no report.json");
    }
    try {
      document_ = json::parse(in);
    } catch (const json::exception& e) {
      throw ConfigError(report.string() + ": expected a JSON report: " + e.what());
    }
    name_ = report.string();
    if (!document_.contains("results") || !document_["results"].is_array()) {
      throw ConfigError(name_ + ": results: expected a list of schemes");
    }
  }

  const json& results() const { return document_["results"]; }
  const std::string& name() const { return name_; }

  // node[k1][k2]..., a number.
  double number_at(const json& node, const std::string& where, std::initializer_list<const char*> path) const {
    const json* at = &node;
    std::string name = where;
    for (const char* key : path) {
      name += std::string(".") + key;
      if (!at->is_object() || !at->contains(key)) throw ConfigError(name_ + ": " + name + ": expected a number");
      at = &(*at)[key];
    }
    if (!at->is_number()) throw ConfigError(name_ + ": " + name + ": expected a number");
    return at->get<double>();
  }
  const json& object(const json& node, const std::string& where, const std::string& key) const {
    if (!node.is_object() || !node.contains(key) || !(node[key].is_object() || node[key].is_array())) {
      throw ConfigError(name_ + ": " + where + "." + key + ": expected a mapping or a list");
    }
    return node[key];
  }

  // links_<scheme>.csv, by "direction gpu G link L".
  std::map<std::string, LinkFigures> links(const std::string& scheme) const {
    const std::filesystem::path path = folder_ / ("links_" + scheme + ".csv");
    std::ifstream in(path);
    if (!in) throw ConfigError(path.string() + ": expected the file every run writes; cannot read it");
    std::string line;
    std::getline(in, line);
    const std::vector<std::string> header = split(line);
    const auto column = [&](const std::string& key) {
      for (size_t i = 0; i < header.size(); ++i) {
        if (header[i] == key) return i;
      }
      throw ConfigError(path.string() + ":1: " + key + ": expected this column");
    };
    const size_t direction = column("direction"), gpu = column("gpu"), link = column("link");
    const size_t wire = column("wire_bytes"), payload = column("payload_bytes"), packets = column("packets");
    std::map<std::string, LinkFigures> links;
    for (int number = 2; std::getline(in, line); ++number) {
      if (line.empty()) continue;
      const std::vector<std::string> fields = split(line);
      if (fields.size() != header.size()) {
        throw ConfigError(path.string() + ":" + std::to_string(number) + ": expected " + std::to_string(header.size()) +
                          " fields, got " + std::to_string(fields.size()));
      }
      try {
        LinkFigures& figures = links[fields[direction] + " gpu " + fields[gpu] + " link " + fields[link]];
        figures.wire_bytes = std::stoull(fields[wire]);
        figures.payload_bytes = std::stoull(fields[payload]);
        figures.packets = std::stoull(fields[packets]);
      } catch (const std::logic_error&) {
        throw ConfigError(path.string() + ":" + std::to_string(number) + ": expected whole numbers of bytes and packets");
      }
    }
    return links;
  }

 private:
  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    std::string field;
    while (std::getline(stream, field, ',')) fields.push_back(field);
    return fields;
  }

  std::filesystem::path folder_;
  std::string name_;
  json document_;
};

// The figures of results[i] of both runs, both for scheme `scheme`.
SchemeComparison compare_scheme(const RunFolder& a, const json& ra, size_t index_a, const RunFolder& b, const json& rb,
                                size_t index_b, const std::string& scheme) {
  SchemeComparison c;
  c.scheme = scheme;
  const std::string where_a = "results[" + std::to_string(index_a) + "]";
  const std::string where_b = "results[" + std::to_string(index_b) + "]";
  // One figure at the same key path of both results.
  const auto figure = [&](std::initializer_list<const char*> path) {
    return FigurePair{a.number_at(ra, where_a, path), b.number_at(rb, where_b, path)};
  };
  c.layer_time_us = figure({"layer_time_us"});
  const json& phases_a = a.object(ra, where_a, "phases");
  const json& phases_b = b.object(rb, where_b, "phases");
  for (const auto& [phase, value] : phases_a.items()) {
    if (phases_b.contains(phase)) c.phase_end_us[phase] = figure({"phases", phase.c_str(), "end_us"});
  }
  const json& gpus_a = a.object(ra, where_a, "gpus");
  const json& gpus_b = b.object(rb, where_b, "gpus");
  if (gpus_a.size() != gpus_b.size()) {
    throw ConfigError(b.name() + ": " + where_b + ".gpus: expected " + std::to_string(gpus_a.size()) + " GPUs as in " +
                      a.name() + ", got " + std::to_string(gpus_b.size()) + " (runs of two platforms)");
  }
  for (size_t g = 0; g < gpus_a.size(); ++g) {
    const std::string at = ".gpus[" + std::to_string(g) + "]";
    c.gpu_finish_us.push_back({a.number_at(gpus_a[g], where_a + at, {"finish_us"}),
                               b.number_at(gpus_b[g], where_b + at, {"finish_us"})});
    const double difference = c.gpu_finish_us.back().relative_difference();
    if (difference > c.worst_gpu_difference) {
      c.worst_gpu_difference = difference;
      c.worst_gpu = static_cast<uint32_t>(g);
    }
  }
  c.passed_a = a.object(ra, where_a, "checks").value("passed", false);
  c.passed_b = b.object(rb, where_b, "checks").value("passed", false);
  for (const char* direction : {"gpu_to_switch", "switch_to_gpu"}) {
    c.messages[direction] = figure({"messages", direction});
    c.packets[direction] = figure({"packets", direction});
  }
  c.wall_seconds = figure({"sim", "wall_seconds"});
  c.transactions = figure({"sim", "transactions"});
  c.links_a = a.links(scheme);
  c.links_b = b.links(scheme);
  for (const auto& [link, fa] : c.links_a) {
    const auto found = c.links_b.find(link);
    if (found == c.links_b.end()) continue;
    const LinkFigures& fb = found->second;
    c.links_compared++;
    if (fa.payload_bytes != fb.payload_bytes || fa.wire_bytes != fb.wire_bytes || fa.packets != fb.packets) {
      c.links_differing++;
    }
    const double difference = FigurePair{double(fa.wire_bytes), double(fb.wire_bytes)}.relative_difference();
    if (difference > c.worst_link_difference) {
      c.worst_link_difference = difference;
      c.worst_link = link;
    }
  }
  return c;
}

std::string ratio(const FigurePair& p) { return p.a == 0 ? (p.b == 0 ? "1" : "-") : fixed(p.b / p.a, 4); }

void print_row(std::ostream& os, const std::string& label, const FigurePair& p, int decimals) {
  os << "  " << std::left << std::setw(30) << label << std::right << std::setw(16) << fixed(p.a, decimals)
     << std::setw(16) << fixed(p.b, decimals) << std::setw(10) << ratio(p) << "\n";
}

}  // namespace

RunComparison compare_runs(const std::filesystem::path& a, const std::filesystem::path& b) {
  const RunFolder run_a(a), run_b(b);
  RunComparison comparison;
  comparison.a = a;
  comparison.b = b;
  std::map<std::string, size_t> in_b;
  for (size_t i = 0; i < run_b.results().size(); ++i) {
    const json& rb = run_b.results()[i];
    const std::string scheme = rb.is_object() ? rb.value("scheme", "") : "";
    if (scheme.empty()) throw ConfigError(run_b.name() + ": results[" + std::to_string(i) + "].scheme: expected a scheme's name");
    in_b[scheme] = i;
  }
  std::set<std::string> seen;
  for (size_t index_a = 0; index_a < run_a.results().size(); ++index_a) {
    const json& ra = run_a.results()[index_a];
    const std::string scheme = ra.is_object() ? ra.value("scheme", "") : "";
    if (scheme.empty()) {
      throw ConfigError(run_a.name() + ": results[" + std::to_string(index_a) + "].scheme: expected a scheme's name");
    }
    seen.insert(scheme);
    const auto found = in_b.find(scheme);
    if (found == in_b.end()) {
      comparison.only_in_a.push_back(scheme);
      continue;
    }
    comparison.schemes.push_back(compare_scheme(run_a, ra, index_a, run_b, run_b.results()[found->second], found->second, scheme));
  }
  for (const auto& [scheme, index] : in_b) {
    if (seen.count(scheme) == 0) comparison.only_in_b.push_back(scheme);
  }
  return comparison;
}

void parse_tolerance(const std::string& text, ComparisonTolerances& tolerances) {
  const size_t equals = text.find('=');
  const std::string key = text.substr(0, equals);
  std::optional<double>* slot = key == "layer_time" ? &tolerances.layer_time
                                : key == "phase_end"  ? &tolerances.phase_end
                                : key == "gpu_finish" ? &tolerances.gpu_finish
                                : key == "link_bytes" ? &tolerances.link_bytes
                                                      : nullptr;
  if (slot == nullptr || equals == std::string::npos) {
    throw ConfigError("command line (--tolerance " + text +
                      "): expected KEY=FRACTION with KEY one of layer_time, phase_end, gpu_finish, link_bytes");
  }
  const std::string value = text.substr(equals + 1);
  size_t used = 0;
  double fraction = -1;
  try {
    fraction = std::stod(value, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || !(fraction >= 0) || !std::isfinite(fraction)) {
    throw ConfigError("command line (--tolerance " + text + "): " + key + ": expected a fraction >= 0 (0.01 is 1 %), got '" +
                      value + "'");
  }
  *slot = fraction;
}

std::vector<std::string> differences_beyond(const RunComparison& comparison, const ComparisonTolerances& tolerances) {
  std::vector<std::string> lines;
  if (!tolerances.any()) return lines;
  for (const std::string& scheme : comparison.only_in_a) lines.push_back(scheme + ": only in A");
  for (const std::string& scheme : comparison.only_in_b) lines.push_back(scheme + ": only in B");
  const auto beyond = [](const FigurePair& p, double limit) { return p.relative_difference() > limit; };
  for (const SchemeComparison& c : comparison.schemes) {
    if (!c.passed_a || !c.passed_b) {
      lines.push_back(c.scheme + ": checks " + (c.passed_a ? "passed" : "failed") + " in A, " +
                      (c.passed_b ? "passed" : "failed") + " in B");
    }
    if (tolerances.layer_time && beyond(c.layer_time_us, *tolerances.layer_time)) {
      lines.push_back(c.scheme + ": layer time " + fixed(c.layer_time_us.a, 3) + " us in A, " +
                      fixed(c.layer_time_us.b, 3) + " in B (B/A " + ratio(c.layer_time_us) + ", tolerance " +
                      fixed(*tolerances.layer_time, 4) + ")");
    }
    if (tolerances.phase_end) {
      const double limit = *tolerances.phase_end;
      for (const auto& [phase, p] : c.phase_end_us) {
        if (beyond(p, limit)) {
          lines.push_back(c.scheme + ": " + phase + " ends at " + fixed(p.a, 3) + " us in A, " + fixed(p.b, 3) +
                          " in B (B/A " + ratio(p) + ")");
        }
      }
    }
    if (tolerances.gpu_finish) {
      for (size_t g = 0; g < c.gpu_finish_us.size(); ++g) {
        const FigurePair& p = c.gpu_finish_us[g];
        if (beyond(p, *tolerances.gpu_finish)) {
          lines.push_back(c.scheme + ": GPU " + std::to_string(g) + " finishes at " + fixed(p.a, 3) + " us in A, " +
                          fixed(p.b, 3) + " in B (B/A " + ratio(p) + ", tolerance " + fixed(*tolerances.gpu_finish, 4) +
                          ")");
        }
      }
    }
    if (tolerances.link_bytes) {
      // One line per link that differs, the first kMaxLinkLines of them, then how many more.
      constexpr uint32_t kMaxLinkLines = 8;
      uint32_t differing = 0;
      const auto add = [&](const std::string& line) {
        if (differing++ < kMaxLinkLines) lines.push_back(c.scheme + ": " + line);
      };
      const double limit = *tolerances.link_bytes;
      for (const auto& [link, fa] : c.links_a) {
        const auto found = c.links_b.find(link);
        if (found == c.links_b.end()) {
          add(link + ": only in A");
          continue;
        }
        const LinkFigures& fb = found->second;
        const auto pair = [](uint64_t x, uint64_t y) { return FigurePair{double(x), double(y)}; };
        if (beyond(pair(fa.payload_bytes, fb.payload_bytes), limit) || beyond(pair(fa.wire_bytes, fb.wire_bytes), limit) ||
            beyond(pair(fa.packets, fb.packets), limit)) {
          add(link + ": payload bytes " + std::to_string(fa.payload_bytes) + " / " + std::to_string(fb.payload_bytes) +
              ", wire bytes " + std::to_string(fa.wire_bytes) + " / " + std::to_string(fb.wire_bytes) + ", packets " +
              std::to_string(fa.packets) + " / " + std::to_string(fb.packets) + " (A / B)");
        }
      }
      for (const auto& [link, fb] : c.links_b) {
        if (c.links_a.count(link) == 0) add(link + ": only in B");
      }
      if (differing > kMaxLinkLines) {
        lines.push_back(c.scheme + ": and " + std::to_string(differing - kMaxLinkLines) + " more links");
      }
    }
  }
  return lines;
}

void print_comparison(std::ostream& os, const RunComparison& comparison) {
  os << "A: " << comparison.a.string() << "\nB: " << comparison.b.string() << "\n";
  for (const SchemeComparison& c : comparison.schemes) {
    os << "\n" << std::left << std::setw(32) << c.scheme << std::right << std::setw(16) << "A" << std::setw(16) << "B"
       << std::setw(10) << "B/A" << "\n";
    print_row(os, "layer time (us)", c.layer_time_us, 3);
    for (const auto& [phase, p] : c.phase_end_us) print_row(os, phase + " ends (us)", p, 3);
    if (!c.gpu_finish_us.empty()) {
      print_row(os, "GPU " + std::to_string(c.worst_gpu) + " finishes (us)", c.gpu_finish_us[c.worst_gpu], 3);
    }
    for (const auto& [direction, p] : c.messages) print_row(os, "messages " + direction, p, 0);
    for (const auto& [direction, p] : c.packets) print_row(os, "packets " + direction, p, 0);
    print_row(os, "link transactions", c.transactions, 0);
    print_row(os, "wall time (s)", c.wall_seconds, 3);
    os << "  checks: " << (c.passed_a ? "passed" : "FAILED") << " in A, " << (c.passed_b ? "passed" : "FAILED")
       << " in B\n";
    os << "  GPU finish: largest |B/A - 1| " << fixed(c.worst_gpu_difference, 5) << " (GPU " << c.worst_gpu << ")\n";
    os << "  links: " << c.links_compared << " in both, " << c.links_differing
       << " with other bytes or packets; largest wire-bytes |B/A - 1| " << fixed(c.worst_link_difference, 5)
       << (c.worst_link.empty() ? "" : " (" + c.worst_link + ")") << "\n";
  }
  for (const std::string& scheme : comparison.only_in_a) os << "\n" << scheme << ": only in A\n";
  for (const std::string& scheme : comparison.only_in_b) os << "\n" << scheme << ": only in B\n";
}

}  // namespace nvsvp::platform
