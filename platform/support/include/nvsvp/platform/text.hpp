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

// `text` as one CSV field: quoted, with quotes doubled, when it holds a comma, a quote or a line end.
inline std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace nvsvp::platform
