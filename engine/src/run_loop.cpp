// The run loop, owned here: RapidCheck gives the generators and the random
// stream (public Gen, Random), nothing else. Per property, rounds (round.hpp):
// draw the cases, answer them in batches, judge them in order, shrink the
// first failure with the project's shrinker, report it as it shrinks; here,
// how many cases and rounds a property runs, and a suite's properties in turn.
#include "chunkmeta/engine/run.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <future>
#include <memory>
#include <random>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "round.hpp"
#include "shrink_watch.hpp"

namespace chunkmeta::engine {

const Property* PropertyTable::find(std::string_view name) const {
  for (const auto& property : properties) {
    if (property.name == name) return &property;
  }
  return nullptr;
}

std::string PropertyTable::edge_class_names() const {
  std::string names;
  if (classes.empty()) return names;
  for (const auto& name : classes.front().names) names += (names.empty() ? "\"" : ", \"") + name + "\"";
  return names;
}

std::optional<std::string> PropertyTable::unknown_edge_class(std::span<const std::string> names) const {
  for (const auto& name : names) {
    if (classes.empty() || std::find(classes.front().names.begin(), classes.front().names.end(), name) ==
                               classes.front().names.end())
      return name;
  }
  return std::nullopt;
}

std::string outside_domain(const PropertyTable& table, const SuiteOptions& options, const Workload& workload) {
  if (options.excluded_classes.empty() || !table.workload_classes || table.spec == nullptr) return "";
  if (table.spec->validate(workload)) return "";  // invalid input has no edge classes
  for (auto& name : table.workload_classes(workload)) {
    if (std::find(options.excluded_classes.begin(), options.excluded_classes.end(), name) != options.excluded_classes.end())
      return name;
  }
  return "";
}

std::uint64_t seed_of(const SuiteOptions& options) {
  if (options.seed) return *options.seed;
  static const std::uint64_t seed = [] {
    if (const char* given = std::getenv("CHUNKMETA_SEED"); given != nullptr && *given != '\0')
      return static_cast<std::uint64_t>(std::strtoull(given, nullptr, 10));
    return static_cast<std::uint64_t>(std::random_device{}()) << 32 | std::random_device{}();
  }();
  return seed;
}

std::filesystem::path report_dir_of(const SuiteOptions& options) {
  return options.report_dir.empty() ? harness::default_report_dir() : options.report_dir;
}

double case_scale() {
  const char* scale = std::getenv("CHUNKMETA_CASE_SCALE");
  if (scale == nullptr || *scale == '\0') return 1.0;
  const double value = std::strtod(scale, nullptr);
  return value > 0 ? value : 1.0;
}

namespace {

using detail::AnswerMemo;
using detail::Clock;
using detail::Round;
using detail::seconds_since;

// The latest round's verdict (and counterexample), with the counts of all rounds;
// a passing run keeps its first seed.
void add_round(PropertyResult& total, PropertyResult round) {
  round.cases += total.cases;
  round.rounds += total.rounds;
  round.seconds += total.seconds;
  round.implementation_seconds += total.implementation_seconds;
  round.implementation_calls += total.implementation_calls;
  round.prefetched += total.prefetched;
  round.slow_calls += total.slow_calls;
  for (const auto& [name, count] : total.edge_classes) round.edge_classes[name] += count;
  for (const auto& [name, count] : total.left_out) round.left_out[name] += count;
  if (round.passed && total.rounds > 0) round.seed = total.seed;
  total = std::move(round);
}

// A case count that no run reaches: the time budget alone ends the run.
constexpr int kBudgetDecides = 1 << 30;

// The cases a property must run to count as run: its share of the case count,
// or of the default count (scaled) when none is given.
int planned_cases(const Property& property, const SuiteOptions& options) {
  const double count = options.cases > 0 ? options.cases : options.default_cases * case_scale();
  return std::max(1, static_cast<int>(std::lround(count * property.case_share)));
}

PropertyResult run_with(const Property& property, const Implementation& impl, const SuiteOptions& options,
                        const PropertyTable* table, AnswerMemo* memo, const std::vector<Counterexample>* known) {
  const int planned = planned_cases(property, options);
  const bool floored = options.min_cases > 0 && options.time_budget_seconds > 0;
  // A budget without a case count runs as many as fit; the planned ones must fit to count.
  int target = options.cases <= 0 && options.time_budget_seconds > 0 && !floored ? kBudgetDecides : planned;
  // What it must run to count as run: its planned cases, or its floor when the budget decides above that.
  const int floor =
      floored ? std::min(planned, std::max(1, static_cast<int>(std::lround(options.min_cases * property.case_share))))
              : planned;
  const bool after_a_bug = known != nullptr && !options.distinct_bugs && options.cases_after_a_bug > 0 &&
                           std::any_of(known->begin(), known->end(), [](const Counterexample& cx) {
                             return cx.status == harness::kMinimal;
                           });
  if (after_a_bug)
    target = std::min(target, std::max(1, static_cast<int>(std::lround(options.cases_after_a_bug * property.case_share))));
  const auto cut_after_a_bug = [&](PropertyResult& result) {
    if (after_a_bug && result.passed && result.cases < floor && result.stopped.empty())
      result.stopped = "a bug was already reported; keep_going runs every property in full";
  };
  const std::uint64_t seed = seed_of(options);
  if (options.time_budget_seconds <= 0) {
    PropertyResult result = Round(property, impl, options, table, memo, known).run(seed, target);
    result.planned = planned;
    cut_after_a_bug(result);
    return result;
  }

  // Rounds: a small first one measures the rate, later ones fill the budget.
  PropertyResult total;
  const auto start = Clock::now();
  for (int round = 0; total.cases < target; ++round) {
    const double left = options.time_budget_seconds - seconds_since(start);
    const int below_floor = std::max(0, std::min(floor, target) - total.cases);
    const double rate = total.seconds > 0 ? total.cases / total.seconds : 0;
    // Past the floor, a round runs what the rest of the budget affords at the rate measured, and none
    // once it affords less than one case (a costly property stops at its floor).
    const double affordable = 0.9 * rate * left;
    if (round > 0 && below_floor == 0 && (left < 0.02 * options.time_budget_seconds || affordable < 1)) break;
    // The first round runs the floor (200 cases for most properties) and measures the rate; a property
    // whose floor is small because its cases are costly (huge batches: 2%) runs just that first, not 200.
    const double wanted = round == 0 ? (below_floor > 0 ? below_floor : 200)
                                     : std::max(affordable, 1.0 * below_floor);
    const int cases = static_cast<int>(std::min<double>(target - total.cases, wanted));
    add_round(total, Round(property, impl, options, table, memo, known).run(seed + static_cast<std::uint64_t>(round), cases));
    if (!total.passed || !total.stopped.empty()) break;
  }
  total.planned = floor;
  cut_after_a_bug(total);
  if (total.passed && total.cases < floor && total.stopped.empty()) total.stopped = "its share of the time budget was used up";
  return total;
}

// A property that sends invalid input, for an implementation that takes valid workloads only.
bool not_applicable(const Property& property, const Implementation& impl) {
  return property.sends_invalid_input && !impl.rejects_invalid_input;
}

PropertyResult skipped(const Property& property, const Implementation& impl) {
  PropertyResult result;
  result.property = property.name;
  result.implementation = impl.name;
  result.passed = true;
  result.skipped = true;
  return result;
}

// A property the run ended before (its budget, an interrupt, a failure with fail_fast).
PropertyResult not_run(const Property& property, const Implementation& impl, const SuiteOptions& options,
                       std::string why) {
  PropertyResult result;
  result.property = property.name;
  result.implementation = impl.name;
  result.passed = true;  // nothing failed: it is incomplete, which passed() refuses
  result.not_run = true;
  result.planned = planned_cases(property, options);
  result.stopped = std::move(why);
  return result;
}

constexpr double kAfterMinimalShrinkSeconds = 10;

}  // namespace

// The first wrong own call in the stated domain is a failure of its own. A
// first call has nothing to shrink: the workload is the door's smallest.
std::optional<PropertyResult> judge_own_calls(const Implementation& impl, const SuiteOptions& options,
                                              const PropertyTable& table, bool* fails_whenever_asked) {
  if (!impl.take_own_calls) return std::nullopt;
  for (auto& call : impl.take_own_calls()) {
    if (!outside_domain(table, options, call.workload).empty()) continue;
    auto finding = harness::judge(*impl.spec, call.workload, call.answer);
    if (!finding) continue;
    Counterexample cx;
    cx.implementation = impl.name;
    cx.spec = impl.spec;
    cx.property = std::string(kOwnCallsProperty);
    cx.workload = call.workload;
    cx.finding = std::move(*finding);
    // Asked once more, to say whether only a first call fails; not after a timeout, which would cost the
    // whole limit again (it is a misbehaviour, reported at once whatever the second call does).
    const bool timed_out = cx.finding.kind == harness::FindingKind::timed_out;
    const bool again =
        timed_out || harness::judge(*impl.spec, call.workload, impl.compute(call.workload)).has_value();
    if (fails_whenever_asked != nullptr) *fails_whenever_asked = again;
    cx.reproduce = "the answer to " + call.when +
                   (timed_out ? std::string("; not asked again (a second timeout would cost the limit again)")
                              : std::string("; asked the same workload again, it answered ") +
                                    (again ? "no better: it fails on that workload whenever it is asked"
                                           : "right: only a first call fails (a lazy set-up?)"));
    PropertyResult result;
    result.property = cx.property;
    result.implementation = impl.name;
    result.passed = false;
    result.planned = 0;
    std::string error;
    if (options.write_reports) {
      result.files = harness::write_counterexample(cx, report_dir_of(options), &error);
      if (!result.files) result.message = "could not write the report: " + error;
    }
    result.seed = seed_of(options);
    result.counterexample = std::move(cx);
    return result;
  }
  return std::nullopt;
}

PropertyResult run_property(const Property& property, const Implementation& implementation,
                            const SuiteOptions& options, const PropertyTable* table) {
  return run_with(property, implementation, options, table, nullptr, nullptr);
}

SuiteResult run_suite(const PropertyTable& table, const Implementation& impl, const SuiteOptions& options,
                      std::optional<PropertyResult> first_calls) {
  SuiteResult suite;
  suite.table = &table;
  std::vector<const Property*> selected;
  for (const auto& property : table.properties) {
    if (property.scope == Scope::library && !options.include_library) continue;
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), property.name) == options.only.end())
      continue;
    selected.push_back(&property);
  }
  const auto start = Clock::now();
  AnswerMemo memo;
  std::vector<Counterexample> reported;  // this implementation's minimal reports so far
  std::vector<std::optional<harness::WrittenFiles>> reported_files;
  SuiteOptions share = options;
  if (options.time_budget_seconds > 0 && options.min_cases <= 0 && !options.deadline)
    share.deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.time_budget_seconds));
  // Every answer is judged, the door's own calls' too: those the caller judged
  // before anything was sent lead the results, then after each property those
  // made since (a restarted process's warm-up), until one is wrong. A
  // misbehaviour on a first call ends the run before any property: every
  // workload would meet the same.
  bool own_calls_failed = first_calls.has_value();
  std::string ended_before;
  if (first_calls) {
    if (const auto& cx = first_calls->counterexample; cx && harness::is_misbehaviour(cx->finding.kind))
      ended_before = "its first calls already misbehaved (" + std::string(harness::to_string(cx->finding.kind)) +
                     "): every workload would meet the same";
    suite.properties.push_back(std::move(*first_calls));
  }
  const auto own_calls = [&] {
    if (own_calls_failed) return;
    if (auto failed = judge_own_calls(impl, options, table)) {
      suite.properties.push_back(std::move(*failed));
      own_calls_failed = true;
    }
  };
  own_calls();
  const auto end_here = [&](std::size_t from, const std::string& why) {
    for (std::size_t rest = from; rest < selected.size(); ++rest) {
      suite.properties.push_back(not_applicable(*selected[rest], impl) ? skipped(*selected[rest], impl)
                                                                       : not_run(*selected[rest], impl, options, why));
    }
  };
  if (!ended_before.empty()) {
    end_here(0, ended_before);
    return suite;
  }
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const Property& property = *selected[i];
    if (not_applicable(property, impl)) {
      suite.properties.push_back(skipped(property, impl));
      continue;
    }
    if (options.time_budget_seconds > 0) {
      const double left = options.time_budget_seconds - seconds_since(start);
      share.time_budget_seconds = std::max(0.05, left / static_cast<double>(selected.size() - i));
    }
    PropertyResult result = run_with(property, impl, share, &table, &memo, &reported);
    if (!result.duplicate_of.empty()) {
      // Listed once: its report is the earlier property's (its own file goes).
      for (std::size_t r = 0; r < reported.size(); ++r) {
        if (reported[r].property != result.duplicate_of) continue;
        if (result.files && reported_files[r] && result.files->report != reported_files[r]->report) {
          std::error_code ignored;
          std::filesystem::remove(result.files->report, ignored);
        }
        result.files = reported_files[r];
      }
    }
    if (result.counterexample && result.counterexample->status == harness::kMinimal) {
      if (result.duplicate_of.empty()) {
        reported.push_back(*result.counterexample);
        reported_files.push_back(result.files);
      }
      // Once the implementation has a minimal report, later failures are most
      // likely the same bug: they get a short shrink budget, not a long wait.
      share.shrink_budget_seconds = std::min(share.shrink_budget_seconds > 0 ? share.shrink_budget_seconds
                                                                              : kAfterMinimalShrinkSeconds,
                                             kAfterMinimalShrinkSeconds);
    }
    suite.properties.push_back(std::move(result));
    own_calls();
    std::string ended;
    if (options.stop_at_first_failure && !suite.properties.back().passed) ended = "stopped at the first failure";
    if (options.stop_requested && options.stop_requested()) ended = "interrupted";
    if (share.deadline && Clock::now() >= *share.deadline) ended = "the time budget was used up";
    if (!ended.empty()) {
      end_here(i + 1, ended);
      break;
    }
  }
  return suite;
}

}  // namespace chunkmeta::engine
