// The shrinking and reporting policy of one property run, in one place:
// - a failure is written to the report dir and announced the moment it is
//   found, marked "shrinking"; each smaller failing case replaces it;
// - the last one is marked "minimal", or "not fully shrunk (why)" when the
//   run was stopped: an interrupt (stop_requested), the suite's time budget,
//   or the shrink budget of one finding; a superlinear_cost finding is not
//   shrunk (its figures are the finding, and each step costs a long call);
// - a stop before any failure ends the run's remaining cases at once.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/engine/run.hpp"

namespace chunkmeta::engine::detail {

// A failure found is asked again before it is shrunk (a race, a cache or a
// random slip fails once): up to this many times, to say how often it fails.
inline constexpr int kTimesAskedAgain = 3;
// Whether a failure of this kind is asked again when found. A cut call's costs
// its limit again: timeouts have their own confirmation (Round::confirmed), and
// a cost that grows faster than the work was measured over many calls.
inline bool asked_again_when_found(harness::FindingKind kind) {
  return kind != harness::FindingKind::timed_out && kind != harness::FindingKind::superlinear_cost;
}
// How many of the kTimesAskedAgain asks of a failure of `kind` passed, asked
// by `fails_again` (true: it failed again as it did). 0 when it holds: its
// first asks failed, two of them for a failure that ends its process (each
// costs only a process start, and a crash by chance comes again as often as
// not), one otherwise. Once one passes, all are asked, to say how often.
int passes_when_asked_again(harness::FindingKind kind, const std::function<bool()>& fails_again);
// How a failure of `kind` is asked again, for the reports' words: "asked again
// 3 times", and ", each in a fresh process" for one that ends its process.
std::string how_asked_again(harness::FindingKind kind);

class ShrinkWatch;
// The found failure `cx` asked again (passes_when_asked_again) by `fails_again`,
// which sets its argument to a right answer to cx's workload when one comes.
// When an ask passed, the report says so: the right answer beside the failing
// one, and `watch` marks it flaky. Returns how many of the asks passed.
// `failed_before`: how many times it had failed before these asks (its finding's, and any ask since).
int ask_found_failure_again(harness::Counterexample& cx, ShrinkWatch& watch,
                            const std::function<bool(std::optional<harness::Outcome>*)>& fails_again,
                            int failed_before = 1);

class ShrinkWatch {
 public:
  ShrinkWatch(const SuiteOptions& options, std::string label);

  // A failing case (the first, or a smaller one found while shrinking): marked
  // "shrinking" in place (its outputs may be huge: it is not copied) and written.
  // `confirmation_pending`: a timeout, asked again with a longer limit once shrunk (said on the first).
  void on_failure(harness::Counterexample& counterexample, bool confirmation_pending = false);
  // The failure did not hold when asked again: its report goes, and the run
  // goes on as if it had not been found.
  void withdraw();
  // Whether the run should end now; the first reason found is kept.
  bool should_stop();
  bool failing() const { return failures_ > 0; }
  // Ends the shrink's claim to minimality: the report is "not fully shrunk (why)".
  void stopped_because(std::string why) {
    if (stop_reason_.empty()) stop_reason_ = std::move(why);
  }
  // The failure did not fail again when asked again: reported as found, "flaky (why)".
  void flaky(std::string why) { flaky_ = std::move(why); }
  // ... it passed `passed` of the kTimesAskedAgain times it was asked again (a
  // failure of `kind`: one that ends its process in a fresh one each time):
  // "flaky (it failed once and passed each of ...)".
  void did_not_fail_again(int passed, harness::FindingKind kind, int failed_before = 1);
  // Why the run ended early ("" when it ran to the end).
  const std::string& stop_reason() const { return stop_reason_; }

  // Marks the final counterexample minimal or not fully shrunk, and writes it.
  // Returns the files (nullopt when not written; `error` says why if it failed).
  std::optional<harness::WrittenFiles> finish(harness::Counterexample& counterexample, std::string* error);

 private:
  using Clock = std::chrono::steady_clock;
  void tell(const std::string& text) const;
  void write(const harness::Counterexample& counterexample);

  const SuiteOptions& options_;
  std::string label_;  // "implementation, property", for progress lines
  std::optional<harness::ReportSlot> slot_;
  int failures_ = 0;
  Clock::time_point first_failure_{};
  Clock::time_point last_write_{};
  Clock::duration write_gap_{};  // the least time between two writes
  Clock::time_point last_told_{};
  std::string stop_reason_;
  std::string flaky_;
};

}  // namespace chunkmeta::engine::detail
