#include "chunkmeta/engine/check.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "shrink_watch.hpp"

namespace chunkmeta::engine {

ReplayResult replay_corpus(const std::vector<harness::Implementation>& implementations,
                           const std::vector<std::filesystem::path>& inputs,
                           const std::function<std::string(const Workload&)>& outside) {
  ReplayResult result;
  std::ostringstream text;
  int of_other_specs = 0;
  std::vector<harness::CorpusEntry> entries;
  for (const auto& file : harness::corpus_files(inputs)) {
    auto loaded = harness::load_corpus_entry(file);
    if (auto* why = std::get_if<std::string>(&loaded)) {
      text << "unreadable corpus entry: " << *why << "\n";
      ++result.unreadable;
      continue;
    }
    auto& entry = std::get<harness::CorpusEntry>(loaded);
    const bool ours = std::any_of(implementations.begin(), implementations.end(),
                                  [&](const harness::Implementation& impl) { return impl.spec == entry.spec; });
    if (!ours) {
      ++of_other_specs;
      continue;
    }
    if (outside && !outside(entry.workload).empty()) {
      ++result.left_out;
      continue;
    }
    entries.push_back(std::move(entry));
  }
  // Smallest first: a failure is then met, and reported, on the smallest entry soonest.
  const auto size = [](const harness::CorpusEntry& e) {
    return std::pair(e.workload.rows(), harness::to_json(*e.spec, e.workload).dump().size());
  };
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const auto& a, const auto& b) { return size(a) < size(b); });
  // An implementation that crashed or hung on an entry is sent no more: each
  // further one would cost a restart or a timeout, and its smallest failure is known.
  std::vector<harness::Implementation> active = implementations;
  std::map<std::string, std::size_t> misbehaved_after;  // implementation -> entries sent to it
  for (const auto& entry : entries) {
    ++result.files;
    for (auto& cx : harness::replay(entry, active)) {
      text << harness::render(cx);
      if (harness::is_misbehaviour(cx.finding.kind) && !misbehaved_after.contains(cx.implementation)) {
        std::erase_if(active, [&](const harness::Implementation& impl) { return impl.name == cx.implementation; });
        misbehaved_after[cx.implementation] = static_cast<std::size_t>(result.files);
      }
      result.failures.push_back(std::move(cx));
    }
  }
  for (const auto& [name, sent] : misbehaved_after) {
    if (sent < entries.size()) {
      text << "Replay: " << name << " was sent no more entries after it misbehaved (" << entries.size() - sent
           << " not replayed against it)\n";
    }
  }
  text << "Replay: " << result.files << " files x " << implementations.size() << " implementations, "
       << result.failures.size() << " failures, " << result.unreadable << " unreadable";
  if (of_other_specs > 0) text << " (" << of_other_specs << " entries of other specs)";
  if (result.left_out > 0) text << " (" << result.left_out << " outside the stated domain, not replayed)";
  text << "\n";
  result.text = text.str();
  return result;
}

bool ReplayResult::failed(const std::string& implementation) const {
  return std::any_of(failures.begin(), failures.end(),
                     [&](const harness::Counterexample& cx) { return cx.implementation == implementation; });
}

namespace {

// Whether `impl` fails on `cx`'s workload again, asked as a replay asks it;
// `right` receives its answer when it is right.
bool fails_again(const harness::Implementation& impl, const harness::Counterexample& cx,
                 std::optional<harness::Outcome>* right = nullptr) {
  auto again = harness::ask_again_as_a_replay_does(impl, cx.workload, cx.finding.kind);
  auto* outcome = std::get_if<harness::Outcome>(&again.answer);
  if (!again.failed() && right != nullptr && outcome != nullptr) *right = std::move(*outcome);
  return again.failed();
}

// Shrinks a failing corpus entry through `impl` (in batches); `reported` becomes
// the smallest case that still fails, or stays the entry as found.
void shrink_replay_failure(const harness::Implementation& impl, const harness::Counterexample& found,
                           const SuiteOptions& options, const PropertyTable& table, detail::ShrinkWatch& watch,
                           harness::Counterexample& reported) {
  harness::ShrinkOptions shrink;
  shrink.stop_requested = [&watch] { return watch.should_stop(); };
  if (!options.excluded_classes.empty())
    shrink.allowed = [&](const Workload& w) { return outside_domain(table, options, w).empty(); };
  if (impl.shrinking) impl.shrinking(true);
  auto shrunk = harness::shrink_failure(found.workload, std::span<const harness::Implementation>(&impl, 1),
                                        found.property, shrink, [&watch](const harness::Counterexample& smaller) {
                                          harness::Counterexample copy = smaller;
                                          watch.on_failure(copy);
                                        });
  if (impl.shrinking) impl.shrinking(false);
  if (shrunk.empty()) {
    // It failed (found, and each time asked again), then passed when the shrink asked it: flaky, reported as
    // found, asked again to say how often and to show a right answer.
    const int failed_before = 1 + (harness::ends_its_process(found.finding.kind) ? 2 : 1);
    const int passed = detail::ask_found_failure_again(
        reported, watch, [&](std::optional<harness::Outcome>* right) { return fails_again(impl, found, right); },
        failed_before);
    if (passed == 0) {
      watch.flaky("it passed once when the shrink asked it, between failures: a race, state kept between calls, or "
                  "randomness");
    }
    return;
  }
  // A crash's shrink steps were not asked twice (each costs a process): the case reached is, in a fresh one.
  if (harness::ends_its_process(found.finding.kind) && !(shrunk.front().workload == found.workload) &&
      !fails_again(impl, shrunk.front())) {
    watch.stopped_because("the smaller case did not fail again when it was asked again");
    return;
  }
  reported = std::move(shrunk.front());
}

// The corpus entries are real failing workloads: for each kind of finding of
// `impl`, its smallest failing entry is shrunk (through the implementation, in
// batches) and written out, announced at once and replaced as it shrinks.
void report_replay_failures(const harness::Implementation& impl, ReplayResult& replay, const SuiteOptions& options,
                            const PropertyTable& table) {
  std::map<harness::FindingKind, const harness::Counterexample*> smallest;
  const auto size = [&impl](const Workload& w) {
    return std::pair(w.rows(), harness::to_json(*impl.spec, w).dump().size());
  };
  for (const auto& cx : replay.failures) {
    if (cx.implementation != impl.name) continue;
    auto& best = smallest[cx.finding.kind];
    if (best == nullptr || size(cx.workload) < size(best->workload)) best = &cx;
  }
  std::ostringstream text;
  for (const auto& entry : smallest) {
    const harness::Counterexample* found = entry.second;  // a name of its own: lambdas below capture it
    Reported reported;
    std::string error;
    if (impl.spec->validate(found->workload)) {
      // Invalid input cannot be shrunk (every shrink step keeps a workload valid): reported as found.
      reported.counterexample = *found;
      if (options.write_reports) reported.files = harness::write_counterexample(*found, report_dir_of(options), &error);
    } else {
      detail::ShrinkWatch watch(options, impl.name + ", " + found->property);
      reported.counterexample = *found;
      watch.on_failure(reported.counterexample);
      // Failed, then passed when asked again: reported as found, flaky (never shrunk: the shrink would follow chance).
      const bool flaky = detail::asked_again_when_found(found->finding.kind) &&
                         detail::ask_found_failure_again(reported.counterexample, watch,
                                                         [&](std::optional<harness::Outcome>* right) {
                                                           return fails_again(impl, *found, right);
                                                         }) > 0;
      if (!flaky) shrink_replay_failure(impl, *found, options, table, watch, reported.counterexample);
      reported.files = watch.finish(reported.counterexample, &error);
    }
    text << harness::render(reported.counterexample, reported.files);
    if (options.write_reports && !reported.files) text << "(could not write the report: " << error << ")\n";
    replay.reported.push_back(std::move(reported));
  }
  replay.text += text.str();
}

}  // namespace

std::string corpus_line(const std::vector<std::filesystem::path>& corpus) {
  if (corpus.empty()) return "Corpus: none\n";
  std::string places;
  std::vector<std::filesystem::path> present;
  for (const auto& place : corpus) {
    places += (places.empty() ? "" : ", ") + place.string();
    if (std::filesystem::exists(place)) {
      present.push_back(place);
    } else {
      places += " (missing)";
    }
  }
  const auto entries = harness::corpus_files(present).size();
  return "Corpus: " + places + " (" + std::to_string(entries) + (entries == 1 ? " entry" : " entries") + ")\n";
}

bool CheckResult::passed() const {
  if (!replay.passed()) return false;
  for (const auto& suite : suites) {
    if (!suite.passed()) return false;
  }
  return true;
}

std::string CheckResult::verdict() const { return engine::verdict(std::span<const CheckResult>(this, 1), false); }

std::string verdict(std::span<const CheckResult> results, bool several_specs) {
  bool failed = false;
  bool replay_failed = false;
  bool interrupted = false;
  bool generated = false;
  std::vector<std::string> cut_short;
  for (const auto& result : results) {
    replay_failed = replay_failed || !result.replay.passed();
    failed = failed || replay_failed;
    for (const auto& suite : result.suites) {
      generated = true;
      interrupted = interrupted || suite.interrupted();
      for (const auto& p : suite.properties) failed = failed || !p.passed;
      for (auto& line : suite.cut_short()) cut_short.push_back(std::move(line));
    }
  }
  if (failed) {
    return std::string("NOT VERIFIED: see the counterexamples above") +
           (interrupted ? " (interrupted: a case marked \"not fully shrunk\" is the smallest found)" : "") +
           (replay_failed ? "; the corpus replay failed" : "") + "\n";
  }
  if (interrupted) return "NOT VERIFIED: interrupted before the properties ran to the end (no failure so far)\n";
  if (!cut_short.empty()) {
    std::string text = "NOT VERIFIED: no failure, but not every property ran its cases: ";
    for (std::size_t i = 0; i < cut_short.size(); ++i) text += (i == 0 ? "" : "; ") + cut_short[i];
    return text + "\n";
  }
  if (!generated) return "VERIFIED: the corpus replay held; no property ran (the generate phase is off)\n";
  // A formulation with no reference says what judged it: the kernels' view, not an equality.
  std::string judged;
  for (const auto& result : results) {
    for (const auto& suite : result.suites) {
      const harness::Spec* spec = suite.table != nullptr ? suite.table->spec : nullptr;
      if (spec != nullptr && !spec->judged_by_reference() && judged.empty()) {
        judged = " (judged by the kernels' view alone, with no reference: " + std::string(spec->kernels_view_covers()) + ")";
      }
    }
  }
  return std::string("VERIFIED: every property held") + (several_specs ? " for every spec" : "") + judged + "\n";
}

CheckResult check(const PropertyTable& table, const std::vector<harness::Implementation>& implementations,
                  const CheckOptions& options) {
  const auto tell = [&options](const std::string& what) {
    if (options.progress) options.progress(what);
  };
  CheckResult result;
  SuiteOptions suite = options.suite;
  if (!suite.progress) suite.progress = options.progress;
  // The doors' own first calls (a program's warm-up) are made and judged before anything is sent:
  // one that misbehaves there (stuck, ended) would do so again for every workload, so it is
  // reported at once and sent nothing more. A wrong first answer that only a first call gives
  // leads its suite's results; one its workload gets whenever it is asked is an ordinary bug,
  // which the properties find, shrink and report as such: it is reported here only if they do not.
  std::map<std::string, PropertyResult> first_calls_failed;
  std::map<std::string, PropertyResult> unless_the_properties_fail;
  std::vector<harness::Implementation> answering;
  for (const auto& impl : implementations) {
    if (impl.warm_up && !(suite.stop_requested && suite.stop_requested())) impl.warm_up();
    bool whenever_asked = false;
    auto own = judge_own_calls(impl, suite, table, &whenever_asked);
    const bool misbehaved = own && own->counterexample && harness::is_misbehaviour(own->counterexample->finding.kind);
    if (own && !misbehaved && whenever_asked && options.generate) {
      unless_the_properties_fail.emplace(impl.name, std::move(*own));
    } else if (own) {
      first_calls_failed.emplace(impl.name, std::move(*own));
    }
    if (!misbehaved) answering.push_back(impl);
  }
  // Only an implementation whose first calls misbehaved is left out of `answering`.
  const auto first_calls_misbehaved = [&](const std::string& name) {
    return std::none_of(answering.begin(), answering.end(), [&](const harness::Implementation& i) { return i.name == name; });
  };
  if (!options.corpus.empty()) {
    tell("Replaying the corpus...\n");
    result.replay = replay_corpus(answering, options.corpus, [&](const Workload& w) {
      return outside_domain(table, suite, w);
    });
    tell(result.replay.text);
    const std::size_t before = result.replay.text.size();
    for (const auto& impl : implementations) {
      if (result.replay.failed(impl.name)) report_replay_failures(impl, result.replay, suite, table);
    }
    if (result.replay.text.size() > before) tell("Smallest failing corpus workloads (shrunk, unless invalid or flaky):\n" + result.replay.text.substr(before));
  }
  // A first call's failure leads the suite (judge_own_calls); a misbehaviour there runs no property.
  const auto first_calls_of = [&](const std::string& name) -> std::optional<PropertyResult> {
    const auto found = first_calls_failed.find(name);
    if (found == first_calls_failed.end()) return std::nullopt;
    PropertyResult failed = std::move(found->second);
    first_calls_failed.erase(found);
    return failed;
  };
  for (const auto& impl : implementations) {
    if (first_calls_misbehaved(impl.name)) {
      tell("Not verifying " + impl.name + ": its first calls already misbehaved.\n");
      result.suites.push_back(run_suite(table, impl, suite, first_calls_of(impl.name)));
      continue;
    }
    if (!options.generate) break;
    if (result.replay.failed(impl.name) && !options.properties_after_replay_failure) {
      tell("Properties not run for " + impl.name +
           ": its corpus replay already fails (the shrunk counterexample above); fix that first, or ask for the "
           "properties anyway (--keep-going).\n");
      continue;
    }
    tell("Verifying " + impl.name + " (" + impl.description + ")" +
         (impl.rejects_invalid_input ? "" : ", valid workloads only") + ", seed " + std::to_string(seed_of(suite)) +
         "...\n");
    result.suites.push_back(run_suite(table, impl, suite, first_calls_of(impl.name)));
    suite.include_library = false;
    if (auto held = unless_the_properties_fail.find(impl.name);
        held != unless_the_properties_fail.end() && result.suites.back().passed()) {
      auto& properties = result.suites.back().properties;
      properties.insert(properties.begin(), std::move(held->second));  // never VERIFIED past a wrong answer
    }
  }
  // Where no suite ran (the replay alone, or its failure first), the doors' own calls are judged all the same.
  for (const auto& impl : implementations) {
    const bool suite_ran = std::any_of(result.suites.begin(), result.suites.end(), [&](const SuiteResult& s) {
      return !s.properties.empty() && s.properties.front().implementation == impl.name;
    });
    if (suite_ran) continue;
    auto own = first_calls_failed.contains(impl.name) ? first_calls_of(impl.name) : judge_own_calls(impl, suite, table);
    if (own) {
      SuiteResult alone;
      alone.table = &table;
      alone.properties.push_back(std::move(*own));
      result.suites.push_back(std::move(alone));
    }
  }
  result.text = (options.corpus.empty() ? "" : result.replay.text) + summarize(result.suites) + result.verdict();
  return result;
}

}  // namespace chunkmeta::engine
