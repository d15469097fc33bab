// Waiting for the child processes of a run (study points, anchor cases), private to platform/.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

namespace nvsvp::platform {

// Waits for any child to end and returns its pid and wait status, retrying when a signal
// interrupts the wait; throws std::runtime_error if there is none to wait for or waiting fails.
inline pid_t wait_for_any_child(int& status) {
  for (;;) {
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid >= 0) return pid;
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
}

// The same, calling `while_waiting` about every quarter second until a child ends (to redraw a
// progress line); without it, as above.
inline pid_t wait_for_any_child(int& status, const std::function<void()>& while_waiting) {
  if (!while_waiting) return wait_for_any_child(status);
  for (;;) {
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) return pid;
    if (pid < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    while_waiting();
    usleep(250000);
  }
}

}  // namespace nvsvp::platform
