// A Round's failure: shrunk by the greedy loop, its timeouts confirmed once,
// an earlier property's bug recognised, and its report written.
#include <algorithm>

#include "chunkmeta/harness/greedy_shrink.hpp"
#include "round.hpp"

namespace chunkmeta::engine::detail {

std::vector<std::int64_t> Round::towards_zero(std::int64_t x) {
  std::vector<std::int64_t> values;
  for (std::int64_t step = x; step != 0; step /= 2) values.push_back(x - step);
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<Round::Step> Round::steps_of(const Case& c, const std::optional<Step>& accepted) {
  std::vector<Step> steps;
  const auto workload_steps = accepted && accepted->of_workload
                                  ? harness::shrink_steps_resuming(c.workload, accepted->workload_step)
                                  : harness::shrink_steps(c.workload);
  for (const auto& step : workload_steps) steps.push_back({true, step, 0, 0});
  for (std::size_t p = 0; p < c.parameters.size(); ++p) {
    for (std::int64_t value : towards_zero(c.parameters[p])) steps.push_back({false, {}, p, value});
  }
  return steps;
}

Case Round::apply(const Case& c, const Step& step) {
  if (step.of_workload) return Case{harness::apply(c.workload, step.workload_step), c.parameters};
  Case smaller = c;
  smaller.parameters[step.parameter] = step.value;
  return smaller;
}

std::optional<std::pair<std::size_t, Counterexample>> Round::first_failing(std::span<const Case> candidates,
                                                                            std::optional<harness::FindingKind> only) {
  const auto judged_failing = [&](const Case& candidate, std::span<const Workload> asks,
                                  std::span<const Answer> answers) {
    auto verdict = judge(candidate, asks, answers);
    if (verdict && only && verdict->finding.kind != *only) verdict.reset();
    return verdict;
  };
  if (!batches()) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto asks = property_.asks(candidates[i]);
      const auto answers = answer_one_by_one(asks, true);
      if (auto verdict = judged_failing(candidates[i], asks, answers)) return std::pair{i, std::move(*verdict)};
    }
    return std::nullopt;
  }
  // One round trip for the whole batch, judged in order as answers come in:
  // the first failing candidate ends it.
  std::vector<Workload> asks;
  std::vector<std::size_t> first_ask;
  for (const auto& candidate : candidates) {
    first_ask.push_back(asks.size());
    for (auto& ask : property_.asks(candidate)) asks.push_back(std::move(ask));
  }
  first_ask.push_back(asks.size());
  std::vector<std::optional<Answer>> answers;
  std::size_t judged = 0;
  std::optional<std::pair<std::size_t, Counterexample>> failing;
  const auto judge_ready = [&](std::size_t ready) {
    for (; !failing && judged < candidates.size() && first_ask[judged + 1] <= ready; ++judged) {
      std::vector<Answer> mine;
      for (std::size_t a = first_ask[judged]; a < first_ask[judged + 1]; ++a) mine.push_back(*answers[a]);
      const auto theirs = std::span<const Workload>(asks).subspan(first_ask[judged], mine.size());
      if (auto verdict = judged_failing(candidates[judged], theirs, mine)) failing = std::pair{judged, std::move(*verdict)};
    }
    return failing.has_value();
  };
  const auto start = Clock::now();
  const std::size_t sent = answer_in_batch(asks, true, answers, judge_ready);
  result_.implementation_seconds += seconds_since(start);
  result_.implementation_calls += static_cast<long long>(sent);
  judge_ready(answers.size());
  return failing;
}

Failure Round::shrink(Failure failure, detail::ShrinkWatch& watch) {
  const auto only = options_.distinct_bugs ? std::optional(failure.counterexample.finding.kind) : std::nullopt;
  Counterexample latest;  // the verdict of the candidate the loop is taking
  harness::GreedyShrink<Case, Step> how;
  how.steps = [](const Case& c, const std::optional<Step>& accepted) { return steps_of(c, accepted); };
  how.candidate = [this](const Case& c, const Step& step) -> std::optional<Case> {
    Case candidate = apply(c, step);
    // A case's workload is valid (invalid input is made from it by parameters): the shared
    // shrinker's steps keep Mamba's domain, not every spec's (a block size that must stay a
    // multiple of the chunk size), so a step that leaves the spec's domain is not a candidate.
    if (step.of_workload && spec_.validate(candidate.workload)) return std::nullopt;
    if (const std::string left_out = excluded(candidate); !left_out.empty()) {
      ++result_.left_out[left_out];
      return std::nullopt;
    }
    return candidate;
  };
  int flakes = 0;
  how.first_failing = [&](std::span<const Case> batch) -> std::optional<std::size_t> {
    for (std::size_t from = 0; from < batch.size() && flakes < kMostFlakes;) {
      auto failing = first_failing(batch.subspan(from), only);
      if (!failing) return std::nullopt;
      const std::size_t at = from + failing->first;
      // A step is taken only on a failure that holds: asked again, it fails again.
      if (!asked_again_when_shrinking(failing->second) || interrupted() || case_fails_again(batch[at]) || interrupted()) {
        latest = std::move(failing->second);
        return at;
      }
      if (++flakes == kMostFlakes) {
        watch.stopped_because("flaky: " + std::to_string(flakes) +
                              " smaller cases failed once and passed when asked again");
      }
      from = at + 1;
    }
    return std::nullopt;
  };
  how.on_smaller = [&](const Case& smaller) {
    failure = Failure{smaller, std::move(latest), failure.index, {}};
    ++result_.shrinks;
    watch.on_failure(failure.counterexample);
  };
  // Each smaller case that still hangs costs a limit (and a restart): the shrink of a timeout gets
  // a time of its own, and what it reached then is reported, not fully shrunk.
  const auto started = Clock::now();
  const bool costly = failure.counterexample.finding.kind == harness::FindingKind::timed_out;
  how.stop = [&watch, &flakes, started, costly] {
    if (costly && seconds_since(started) > kMostSecondsShrinkingATimeout) {
      watch.stopped_because("time: each smaller case that hangs costs a timeout; shrinking stopped after " +
                            std::to_string(static_cast<int>(kMostSecondsShrinkingATimeout)) + " s");
      return true;
    }
    return flakes >= kMostFlakes || watch.should_stop();
  };
  how.max_batch = 64;
  Case current = failure.found;
  harness::greedy_shrink(current, how);
  return failure;
}

bool Round::asked_again_when_shrinking(const Counterexample& cx) {
  return asked_again_when_found(cx.finding.kind) && !harness::ends_its_process(cx.finding.kind);
}

Failure Round::confirmed_after_the_shrink(const Failure& found, Failure held, detail::ShrinkWatch& watch) {
  const bool shrunk = !(held.found == found.found);
  if (!shrunk || fails_again(held)) return held;
  watch.stopped_because("the smaller case did not fail again when it was asked again");
  return found;
}

std::optional<Counterexample> Round::case_fails_again(const Case& c) {
  const auto asks = property_.asks(c);
  const auto again = answer_one_by_one(asks, false);
  if (memo_ != nullptr) {
    for (std::size_t a = 0; a < asks.size(); ++a) memo_->keep(spec_, asks[a], again[a]);
  }
  return judge(c, asks, again);
}

bool Round::interrupted() const { return options_.stop_requested && options_.stop_requested(); }

bool Round::fails_again(const Failure& failure, std::optional<harness::Outcome>* right) {
  if (interrupted()) return true;
  const Counterexample& cx = failure.counterexample;
  std::vector<Workload> asks;
  std::vector<Answer> answers;
  bool failed = false;
  if (harness::ends_its_process(cx.finding.kind)) {
    // Its workload alone, as a replay asks it: a relation's third ask would be the process's fifth call.
    const auto start = Clock::now();
    auto again = harness::ask_again_as_a_replay_does(impl_, cx.workload, cx.finding.kind);
    result_.implementation_seconds += seconds_since(start);
    ++result_.implementation_calls;
    asks = {cx.workload};
    answers = {std::move(again.answer)};
    failed = again.failed();
  } else {
    asks = property_.asks(failure.found);
    answers = answer_one_by_one(asks, false);
    failed = judge(failure.found, asks, answers).has_value();
  }
  if (memo_ != nullptr) {
    for (std::size_t a = 0; a < asks.size(); ++a) memo_->keep(spec_, asks[a], answers[a]);
  }
  if (interrupted()) return true;
  for (std::size_t a = 0; !failed && right != nullptr && a < asks.size(); ++a) {
    const auto* outcome = std::get_if<harness::Outcome>(&answers[a]);
    if (asks[a] == cx.workload && outcome != nullptr) *right = *outcome;
  }
  return failed;
}

bool Round::reproduces(Failure& found, detail::ShrinkWatch& watch) {
  if (!asked_again_when_found(found.counterexample.finding.kind)) return true;
  passed_when_asked_again_ = detail::ask_found_failure_again(
      found.counterexample, watch, [&](std::optional<harness::Outcome>* right) { return fails_again(found, right); });
  return passed_when_asked_again_ == 0;
}

bool Round::unconfirmed_timeout(const Counterexample& cx) const {
  // A program found idle with its answer due is stuck: no longer limit changes that. Once the run
  // is interrupted, the doors answer with the reference: a timeout is then reported as it stands
  // ("not fully shrunk (interrupted)"), never withdrawn by an answer that was not the program's.
  return cx.finding.kind == harness::FindingKind::timed_out && !cx.finding.idle && !cx.finding.cut_past_the_timeout &&
         impl_.confirm && !timeout_confirmed_before() && !interrupted();
}

std::optional<Failure> Round::asked_again(Failure failure) {
  const auto asks = property_.asks(failure.found);
  auto answers = failure.answers.empty() ? answer_one_by_one(asks, true) : std::move(failure.answers);
  ask_timeouts_again(asks, answers, Limit::longer);
  if (memo_ != nullptr) {
    for (std::size_t a = 0; a < asks.size(); ++a) memo_->keep(spec_, asks[a], answers[a]);
  }
  auto verdict = judge(failure.found, asks, answers);
  if (!verdict) return std::nullopt;
  return Failure{std::move(failure.found), std::move(*verdict), failure.index, {}};
}

std::optional<Failure> Round::confirmed(const Failure& found, Failure minimal, detail::ShrinkWatch& watch) {
  if (!unconfirmed_timeout(minimal.counterexample)) return minimal;
  const bool shrunk = !(minimal.found == found.found);
  if (auto held = asked_again(shrunk ? std::move(minimal) : found)) return held;
  if (!shrunk) return std::nullopt;
  watch.stopped_because("a smaller case's timeout did not hold when it was asked again");
  if (!unconfirmed_timeout(found.counterexample)) return found;  // a wrong answer, say: it holds as found
  return asked_again(found);
}

std::vector<const Counterexample*> Round::earlier_reports() const {
  std::vector<const Counterexample*> reports;
  if (known_ == nullptr) return reports;
  for (const auto& earlier : *known_) {
    // A cost that grows faster than the work is reported as found (its figures are the finding): tried too.
    const bool final = earlier.status == harness::kMinimal || earlier.finding.kind == harness::FindingKind::superlinear_cost;
    if (final && earlier.duplicate_of.empty()) reports.push_back(&earlier);
  }
  return reports;
}

std::optional<Failure> Round::earlier_bug(std::uint64_t seed) {
  const auto reports = earlier_reports();
  if (reports.empty() || options_.distinct_bugs) return std::nullopt;
  const std::size_t parameters = property_.draw(rc::Random(seed).split(), 0).parameters.size();
  std::vector<Case> candidates;
  std::vector<const Counterexample*> tried;
  for (const auto* earlier : reports) {
    Case candidate{earlier->workload, std::vector<std::int64_t>(parameters, 0)};
    if (!excluded(candidate).empty()) continue;
    candidates.push_back(std::move(candidate));
    tried.push_back(earlier);
  }
  auto failing = first_failing(candidates);
  if (!failing || unconfirmed_timeout(failing->second)) return std::nullopt;
  failing->second.duplicate_of = tried[failing->first]->property;
  return Failure{std::move(candidates[failing->first]), std::move(failing->second), -1, {}};
}

std::optional<Failure> Round::known_bug(const Failure& failure) {
  if (options_.distinct_bugs) return std::nullopt;
  for (const auto* earlier : earlier_reports()) {
    Case candidate{earlier->workload, failure.found.parameters};
    if (!excluded(candidate).empty()) continue;
    if (auto failing = first_failing(std::span<const Case>(&candidate, 1))) {
      failing->second.duplicate_of = earlier->property;
      return Failure{std::move(candidate), std::move(failing->second), failure.index, {}};
    }
  }
  return std::nullopt;
}

std::string Round::shrunk_to_earlier(const Counterexample& cx) const {
  for (const auto* earlier : earlier_reports()) {
    if (earlier->workload == cx.workload && earlier->finding.kind == cx.finding.kind) return earlier->property;
  }
  return "";
}

bool Round::report(Failure& found, std::uint64_t seed, detail::ShrinkWatch& watch) {
  const int cases_before = result_.cases;
  // Marked "shrinking" in place: its outputs may be huge, and it is not copied for that.
  watch.on_failure(found.counterexample, unconfirmed_timeout(found.counterexample));
  if (impl_.shrinking) impl_.shrinking(true);
  const bool reproducible = reproduces(found, watch);
  std::optional<Failure> held = !reproducible ? found : found.counterexample.duplicate_of.empty() ? known_bug(found) : found;
  if (!held) held = confirmed(found, shrink(found, watch), watch);
  // A crash's shrink steps were not asked twice: the case it reached is, once.
  if (held && reproducible && harness::ends_its_process(found.counterexample.finding.kind))
    held = confirmed_after_the_shrink(found, std::move(*held), watch);
  if (impl_.shrinking) impl_.shrinking(false);
  if (!held) {
    watch.withdraw();
    count_passed(found.found);
    return false;
  }
  Failure& failure = *held;
  Counterexample& cx = failure.counterexample;
  if (cx.duplicate_of.empty()) cx.duplicate_of = shrunk_to_earlier(cx);
  result_.duplicate_of = cx.duplicate_of;
  cx.seed = seed;
  cx.cases_before_failure = cases_before;
  cx.reproduce = !reproducible ? "--seed " + std::to_string(seed) + " draws the case again (case " +
                                     std::to_string(cases_before + 1) + " of property " + property_.name +
                                     "), but " + detail::how_asked_again(cx.finding.kind) + ", it passed " +
                                     std::to_string(passed_when_asked_again_) + " of them"
                               : "--seed " + std::to_string(seed) + " draws it again: case " +
                                     std::to_string(cases_before + 1) + " of property " + property_.name + ", then " +
                                     std::to_string(result_.shrinks) + " shrink steps";
  if (!options_.rerun_command.empty()) cx.rerun_command = rerun_command(seed);
  std::string error;
  result_.files = watch.finish(cx, &error);
  if (options_.write_reports && !result_.files) result_.message = "could not write the report: " + error;
  result_.counterexample = std::move(cx);
  return true;
}

std::string Round::rerun_command(std::uint64_t seed) const {
  std::string text = options_.rerun_command;
  const auto replace = [&text](const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace("{property}", property_.name);
  replace("{implementation}", harness::shell_quote(impl_.name));
  replace("{seed}", std::to_string(seed));
  replace("{spec}", std::string(spec_.name()));
  return text;
}

}  // namespace chunkmeta::engine::detail
