// The subprocess door: a program speaking the JSON Lines protocol, asked a
// batch of workloads at a time (the loop below: send, wait within the call
// budget, decode, name what it did wrong). The running program itself is
// running_program.hpp; its guard, process_guard.cpp.
#include "chunkmeta/harness/subprocess.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include "running_program.hpp"

namespace chunkmeta::harness {

using process::Clock;
using process::seconds_since;

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

void Subprocess::set_shrinking(bool shrinking) {
  state_->budget.set_shrinking(shrinking);
  state_->crashed_while_shrinking = false;
}

Answer Subprocess::ask_again(const Workload& workload, double expired) {
  return state_->budget.confirming(expired, state_->units_of(workload),
                                   [&] { return std::move(run(std::span<const Workload>(&workload, 1)).front()); });
}

std::string Subprocess::cost_growth() const { return state_->budget.cost_growth(); }

const SubprocessStats& Subprocess::stats() const noexcept { return state_->stats; }

std::vector<OwnCall> Subprocess::take_own_calls() {
  std::lock_guard lock(state_->own_calls_mutex);
  return std::exchange(state_->own_calls, {});
}
const SubprocessOptions& Subprocess::options() const noexcept { return state_->options; }

std::vector<Answer> Subprocess::run(std::span<const Workload> workloads) {
  State& s = *state_;
  std::vector<Answer> answers;
  if (workloads.empty()) return answers;
  // Stopped (Ctrl-C): what is left is answered by the reference, which judges nothing; the run ends.
  const auto stopped = [&] {
    if (s.running()) s.stop(false);
    for (std::size_t i = answers.size(); i < workloads.size(); ++i) answers.emplace_back(s.spec->reference(workloads[i]));
    return answers;
  };
  if (process::stop_requested()) return stopped();
  if (!s.running()) s.start();
  if (process::stop_requested()) return stopped();
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
  // Shrinking a hang or a crash, lines go one at a time: a timeout or a crash with
  // several lines waiting costs a restart and the same failure again (see below), at each step.
  std::size_t window = s.budget.shrinking_a_hang() || s.crashed_while_shrinking ? 1 : s.options.window;
  bool spare_asked = false;  // for this wait, once it is half over (see below)
  std::size_t timed_out_once = static_cast<std::size_t>(-1);  // the workload a restart below sent again
  std::string outbuf;            // bytes queued for its stdin
  std::size_t out_offset = 0;
  auto last_progress = Clock::now();
  bool stdin_open = true;
  process::IdleWatch idle(s.pid);  // a program idle with an answer due is stuck: no need to wait out its limit
  // The work units of the oldest unanswered workload (for its time budget), and its index.
  std::size_t pending_units_of = static_cast<std::size_t>(-1);
  double pending_units = 1;
  // The answer limit of the workload whose answer the bytes begin, and its index: asked once per workload
  // (Spec::most_answer_entries costs a pass over its rows), not on every read.
  std::size_t limit_of = static_cast<std::size_t>(-1);
  std::size_t limit = 0;

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
  // Several lines in flight when the process hung or died: a program that answers
  // what it has read in one write (as the Python adapter does) gives no answer
  // before it fails, so the oldest line is not known to be the one it failed on.
  // Those lines go again, one at a time, to a fresh process: the failure is then
  // blamed on the workload that causes it. False if no process could be started.
  const auto send_again_one_at_a_time = [&] {
    s.stop(false);
    s.start();
    if (!s.running()) return false;
    window = 1;
    sent = answers.size();
    outbuf.clear();
    out_offset = 0;
    stdin_open = true;
    last_progress = Clock::now();
    idle = process::IdleWatch(s.pid);
    return true;
  };
  const auto not_restarted = [&] {
    return fail(Misbehaviour{FindingKind::crashed, "could not be restarted: " + s.start_error.value_or("?"),
                             "command: " + s.options.command},
                false);
  };
  // A crash among lines sent together whose lines, sent again one at a time,
  // were each answered: the crash stays a finding (it may follow from the calls
  // before it), on the last of them, saying so; it is then asked again as any is.
  std::optional<Misbehaviour> unplaced_crash;
  std::size_t unplaced_end = 0;
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
    pollfd fds[4] = {{s.from_child, POLLIN, 0}, {s.errors, POLLIN, 0}, {-1, POLLOUT, 0}, {process::stop_fd(), POLLIN, 0}};
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
      if (!send_again_one_at_a_time()) return not_restarted();
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
      hang.cut_past_the_timeout = !s.awaiting_first_answer && s.budget.past_the_timeout(pending_units);
      hang.asked_twice = answers.size() == timed_out_once;
      s.budget.explain_cut(hang, pending_units);  // a cost that grows faster than the work is named so, not a hang
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
    const int slice = static_cast<int>(std::min<double>(wait * 1000, State::kIdleCheckMs));
    const int ready = poll(fds, 4, std::max(1, slice));
    s.stats.wait_seconds += seconds_since(wait_start);
    if (process::stop_requested()) return stopped();
    if (ready == 0 && answers.size() < sent && out_offset == outbuf.size() && idle.idle()) {
      Misbehaviour stuck = s.misbehaviour(FindingKind::timed_out, State::idle_summary(idle.idle_seconds(), "this workload"));
      stuck.idle = true;
      stuck.limit_seconds = seconds_since(last_progress);
      return fail(std::move(stuck), true);
    }
    if (ready > 0 && (fds[0].revents != 0 || fds[2].revents != 0)) idle.reset();
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
        if (due != limit_of) {
          limit_of = due;
          limit = s.answer_limit(workloads[due]);
        }
        if (s.decoder->pending().size() > limit) {
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
        if (s.budget.shrinking()) s.crashed_while_shrinking = true;
        Misbehaviour crash = s.misbehaviour(FindingKind::crashed, summary,
                                            std::to_string(answers.size()) + " of the " + std::to_string(sent) +
                                                " workloads sent to this process were answered");
        if (sent - answers.size() > 1 && !unplaced_crash) {
          unplaced_end = sent;
          crash.summary += " (while answering " + std::to_string(sent - answers.size()) +
                           " workloads sent together; sent again one at a time, each was answered)";
          unplaced_crash = std::move(crash);
          if (!send_again_one_at_a_time()) return not_restarted();
          continue;
        }
        return fail(std::move(crash), false);
      }
    }
    if (unplaced_crash && answers.size() >= unplaced_end) {
      answers.erase(answers.begin() + static_cast<std::ptrdiff_t>(unplaced_end - 1), answers.end());  // the caller sends the rest again
      return fail(std::move(*unplaced_crash), false);
    }
  }
  // The answers are in: what the process printed right behind the last one is its misbehaviour.
  if (s.running()) {
    if (auto extra = s.unasked_output(true)) return fail(s.with_evidence(std::move(*extra)), true);
  }
  return answers;
}
void stop_every_wait() noexcept { process::request_stop(); }

void Subprocess::warm_up() {
  if (!state_->running() && !process::stop_requested()) state_->start();
}

void Subprocess::restart() {
  State& s = *state_;
  if (s.running()) s.stop(false);
  if (s.spares.empty() && !process::stop_requested()) s.start_spare();
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
  impl.cost_growth = [process] { return process->cost_growth(); };
  impl.take_own_calls = [process] { return process->take_own_calls(); };
  impl.warm_up = [process] { process->warm_up(); };
  impl.restart = [process] { process->restart(); };
  return impl;
}

}  // namespace chunkmeta::harness
