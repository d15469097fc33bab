// `nvsvp plot`: pictures of a run's or a study's output, drawn by the Python script
// scripts/nvsvp_plot.py (matplotlib), which this finds beside the binary and runs.
#pragma once

#include <string>
#include <vector>

namespace nvsvp::platform {

// Where the plot script nvsvp_plot.py can be, for the binary at `executable`: in the folder
// share/nvsvp/ beside it (the build tree), then in ../share/nvsvp/ from it (an installed binary).
std::vector<std::string> plot_script_candidates(const std::string& executable);

// Replaces this process by the plot script on `arguments` (DIR [--format F] [--out D]): its exit
// code is the command's. Returns only on failure, after saying why on stderr: 2 when the script or
// a Python interpreter cannot be found (bad set-up, as missing input is).
int exec_plot_script(const std::string& executable, const std::vector<std::string>& arguments);

}  // namespace nvsvp::platform
