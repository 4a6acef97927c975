// One program behind a Subprocess, as it runs: its guard and pipes, its
// answers decoded, the warm-up that keeps start-up out of a workload's time,
// the spare processes started ahead of need, and the evidence (its command,
// the end of its stderr, how it ended) every finding about it carries.
#pragma once

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
#include <mutex>
#include <optional>
#include <utility>

#include "chunkmeta/harness/answer_stream.hpp"
#include "chunkmeta/harness/call_budget.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/harness/subprocess.hpp"
#include "process_guard.hpp"

namespace chunkmeta::harness {

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
  process::Tail stderr_tail{4096};
  std::uint64_t next_id = 0;  // ids are unique over the life of the harness
  CallBudget budget;  // how long a workload may take before it counts as a hang (call_budget.hpp)
  // The first answer of a process that was not warmed up includes its
  // start-up (Python + torch: seconds), which is not a hang: it gets the whole timeout.
  bool awaiting_first_answer = false;
  // Shrinking a crash: most candidates the shrink sends crash too, and lines sent
  // together cost a second process start to tell which one did (subprocess.cpp).
  bool crashed_while_shrinking = false;

  double timeout(double units) const { return awaiting_first_answer ? options.timeout_seconds : budget.limit(units); }
  double units_of(const Workload& workload) const { return CallBudget::units_of(*spec, workload); }
  // Spec::most_answer_entries in bytes.
  std::size_t answer_limit(const Workload& workload) const {
    return spec->most_answer_entries(workload) * options.answer_bytes_per_entry;
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
    std::uint64_t warm_up_id = 0;  // the id of its first warm-up line
  };

  std::optional<Child> spawn() {
    process::ignore_sigpipe_once();
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
      start_error = std::string("cannot create pipes: ") + std::strerror(errno);
      return std::nullopt;
    }
    // Built before fork: the child only calls async-signal-safe functions.
    static const std::vector<std::string> environment = process::child_environment();
    std::vector<char*> envp;
    for (const auto& variable : environment) envp.push_back(const_cast<char*>(variable.c_str()));
    envp.push_back(nullptr);
    const int life = process::lifeline();
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
      process::guard(implementation);
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
      if (const auto ended = process::reap_guard(guard_pid, false)) return *ended;
      usleep(i < 50 ? 200 : 10000);
    }
    kill(-guard_pid, SIGKILL);
    return process::reap_guard(guard_pid, true).value_or(status);
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
  void send_warm_up(Child& child) {
    child.warm_up_id = next_id;
    std::string lines = encode(warm_up_workload(), next_id++);
    lines += encode(warm_up_workload(), next_id++);
    if (write(child.to_child, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) return;
  }

  // The warm-up's answers, judged like every other (OwnCall): a program wrong
  // on its first calls only is a finding. Guarded: the run loop takes them
  // between properties, while a batch may be fetched on another thread.
  std::mutex own_calls_mutex;
  std::vector<OwnCall> own_calls;

  void keep_own_call(Answer answer, int call) {
    std::lock_guard lock(own_calls_mutex);
    own_calls.push_back(OwnCall{warm_up_workload(), std::move(answer),
                                "call " + std::to_string(call) + " of process " + std::to_string(stats.starts + 1) +
                                    ", its warm-up (before any case was sent to it)"});
  }

  // Waits for a new process's answers to its warm-up (at most the timeout, and
  // at least 30 s: start-up is not what the timeout is for), takes the second
  // one's time, and keeps both answers to be judged. False if they never came,
  // or the stream is not to be trusted after them (the answers kept say why).
  bool warmed_up(Child& child) {
    const auto deadline = process::Clock::now() + std::chrono::duration<double>(std::max(options.timeout_seconds, 30.0));
    AnswerDecoder warm_up(*spec);
    warm_up.begin_batch(child.warm_up_id);
    std::vector<Answer> answers;
    std::optional<Misbehaviour> broken;
    std::optional<process::Clock::time_point> first_answer;
    std::size_t got = 0;
    process::IdleWatch idle(child.pid);
    while (answers.size() < 2 && !broken) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - process::Clock::now()).count();
      if (left <= 0) return false;
      // Its stderr is read too: a program that writes more than a pipe holds
      // there before answering would otherwise wait on us until the deadline.
      pollfd p[3] = {{child.from_child, POLLIN, 0}, {process::stop_fd(), POLLIN, 0}, {child.errors, POLLIN, 0}};
      const int ready = poll(p, child.errors >= 0 ? 3 : 2, static_cast<int>(std::min<long long>(left, kIdleCheckMs)));
      if (process::stop_requested()) return false;
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return false;
      if (ready == 0) {
        // Start-up takes CPU (an interpreter, imports); a program idle with both answers due is stuck.
        if (!idle.idle()) continue;
        Misbehaviour stuck{FindingKind::timed_out, idle_summary(idle.idle_seconds(), "its warm-up (two one-row workloads)"),
                           ""};
        stuck.idle = true;
        stuck.limit_seconds = idle.idle_seconds();
        broken = std::move(stuck);
        break;
      }
      char buf[1 << 16];
      if (child.errors >= 0 && p[2].revents != 0) {
        const ssize_t n = read(child.errors, buf, sizeof buf);
        if (n > 0) stderr_tail.append(buf, static_cast<std::size_t>(n));
        if (n == 0) {
          close(child.errors);
          child.errors = -1;
        }
      }
      if (p[0].revents == 0) continue;
      const ssize_t n = read(child.from_child, buf, sizeof buf);
      if (n == 0) {
        broken = Misbehaviour{FindingKind::crashed, "closed its output during its warm-up, before answering it", ""};
        ended_in_warm_up = true;
        break;
      }
      if (n < 0) continue;
      idle.reset();
      got += static_cast<std::size_t>(n);
      broken = warm_up.take(std::string_view(buf, static_cast<std::size_t>(n)), 2, 2, answers);
      if (!broken && got > 2 * kWarmUpAnswerBytes && answers.size() < 2) {
        broken = Misbehaviour{FindingKind::malformed_output,
                              "printed more than " + std::to_string(2 * kWarmUpAnswerBytes) +
                                  " bytes for its warm-up's two one-row answers",
                              "the output: " + shortened_line(warm_up.pending())};
      }
      if (!first_answer && !answers.empty()) first_answer = process::Clock::now();
    }
    // Anything after the warm-up's answers belongs to no request: the stream is then not trusted.
    if (!broken && warm_up.holds_unasked_output()) {
      broken = Misbehaviour{FindingKind::malformed_output,
                            "printed more after its answers to its two warm-up lines (an extra or repeated line)",
                            "the output: " + shortened_line(warm_up.pending())};
    }
    for (std::size_t i = 0; i < answers.size(); ++i) keep_own_call(std::move(answers[i]), static_cast<int>(i + 1));
    if (broken) {
      keep_own_call(with_evidence(std::move(*broken)), static_cast<int>(answers.size() + 1));
      return false;
    }
    budget.measured(units_of(warm_up_workload()), first_answer ? process::seconds_since(*first_answer) : 0);
    return true;
  }

  // How a discarded process ended ("exited with status 1"...).
  std::string discard(Child& child) {
    const int status = end_guard(child.pid, child.control);
    for (int fd : {child.to_child, child.from_child, child.errors}) {
      if (fd >= 0) close(fd);
    }
    return process::describe_status(status);
  }

  // Polls in slices this long while a program's answer is due, to see whether it is idle.
  static constexpr long long kIdleCheckMs = 250;
  static std::string idle_summary(double seconds, const std::string& what) {
    return "sat idle for " + std::to_string(seconds).substr(0, 4) + " s (no CPU time, nothing running) with its answer to " +
           what + " due: stuck, not slow (waiting for more input? an answer printed but not flushed: flush after each "
           "line; killed)";
  }
  bool ended_in_warm_up = false;  // the warm-up's crash: the status of the process is added to it

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
      ended_in_warm_up = false;
      warm = warmed_up(*child);
      if (!warm) {
        const std::string how = discard(*child);
        if (ended_in_warm_up) {
          std::lock_guard lock(own_calls_mutex);
          if (!own_calls.empty()) {
            if (auto* crash = std::get_if<Misbehaviour>(&own_calls.back().answer)) crash->summary += " (the process " + how + ")";
          }
        }
        // Its stderr is the evidence of its own warm-up call (kept with it): the replacement's is its own.
        stderr_tail.clear();
        child = process::stop_requested() ? std::nullopt : spawn();
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
        const auto ended = process::reap_guard(pid, false);
        reaped = ended.has_value();
        if (reaped) status = *ended;
        if (!reaped) usleep(10000);
      }
    }
    if (!reaped) status = end_guard(pid, control);
    pid = -1;
    close_fds();
    return process::describe_status(status);
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
      const auto ended = process::reap_guard(pid, false);
      reaped = ended.has_value();
      if (reaped) status = *ended;
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
    return process::describe_status(status);
  }

  void drain_stderr(int wait_ms) {
    if (errors < 0) return;
    char buf[4096];
    const auto deadline = process::Clock::now() + std::chrono::milliseconds(wait_ms);
    while (true) {
      const ssize_t got = read(errors, buf, sizeof buf);
      if (got > 0) {
        stderr_tail.append(buf, static_cast<std::size_t>(got));
        continue;
      }
      if (got == 0) return;  // EOF
      if (errno != EAGAIN && errno != EWOULDBLOCK) return;
      const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - process::Clock::now()).count());
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
    const auto deadline = process::Clock::now() + std::chrono::duration<double>(wait_seconds);
    const auto ms_left = [&] {
      return std::max(0, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - process::Clock::now()).count()));
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
    while (decoder->pending().size() <= kAnswerAllowanceEntries * options.answer_bytes_per_entry) {
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

}  // namespace chunkmeta::harness
