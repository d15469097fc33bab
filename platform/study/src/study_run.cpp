// Running a study's points: all of them here (then merged), some of them for a scheduler (a
// point or a shard), or none, only the command lines that would run each.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "nvsvp/platform/child_processes.hpp"
#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/study.hpp"
#include "nvsvp/platform/progress_line.hpp"
#include "study_records.hpp"
#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

void create_output_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create output directory " + dir + ": " + ec.message());
}

// Starts `nvsvp run` on a point, its console output into run.log. Returns the process id, or 0
// with `error` set.
pid_t start_point(const StudyOptions& options, bool timelines, const std::string& dir, std::string& error) {
  const std::string log = dir + "/run.log";
  const std::string scenario = dir + "/scenario.yaml";
  // No timeline files unless the study asks: at tens of MB per scheme they would dwarf the study;
  // `nvsvp run` on the point's scenario.yaml gives them.
  std::vector<std::string> args = {options.executable, "--config-dir", options.config_dir, "run", scenario,
                                   "--out", dir};
  if (!timelines) args.push_back("--no-timelines");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const pid_t pid = spawn_child(options.executable, &actions, argv.data(), error);
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// How a finished point's process ended: its exit status, and whether it left a report.
PointRun finish_point(int wait_status, const std::string& dir, const std::vector<std::string>& schemes) {
  PointRun run;
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    run.failure = "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  } else if (WEXITSTATUS(wait_status) != 0) {
    run.failure = "exit status " + std::to_string(WEXITSTATUS(wait_status));
  }
  // A crashed run may leave no file or half of one.
  read_point_report(dir + "/report.json", schemes, run);
  return run;
}

// A point's simulation cost, roughly, to start the dearest points first: the messages every scheme
// simulates grow with the tokens times the GPUs a token's top-k experts are spread over
// (expected under uniform routing, with the experts split evenly over the GPUs).
double estimated_cost(const Scenario& scenario) {
  const double gpus = scenario.platform.gpus;
  const double experts = scenario.workload.model.experts;
  const double per_gpu = experts / gpus;
  double misses = 1.0;  // probability that one GPU holds none of a token's experts
  for (uint32_t i = 0; i < scenario.workload.top_k && misses > 0.0; ++i) {
    misses *= std::max(0.0, (experts - per_gpu - i) / (experts - i));
  }
  const double destinations = gpus * (1.0 - misses);
  return gpus * scenario.workload.tokens_per_gpu * (1.0 + destinations);
}

// Runs the points `selected` (indices into study.points) into their folders under `out_dir`, up
// to `jobs` at once, the dearest first, each ending with its point.json. Returns whether every one
// passed.
bool run_points(const Study& study, const json& manifest, const std::vector<size_t>& selected,
                const StudyOptions& options, const std::string& out_dir, std::ostream& console) {
  // Every point's scenario is written before any runs: each can be rerun alone with `nvsvp run`.
  for (size_t p : selected) {
    const std::string dir = out_dir + "/" + study.points[p].directory;
    create_output_directory(dir);
    // Files an earlier run left are not this run's (the point's run clears them too, but a point
    // that cannot start must not show an old report, nor an old record claim it ran).
    remove_earlier_run_outputs(dir);
    std::error_code ec;
    fs::remove(dir + "/" + kPointRecordFile, ec);
    std::ofstream scenario(dir + "/scenario.yaml");
    scenario << dump_effective(study.points[p].scenario);
    if (!scenario) throw std::runtime_error("cannot write " + dir + "/scenario.yaml");
  }

  using Clock = std::chrono::steady_clock;
  struct Running {
    size_t point;
    Clock::time_point start;
  };
  // Dearest points first, so that the last to finish is a cheap one (longest-processing-time
  // order).
  std::vector<size_t> order = selected;
  std::vector<double> cost(study.points.size(), 0.0);
  for (size_t p : selected) cost[p] = estimated_cost(study.points[p].scenario);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  const unsigned jobs = std::max(options.jobs, 1u);
  std::map<pid_t, Running> running;
  size_t next = 0, finished = 0;
  bool all_passed = true;
  ProgressLine progress(options.progress);
  const auto study_start = Clock::now();
  auto show_progress = [&] { progress.show(progress_of_points("points", finished, order.size(), study_start)); };
  auto note_finished = [&](size_t p, const PointRun& run, double seconds) {
    const std::string dir = out_dir + "/" + study.points[p].directory;
    write_point_record(dir, manifest, p, run, seconds);
    all_passed = all_passed && run.failure.empty();
    progress.clear();  // the point's line in its place, the progress line after it
    console << "[" << ++finished << "/" << order.size() << "] " << study.points[p].name << ": "
            << (run.failure.empty() ? "ok" : "FAILED (" + run.failure + "), output in " + dir + "/run.log") << ", "
            << fixed(seconds, 1) << " s" << std::endl;
    show_progress();
  };
  while (finished < order.size()) {
    while (running.size() < jobs && next < order.size()) {
      const size_t p = order[next++];
      std::string error;
      const pid_t pid = start_point(options, study.timelines, out_dir + "/" + study.points[p].directory, error);
      if (pid == 0) {
        PointRun run;
        run.failure = error;
        note_finished(p, run, 0.0);
      } else {
        running[pid] = Running{p, Clock::now()};
      }
    }
    if (running.empty()) continue;
    show_progress();
    int status = 0;
    const pid_t pid = wait_for_any_child(status, progress.enabled() ? std::function<void()>(show_progress) : nullptr);
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not a point's process
    const Running done = it->second;
    running.erase(it);
    note_finished(done.point, finish_point(status, out_dir + "/" + study.points[done.point].directory, study.schemes),
                  std::chrono::duration<double>(Clock::now() - done.start).count());
  }
  progress.clear();
  return all_passed;
}

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

}  // namespace

std::string study_out_dir(const Study& study, const StudyOptions& options) {
  return options.out_dir.empty() ? "out/" + study.name : options.out_dir;
}

int run_study(const Study& study, const StudyOptions& options, std::ostream& console) {
  const std::string out_dir = study_out_dir(study, options);
  make_output_folder(out_dir, "--out");
  const json manifest = study_manifest(study);
  write_manifest(out_dir, manifest);
  console << "study " << study.name << ": " << study.points.size() << " points x " << study.schemes.size()
          << " schemes, " << std::max(options.jobs, 1u) << " at a time, into " << out_dir << std::endl;
  std::vector<size_t> every(study.points.size());
  for (size_t p = 0; p < every.size(); ++p) every[p] = p;
  run_points(study, manifest, every, options, out_dir, console);
  // The tables come from the folders, as a merge of points run elsewhere makes them.
  return merge_study(out_dir, &study, console);
}

int run_study_points(const Study& study, const std::vector<size_t>& points, const StudyOptions& options,
                     std::ostream& console) {
  const std::string out_dir = study_out_dir(study, options);
  make_output_folder(out_dir, "--out");
  const json manifest = study_manifest(study);
  write_or_check_manifest(out_dir, manifest);
  console << "study " << study.name << ": " << points.size() << " of its " << study.points.size() << " points x "
          << study.schemes.size() << " schemes, " << std::max(options.jobs, 1u) << " at a time, into " << out_dir
          << std::endl;
  const bool passed = run_points(study, manifest, points, options, out_dir, console);
  console << "merge the points with: nvsvp study-merge " << shell_word(out_dir) << std::endl;
  return passed ? 0 : 1;
}

std::vector<size_t> shard_points(size_t point_count, size_t shard, size_t shards) {
  std::vector<size_t> points;
  for (size_t p = shard - 1; p < point_count; p += shards) points.push_back(p);
  return points;
}

std::string emit_study_commands(const Study& study, const StudyOptions& options) {
  const std::string out_dir = absolute(study_out_dir(study, options));
  make_output_folder(out_dir, "--out");
  write_manifest(out_dir, study_manifest(study));
  std::string tail = " --out " + shell_word(out_dir);
  for (const std::string& set : study.overrides) tail += " --set " + shell_word(set);
  const std::string head = shell_word(absolute(options.executable)) + " --config-dir " +
                           shell_word(absolute(options.config_dir)) + " study " + shell_word(absolute(study.file));
  std::string commands;
  for (size_t p = 0; p < study.points.size(); ++p) {
    commands += head + " --point " + std::to_string(p + 1) + tail + "\n";
  }
  return commands;
}

}  // namespace nvsvp::platform
