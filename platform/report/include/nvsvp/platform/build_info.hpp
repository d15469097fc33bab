// Which nvsvp made a report: the version (CMake's project version) and the git commit of the
// tree it was built from, captured at every build into a generated file of its own
// (cmake/NvsvpBuildInfo.cmake), so that a new commit recompiles that file alone.
#pragma once

#include <string>

namespace nvsvp::platform {

// "0.1.0".
const char* nvsvp_version();
// The full hash of HEAD, "-dirty" appended when tracked files differ from it; "unknown" when the
// source was not a git checkout (or git was missing) at build time.
const char* nvsvp_git_commit();

// "nvsvp 0.1.0 (git COMMIT)", for --version.
inline std::string version_line() {
  return std::string("nvsvp ") + nvsvp_version() + " (git " + nvsvp_git_commit() + ")";
}

}  // namespace nvsvp::platform
