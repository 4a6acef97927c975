// The property suite as a library: the gtest runner, the mutant catalogue test
// and the CLI (`chunkmeta verify`) all run these same properties.
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

#include "chunkmeta/harness/report.hpp"

namespace chunkmeta::properties {

enum class Scope {
  implementation,  // run against the implementation under test
  library,         // checks the library's validate(); run once, not per implementation
};

struct Property {
  std::string name;      // a behaviour sentence in CamelCase, used as the test name
  std::string sentence;  // the same, for people
  Scope scope = Scope::implementation;
  // Runs one generated case inside RapidCheck; fails through fail_with().
  std::function<void(const harness::Implementation&)> run_case;
  bool sends_invalid_input = false;  // skipped for implementations that take valid workloads only
  // Share of the suite's case count this property runs (at least one case):
  // below 1 for cases that cost thousands of ordinary ones (huge batches).
  double case_share = 1.0;
};

const std::vector<Property>& all_properties();
const Property* find_property(const std::string& name);

struct SuiteOptions {
  int cases = 0;            // per property, exactly (times its case_share); 0: RC_PARAMS max_success, else default_cases * case_scale()
  int default_cases = 1000;
  std::optional<std::uint64_t> seed;  // else RC_PARAMS seed, else random
  bool write_reports = true;
  std::filesystem::path report_dir;   // empty: harness::default_report_dir()
  std::string rerun_command;          // how to rerun one property; {property} {implementation} are replaced
  std::vector<std::string> only;      // run only these properties (empty: all)
  bool include_library = true;        // also run the Scope::library properties
  bool stop_at_first_failure = false; // the mutant catalogue needs only the first counterexample
  // Wall-clock budget for the whole suite (0: none). Each property gets an even
  // share of what is left and runs in rounds (seed, seed+1, ...) until its share
  // or its case count is used up; without `cases`, a budget alone sets no limit.
  double time_budget_seconds = 0;
  bool prefetch = true;               // batch answers through compute_batch when the implementation has it
  // Polled before every case: once true, the remaining cases pass without
  // running (a shrink in progress keeps its smallest failure so far) and the
  // remaining properties are left out, so an interrupted run ends at once.
  std::function<bool()> stop_requested;
  // When the whole run must end (set by run_suite from time_budget_seconds):
  // generation and shrinking both stop there, keeping the smallest failure.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // Seconds one failure may spend shrinking before its smallest case so far is
  // reported as "not fully shrunk" (0: no limit). After a property of the
  // implementation has a minimal report, later ones get at most 10 s.
  double shrink_budget_seconds = 60;
  // Told, as they happen, of failures found (written out at once, marked
  // "shrinking") and of a long shrink's progress.
  std::function<void(std::string_view)> progress;
};

// The seed a run uses: options.seed, else RC_PARAMS's, else a random one
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
  int cases = 0;        // successful cases run
  int shrinks = 0;      // accepted shrink steps (failures only)
  std::uint64_t seed = 0;
  std::string message;  // RapidCheck's text for gave-up / internal errors
  std::map<std::string, int> edge_classes;  // class -> cases that hit it
  int rounds = 0;                  // RapidCheck runs (more than 1 under a time budget)
  double seconds = 0;              // wall time of the property
  double implementation_seconds = 0;  // of which waiting for the implementation (calls and batches)
  long long implementation_calls = 0;  // workloads sent to the implementation
  long long prefetched = 0;        // of which answered from a batch
  bool skipped = false;            // not applicable to the implementation (sends invalid input)
  std::string stopped;             // why the run ended early ("interrupted", ...); empty if it did not
  std::string duplicate_of;        // an earlier property of the same run that found the same counterexample
  std::optional<harness::Counterexample> counterexample;
  std::optional<harness::WrittenFiles> files;
};

PropertyResult run_property(const Property& property, const harness::Implementation& implementation,
                            const SuiteOptions& options);

struct SuiteResult {
  std::vector<PropertyResult> properties;
  bool passed() const;       // no failure, and not interrupted
  bool interrupted() const;  // stopped by stop_requested
  int cases() const;
  double seconds() const;
  double implementation_seconds() const;
};

// Runs the selected properties in order.
SuiteResult run_suite(const harness::Implementation& implementation, const SuiteOptions& options);

// Text summary: properties, cases, edge classes seen, failures with report paths.
std::string summarize(const std::vector<SuiteResult>& results);

// For property bodies: record the counterexample, then fail the case.
[[noreturn]] void fail_with(harness::Counterexample counterexample);

// For property bodies: tag the case with the workload's edge classes.
void tag_edge_classes(const Workload& workload);

}  // namespace chunkmeta::properties
