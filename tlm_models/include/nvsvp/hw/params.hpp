// Typed parameters: every parameter struct lists its fields once, in visit(), with a
// description and limits. The configurer (platform/) reads YAML through it and rejects unknown
// keys; the effective configuration is dumped through it. SystemC-free on purpose.
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace nvsvp::hw {

// Inclusive numeric limits of a parameter.
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
};
inline Range at_least(double min) { return Range{min, std::numeric_limits<double>::infinity()}; }
inline Range between(double min, double max) { return Range{min, max}; }

// The allowed values of a string parameter (an empty list allows any string).
struct Choices {
  std::vector<std::string> values;
};

}  // namespace nvsvp::hw
