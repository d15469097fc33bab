// Perfetto's rule for complete ("X") events of a Chrome JSON trace: on one track (pid, tid) two
// slices either nest or are disjoint; a slice that overlaps another without nesting is dropped on
// import. Times are compared in whole nanoseconds, as Perfetto reads the microsecond values.
// Used by the tests' TempDir on every trace a test leaves behind and by nvsvp_trace_nesting_check.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace nvsvp::test {

// The violations of the rule in the trace at `path`, one line each (none when it holds); a file
// that is not a trace is a violation too.
inline std::vector<std::string> trace_nesting_violations(const std::string& path) {
  struct Slice {
    long long start = 0;
    long long end = 0;
    std::string name;
  };
  std::vector<std::string> violations;
  nlohmann::json trace;
  try {
    std::ifstream file(path);
    trace = nlohmann::json::parse(file);
  } catch (const std::exception& e) {
    return {path + ": not JSON: " + e.what()};
  }
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return {path + ": no traceEvents array"};
  }
  std::map<std::pair<long long, long long>, std::vector<Slice>> tracks;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X") continue;
    const long long start = std::llround(e.at("ts").get<double>() * 1000.0);
    const long long duration = std::llround(e.at("dur").get<double>() * 1000.0);
    tracks[{e.at("pid").get<long long>(), e.value("tid", 0LL)}].push_back(
        Slice{start, start + duration, e.value("name", "")});
  }
  for (auto& [track, slices] : tracks) {
    // A parent before its children: by start, the longer first.
    std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<const Slice*> open;
    for (const Slice& s : slices) {
      while (!open.empty() && open.back()->end <= s.start) open.pop_back();
      if (!open.empty() && s.end > open.back()->end) {
        violations.push_back(path + ": pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) +
                             ": \"" + s.name + "\" [" + std::to_string(s.start) + ", " + std::to_string(s.end) +
                             ") ns overlaps \"" + open.back()->name + "\" [" + std::to_string(open.back()->start) +
                             ", " + std::to_string(open.back()->end) + ") ns without nesting");
        continue;  // Perfetto drops it
      }
      open.push_back(&s);
    }
  }
  return violations;
}

}  // namespace nvsvp::test
