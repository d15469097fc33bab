// A run's output folder before the run: an earlier run's files cleared, the effective scenario
// written; and the report's record of which nvsvp made it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "nvsvp/fw/scheme_registry.hpp"
#include "nvsvp/platform/build_info.hpp"
#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/report.hpp"

namespace nvsvp::platform {

namespace {

namespace fs = std::filesystem;

// Whether `name` is <kind>_<scheme>.<ext> with a kind of run_output_kinds(), a known scheme and
// an extension of lowercase letters (so that a copy with .bak appended stays).
bool is_per_scheme_output(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size()) return false;
  const std::string ext = name.substr(dot + 1);
  if (!std::all_of(ext.begin(), ext.end(), [](char c) { return c >= 'a' && c <= 'z'; })) return false;
  const std::string stem = name.substr(0, dot);
  for (const std::string& kind : run_output_kinds()) {
    if (stem.rfind(kind + "_", 0) != 0) continue;
    std::string scheme = stem.substr(kind.size() + 1);
    // A degree search's candidates: degree_candidate_label.
    const std::string marker = kDegreeCandidateMarker;
    const size_t degree = scheme.rfind(marker);
    const size_t digits = degree + marker.size();
    if (degree != std::string::npos && digits < scheme.size() &&
        std::all_of(scheme.begin() + static_cast<std::ptrdiff_t>(digits), scheme.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      const fw::SchemeTraits* searched = fw::find_scheme(scheme.substr(0, degree));
      if (searched != nullptr && searched->searches_degree) return true;
    }
    if (fw::find_scheme(scheme) != nullptr) return true;
  }
  return false;
}

// What `nvsvp plot DIR` draws into a run's folder: stale once the run is redone.
bool is_picture_of_a_run(const std::string& name) {
  for (const char* picture : {"layer_time", "utilization", "latency"}) {
    for (const char* ext : {".svg", ".png"}) {
      if (name == std::string(picture) + ext) return true;
    }
  }
  return name == "index.html";
}

}  // namespace

const std::vector<std::string>& run_output_kinds() {
  // Kinds listed before a writer exists cost nothing; a kind left out here would leave stale files.
  static const std::vector<std::string> kinds = {"links",   "utilization", "trace",        "stats",
                                                 "latency", "occupancy",   "transactions", "registers"};
  return kinds;
}

std::vector<std::string> earlier_run_outputs(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!it->is_regular_file(ec)) continue;
    if (name == "report.json" || name == "report.json.partial" || name == "stream.csv" || is_per_scheme_output(name) ||
        is_picture_of_a_run(name)) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void remove_earlier_run_outputs(const std::string& dir) {
  for (const std::string& file : earlier_run_outputs(dir)) {
    std::error_code ec;
    fs::remove(file, ec);
    if (ec) throw std::runtime_error("cannot remove " + file + " (an earlier run's output): " + ec.message());
  }
}

OutputFolderLock::OutputFolderLock(const std::string& out_dir) {
  const std::string path = out_dir + "/.nvsvp_run.lock";
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) config_fail("command line", "--out", "a folder nvsvp can write", path + " (" + std::strerror(errno) + ")");
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    const ssize_t n = pread(fd_, holder, sizeof holder - 1, 0);
    close(fd_);
    fd_ = -1;
    config_fail("command line", "--out", "a folder no other run is writing",
                out_dir + " (in use by nvsvp process " + (n > 0 ? std::string(holder, static_cast<size_t>(n)) : "?") +
                    ")");
  }
  const std::string pid = std::to_string(getpid());
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message a second run prints: the lock holds without it.
  }
}

OutputFolderLock::~OutputFolderLock() {
  if (fd_ >= 0) close(fd_);  // closing releases the lock
}

OutputFolderLock prepare_output_directory(const Scenario& scenario, const std::string& out_dir) {
  make_output_folder(out_dir, "--out");  // one that cannot be made is bad input
  OutputFolderLock lock(out_dir);
  remove_earlier_run_outputs(out_dir);
  const std::string path = out_dir + "/scenario.yaml";
  std::ofstream file(path);
  file << dump_effective(scenario);
  file.close();
  if (!file) throw std::runtime_error("cannot write " + path);
  return lock;
}

nlohmann::json nvsvp_build_json(const std::string& command_line) {
  return {{"version", nvsvp_version()}, {"git_commit", nvsvp_git_commit()}, {"command_line", command_line}};
}

}  // namespace nvsvp::platform
