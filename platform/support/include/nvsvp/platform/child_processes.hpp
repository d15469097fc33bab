// The child processes a run, a study or the anchors start, stopped with their parent: every child
// is started and reaped through here, and on SIGINT or SIGTERM the parent sends the same signal to
// each child it has, reaps them, and ends by that signal itself (shell status 130 or 143).
#pragma once

#include <spawn.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace nvsvp::platform {

// Installs the SIGINT and SIGTERM handlers (the `nvsvp` command does, first thing). A signal that
// was ignored when the process started (nohup, a background job of a script) stays ignored.
void stop_children_on_signals();

// fork() for a child that this process stops with itself. In the child the handlers are the
// defaults again and no children are known; throws std::runtime_error when fork fails.
pid_t fork_child();

// posix_spawn() of `path` with `argv` (null-terminated) and `actions`, the child stopped with this
// process like fork_child's. Returns the pid, or 0 with `error` set.
pid_t spawn_child(const std::string& path, const posix_spawn_file_actions_t* actions, char* const argv[],
                  std::string& error);

// Waits for any child to end, reaps it and returns its pid and wait status, retrying when a
// signal interrupts the wait; throws std::runtime_error if there is none or waiting fails.
pid_t wait_for_any_child(int& status);
// The same, calling `while_waiting` about every quarter second until a child ends (to redraw a
// progress line); without it, as above.
pid_t wait_for_any_child(int& status, const std::function<void()>& while_waiting);

// Waits for the child `pid` to end and reaps it, with its resource usage.
void wait_for_child(pid_t pid, int& status, rusage& usage);

// `word` as a POSIX shell reads it back: as it is when it holds only plain characters, else in
// single quotes (for the command lines nvsvp records and emits).
std::string shell_word(const std::string& word);

}  // namespace nvsvp::platform
