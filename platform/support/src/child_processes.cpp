// Children stopped with their parent (child_processes.hpp). The pids live in a fixed table of
// atomics that the signal handler can read; a child is entered and removed with SIGINT and SIGTERM
// blocked, so that the handler never misses a child nor signals a pid that was already reaped
// (and may have been reused).
#include "nvsvp/platform/child_processes.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace nvsvp::platform {

namespace {

// More than a study's --jobs limit (1024): a child beyond it would not be stopped.
constexpr int kMaxChildren = 2048;
std::atomic<pid_t> children[kMaxChildren];
static_assert(std::atomic<pid_t>::is_always_lock_free, "the signal handler reads the table");

constexpr int kStopSignals[] = {SIGINT, SIGTERM};
// Which stop signals this process handles (those not ignored at start-up).
std::atomic<bool> handled[NSIG];

// How long the handler lets the children end after the signal before it kills them outright:
// `nvsvp run` children stop their own children first, which takes milliseconds.
constexpr int kGraceMilliseconds = 5000;

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : kStopSignals) sigaddset(&set, signal);
  return set;
}

// Blocks SIGINT and SIGTERM for its lifetime.
class StopSignalsBlocked {
 public:
  StopSignalsBlocked() {
    const sigset_t set = stop_signal_set();
    pthread_sigmask(SIG_BLOCK, &set, &previous_);
  }
  ~StopSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  StopSignalsBlocked(const StopSignalsBlocked&) = delete;
  StopSignalsBlocked& operator=(const StopSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

void add_child(pid_t pid) {
  for (std::atomic<pid_t>& slot : children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void remove_child(pid_t pid) {
  for (std::atomic<pid_t>& slot : children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

// Reaps every child in the table that has ended; true when none is left.
bool reap_ended_children() {
  bool all_gone = true;
  for (std::atomic<pid_t>& slot : children) {
    const pid_t pid = slot.load();
    if (pid == 0) continue;
    const pid_t r = waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) slot.store(0);
    else all_gone = false;
  }
  return all_gone;
}

// Async-signal-safe throughout: kill, waitpid, nanosleep, sigaction, sigprocmask, raise.
void stop_children_and_exit(int signal) {
  const int saved_errno = errno;
  const char* const message = signal == SIGINT ? "nvsvp: SIGINT: stopping the child processes\n"
                                               : "nvsvp: SIGTERM: stopping the child processes\n";
  [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, message, std::strlen(message));
  for (std::atomic<pid_t>& slot : children) {
    if (const pid_t pid = slot.load(); pid > 0) kill(pid, signal);
  }
  const timespec pause{0, 10 * 1000 * 1000};
  for (int waited = 0; !reap_ended_children() && waited < kGraceMilliseconds; waited += 10) nanosleep(&pause, nullptr);
  for (std::atomic<pid_t>& slot : children) {
    if (const pid_t pid = slot.load(); pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      slot.store(0);
    }
  }
  // End by the same signal, as the default action would have: a calling shell sees 128 + signal.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(signal, &default_action, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(signal);
  errno = saved_errno;  // not reached
}

// In a new child: the defaults again, and no children of its own yet.
void forget_parent_state() {
  for (int signal : kStopSignals) {
    if (!handled[signal].load()) continue;
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(signal, &default_action, nullptr);
  }
  for (std::atomic<pid_t>& slot : children) slot.store(0);
}

}  // namespace

void stop_children_on_signals() {
  for (int signal : kStopSignals) {
    struct sigaction current {};
    sigaction(signal, nullptr, &current);
    if (current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = stop_children_and_exit;
    action.sa_mask = stop_signal_set();  // one stop at a time
    sigaction(signal, &action, nullptr);
    handled[signal].store(true);
  }
}

pid_t fork_child() {
  const StopSignalsBlocked blocked;
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) forget_parent_state();  // the mask is restored when `blocked` ends
  else add_child(pid);
  return pid;
}

pid_t spawn_child(const std::string& path, const posix_spawn_file_actions_t* actions, char* const argv[],
                  std::string& error) {
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The child starts with the signals unblocked and, for those this process handles, the defaults.
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int signal : kStopSignals) {
    if (handled[signal].load()) sigaddset(&defaults, signal);
  }
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int status = 0;
  {
    const StopSignalsBlocked blocked;
    status = posix_spawn(&pid, path.c_str(), actions, &attributes, argv, environ);
    if (status == 0) add_child(pid);
  }
  posix_spawnattr_destroy(&attributes);
  if (status != 0) {
    error = "could not start " + path + ": " + std::strerror(status);
    return 0;
  }
  return pid;
}

pid_t wait_for_any_child(int& status) {
  for (;;) {
    // Which child ended, without reaping it yet: it stays in the table until it is reaped.
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitid: ") + std::strerror(errno));
    }
    const pid_t pid = info.si_pid;
    const StopSignalsBlocked blocked;
    if (waitpid(pid, &status, 0) != pid) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    remove_child(pid);
    return pid;
  }
}

pid_t wait_for_any_child(int& status, const std::function<void()>& while_waiting) {
  if (!while_waiting) return wait_for_any_child(status);
  for (;;) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOWAIT | WNOHANG) != 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitid: ") + std::strerror(errno));
    }
    if (info.si_pid != 0) return wait_for_any_child(status);  // one has ended: reap it
    while_waiting();
    const timespec pause{0, 250 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
}

void wait_for_child(pid_t pid, int& status, rusage& usage) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  const StopSignalsBlocked blocked;
  wait4(pid, &status, 0, &usage);
  remove_child(pid);
}

std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_-+=./:,@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace nvsvp::platform
