// The source tree's path, for the tests that read files of it. Defined in a file that CMake
// generates in the build tree (tests/CMakeLists.txt), not as a compile definition: no other
// object then holds the path, so two clones of the same commit share their objects (ccache).
#pragma once

namespace nvsvp::test {
extern const char* const kSourceDir;
}  // namespace nvsvp::test

#define NVSVP_SOURCE_DIR ::nvsvp::test::kSourceDir
