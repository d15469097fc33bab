// nvsvp_trace_nesting_check DIR...: applies Perfetto's nesting rule (trace_nesting.hpp) to every
// run's trace file (trace_<scheme>.json) under the folders given; prints each violation and exits
// 1 if there is one.
#include <filesystem>
#include <iostream>
#include <string>

#include "trace_nesting.hpp"

int main(int argc, char* argv[]) {
  size_t traces = 0, violations = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (!std::filesystem::is_directory(argv[i], ec)) continue;  // a folder no test has written yet
    for (const auto& entry : std::filesystem::recursive_directory_iterator(argv[i])) {
      const std::string name = entry.path().filename().string();
      // A test's own odd files (a symlink loop) are not traces: skipped, whatever their status says.
      if (!entry.is_regular_file(ec) || name.rfind("trace_", 0) != 0 || entry.path().extension() != ".json") continue;
      ++traces;
      for (const std::string& v : nvsvp::test::trace_nesting_violations(entry.path().string())) {
        std::cout << v << "\n";
        ++violations;
      }
    }
  }
  std::cout << traces << " traces checked, " << violations << " slices overlap without nesting\n";
  return violations == 0 ? 0 : 1;
}
