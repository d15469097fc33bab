// One scheme's run in a child process of its own (SystemC elaborates once per process): fork, the
// child runs the scheme and sends its result through a pipe, the parent reads it back, waits for
// the child and turns a failure or a death into an error result. The serialise step lives here
// too: a SchemeRun to bytes in the child and back in the parent.
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "nvsvp/platform/child_processes.hpp"
#include "nvsvp/platform/runner.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

// What a child sends its parent through the pipe: the result as JSON text, then the links, the
// timeline and the statistics' rows as raw bytes. Parent and child are the same program, so the bytes mean the same on
// both sides, and the bulky parts are neither formatted as JSON nor parsed back.
class ResultWriter {
 public:
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T>
  void values(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    value(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void text(const std::string& t) {
    value(t.size());
    bytes_ += t;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what ResultWriter wrote; throws std::runtime_error when the bytes end early (a child that
// died while writing).
class ResultReader {
 public:
  explicit ResultReader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T value() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  template <typename T>
  std::vector<T> values() {
    const auto size = value<size_t>();
    if (size > (bytes_.size() - at_) / sizeof(T)) throw std::runtime_error("truncated result");
    std::vector<T> v(size);
    if (size == 0) return v;  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(v.data(), take(size * sizeof(T)), size * sizeof(T));
    return v;
  }
  std::string text() {
    const auto size = value<size_t>();
    const char* start = take(size);
    return std::string(start, size);
  }

 private:
  const char* take(size_t size) {
    if (size > bytes_.size() - at_) throw std::runtime_error("truncated result");
    const char* start = bytes_.data() + at_;
    at_ += size;
    return start;
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

std::string encode(const SchemeRun& run) {
  ResultWriter out;
  out.text(run.result.dump());
  out.values(run.links);
  out.value(run.timeline.has_value());
  if (run.timeline) {
    const Timeline& t = *run.timeline;
    out.value(t.bin_us);
    out.value(t.first_bin_start_us);
    out.value(t.gpus);
    out.value(t.bins);
    out.values(t.utilization[0]);
    out.values(t.utilization[1]);
    out.value(t.names.size());
    for (const std::string& name : t.names) out.text(name);
    out.values(t.phases);
    out.values(t.compute);
    out.value(t.chips);
    out.values(t.input_mean_flits);
    out.values(t.input_max_flits);
    out.values(t.reduction_mean_bytes);
    out.values(t.reduction_max_bytes);
  }
  out.values(run.hops);
  out.values(run.latency);
  return out.bytes();
}

SchemeRun decode(const std::string& bytes) {
  ResultReader in(bytes);
  SchemeRun run;
  run.result = json::parse(in.text());
  run.links = in.values<LinkStatistics>();
  if (in.value<bool>()) {
    Timeline& t = run.timeline.emplace();
    t.bin_us = in.value<double>();
    t.first_bin_start_us = in.value<double>();
    t.gpus = in.value<uint32_t>();
    t.bins = in.value<uint64_t>();
    t.utilization[0] = in.values<double>();
    t.utilization[1] = in.values<double>();
    t.names.resize(in.value<size_t>());
    for (std::string& name : t.names) name = in.text();
    t.phases = in.values<Timeline::Span>();
    t.compute = in.values<Timeline::Span>();
    t.chips = in.value<uint32_t>();
    t.input_mean_flits = in.values<double>();
    t.input_max_flits = in.values<double>();
    t.reduction_mean_bytes = in.values<double>();
    t.reduction_max_bytes = in.values<double>();
  }
  run.hops = in.values<HopStatistics>();
  run.latency = in.values<LatencyBin>();
  return run;
}


// A scheme's run that has no result, only the error that ended it.
SchemeRun failed_run(const std::string& scheme, const std::string& error) {
  SchemeRun failed;
  failed.result = {{"scheme", scheme}, {"error", error}};
  return failed;
}

// The child's side: runs the scheme, writes its result (or the error) to `fd` and exits with 0
// when every check passed, 1 otherwise. The simulation's own leaks are LeakSanitizer's to find in
// the simulating tests, which run schemes in their own process without a fork.
[[noreturn]] void run_as_child(int fd, const SchemeJob& job, bool with_timeline, const Observability& observe,
                               std::atomic<uint64_t>* simulated_ps) {
  const std::string& scheme = job.scheme;
  int code = 0;
  std::string bytes;
  try {
    // The job's plans are this process's copy of the parent's memory: the run consumes them, and
    // the parent's stay whole.
    const SchemeRun run = run_scheme(job, with_timeline, {}, observe, simulated_ps);
    code = run.result["checks"]["passed"].get<bool>() ? 0 : 1;
    bytes = encode(run);
  } catch (const std::exception& e) {
    bytes = encode(failed_run(scheme, e.what()));
    code = 1;
  }
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(fd);
  // _exit, not exit: the parent's atexit handlers and static destructors are the parent's to run
  // (they would tear down its copies of SystemC's and the test framework's globals, and under
  // LeakSanitizer report everything the parent holds as the child's leak). What this process
  // printed is flushed first.
  std::fflush(nullptr);
  _exit(code);
}

// Everything that can be read from `fd` until its writer closes it (or dies); with `while_waiting`,
// called about every quarter second that nothing arrives.
std::string read_all(int fd, const std::function<void()>& while_waiting) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    if (while_waiting) {
      pollfd ready{fd, POLLIN, 0};
      const int events = poll(&ready, 1, 250);
      if (events == 0 || (events < 0 && errno == EINTR)) {
        while_waiting();
        continue;
      }
    }
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

// The parent's side once the pipe is drained: waits for the child and decodes what it sent, with
// the child's own peak memory. A child killed by a signal, or one that sent nothing whole, gives
// an error result.
SchemeRun result_of_child(pid_t pid, const std::string& bytes, const std::string& scheme) {
  int status = 0;
  rusage usage{};
  wait_for_child(pid, status, usage);
  if (!WIFSIGNALED(status)) {
    try {
      SchemeRun run = decode(bytes);
      if (run.result.contains("sim")) run.result["sim"]["peak_rss_mb"] = usage.ru_maxrss / 1024.0;  // KiB on Linux
      return run;
    } catch (const std::exception&) {  // nothing, or part of a result: as good as none
    }
  }
  std::ostringstream os;
  os << "the simulation process of scheme '" << scheme << "' died";
  if (WIFSIGNALED(status)) os << " (signal " << WTERMSIG(status) << ")";
  else os << " (exit code " << WEXITSTATUS(status) << ", no result)";
  return failed_run(scheme, os.str());
}

}  // namespace

namespace {

// The simulated time a child has reached, in memory it shares with its parent (one word, written
// by the child alone).
class SharedSimulatedTime {
 public:
  SharedSimulatedTime() {
    static_assert(std::atomic<uint64_t>::is_always_lock_free, "a lock-free atomic works across processes");
    void* memory = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
    ps_ = new (memory) std::atomic<uint64_t>(0);
  }
  SharedSimulatedTime(const SharedSimulatedTime&) = delete;
  SharedSimulatedTime& operator=(const SharedSimulatedTime&) = delete;
  ~SharedSimulatedTime() { munmap(ps_, sizeof(std::atomic<uint64_t>)); }
  std::atomic<uint64_t>* ps() { return ps_; }
  double us() const { return static_cast<double>(ps_->load(std::memory_order_relaxed)) * 1e-6; }

 private:
  std::atomic<uint64_t>* ps_ = nullptr;
};

}  // namespace

SchemeRun run_scheme_in_child(const Scenario& scenario, const std::string& scheme,
                              const std::shared_ptr<const fw::MoeLayerSpec>& layer, bool with_timeline,
                              const Observability& observe, const std::function<void(double simulated_us)>& on_progress) {
  ResolvedLayer resolved = resolve_layer(scenario, layer);
  std::optional<SchemeJob> job;
  try {
    job = plan_scheme(scenario, scheme, std::move(resolved));
  } catch (const std::exception& e) {  // as the scheme's process reports a failed run
    return failed_run(scheme, e.what());
  }
  return run_scheme_in_child(*job, with_timeline, observe, on_progress);
}

SchemeRun run_scheme_in_child(const SchemeJob& job, bool with_timeline, const Observability& observe,
                              const std::function<void(double simulated_us)>& on_progress) {
  std::optional<SharedSimulatedTime> simulated;
  if (on_progress) simulated.emplace();
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork_child();
  if (pid == 0) {
    close(fds[0]);
    run_as_child(fds[1], job, with_timeline, observe, simulated ? simulated->ps() : nullptr);
  }
  close(fds[1]);
  std::function<void()> report_progress;
  if (simulated) {
    report_progress = [&] { on_progress(simulated->us()); };
    report_progress();
  }
  const std::string bytes = read_all(fds[0], report_progress);
  if (simulated) report_progress();
  return result_of_child(pid, bytes, job.scheme);
}

}  // namespace nvsvp::platform
