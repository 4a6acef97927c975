#include "chunkmeta/harness/subprocess.hpp"

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
#include <deque>
#include <optional>
#include <utility>

#include "chunkmeta/harness/answer_stream.hpp"
#include "chunkmeta/harness/call_budget.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A write to a process that has died must be an error we handle, not a
// SIGPIPE that ends the harness.
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
int lifeline() {
  static const int read_end = [] {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -1;
    return ends[0];  // the write end, ends[1], stays open in this process only
  }();
  return read_end;
}

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

// Runs in the forked guard, the process group's leader and a child subreaper:
// waits for the implementation (`child`), kills every descendant it left, then
// ends the way the implementation ended. When the harness is gone (end-of-file
// on the lifeline, fd 3) or asks it to stop (end-of-file on its control pipe,
// fd 4), it kills the implementation and every descendant first. No process an
// implementation starts outlives its guard, whatever session it moved to.
// Only async-signal-safe calls: the harness forked it with threads running.
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

// The environment of every program started: ours, offering the binary answer
// and describing every spec (so a program that serves any spec, like the
// Python adapter, calls its function as the request's spec says).
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

}  // namespace

struct Subprocess::State {
  SubprocessOptions options;
  const Spec* spec = nullptr;  // what the program is asked to compute
  SubprocessStats stats;
  pid_t pid = -1;
  int to_child = -1;    // its stdin
  int from_child = -1;  // its stdout
  int errors = -1;      // its stderr
  int control = -1;     // its guard's control pipe (Child::control)
  std::optional<AnswerDecoder> decoder;  // its stdout, as answers (answer_stream.hpp)
  Tail stderr_tail{4096};
  std::uint64_t next_id = 0;  // ids are unique over the life of the harness
  CallBudget budget;  // how long a workload may take before it counts as a hang (call_budget.hpp)
  // The first answer of a process that was not warmed up includes its
  // start-up (Python + torch: seconds), which is not a hang: it gets the whole timeout.
  bool awaiting_first_answer = false;

  double timeout(double units) const { return awaiting_first_answer ? options.timeout_seconds : budget.limit(units); }
  double units_of(const Workload& workload) const { return CallBudget::units_of(*spec, workload); }
  std::size_t answer_limit(double units) const {
    return options.answer_allowance_bytes + static_cast<std::size_t>(units) * options.answer_bytes_per_unit;
  }
  void answered(const Workload& workload, double seconds) {
    if (!awaiting_first_answer) budget.measured(units_of(workload), seconds);
  }
  std::optional<std::string> start_error;

  bool running() const { return pid > 0; }

  // A started child's ends of the pipes.
  struct Child {
    pid_t pid = -1;
    int to_child = -1;
    int from_child = -1;
    int errors = -1;
    int control = -1;  // closing it asks the guard to kill everything it guards
  };

  std::optional<Child> spawn() {
    ignore_sigpipe_once();
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
      start_error = std::string("cannot create pipes: ") + std::strerror(errno);
      return std::nullopt;
    }
    // Built before fork: the child only calls async-signal-safe functions.
    static const std::vector<std::string> environment = child_environment();
    std::vector<char*> envp;
    for (const auto& variable : environment) envp.push_back(const_cast<char*>(variable.c_str()));
    envp.push_back(nullptr);
    const int life = lifeline();
    int control[2];
    if (pipe2(control, O_CLOEXEC) != 0) {
      start_error = std::string("cannot create pipes: ") + std::strerror(errno);
      for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
      return std::nullopt;
    }
    const pid_t child = fork();
    if (child < 0) {
      start_error = std::string("cannot fork: ") + std::strerror(errno);
      for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], control[0], control[1]}) close(fd);
      return std::nullopt;
    }
    if (child == 0) {
      // The guard: leader of a group of its own (a kill reaches whatever the
      // shell starts), holding nothing but the lifeline: every other inherited
      // descriptor is closed, so no other implementation's pipe stays open here.
      setpgid(0, 0);
      prctl(PR_SET_CHILD_SUBREAPER, 1);
      dup2(in[0], STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      dup2(life >= 0 ? life : control[0], 3);  // without a lifeline, the control pipe serves for both
      dup2(control[0], 4);
      syscall(SYS_close_range, 5, ~0U, 0);
      const pid_t implementation = fork();
      if (implementation == 0) {
        close(3);
        close(4);
        execle("/bin/sh", "sh", "-c", options.command.c_str(), static_cast<char*>(nullptr), envp.data());
        _exit(127);
      }
      for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) close(fd);
      if (implementation < 0) _exit(127);
      guard(implementation);
    }
    setpgid(child, child);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    close(control[0]);
    Child started{child, in[1], out[0], err[0], control[1]};
    for (int fd : {started.to_child, started.from_child, started.errors}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    // Room for many answers in the pipe, so the child rarely waits while we decode
    // (best effort: the system may refuse the size).
    for (int fd : {started.to_child, started.from_child}) fcntl(fd, F_SETPIPE_SZ, 1 << 20);
    return started;
  }

  // Asks the guard to kill everything it guards (end-of-file on its control
  // pipe) and reaps it; returns its status. The guard ends the implementation
  // the way it ended: a status as if the implementation were killed directly.
  // A guard that has not ended within seconds (a descendant stuck in the
  // kernel) is killed with its process group.
  static int end_guard(pid_t guard_pid, int& control) {
    if (control >= 0) close(control);
    control = -1;
    int status = 0;
    for (int i = 0; i < 500; ++i) {
      if (waitpid(guard_pid, &status, WNOHANG) == guard_pid) return status;
      usleep(i < 50 ? 200 : 10000);
    }
    kill(-guard_pid, SIGKILL);
    waitpid(guard_pid, &status, 0);
    return status;
  }

  // Once a process has been killed or has died, the next one is started ahead
  // of need and sent a warm-up (one row without tokens, so the function's own
  // first call, with its lazy set-up, is paid too): an interpreter's
  // start-up (Python + torch: 1-2 s) is then paid while the current process
  // works, not at every step of shrinking a crash or a hang. Two are kept, as
  // a shrink of a hang kills a process about as often as one starts.
  static constexpr std::size_t kSpares = 2;
  std::deque<Child> spares;

  // The warm-up: two lines of one row without tokens. The first absorbs the
  // start-up; the second's answer, timed from the first's, says what a small
  // workload costs the process once started.
  Workload warm_up_workload() const { return spec->warm_up_workload(); }
  static constexpr std::size_t kWarmUpAnswerBytes = 4096;  // far more than either answer takes

  // Sends the warm-up lines to a new process (best effort: a pipe of a fresh
  // process has room for two short lines).
  void send_warm_up(const Child& child) {
    std::string lines = encode(warm_up_workload(), next_id++);
    lines += encode(warm_up_workload(), next_id++);
    if (write(child.to_child, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) return;
  }

  // Waits for a new process's answers to its warm-up (at most the timeout, and
  // at least 30 s: start-up is not what the timeout is for), takes the second
  // one's time, and drops them. False if they never came.
  bool warmed_up(Child& child) {
    std::string got;
    const auto deadline = Clock::now() + std::chrono::duration<double>(std::max(options.timeout_seconds, 30.0));
    const auto frames = [&got] {
      const std::size_t first = first_frame(got, 0).end;
      return first == 0 ? 0 : first_frame(std::string_view(got).substr(first), 0).end == 0 ? 1 : 2;
    };
    std::optional<Clock::time_point> first_answer;
    while (frames() < 2) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      // Its stderr is read too: a program that writes more than a pipe holds
      // there before answering would otherwise wait on us until the deadline.
      pollfd p[2] = {{child.from_child, POLLIN, 0}, {child.errors, POLLIN, 0}};
      const int ready = poll(p, child.errors >= 0 ? 2 : 1, static_cast<int>(left));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
      char buf[1 << 16];
      if (p[1].revents != 0) {
        const ssize_t n = read(child.errors, buf, sizeof buf);
        if (n > 0) stderr_tail.append(buf, static_cast<std::size_t>(n));
        if (n == 0) {
          close(child.errors);
          child.errors = -1;
        }
      }
      if (p[0].revents == 0) continue;
      const ssize_t n = read(child.from_child, buf, sizeof buf);
      if (n == 0) return false;
      if (n > 0) got.append(buf, static_cast<std::size_t>(n));
      if (got.size() > 2 * kWarmUpAnswerBytes) return false;  // not the two short answers it was asked for
      if (!first_answer && frames() >= 1) first_answer = Clock::now();
    }
    const double second = first_answer ? seconds_since(*first_answer) : 0;
    budget.measured(units_of(warm_up_workload()), second);
    // Anything after the warm-up's answers belongs to no request: the stream is then not trusted.
    const std::size_t first = first_frame(got, 0).end;
    return first + first_frame(std::string_view(got).substr(first), 0).end == got.size();
  }

  void discard(Child& child) {
    end_guard(child.pid, child.control);
    for (int fd : {child.to_child, child.from_child, child.errors}) close(fd);
  }

  // Every process takes its first workload only once warm, so its start-up
  // (an interpreter, torch: seconds, more on a loaded machine) never counts
  // against a workload as a hang. One that does not answer the warm-up is
  // started again without it, its first answer then getting the whole timeout.
  void start() {
    const bool restart = stats.starts > 0;
    std::optional<Child> child;
    if (!spares.empty()) {
      child = spares.front();
      spares.pop_front();
    } else {
      child = spawn();
      if (child) send_warm_up(*child);
    }
    bool warm = false;
    stderr_tail.clear();  // what this process writes to stderr from its start on is its evidence
    if (child) {
      warm = warmed_up(*child);
      if (!warm) {
        discard(*child);
        child = spawn();
      }
    }
    if (!child) return;
    pid = child->pid;
    to_child = child->to_child;
    from_child = child->from_child;
    errors = child->errors;
    control = child->control;
    awaiting_first_answer = !warm;
    decoder->reset();
    start_error.reset();
    ++stats.starts;
    while (restart && spares.size() < kSpares) {
      if (!start_spare()) break;
    }
  }

  // A process started ahead of need, sent its warm-up; false if it could not start.
  bool start_spare() {
    auto spare = spawn();
    if (!spare) return false;
    send_warm_up(*spare);
    spares.push_back(*spare);
    return true;
  }

  void kill_spares() {
    for (auto& spare : spares) discard(spare);
    spares.clear();
  }

  void close_fds() {
    for (int* fd : {&to_child, &from_child, &errors, &control}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }

  // Ends the process (and everything it started) and returns how it ended.
  std::string stop(bool politely) {
    if (!running()) return "was not running";
    int status = 0;
    bool reaped = false;
    if (politely) {
      // EOF on stdin asks a well-behaved program to finish.
      if (to_child >= 0) close(to_child);
      to_child = -1;
      for (int i = 0; i < 50 && !reaped; ++i) {
        reaped = waitpid(pid, &status, WNOHANG) == pid;
        if (!reaped) usleep(10000);
      }
    }
    if (!reaped) status = end_guard(pid, control);
    pid = -1;
    close_fds();
    return describe_status(status);
  }

  // The child closed stdout or died: collect its stderr and status.
  std::string ended() {
    if (!running()) return "was not running";  // never waitpid(pid) with pid -1
    drain_stderr(200);
    int status = 0;
    // It may still be alive with stdout closed; give it a moment, then kill.
    // (Its guard reaps what it left behind before it ends.)
    bool reaped = false;
    for (int i = 0; i < 20 && !reaped; ++i) {
      reaped = waitpid(pid, &status, WNOHANG) == pid;
      if (!reaped) usleep(5000);
    }
    if (!reaped) {
      end_guard(pid, control);
      pid = -1;
      close_fds();
      return "closed its output without answering (and was killed)";
    }
    pid = -1;
    close_fds();
    return describe_status(status);
  }

  void drain_stderr(int wait_ms) {
    if (errors < 0) return;
    char buf[4096];
    const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
    while (true) {
      const ssize_t got = read(errors, buf, sizeof buf);
      if (got > 0) {
        stderr_tail.append(buf, static_cast<std::size_t>(got));
        continue;
      }
      if (got == 0) return;  // EOF
      if (errno != EAGAIN && errno != EWOULDBLOCK) return;
      const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
      if (left <= 0) return;
      pollfd p{errors, POLLIN, 0};
      poll(&p, 1, left);
    }
  }

  std::string evidence() const {
    const std::string tail = stderr_tail.text();
    std::string text = "command: " + options.command;
    if (!tail.empty()) text += "\nstderr (last lines):\n" + tail;
    return text;
  }

  Misbehaviour misbehaviour(FindingKind kind, std::string summary, std::string extra = {}) const {
    return with_evidence(Misbehaviour{kind, std::move(summary), std::move(extra)});
  }

  // After a timeout with every line sent whole: stuck, or did it skip the line?
  // A probe (the empty batch) answered first and promptly means it skipped. Not
  // for a program known not to echo ids: its late answer could pass for the probe's.
  bool answers_probe(double wait_seconds) {
    if (decoder->ids_absent() || to_child < 0 || from_child < 0) return false;
    const std::uint64_t probe_id = next_id++;
    const std::string line = encode(Workload{}, probe_id);
    std::string pending = decoder->pending();  // the process is ended after the probe, whatever it says
    const auto deadline = Clock::now() + std::chrono::duration<double>(wait_seconds);
    const auto ms_left = [&] {
      return std::max(0, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
    };
    for (std::size_t written = 0; written < line.size();) {
      pollfd p{to_child, POLLOUT, 0};
      if (poll(&p, 1, ms_left()) <= 0 || (p.revents & (POLLERR | POLLHUP))) return false;
      const ssize_t wrote = write(to_child, line.data() + written, line.size() - written);
      if (wrote < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
      if (wrote > 0) written += static_cast<std::size_t>(wrote);
    }
    while (ms_left() > 0) {
      pollfd p{from_child, POLLIN, 0};
      if (poll(&p, 1, ms_left()) <= 0) return false;
      char buf[1 << 16];
      const ssize_t got = read(from_child, buf, sizeof buf);
      if (got == 0) return false;
      if (got < 0) continue;
      pending.append(buf, static_cast<std::size_t>(got));
      if (const Frame frame = first_frame(pending); frame.end != 0) {
        const std::string_view text(pending);
        const auto answer = frame.binary ? parse_int32le_answer(*spec, text.substr(0, frame.newline),
                                                                text.substr(frame.newline + 1, frame.end - frame.newline - 1))
                                         : parse_result_line(*spec, text.substr(0, frame.newline));
        // Any other answer first: the due answer came late (slow, not skipping).
        return answer && answer->id == probe_id;
      }
    }
    return false;
  }

  // Output waiting when no answer is due, read without waiting: after a
  // batch's last answer (a repeated answer is usually written with it), or
  // before a batch is sent (read late). It answers nothing asked.
  std::optional<Misbehaviour> unasked_output(bool after_last_answer) {
    char buf[1 << 16];
    while (decoder->pending().size() <= options.answer_allowance_bytes) {
      const ssize_t got = read(from_child, buf, sizeof buf);
      if (got <= 0) break;  // nothing more now, or closed (the next read finds out how it ended)
      decoder->hold(std::string_view(buf, static_cast<std::size_t>(got)));
    }
    if (!decoder->holds_unasked_output()) return std::nullopt;
    return Misbehaviour{FindingKind::malformed_output,
                        after_last_answer ? "printed more after its answer to this workload, the last it was sent "
                                            "(an extra or repeated line)"
                                          : "printed output after its last answer, before it was sent this workload "
                                            "(an extra or repeated line)",
                        "the output: " + shortened_line(decoder->pending())};
  }

  // `m` with this process's evidence (its command and the end of its stderr) after its own.
  Misbehaviour with_evidence(Misbehaviour m) const {
    m.detail = m.detail.empty() ? evidence() : m.detail + "\n" + evidence();
    return m;
  }

  std::string encode(const Workload& w, std::uint64_t id) const {
    return request_line(id, *spec, w) + '\n';
  }
};

Subprocess::Subprocess(SubprocessOptions options, const Spec& spec) : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  state_->spec = &spec;
  state_->decoder.emplace(spec);
  state_->budget = CallBudget(state_->options.timeout_seconds);
}

Subprocess::~Subprocess() {
  if (state_->running()) state_->stop(true);
  state_->kill_spares();
}

void Subprocess::start_in_background() {
  State& s = *state_;
  if (s.running() || !s.spares.empty()) return;
  s.start_spare();  // as after a crash: the first run() takes it and waits for its warm-up answer
}

void Subprocess::set_shrinking(bool shrinking) { state_->budget.set_shrinking(shrinking); }

Answer Subprocess::ask_again(const Workload& workload, double expired) {
  return state_->budget.confirming(expired, state_->units_of(workload),
                                   [&] { return std::move(run(std::span<const Workload>(&workload, 1)).front()); });
}

const SubprocessStats& Subprocess::stats() const noexcept { return state_->stats; }
const SubprocessOptions& Subprocess::options() const noexcept { return state_->options; }

std::vector<Answer> Subprocess::run(std::span<const Workload> workloads) {
  State& s = *state_;
  std::vector<Answer> answers;
  if (workloads.empty()) return answers;
  if (!s.running()) s.start();
  if (!s.running()) {
    answers.emplace_back(std::in_place_type<Misbehaviour>,
                         Misbehaviour{FindingKind::crashed, "could not be started: " + s.start_error.value_or("?"),
                                      "command: " + s.options.command});
    return answers;
  }
  answers.reserve(workloads.size());

  const std::uint64_t base = s.next_id;
  s.next_id += workloads.size();
  std::size_t sent = 0;          // lines fully or partly queued
  // Shrinking a hang, lines go one at a time: a timeout with several lines
  // waiting costs a restart and the same timeout again (see below), at each step.
  std::size_t window = s.budget.shrinking_a_hang() ? 1 : s.options.window;
  bool spare_asked = false;  // for this wait, once it is half over (see below)
  std::size_t timed_out_once = static_cast<std::size_t>(-1);  // the workload a restart below sent again
  std::string outbuf;            // bytes queued for its stdin
  std::size_t out_offset = 0;
  auto last_progress = Clock::now();
  bool stdin_open = true;
  // The work units of the oldest unanswered workload (for its time budget), and its index.
  std::size_t pending_units_of = static_cast<std::size_t>(-1);
  double pending_units = 1;

  // Ends the batch with a misbehaviour for the oldest unanswered workload.
  // A line after the last workload's answer leaves that answer untrusted: it
  // takes the blame, so the batch never holds more answers than workloads.
  const auto fail = [&](Misbehaviour m, bool kill_it) {
    if (kill_it && s.running()) s.stop(false);
    if (answers.size() == workloads.size()) {
      answers.back() = std::move(m);
    } else {
      answers.emplace_back(std::in_place_type<Misbehaviour>, std::move(m));
    }
    return answers;
  };
  s.decoder->begin_batch(base);
  if (auto early = s.unasked_output(false)) return fail(s.with_evidence(std::move(*early)), true);

  while (answers.size() < workloads.size()) {
    // Keep up to `window` lines in flight.
    if (stdin_open && out_offset == outbuf.size()) {
      const auto encode_start = Clock::now();
      outbuf.clear();
      out_offset = 0;
      while (sent < workloads.size() && sent - answers.size() < window && outbuf.size() < (1u << 20)) {
        outbuf += s.encode(workloads[sent], base + sent);
        ++sent;
      }
      s.stats.encode_seconds += seconds_since(encode_start);
    }
    if (!stdin_open && answers.size() == sent) {
      return fail(s.misbehaviour(FindingKind::crashed, "closed its input before it was sent this workload"), true);
    }
    pollfd fds[3] = {{s.from_child, POLLIN, 0}, {s.errors, POLLIN, 0}, {-1, POLLOUT, 0}};
    if (stdin_open && out_offset < outbuf.size()) fds[2].fd = s.to_child;
    if (pending_units_of != answers.size()) {
      pending_units_of = answers.size();
      pending_units = s.units_of(workloads[answers.size()]);
    }
    const double timeout = s.timeout(pending_units);
    const double left = timeout - seconds_since(last_progress);
    if (left <= 0 && sent - answers.size() > 1) {
      // Several lines were waiting: a program that buffers its answers (as the
      // Python adapter does, one write per read) may have answered the oldest
      // already and hang on a later one. Send them again one at a time to a
      // fresh process, so that the hang is blamed on the workload that hangs.
      s.budget.cut_short();
      timed_out_once = answers.size();
      s.stop(false);
      s.start();
      if (!s.running()) {
        return fail(Misbehaviour{FindingKind::crashed, "could not be restarted: " + s.start_error.value_or("?"),
                                 "command: " + s.options.command},
                    false);
      }
      window = 1;
      sent = answers.size();
      outbuf.clear();
      out_offset = 0;
      stdin_open = true;
      last_progress = Clock::now();
      continue;
    }
    if (left <= 0) {
      const std::string why(s.awaiting_first_answer ? "" : s.budget.why_adapted(pending_units));
      s.budget.cut_short();
      // (Not for a confirmation: the timeouts before it were probed already.)
      if (stdin_open && out_offset == outbuf.size() && !s.budget.confirmation_running() &&
          s.answers_probe(std::min(timeout / 2, 1.0))) {
        return fail(s.misbehaviour(FindingKind::missing_output,
                                   "gave no answer for this workload: it answered a probe sent after it at once, "
                                   "so it skipped the line rather than hung (killed)"),
                    true);
      }
      Misbehaviour hang = s.misbehaviour(FindingKind::timed_out,
                                         "gave no answer within " + std::to_string(timeout).substr(0, 5) + " s" + why +
                                             " (killed; it may be stuck, or waiting for input after skipping a line)");
      hang.limit_seconds = timeout;
      hang.asked_twice = answers.size() == timed_out_once;
      return fail(std::move(hang), true);
    }
    // A wait past half its limit may end in a kill: the process that would
    // replace this one starts now, so a restart finds it warm (or nearly).
    double wait = left;
    if (!spare_asked && s.spares.empty()) {
      if (left <= timeout / 2) {
        spare_asked = true;
        s.start_spare();
      } else {
        wait = left - timeout / 2;
      }
    }
    const auto wait_start = Clock::now();
    const int ready = poll(fds, 3, std::max(1, static_cast<int>(wait * 1000)));
    s.stats.wait_seconds += seconds_since(wait_start);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail(s.misbehaviour(FindingKind::crashed, std::string("poll failed: ") + std::strerror(errno)), true);
    }
    if (fds[1].revents != 0) {
      char buf[4096];
      const ssize_t got = read(s.errors, buf, sizeof buf);
      if (got > 0) s.stderr_tail.append(buf, static_cast<std::size_t>(got));
      if (got == 0) {
        close(s.errors);
        s.errors = -1;
      }
    }
    if (fds[2].revents & (POLLERR | POLLHUP)) {
      stdin_open = false;  // it closed its stdin; what it already answered still counts
    } else if (fds[2].revents & POLLOUT) {
      const ssize_t wrote = write(s.to_child, outbuf.data() + out_offset, outbuf.size() - out_offset);
      if (wrote > 0) out_offset += static_cast<std::size_t>(wrote);
      if (wrote < 0 && errno != EAGAIN && errno != EWOULDBLOCK) stdin_open = false;
    }
    if (fds[0].revents != 0) {
      char buf[1 << 16];
      const ssize_t got = read(s.from_child, buf, sizeof buf);
      if (got > 0) {
        const auto decode_start = Clock::now();
        const std::size_t before = answers.size();
        auto stop = s.decoder->take(std::string_view(buf, static_cast<std::size_t>(got)), sent, workloads.size(),
                                    answers, [&](std::size_t index) {
                                      s.answered(workloads[index], seconds_since(last_progress));
                                      s.awaiting_first_answer = false;
                                      last_progress = Clock::now();
                                    });
        s.stats.answers += static_cast<long long>(answers.size() - before);
        s.stats.decode_seconds += seconds_since(decode_start);
        if (stop) return fail(s.with_evidence(std::move(*stop)), true);
        const std::size_t due = std::min(answers.size(), workloads.size() - 1);  // whose answer the bytes begin
        const double due_units = pending_units_of == due ? pending_units : s.units_of(workloads[due]);
        if (const std::size_t limit = s.answer_limit(due_units); s.decoder->pending().size() > limit) {
          return fail(s.misbehaviour(FindingKind::malformed_output,
                                     "printed " + std::to_string(s.decoder->pending().size()) +
                                         " bytes without ending its answer, more than an answer to this workload "
                                         "can take (" + std::to_string(limit) + " bytes)"),
                      true);
        }
      } else if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        const std::string how = s.ended();
        std::string summary = "the process " + how + " before answering";
        if (!stdin_open) summary += " (it had closed its input)";
        return fail(s.misbehaviour(FindingKind::crashed, summary,
                                   std::to_string(answers.size()) + " of the " + std::to_string(sent) +
                                       " workloads sent to this process were answered"),
                    false);
      }
    }
  }
  // The answers are in: what the process printed right behind the last one is its misbehaviour.
  if (s.running()) {
    if (auto extra = s.unasked_output(true)) return fail(s.with_evidence(std::move(*extra)), true);
  }
  return answers;
}

std::string CommandOutput::how_it_ended() const {
  return timed_out ? "did not end within its time (killed)" : describe_status(status);
}

CommandOutput run_command(const std::string& command, double timeout_seconds, std::size_t max_output) {
  ignore_sigpipe_once();
  CommandOutput result;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    result.status = 127 << 8;
    result.err = std::string("cannot create pipes: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    syscall(SYS_close_range, 3, ~0U, 0);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    result.status = 127 << 8;
    result.err = std::string("cannot fork: ") + std::strerror(errno);
    return result;
  }
  setpgid(pid, pid);
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* kept[2] = {&result.out, &result.err};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[1 << 16];
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0 && kept[i]->size() < max_output)
        kept[i]->append(buf, std::min(static_cast<std::size_t>(got), max_output - kept[i]->size()));
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) fds[i].fd = -1;
    }
  }
  kill(-pid, SIGKILL);  // whatever it left behind, or all of it after a timeout
  waitpid(pid, &result.status, 0);
  close(out[0]);
  close(err[0]);
  return result;
}

Implementation subprocess_implementation(std::string name, const Spec& spec, const SubprocessOptions& options,
                                         std::shared_ptr<Subprocess>* handle) {
  auto process = std::make_shared<Subprocess>(options, spec);
  if (handle != nullptr) *handle = process;
  Implementation impl;
  impl.name = std::move(name);
  impl.spec = &spec;
  impl.description = "subprocess: " + options.command;
  impl.compute = [process](const Workload& w) -> Answer {
    auto answers = process->run(std::span<const Workload>(&w, 1));
    return std::move(answers.front());
  };
  impl.compute_batch = [process](std::span<const Workload> ws) { return process->run(ws); };
  impl.shrinking = [process](bool shrinking) { process->set_shrinking(shrinking); };
  impl.confirm = [process](const Workload& w, double expired) { return process->ask_again(w, expired); };
  return impl;
}

}  // namespace chunkmeta::harness
