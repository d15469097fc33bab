// The progress line of long work (`run`, `study`, `anchors`), private to platform/: one line on
// stderr, redrawn in place with '\r' and erased when the work ends, so that the console output
// around it stays as it would be without it. Off unless asked for (the command asks when stderr is
// a terminal and there is no --quiet); a disabled line writes nothing.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { clear(); }

  bool enabled() const { return enabled_; }

  // Replaces the line by `text` (a line no longer than the previous one is padded over it).
  void show(const std::string& text) {
    if (!enabled_ || text == shown_) return;
    const size_t pad = shown_.size() > text.size() ? shown_.size() - text.size() : 0;
    std::fprintf(stderr, "\r%s%s", text.c_str(), std::string(pad, ' ').c_str());
    std::fflush(stderr);
    shown_ = text;
  }

  // Erases the line, before other output or at the end.
  void clear() {
    if (!enabled_ || shown_.empty()) return;
    std::fprintf(stderr, "\r%s\r", std::string(shown_.size(), ' ').c_str());
    std::fflush(stderr);
    shown_.clear();
  }

 private:
  bool enabled_;
  std::string shown_;
};

// "points 3/10, elapsed 12 s, ~28 s left": the time left assumes the points still to run take
// as long on average as those done (none done: no estimate).
inline std::string progress_of_points(const char* noun, size_t done, size_t total,
                                      std::chrono::steady_clock::time_point start) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string text = std::string(noun) + " " + std::to_string(done) + "/" + std::to_string(total) + ", elapsed " +
                     fixed(elapsed, 0) + " s";
  if (done > 0 && done < total) {
    text += ", ~" + fixed(elapsed / static_cast<double>(done) * static_cast<double>(total - done), 0) + " s left";
  }
  return text;
}

}  // namespace nvsvp::platform
