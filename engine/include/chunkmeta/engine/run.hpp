// The run loop: for each property, draw its cases from one seed (small cases
// first), ask the implementation for their answers in batches (ahead of the
// judging, on another thread, through an implementation that answers in
// batches), judge them, and shrink the first failure with the project's
// shrinker, writing its report as it shrinks. `chunkmeta verify`, `chunkmeta
// check`, the gtest suite and Python's check() all run this loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/engine/property.hpp"
#include "chunkmeta/harness/report.hpp"

namespace chunkmeta::engine {

struct SuiteOptions {
  int cases = 0;            // per property, exactly (times its case_share); 0: default_cases * case_scale()
  int default_cases = 1000;
  std::optional<std::uint64_t> seed;  // else $CHUNKMETA_SEED, else random (drawn once per process)
  bool write_reports = true;
  std::filesystem::path report_dir;   // empty: harness::default_report_dir()
  std::string rerun_command;          // how to rerun one property; {property} {implementation} {seed} {spec} are replaced
  std::vector<std::string> only;      // run only these properties (empty: all)
  bool include_library = true;        // also run the Scope::library properties
  bool stop_at_first_failure = false; // the mutant catalogue needs only the first counterexample
  // Every distinct bug (keep_going): a failure shrinks only through cases that
  // fail the same way (a wrong answer never slips into an earlier crash), and
  // is the same bug as an earlier report only when it shrinks to it. Off: a
  // property that fails on an earlier report's workload is that bug, found fast.
  bool distinct_bugs = false;
  // Without distinct_bugs, once the implementation has a minimal report each
  // later property runs at most this many cases (times its share): the verdict
  // is NOT VERIFIED whatever they find, and most find that bug again in their
  // first call. The summary lists them as cut short. 0: every property in full.
  int cases_after_a_bug = 100;
  // Wall-clock budget for the whole suite (0: none). Each property gets an even
  // share of what is left and runs in rounds (seed, seed+1, ...) until its share
  // or its case count is used up; without `cases`, a budget alone sets no limit.
  double time_budget_seconds = 0;
  // With a time budget: the cases each property must run to count as run
  // (times its case_share); more run while its share of the budget lasts, up
  // to its case count, and no deadline cuts a property below it (a slow
  // implementation takes longer rather than go unverified). 0: the budget
  // rules as above.
  int min_cases = 0;
  bool prefetch = true;               // batch answers through compute_batch when the implementation has it
  // Polled before every case and shrink step: once true, the run ends at once,
  // keeping a shrink in progress as its smallest failure so far.
  std::function<bool()> stop_requested;
  // When the whole run must end (set by run_suite from time_budget_seconds):
  // generation and shrinking both stop there, keeping the smallest failure.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Seconds one failure may spend shrinking before its smallest case so far is
  // reported as "not fully shrunk" (0: no limit). After a property of the
  // implementation has a minimal report, later ones get at most 10 s.
  double shrink_budget_seconds = 60;
  // The shrink phase: false reports each failure as found ("not fully shrunk
  // (the shrink phase is off)"), as Hypothesis's phases without Phase.shrink.
  bool shrink = true;
  // Told, as they happen, of failures found (written out at once, marked
  // "shrinking") and of a long shrink's progress.
  std::function<void(std::string_view)> progress;
  // The engine's domain, stated: edge classes (PropertyTable::workload_classes)
  // it never sends. No case, shrink candidate or corpus entry that asks for a
  // workload in one is tried; the summary lists what was left out.
  std::vector<std::string> excluded_classes;
};

// The excluded class a workload is in ("" for none; invalid workloads are in none).
std::string outside_domain(const PropertyTable& table, const SuiteOptions& options, const Workload& workload);

// The seed a run uses: options.seed, else $CHUNKMETA_SEED, else a random one
// (drawn once per process).
std::uint64_t seed_of(const SuiteOptions& options);

// Where reports go: options.report_dir, else harness::default_report_dir().
std::filesystem::path report_dir_of(const SuiteOptions& options);

// Scale for every default case count: CHUNKMETA_CASE_SCALE (a soak run sets 100).
double case_scale();

struct PropertyResult {
  std::string property;
  std::string implementation;
  bool passed = false;
  int cases = 0;        // cases that passed
  // The cases it had to run to count as run (its case count; under a time
  // budget without one, the count it would have run without the budget).
  int planned = 0;
  int shrinks = 0;      // accepted shrink steps (failures only)
  std::uint64_t seed = 0;
  std::string message;  // what failed when there is no counterexample to show
  std::map<std::string, int> edge_classes;  // class -> cases that hit it
  std::map<std::string, int> left_out;      // excluded class -> cases and shrink candidates not tried
  int rounds = 0;                  // runs of the loop (more than 1 under a time budget)
  double seconds = 0;              // wall time of the property
  double implementation_seconds = 0;  // of which waiting for the implementation (calls and batches)
  long long implementation_calls = 0;  // workloads sent to the implementation
  long long prefetched = 0;        // of which answered in batches
  int slow_calls = 0;              // timed out once, answered when asked again with a longer limit
  bool skipped = false;            // not applicable to the implementation (sends invalid input)
  std::string stopped;             // why the run ended early ("interrupted", ...); empty if it did not
  bool not_run = false;            // never started: the run ended before its turn (budget, interrupt, fail_fast)
  std::string duplicate_of;        // an earlier property of the same run that reported the same bug
  std::optional<harness::Counterexample> counterexample;
  std::optional<harness::WrittenFiles> files;

  // Whether it ran as far as it had to: failed (a verdict), skipped, or passed its planned cases.
  bool complete() const { return !passed || skipped || (!not_run && cases >= planned); }
};

// One property (of the implementation's spec's table) on one implementation.
PropertyResult run_property(const Property& property, const Implementation& implementation,
                            const SuiteOptions& options, const PropertyTable* table = nullptr);

struct SuiteResult {
  const PropertyTable* table = nullptr;
  std::vector<PropertyResult> properties;
  // No failure, and every property ran its planned cases: the only verdict
  // that says VERIFIED. A run cut short (time budget, interrupt) is not one.
  bool passed() const;
  bool interrupted() const;  // stopped by stop_requested
  const PropertyResult* first_failure() const;  // the first property that failed, or null
  // "Name: N of M cases (why)" / "Name: not run (why)" for each property that did not run its cases.
  std::vector<std::string> cut_short() const;
  int cases() const;
  double seconds() const;
  double implementation_seconds() const;
};

// Runs the selected properties in order.
// `first_calls`: the door's own first calls' failure, judged by the caller
// before anything was sent (judge_own_calls): it leads the results, and when
// it is a misbehaviour (stuck, ended) no property runs (each is listed not run).
SuiteResult run_suite(const PropertyTable& table, const Implementation& implementation, const SuiteOptions& options,
                      std::optional<PropertyResult> first_calls = std::nullopt);

// The name under which a wrong answer to a door's own call (harness::OwnCall:
// a warm-up) is reported.
inline constexpr std::string_view kOwnCallsProperty = "AnswersRightFromItsFirstCall";

// The answers to the door's own calls since it was last asked, judged
// (run_suite does it before and after every property): the first wrong one in
// the stated domain as a failed result with its report, else nullopt. Its
// workload is asked once more: `fails_whenever_asked` says whether it failed
// again (an ordinary bug, which the properties find and shrink) or only a
// first call fails.
std::optional<PropertyResult> judge_own_calls(const Implementation& implementation, const SuiteOptions& options,
                                              const PropertyTable& table, bool* fails_whenever_asked = nullptr);

// Text summary: properties, cases, edge classes seen, failures with report paths.
std::string summarize(const std::vector<SuiteResult>& results);

}  // namespace chunkmeta::engine
