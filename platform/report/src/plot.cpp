// `nvsvp plot`: finds the plot script and a Python with matplotlib, and hands the process over.
#include "nvsvp/platform/plot.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace nvsvp::platform {

namespace {

namespace fs = std::filesystem;

constexpr int kExitBadInput = 2;

// Debian's python3-matplotlib installs into the system interpreter; a python3 earlier on PATH
// (a pyenv or a virtualenv) often lacks it. NVSVP_PYTHON overrides both.
std::string python_interpreter() {
  if (const char* chosen = std::getenv("NVSVP_PYTHON"); chosen != nullptr && *chosen != '\0') return chosen;
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

std::vector<std::string> plot_script_candidates(const std::string& executable) {
  const fs::path dir = fs::path(executable).parent_path();
  return {(dir / "share" / "nvsvp" / "nvsvp_plot.py").string(),
          (dir / ".." / "share" / "nvsvp" / "nvsvp_plot.py").lexically_normal().string()};
}

int exec_plot_script(const std::string& executable, const std::vector<std::string>& arguments) {
  std::string script;
  const std::vector<std::string> candidates = plot_script_candidates(executable);
  for (const std::string& candidate : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) {
      script = candidate;
      break;
    }
  }
  if (script.empty()) {
    std::cerr << "nvsvp plot: expected the plot script nvsvp_plot.py at " << candidates[0] << " or " << candidates[1]
              << ", found neither (build the nvsvp target, or install with cmake --install)\n";
    return kExitBadInput;
  }
  const std::string python = python_interpreter();
  std::vector<std::string> args = {python, script};
  args.insert(args.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execvp(python.c_str(), argv.data());
  std::cerr << "nvsvp plot: cannot run " << python << " (" << std::strerror(errno)
            << "): install python3 and python3-matplotlib (apt-get install python3-matplotlib), or set NVSVP_PYTHON\n";
  return kExitBadInput;
}

}  // namespace nvsvp::platform
