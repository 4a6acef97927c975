#include "process_guard.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>

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
