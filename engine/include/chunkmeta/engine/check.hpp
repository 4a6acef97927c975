// A whole verification run of one spec: replay the corpus, then the spec's
// property suite on each implementation. `chunkmeta verify`, `chunkmeta check`
// and the Python module's `chunkmeta.check()` are this one function with
// different options.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/engine/run.hpp"

namespace chunkmeta::engine {

// A finding written to the report dir, with its files.
struct Reported {
  harness::Counterexample counterexample;
  std::optional<harness::WrittenFiles> files;
};

struct ReplayResult {
  int files = 0;
  int unreadable = 0;
  std::vector<harness::Counterexample> failures;
  int left_out = 0;   // entries outside the stated domain, not replayed
  std::string text;  // each failure's report, the unreadable files, then one summary line
  // check(): for each implementation and kind of finding, its smallest failing
  // entry shrunk (or, for an invalid workload, as found), written out.
  std::vector<Reported> reported;
  bool passed() const { return failures.empty() && unreadable == 0; }
  bool failed(const std::string& implementation) const;
};

// Replays every corpus entry under `inputs` (files or folders) against
// `implementations`: each entry against those of its spec (entries of
// other specs count as files, and are replayed against none).
// `outside` (if given) names the excluded class of a workload outside the
// stated domain ("" for none): such entries are not replayed, only counted.
ReplayResult replay_corpus(const std::vector<harness::Implementation>& implementations,
                           const std::vector<std::filesystem::path>& inputs,
                           const std::function<std::string(const Workload&)>& outside = nullptr);

struct CheckOptions {
  SuiteOptions suite;
  std::vector<std::filesystem::path> corpus;  // replayed first; empty: no replay
  // Told each stage as it starts ("Verifying fast..."), and each failure the
  // moment it is found, so a long run shows progress.
  std::function<void(std::string_view)> progress;
  // An implementation whose corpus replay fails is known to be wrong: its
  // failures are shrunk and reported, and its properties are not run (a
  // rediscovery would only cost time), unless this is set.
  bool properties_after_replay_failure = false;
  // The generate phase: false ends the run after the replay (Hypothesis's
  // phases without Phase.generate).
  bool generate = true;
};

struct CheckResult {
  ReplayResult replay;
  std::vector<SuiteResult> suites;  // one per implementation whose properties ran, in order
  std::string text;                 // replay, suite summary and the verdict line, for people
  bool passed() const;
  std::string verdict() const;  // "VERIFIED: ..." or "NOT VERIFIED: ...", one line
};

// The one verdict line of one or more checks (one per spec): VERIFIED only when
// nothing failed and every property ran its planned cases; otherwise what failed,
// or which properties were cut short or not run and how far they got.
std::string verdict(std::span<const CheckResult> results, bool several_specs);

// "Corpus: PLACES (N entries)", the first line of a run: what it replays.
std::string corpus_line(const std::vector<std::filesystem::path>& corpus);

// The library properties run with the first implementation only: they do not depend on it.
CheckResult check(const PropertyTable& table, const std::vector<harness::Implementation>& implementations,
                  const CheckOptions& options);

}  // namespace chunkmeta::engine
