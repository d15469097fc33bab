// The names of routing trace files (workload.routing.file): a pattern with the placeholders
// {layer} and {iteration}.
#pragma once

#include <cstdint>
#include <string>

namespace nvsvp::platform {

// A trace file's name may hold the placeholders {layer} and {iteration}: one file per layer and
// iteration of a serving run (a `stream`, or the one layer and iteration the routing keys name).
// The file `pattern` names for that layer and iteration. Throws ConfigError (naming `origin`) for a
// brace that does not open one of the two placeholders.
std::string trace_file_of(const std::string& pattern, uint32_t layer, uint32_t iteration, const std::string& origin);
bool names_placeholder(const std::string& pattern, const std::string& placeholder);  // "{layer}", "{iteration}"

}  // namespace nvsvp::platform
