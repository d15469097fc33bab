// The checker of Perfetto's nesting rule (tests/common/trace_nesting.hpp) on hand-written traces:
// it must find the overlap Perfetto drops and accept what Perfetto keeps.
#include <gtest/gtest.h>

#include <string>

#include "../common/test_support.hpp"
#include "../common/trace_nesting.hpp"

namespace nvsvp::test {
namespace {

std::string trace_of(const std::string& events) { return "{\"traceEvents\":[" + events + "]}"; }

std::string slice(const char* name, int tid, double ts, double dur) {
  return std::string("{\"ph\":\"X\",\"name\":\"") + name + "\",\"pid\":0,\"tid\":" + std::to_string(tid) +
         ",\"ts\":" + std::to_string(ts) + ",\"dur\":" + std::to_string(dur) + "}";
}

TEST(TraceNesting, AnOverlapWithoutNestingOnOneTrackIsAViolation) {
  TempDir dir;
  const std::string path = dir.write("t.json", trace_of(slice("dispatch", 0, 0, 10) + "," + slice("experts", 0, 5, 10)));
  const auto violations = trace_nesting_violations(path);
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_NE(violations[0].find("\"experts\" [5000, 15000) ns overlaps \"dispatch\" [0, 10000) ns"), std::string::npos)
      << violations[0];
}

TEST(TraceNesting, NestedDisjointTouchingAndOtherTracksAreKept) {
  TempDir dir;
  const std::string path = dir.write(
      "t.json", trace_of(slice("inner", 0, 2, 3) + "," + slice("outer", 0, 0, 10) + "," +  // nested, child first
                         slice("next", 0, 10, 5) + "," +                                    // touches the end
                         slice("same start, shorter", 0, 20, 1) + "," + slice("same start", 0, 20, 4) + "," +
                         slice("elsewhere", 1, 5, 10)));                                    // another track
  EXPECT_TRUE(trace_nesting_violations(path).empty());
}

TEST(TraceNesting, AFileThatIsNoTraceIsAViolation) {
  TempDir dir;
  EXPECT_EQ(trace_nesting_violations(dir.write("t.json", "{\"x\":1}")).size(), 1u);
  EXPECT_EQ(trace_nesting_violations(dir.write("u.json", "{")).size(), 1u);
}

}  // namespace
}  // namespace nvsvp::test
