// The process side of running a program under test: the guard forked
// between the harness and each implementation (a child subreaper that kills
// everything the implementation starts), the lifeline that ends every guard
// when the harness ends however it ends, and the little a child and its
// harness share (its environment, how an exit status reads).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace chunkmeta::harness::process {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A write to a process that has died must be an error we handle, not a
// SIGPIPE that ends the harness.
void ignore_sigpipe_once();

// "exited with status 3", "killed by signal 9 (SIGKILL)".
std::string describe_status(int status);

// The last `limit` bytes of everything appended, cut at a line start.
class Tail {
 public:
  explicit Tail(std::size_t limit) : limit_(limit) {}
  void append(const char* data, std::size_t size) {
    text_.append(data, size);
    if (text_.size() > 2 * limit_) text_.erase(0, text_.size() - limit_);
  }
  std::string text() const {
    std::string t = text_.size() > limit_ ? text_.substr(text_.size() - limit_) : text_;
    if (text_.size() > limit_) {
      const auto nl = t.find('\n');
      t = "..." + (nl == std::string::npos ? t : t.substr(nl + 1));
    }
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    return t;
  }
  void clear() { text_.clear(); }

 private:
  std::size_t limit_;
  std::string text_;
};

// The read end of a pipe whose write end only this process holds (close-on-
// exec, never closed): when this process ends, however it ends (a SIGKILL from
// a CI runner's time limit included), every guard sees end-of-file on it and
// kills the implementation it guards. -1 if the pipe could not be made.
int lifeline();

// Runs in the forked guard, the process group's leader and a child subreaper:
// waits for the implementation (`child`), kills every descendant it left, then
// ends the way the implementation ended. When the harness is gone (end-of-file
// on the lifeline, fd 3) or asks it to stop (end-of-file on its control pipe,
// fd 4), it kills the implementation and every descendant first. Only
// async-signal-safe calls: the harness forks it with threads running.
[[noreturn]] void guard(pid_t child);

// Whether a program is at work: the CPU time of the guard's descendants
// (/proc), and whether any of them is running or in uninterruptible I/O.
// A program that uses no CPU and runs nothing while its answer is due is
// stuck (a sleep, a read of more input after an unflushed answer), not slow:
// the doors say so after kIdleSeconds rather than wait out a timeout.
inline constexpr double kIdleSeconds = 2.0;
class IdleWatch {
 public:
  explicit IdleWatch(pid_t guard) : guard_(guard) {}
  // Called as a wait goes on; true once the program has been idle for kIdleSeconds.
  bool idle();
  // Something arrived from it, or was sent: it is at work.
  void reset() { ticks_ = -1; }
  double idle_seconds() const;

 private:
  pid_t guard_;
  long long ticks_ = -1;  // CPU ticks when it was last seen idle, -1: not idle
  Clock::time_point since_{};
};

// A stop asked of every wait on a program (Ctrl-C, SIGTERM): the doors'
// waits watch stop_fd() and end at once, answering what is left with the
// reference (no finding; the run loop sees its own stop_requested and reports
// "interrupted"). request_stop() is async-signal-safe: a signal handler calls it.
void request_stop() noexcept;
bool stop_requested() noexcept;
int stop_fd();  // readable once request_stop() was called (-1 if the pipe could not be made)

// Reaps a guard (waitpid) and kills whatever is left in its process group:
// a guard killed from inside (`kill -9 $PPID` in the command) could not end
// the processes it guarded, and nothing may outlive the run. Returns the
// guard's status; `wait` false: only if it has ended (nullopt otherwise).
std::optional<int> reap_guard(pid_t guard, bool wait);

// The environment of every program started: ours, offering the binary answer
// and describing every spec (so a program that serves any spec, like the
// Python adapter, calls its function as the request's spec says).
std::vector<std::string> child_environment();

}  // namespace chunkmeta::harness::process
