// An implementation in another process that speaks the `chunkmeta compute`
// JSON Lines protocol (README, "The protocol"). One process is kept alive and
// fed many workloads at once; a crash, a hang, a malformed or a skipped answer
// is the answer for that workload, and the process is restarted as needed.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "chunkmeta/harness/implementation.hpp"

namespace chunkmeta::harness {

struct SubprocessOptions {
  // Run as /bin/sh -c COMMAND in a process group of its own, under a guard
  // that kills the group when this process ends, however it ends: an
  // implementation never outlives the harness that started it.
  std::string command;
  double timeout_seconds = 10.0;   // per case: the longest wait for one answer
  std::size_t window = 512;        // lines in flight before the harness waits for answers
  // The longest answer a workload may get is derived from its size
  // (Spec::most_answer_entries, at this many bytes each): a correct answer
  // always fits, JSON or binary, and a flood is cut off after a few times what
  // the workload's answer could hold.
  std::size_t answer_bytes_per_entry = 8;
};

// Where the time of a subprocess implementation went, for the check summary.
struct SubprocessStats {
  long long answers = 0;
  long long starts = 0;            // processes started (1 + restarts)
  double encode_seconds = 0;       // writing workloads as JSON
  double wait_seconds = 0;         // blocked in poll(): the other process working
  double decode_seconds = 0;       // parsing its answers
};

class Subprocess {
 public:
  // A program that computes `spec` (each request line names it, Mamba's excepted).
  Subprocess(SubprocessOptions options, const Spec& spec);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Answers, in order, for a prefix of `workloads`: all of them, unless the
  // process crashed, hung or desynchronised, in which case the answers end
  // with that misbehaviour (the rest are for the caller to send again).
  std::vector<Answer> run(std::span<const Workload> workloads);

  // Starts the process and sends it its warm-up now, without waiting: its
  // start-up (Python + torch: seconds) then overlaps the caller's own work
  // (the corpus replay, recording a property's cases) instead of the first run().
  void start_in_background();

  // While shrinking, an answer gets 10x the slowest so far (at least 0.5 s, at
  // most the timeout), as after a first hang: a runaway candidate is cut short.
  void set_shrinking(bool shrinking);

  // One workload asked again after it timed out within `expired` seconds,
  // with CallBudget::confirmation_limit(expired) to answer.
  Answer ask_again(const Workload& workload, double expired);
  // After ask_again() answered: CallBudget::cost_growth().
  std::string cost_growth() const;

  // Starts the process if it is not running and waits for its warm-up's answers (kept as own calls).
  void warm_up();

  // Ends the running process: the next run() goes to a fresh one (a spare, warm or warming up).
  void restart();

  // The answers to its processes' warm-ups since the last call (OwnCall), to be judged.
  std::vector<OwnCall> take_own_calls();

  const SubprocessStats& stats() const noexcept;
  const SubprocessOptions& options() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Ends every wait on a program at once, for good (Ctrl-C, SIGTERM): what a
// door was waiting for is answered by the reference (no finding), and the
// caller's run loop stops on its own stop_requested. Async-signal-safe.
void stop_every_wait() noexcept;

// A short command run to its end (within `timeout_seconds`, then killed with
// its process group), its output kept up to `max_output` bytes each.
struct CommandOutput {
  int status = 0;          // as waitpid gives it
  bool timed_out = false;
  std::string out;
  std::string err;
  std::string how_it_ended() const;  // "exited with status 1", "was killed by signal 11 (SIGSEGV)", ...
};
CommandOutput run_command(const std::string& command, double timeout_seconds, std::size_t max_output = 1 << 20);

// An Implementation backed by one Subprocess (shared by the copies of it);
// compute_batch is set, so the property suite prefetches through the pipe.
Implementation subprocess_implementation(std::string name, const Spec& spec, const SubprocessOptions& options,
                                         std::shared_ptr<Subprocess>* handle = nullptr);

}  // namespace chunkmeta::harness
