// The names of the switch chip's registers, as logs and register traces print them.
#pragma once

#include <cstdint>
#include <string>

namespace nvsvp::platform {

// The register map's name of `offset` (docs/registers.md): "ID", "ROUTE_LO[3]",
// "GROUP[2].BASE_HI", "COUNTER_REPLICATIONS_LO", ...; "" for an offset the map does not have.
std::string switch_register_name(uint32_t offset);

}  // namespace nvsvp::platform
