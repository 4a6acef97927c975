#include "shrink_watch.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace chunkmeta::engine::detail {
namespace {

// Disk writes and progress lines while shrinking, at most this often: a shrink
// may take hundreds of steps a second. A write that takes long (a report of
// millions of output entries) waits ten times its own duration before the next,
// so reports never cost more than a tenth of the run.
constexpr auto kWriteEvery = std::chrono::milliseconds(250);
constexpr auto kTellEvery = std::chrono::seconds(2);

std::string in_a_fresh_process(harness::FindingKind kind) {
  return harness::ends_its_process(kind) ? ", each in a fresh process" : "";
}

}  // namespace

ShrinkWatch::ShrinkWatch(const SuiteOptions& options, std::string label)
    : options_(options), label_(std::move(label)) {
  if (options.write_reports) slot_.emplace(report_dir_of(options));
}

void ShrinkWatch::tell(const std::string& text) const {
  if (options_.progress) options_.progress(text);
}

void ShrinkWatch::write(const harness::Counterexample& counterexample) {
  const auto start = Clock::now();
  if (slot_) {
    std::string ignored;  // an intermediate write that fails is retried by the next one, and the final one says why
    slot_->write(counterexample, &ignored, false);
  }
  last_write_ = Clock::now();
  write_gap_ = std::max<Clock::duration>(kWriteEvery, 10 * (last_write_ - start));
}

void ShrinkWatch::on_failure(harness::Counterexample& counterexample, bool confirmation_pending) {
  counterexample.status = harness::kShrinking;
  const harness::Counterexample& shrinking = counterexample;
  const auto now = Clock::now();
  if (failures_++ == 0) {
    // Each smaller case of a cost that grows faster than the work costs up to
    // a long call's limit, and the figures are the finding: it is not shrunk.
    if (counterexample.finding.kind == harness::FindingKind::superlinear_cost)
      stopped_because("a cost that grows faster than the work is not shrunk: each smaller call costs seconds");
    first_failure_ = now;
    last_told_ = now;
    write(shrinking);
    std::ostringstream line;
    line << "FAILING " << label_ << ": " << harness::to_string(counterexample.finding.kind) << ": "
         << counterexample.finding.summary << " (" << counterexample.spec->units(counterexample.workload) << "); shrinking";
    if (confirmation_pending) line << ", then asked again with a longer limit";
    if (slot_ && slot_->files()) line << ", report: " << slot_->files()->report.string();
    tell(line.str() + "\n");
    return;
  }
  if (now - last_write_ >= write_gap_) write(shrinking);
  if (now - last_told_ >= kTellEvery) {
    last_told_ = now;
    std::ostringstream line;
    line << "  shrinking " << label_ << ": " << counterexample.spec->units(counterexample.workload) << " after " << failures_ - 1
         << " steps, " << std::fixed << std::setprecision(1)
         << std::chrono::duration<double>(now - first_failure_).count() << " s\n";
    tell(line.str());
  }
}

void ShrinkWatch::withdraw() {
  if (slot_) slot_->withdraw();
  tell("WITHDRAWN " + label_ + ": the timeout did not hold when asked again with a longer limit (a slow call, "
       "not a hang); the run goes on\n");
  failures_ = 0;
  stop_reason_.clear();
}

bool ShrinkWatch::should_stop() {
  if (!stop_reason_.empty()) return true;
  const auto now = Clock::now();
  if (options_.stop_requested && options_.stop_requested()) {
    stop_reason_ = "interrupted";
  } else if (failing() && !options_.shrink) {
    stop_reason_ = "the shrink phase is off";
  } else if (options_.deadline && now >= *options_.deadline) {
    stop_reason_ = "the time budget was used up";
  } else if (failing() && options_.shrink_budget_seconds > 0 &&
             std::chrono::duration<double>(now - first_failure_).count() >= options_.shrink_budget_seconds) {
    std::ostringstream why;
    why << "the shrink budget of " << options_.shrink_budget_seconds << " s was used up";
    stop_reason_ = why.str();
  }
  return !stop_reason_.empty();
}

std::optional<harness::WrittenFiles> ShrinkWatch::finish(harness::Counterexample& counterexample, std::string* error) {
  counterexample.status = !flaky_.empty()                     ? "flaky (" + flaky_ + ")"
                          : stop_reason_.empty() || !failing() ? harness::kMinimal
                                                               : "not fully shrunk (" + stop_reason_ + ")";
  std::optional<harness::WrittenFiles> files;
  if (slot_) files = slot_->write(counterexample, error, true);
  if (failing()) {
    // The minimal report the moment it exists, not only in the summary at the end
    // of the run (other properties may take long to pass).
    std::ostringstream line;
    line << (!flaky_.empty() ? "FLAKY " : stop_reason_.empty() ? "MINIMAL " : "SHRINKING STOPPED ") << label_ << ": "
         << harness::to_string(counterexample.finding.kind) << ": " << counterexample.finding.summary << " ("
         << counterexample.spec->units(counterexample.workload) << ") after " << failures_ - 1 << " steps, "
         << std::fixed << std::setprecision(1)
         << std::chrono::duration<double>(Clock::now() - first_failure_).count() << " s";
    if (!flaky_.empty()) line << " (" << flaky_ << ")";
    else if (!stop_reason_.empty()) line << " (" << stop_reason_ << ")";
    if (files) line << ", report: " << files->report.string();
    tell(line.str() + "\n");
  }
  return files;
}

void ShrinkWatch::did_not_fail_again(int passed, harness::FindingKind kind, int failed_before) {
  const std::string times = std::to_string(kTimesAskedAgain) + " times";
  const std::string failed = failed_before == 1 ? "once" : failed_before == 2 ? "twice" : std::to_string(failed_before) + " times";
  const std::string how_often = passed == kTimesAskedAgain ? "failed " + failed + " and passed each of the " + times
                                                           : "failed " + failed + ", then passed " + std::to_string(passed) +
                                                                 " of the " + times;
  const std::string why = kind == harness::FindingKind::crashed
                              ? "a crash that follows from the calls before it in its process, or randomness"
                          : kind == harness::FindingKind::missing_output
                              ? "a line skipped because of the calls before it in its process, or randomness"
                              : "a race, state kept between calls, or randomness";
  flaky("it " + how_often + " the same case was asked again" + in_a_fresh_process(kind) + ": " + why);
}

std::string how_asked_again(harness::FindingKind kind) {
  return "asked again " + std::to_string(kTimesAskedAgain) + " times" + in_a_fresh_process(kind);
}

int ask_found_failure_again(harness::Counterexample& cx, ShrinkWatch& watch,
                            const std::function<bool(std::optional<harness::Outcome>*)>& fails_again, int failed_before) {
  std::optional<harness::Outcome> right;
  const int passed = passes_when_asked_again(cx.finding.kind, [&] { return fails_again(&right); });
  if (passed == 0) return 0;
  // Both answers in the report: the failing one (the finding's) and a right one.
  if (right) {
    cx.related.insert(cx.related.begin(), {"the same workload, " + how_asked_again(cx.finding.kind) + ": right " +
                                               std::to_string(passed) + " of them (its output the last time below)",
                                           cx.workload, *right, nullptr});
  }
  watch.did_not_fail_again(passed, cx.finding.kind, failed_before);
  return passed;
}

int passes_when_asked_again(harness::FindingKind kind, const std::function<bool()>& fails_again) {
  const int must_fail = harness::ends_its_process(kind) ? 2 : 1;
  int passed = 0;
  for (int ask = 1; ask <= kTimesAskedAgain; ++ask) {
    if (!fails_again()) ++passed;
    if (passed == 0 && ask == must_fail) return 0;
  }
  return passed;
}

}  // namespace chunkmeta::engine::detail
