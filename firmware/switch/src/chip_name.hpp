// How the switch firmware's messages and log lines name a switch chip.
#pragma once

#include <cstdint>
#include <string>

namespace nvsvp::fw::detail {

inline std::string chip_name(uint32_t chip) { return "switch chip " + std::to_string(chip); }

}  // namespace nvsvp::fw::detail
