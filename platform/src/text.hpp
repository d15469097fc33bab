// Small text helpers shared by the platform's reports (internal to platform/).
#pragma once

#include <iomanip>
#include <sstream>
#include <string>

namespace nvsvp::platform {

// `value` with exactly `decimals` digits after the point.
inline std::string fixed(double value, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << value;
  return os.str();
}

}  // namespace nvsvp::platform
