#include "process_guard.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness::process {

void ignore_sigpipe_once() {
  static const bool done = [] {
    struct sigaction current {};
    sigaction(SIGPIPE, nullptr, &current);
    if (current.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    std::string text = "exited with status " + std::to_string(code);
    // The shell that ran the command reports a command killed by signal N as 128+N.
    const char* name = code > 128 && code < 128 + 32 ? sigabbrev_np(code - 128) : nullptr;
    if (name != nullptr) text += std::string(" (a command killed by SIG") + name + ", as the shell reports it)";
    return text;
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "stopped (status " + std::to_string(status) + ")";
}

int lifeline() {
  static const int read_end = [] {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -1;
    return ends[0];  // the write end, ends[1], stays open in this process only
  }();
  return read_end;
}

namespace {

// Appends the decimal digits of `value` at `out` (async-signal-safe); returns the end.
char* append_decimal(char* out, long value) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  while (count > 0) *out++ = digits[--count];
  return out;
}

// SIGKILLs the children of this process that /proc lists; false if none is
// listed (or the list cannot be read). Raw syscalls only: async-signal-safe.
bool kill_listed_children() {
  char path[64] = "/proc/self/task/";
  char* end = append_decimal(path + 16, getpid());  // single-threaded: the one task is the process
  const char kChildren[] = "/children";
  for (const char c : kChildren) *end++ = c;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool any = false;
  long pid = -1;
  char buf[4096];
  for (ssize_t got; (got = read(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t i = 0; i < got; ++i) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        pid = (pid < 0 ? 0 : pid * 10) + (buf[i] - '0');
      } else if (pid > 0) {
        kill(static_cast<pid_t>(pid), SIGKILL);
        any = true;
        pid = -1;
      }
    }
  }
  if (pid > 0) {
    kill(static_cast<pid_t>(pid), SIGKILL);
    any = true;
  }
  close(fd);
  return any;
}

// Kills and reaps every descendant of the guard: it is a child subreaper, so
// whatever a killed process leaves (in its group, or in a session of its own
// after setsid) becomes the guard's child and is killed in a later round.
// Returns the implementation's status if it was reaped here.
std::optional<int> kill_descendants(pid_t implementation) {
  std::optional<int> reaped;
  kill(-getpgrp(), SIGCONT);  // stopped processes die at once; SIGKILL follows for every one listed
  while (true) {
    if (!kill_listed_children()) kill(implementation, SIGKILL);  // no /proc: the implementation at least
    int status = 0;
    const pid_t done = waitpid(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      return reaped;  // ECHILD: none left
    }
    if (done == implementation) reaped = status;
  }
}

// Ends the guard the way the implementation ended (the harness reads its status).
[[noreturn]] void end_like(int status) {
  if (WIFSIGNALED(status)) {
    // The same signal, without a core file, so the harness reads the same status.
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(WTERMSIG(status), SIG_DFL);
    sigset_t unblocked;
    sigemptyset(&unblocked);
    sigaddset(&unblocked, WTERMSIG(status));
    sigprocmask(SIG_UNBLOCK, &unblocked, nullptr);
    kill(getpid(), WTERMSIG(status));
    _exit(128 + WTERMSIG(status));
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

}  // namespace

// No process an implementation starts outlives its guard, whatever session it moved to.
[[noreturn]] void guard(pid_t child) {
  constexpr int kLifeline = 3;
  constexpr int kControl = 4;
  const int child_fd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  while (true) {
    pollfd watched[3] = {{kLifeline, POLLIN, 0}, {kControl, POLLIN, 0}, {child_fd, POLLIN, 0}};
    // Without pidfds (kernels before 5.3), the child's end is polled for.
    const int ready = poll(watched, child_fd >= 0 ? 3 : 2, child_fd >= 0 ? -1 : 20);
    if (ready > 0 && (watched[0].revents != 0 || watched[1].revents != 0)) {
      kill(child, SIGKILL);
      end_like(kill_descendants(child).value_or(SIGKILL));
    }
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) {
      kill_descendants(child);
      end_like(status);
    }
  }
}

namespace {

// /proc/PID/stat's state and CPU ticks (utime + stime); false if it is gone.
bool read_stat(long pid, char& state, long long& ticks) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t got = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (got <= 0) return false;
  buf[got] = '\0';
  const char* after_name = std::strrchr(buf, ')');  // the command's name may hold spaces and parentheses
  if (after_name == nullptr) return false;
  unsigned long utime = 0, stime = 0;
  // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
  if (std::sscanf(after_name + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &state, &utime, &stime) != 3)
    return false;
  ticks = static_cast<long long>(utime + stime);
  return true;
}

// The CPU ticks of `root` and its descendants, and whether one of them runs (R) or waits on I/O (D).
std::pair<long long, bool> activity(pid_t root) {
  long long ticks = 0;
  bool busy = false;
  std::vector<long> pending{root};
  for (std::size_t seen = 0; !pending.empty() && seen < 4096; ++seen) {
    const long pid = pending.back();
    pending.pop_back();
    char state = '?';
    long long own = 0;
    if (!read_stat(pid, state, own)) continue;
    ticks += own;
    if (pid != root && (state == 'R' || state == 'D')) busy = true;
    char path[96];
    std::snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", pid, pid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    const ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0) continue;
    buf[got] = '\0';
    for (char* at = buf; *at != '\0';) {
      char* end = nullptr;
      const long child = std::strtol(at, &end, 10);
      if (end == at) break;
      pending.push_back(child);
      at = end;
    }
  }
  return {ticks, busy};
}

}  // namespace

bool IdleWatch::idle() {
  const auto [ticks, busy] = activity(guard_);
  if (busy || ticks != ticks_) {
    ticks_ = busy ? -1 : ticks;
    since_ = Clock::now();
    return false;
  }
  return seconds_since(since_) >= kIdleSeconds;
}

double IdleWatch::idle_seconds() const { return ticks_ < 0 ? 0 : seconds_since(since_); }

namespace {
std::atomic<bool> stop_flag{false};
// Made before main runs: a signal handler may need it before anything else did.
const std::array<int, 2> stop_pipe = [] {
  int ends[2] = {-1, -1};
  if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) return std::array<int, 2>{-1, -1};
  return std::array<int, 2>{ends[0], ends[1]};
}();
}  // namespace

void request_stop() noexcept {
  stop_flag.store(true);
  if (stop_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t wrote = write(stop_pipe[1], &byte, 1);
  }
}

bool stop_requested() noexcept { return stop_flag.load(); }

int stop_fd() { return stop_pipe[0]; }

std::optional<int> reap_guard(pid_t guard_pid, bool wait) {
  int status = 0;
  pid_t done;
  do {
    done = waitpid(guard_pid, &status, wait ? 0 : WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done != guard_pid) return std::nullopt;
  kill(-guard_pid, SIGKILL);  // its group outlives it only when it was killed: then no one else ends it
  return status;
}

std::vector<std::string> child_environment() {
  std::vector<std::string> variables;
  const std::string offer = std::string(kAnswerEncodingVariable) + "=";
  const std::string specs = std::string(kSpecsVariable) + "=";
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string_view each(*variable);
    if (each.rfind(offer, 0) != 0 && each.rfind(specs, 0) != 0) variables.emplace_back(each);
  }
  variables.push_back(offer + std::string(kInt32le));
  variables.push_back(specs + dump_line(descriptions_json()));
  return variables;
}

}  // namespace chunkmeta::harness::process
