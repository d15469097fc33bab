// Bad input: the exception every reader of nvsvp's inputs throws, and the command line turns into
// its message and exit code 2.
#pragma once

#include <stdexcept>

namespace nvsvp::platform {

// Bad input. what() is the full message: "FILE:LINE: KEY.PATH: expected ..., got ...".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nvsvp::platform
