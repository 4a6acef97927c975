// The run loop: RapidCheck runs of each property, batched answers, rounds
// under a time budget, and what a failure leaves behind (see shrink_watch.hpp).
#include "chunkmeta/properties/suite.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <future>
#include <iostream>
#include <sstream>
#include <utility>

#include "running_case.hpp"
#include "shrink_watch.hpp"

namespace chunkmeta::properties {
namespace {

using harness::Answer;
using harness::Counterexample;
using harness::Finding;
using harness::FindingKind;
using harness::Implementation;

// Tallies edge classes of generated (not shrunk) cases, and accepted shrinks.
class Tally : public rc::detail::TestListener {
 public:
  std::map<std::string, int> classes;
  int shrinks = 0;
  void onTestCaseFinished(const rc::detail::CaseDescription& description) override {
    if (description.result.type != rc::detail::CaseResult::Type::Success) return;
    for (const auto& tag : description.tags) {
      // RapidCheck shows string tags quoted.
      const bool quoted = tag.size() >= 2 && tag.front() == '"' && tag.back() == '"';
      ++classes[quoted ? tag.substr(1, tag.size() - 2) : tag];
    }
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override { shrinks += accepted ? 1 : 0; }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

bool rc_params_mention(const char* key) {
  const char* params = std::getenv("RC_PARAMS");
  return params != nullptr && std::string(params).find(key) != std::string::npos;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// RapidCheck's configuration (RC_PARAMS), read once without the "Using
// configuration: seed=..." line RapidCheck prints on stderr: that seed is not
// the one used when the caller gives its own, and the summary names the one used.
const rc::detail::Configuration& rc_configuration() {
  static const rc::detail::Configuration& configuration = []() -> const rc::detail::Configuration& {
    std::streambuf* const saved = std::cerr.rdbuf(nullptr);
    const auto& read = rc::detail::configuration();
    std::cerr.rdbuf(saved);
    return read;
  }();
  return configuration;
}

}  // namespace

std::uint64_t seed_of(const SuiteOptions& options) {
  return options.seed ? *options.seed : rc_configuration().testParams.seed;
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

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// RapidCheck's id of a property run: the key of its reproduce string.
std::string test_id(const Property& property, const Implementation& impl) { return impl.name + "/" + property.name; }

rc::detail::TestResult check_with(const Property& property, const Implementation& impl,
                                  const rc::detail::TestParams& params, rc::detail::TestListener& listener,
                                  detail::ShrinkWatch* watch = nullptr, int* generated = nullptr) {
  rc::detail::TestMetadata metadata;
  metadata.id = test_id(property, impl);
  metadata.description = property.sentence;
  // A stopped run passes its remaining cases without running them; `generated`
  // counts the cases that did run before the first failure.
  const auto run_case = [&property, &impl, watch, generated] {
    if (watch != nullptr && watch->should_stop()) RC_SUCCEED("stopped");
    if (generated != nullptr && (watch == nullptr || !watch->failing())) ++*generated;
    property.run_case(impl);
  };
  return rc::detail::checkProperty(rc::detail::toProperty(run_case), metadata, params, listener,
                                   rc_configuration().reproduce);
}

// Batched answers for the workloads a recording pass over the same cases
// asked for. RapidCheck replays the same cases for the same seed, so the real
// pass asks for them in order; answers are fetched in batches that double in
// size up to a cap (a case that fails early costs one small batch, a passing
// run few round trips), and the next batch is fetched on another thread while
// this one is judged, so the implementation works while the harness does.
// From the first workload that differs (shrinking has begun) the batch in
// flight is waited for and every call goes to the implementation.
struct Prefetched {
  // A batch in flight costs at most this many answers' time when a failure
  // ends the prefetching: ~1 s through a Python function at 4 ms per answer.
  static constexpr std::size_t kLargestBatch = 256;

  std::vector<Workload> workloads;
  std::vector<Answer> answers;  // for a prefix of workloads
  std::size_t next = 0;
  std::size_t batch = 8;  // the first is waited for: small, so the overlap starts soon
  std::future<std::vector<Answer>> in_flight;  // the answers after `answers`, while fetched

  // Starts fetching the next batch after what is fetched.
  void fetch_ahead(const Implementation& impl) {
    const std::size_t begin = answers.size();
    const std::size_t end = std::min(workloads.size(), begin + batch);
    if (begin >= end) return;
    batch = std::min(2 * batch, kLargestBatch);
    const auto part = std::span<const Workload>(workloads).subspan(begin, end - begin);
    in_flight = std::async(std::launch::async, [&impl, part] { return impl.compute_batch(part); });
  }
  // Waits for the batch in flight, if any, and keeps its answers; the seconds waited.
  double land() {
    if (!in_flight.valid()) return 0;
    const auto start = Clock::now();
    for (auto& answer : in_flight.get()) answers.push_back(std::move(answer));
    return seconds_since(start);
  }
  // Shrinking has begun: lands the batch in flight (the implementation is then
  // free) and serves nothing more; the seconds waited.
  double stop() {
    const double waited = land();
    next = workloads.size();
    return waited;
  }
};

Prefetched record_workloads(const Property& property, const Implementation& impl,
                            const rc::detail::TestParams& params) {
  Prefetched cache;
  Implementation recorder = impl;
  recorder.compute = [&cache](const Workload& w) -> Answer {
    cache.workloads.push_back(w);
    return harness::Outcome(ChunkMetadata{});  // never judged: the bodies return once they have asked
  };
  Tally ignored;
  auto& running = detail::running_case();
  const std::optional<Counterexample> saved = running.latest_failure;
  const auto on_failure = std::exchange(running.on_failure, nullptr);
  struct Recording {
    bool& flag;
    explicit Recording(bool& f) : flag(f) { flag = true; }
    ~Recording() { flag = false; }
  };
  {
    const Recording recording(running.recording);
    check_with(property, recorder, params, ignored);
  }
  running.latest_failure = saved;
  running.on_failure = on_failure;
  return cache;
}

std::string memo_key(const Workload& workload) { return harness::request_line(0, workload); }

}  // namespace

namespace detail {

const Answer* AnswerMemo::find(const Workload& workload) const {
  const auto it = answers_.find(memo_key(workload));
  return it == answers_.end() ? nullptr : &it->second;
}

void AnswerMemo::keep(const Workload& workload, const Answer& answer) {
  std::string key = memo_key(workload);
  std::size_t bytes = 2 * key.size() + 256;
  if (const auto* outcome = std::get_if<harness::Outcome>(&answer); outcome != nullptr && outcome->ok()) {
    const auto& r = outcome->value();
    bytes += 4 * (r.cu_chunk_seqlen.size() + r.seq_idx.size() + r.last_chunk_indices.size());
  }
  if (bytes > kLargestAnswerBytes) return;
  if (bytes_ + bytes > kBudgetBytes) {
    answers_.clear();
    bytes_ = 0;
  }
  if (answers_.emplace(std::move(key), answer).second) bytes_ += bytes;
}

}  // namespace detail

namespace {

// `impl` with its calls counted and timed, answered from `cache` while it
// lasts, and from the suite's memo once `watch` has seen a failure (shrinking).
Implementation instrumented(const Implementation& impl, Prefetched* cache, PropertyResult& stats,
                            const detail::ShrinkWatch& watch) {
  Implementation out = impl;
  out.compute_batch = nullptr;
  out.compute = [&impl, cache, &stats, &watch](const Workload& w) -> Answer {
    detail::AnswerMemo* memo = watch.failing() ? detail::running_case().memo : nullptr;
    if (memo != nullptr) {
      if (const Answer* known = memo->find(w)) return *known;
    }
    ++stats.implementation_calls;
    if (cache != nullptr && cache->next < cache->workloads.size()) {
      if (cache->workloads[cache->next] == w) {
        if (cache->next == cache->answers.size()) {
          if (!cache->in_flight.valid()) cache->fetch_ahead(impl);  // the first batch
          stats.implementation_seconds += cache->land();
          cache->fetch_ahead(impl);
        }
        if (cache->next < cache->answers.size()) {
          ++stats.prefetched;
          return std::move(cache->answers[cache->next++]);  // each is asked for once
        }
      }
      stats.implementation_seconds += cache->stop();
    }
    const auto start = Clock::now();
    Answer answer = impl.compute(w);
    stats.implementation_seconds += seconds_since(start);
    if (memo != nullptr) memo->keep(w, answer);
    return answer;
  };
  return out;
}

// One RapidCheck run of `property` with `params`.
PropertyResult run_round(const Property& property, const Implementation& impl, const SuiteOptions& options,
                         const rc::detail::TestParams& params) {
  PropertyResult result;
  result.property = property.name;
  result.implementation = impl.name;
  result.seed = params.seed;
  result.rounds = 1;
  const auto start = Clock::now();

  auto& running = detail::running_case();
  running.latest_failure.reset();
  running.property = &property;
  std::optional<Prefetched> cache;
  if (options.prefetch && impl.compute_batch) cache = record_workloads(property, impl, params);
  detail::ShrinkWatch watch(options, impl.name + ", " + property.name);
  running.on_failure = [&watch](Counterexample& cx) { watch.on_failure(cx); };
  const Implementation measured = instrumented(impl, cache ? &*cache : nullptr, result, watch);
  // Shrinking through a door that answers in batches: each pass's candidates
  // are answered ahead into the memo (none already there), one round trip per batch.
  if (options.prefetch && impl.compute_batch && running.memo != nullptr) {
    running.answer_ahead = [&impl, &cache, &result, &watch, memo = running.memo](std::span<const Workload> candidates) {
      if (!watch.failing()) return;
      if (cache) result.implementation_seconds += cache->stop();
      std::vector<Workload> unknown;
      for (const auto& candidate : candidates) {
        if (memo->find(candidate) == nullptr) unknown.push_back(candidate);
      }
      if (unknown.empty()) return;
      const auto start = Clock::now();
      auto answers = impl.compute_batch(unknown);
      result.implementation_seconds += seconds_since(start);
      result.implementation_calls += static_cast<long long>(answers.size());
      for (std::size_t i = 0; i < answers.size(); ++i) memo->keep(unknown[i], answers[i]);
    };
  }
  Tally tally;
  int generated = 0;
  const auto outcome = check_with(property, measured, params, tally, &watch, &generated);
  running.property = nullptr;
  running.on_failure = nullptr;
  running.answer_ahead = nullptr;
  result.seconds = seconds_since(start);
  result.stopped = watch.stop_reason();

  result.edge_classes = std::move(tally.classes);
  result.shrinks = tally.shrinks;
  if (outcome.is<rc::detail::SuccessResult>()) {
    result.passed = true;
    result.cases = result.stopped.empty() ? outcome.get<rc::detail::SuccessResult>().numSuccess : generated;
    return result;
  }
  std::ostringstream message;
  rc::detail::printResultMessage(outcome, message);
  result.message = message.str();
  if (!outcome.is<rc::detail::FailureResult>()) return result;  // gave up, or an error inside RapidCheck
  const auto* failure = &outcome.get<rc::detail::FailureResult>();

  result.cases = failure->numSuccess;
  rc::detail::Configuration reproduce_config;
  reproduce_config.reproduce[test_id(property, impl)] = failure->reproduce;
  const std::string reproduce = rc::detail::configToMinimalString(reproduce_config);

  Counterexample cx;
  if (running.latest_failure) {
    cx = std::move(*running.latest_failure);
  } else {
    // The implementation threw or crashed the case some other way: keep RapidCheck's words.
    cx.implementation = impl.name;
    cx.property = property.name;
    cx.finding = Finding{FindingKind::unexpected_error, failure->description, std::nullopt, std::nullopt,
                         std::nullopt, std::nullopt, {}};
  }
  cx.seed = params.seed;
  cx.reproduce = reproduce;
  cx.cases_before_failure = failure->numSuccess;
  if (!options.rerun_command.empty()) {
    cx.rerun_command = "RC_PARAMS=\"" + reproduce + "\" " +
                       replace_all(replace_all(options.rerun_command, "{property}", property.name),
                                   "{implementation}", harness::shell_quote(impl.name));
  }
  std::string error;
  result.files = watch.finish(cx, &error);
  if (options.write_reports && !result.files) result.message += "\n(could not write the report: " + error + ")";
  result.counterexample = std::move(cx);
  return result;
}

// The latest round's verdict (and counterexample), with the counts of all rounds;
// a passing run keeps its first seed.
void add_round(PropertyResult& total, PropertyResult round) {
  round.cases += total.cases;
  round.rounds += total.rounds;
  round.seconds += total.seconds;
  round.implementation_seconds += total.implementation_seconds;
  round.implementation_calls += total.implementation_calls;
  round.prefetched += total.prefetched;
  for (const auto& [name, count] : total.edge_classes) round.edge_classes[name] += count;
  if (round.passed && total.rounds > 0) round.seed = total.seed;
  total = std::move(round);
}

constexpr double kAfterMinimalShrinkSeconds = 10;

// A failure whose counterexample (workload and behaviour) an earlier property
// of the run already reported is listed once: it points to the earlier
// report, and its own report file is removed (the corpus entry is shared).
void merge_duplicate(PropertyResult& result, const std::vector<PropertyResult>& earlier) {
  if (!result.counterexample) return;
  // The behaviour is the implementation's answer (the property that noticed it may differ).
  const auto behaviour = [](const Counterexample& cx) {
    return cx.finding.actual ? harness::to_json(*cx.finding.actual).dump() : std::string(harness::to_string(cx.finding.kind));
  };
  for (const auto& other : earlier) {
    if (!other.counterexample || other.duplicate_of.size() > 0) continue;
    if (other.counterexample->workload != result.counterexample->workload ||
        behaviour(*other.counterexample) != behaviour(*result.counterexample))
      continue;
    result.duplicate_of = other.property;
    if (result.files && other.files && result.files->report != other.files->report) {
      std::error_code ignored;
      std::filesystem::remove(result.files->report, ignored);
    }
    result.files = other.files;
    return;
  }
}

}  // namespace

// A case count that no run reaches: the time budget alone ends the run.
constexpr int kBudgetDecides = 1 << 30;

PropertyResult run_property(const Property& property, const Implementation& impl, const SuiteOptions& options) {
  rc::detail::TestParams params = rc_configuration().testParams;
  int target = 0;
  if (options.cases > 0) {
    target = options.cases;
  } else if (rc_params_mention("max_success")) {
    target = params.maxSuccess;
  } else if (options.time_budget_seconds > 0) {
    target = kBudgetDecides;
  } else {
    target = std::max(1, static_cast<int>(std::lround(options.default_cases * case_scale())));
  }
  if (target != kBudgetDecides) target = std::max(1, static_cast<int>(std::lround(target * property.case_share)));
  params.seed = seed_of(options);
  if (options.time_budget_seconds <= 0) {
    params.maxSuccess = target;
    return run_round(property, impl, options, params);
  }

  // Rounds: a small first one measures the rate, later ones fill the budget.
  PropertyResult total;
  const auto start = Clock::now();
  const std::uint64_t base_seed = params.seed;
  for (int round = 0; total.cases < target; ++round) {
    const double left = options.time_budget_seconds - seconds_since(start);
    if (round > 0 && left < 0.02 * options.time_budget_seconds) break;
    const double rate = total.seconds > 0 ? total.cases / total.seconds : 0;
    const double planned = round == 0 ? 200.0 : std::max(50.0, 0.9 * rate * left);
    params.maxSuccess = static_cast<int>(std::min<double>(target - total.cases, planned));
    params.seed = base_seed + static_cast<std::uint64_t>(round);
    add_round(total, run_round(property, impl, options, params));
    if (!total.passed || !total.stopped.empty()) break;
  }
  return total;
}

SuiteResult run_suite(const Implementation& impl, const SuiteOptions& options) {
  SuiteResult suite;
  std::vector<const Property*> selected;
  for (const auto& property : all_properties()) {
    if (property.scope == Scope::library && !options.include_library) continue;
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), property.name) == options.only.end())
      continue;
    selected.push_back(&property);
  }
  const auto start = Clock::now();
  detail::AnswerMemo memo;
  auto& running = detail::running_case();
  detail::AnswerMemo* const outer_memo = std::exchange(running.memo, &memo);
  SuiteOptions share = options;
  if (options.time_budget_seconds > 0 && !options.deadline)
    share.deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.time_budget_seconds));
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const Property& property = *selected[i];
    if (property.sends_invalid_input && !impl.rejects_invalid_input) {
      PropertyResult skipped;
      skipped.property = property.name;
      skipped.implementation = impl.name;
      skipped.passed = true;
      skipped.skipped = true;
      suite.properties.push_back(std::move(skipped));
      continue;
    }
    if (options.time_budget_seconds > 0) {
      const double left = options.time_budget_seconds - seconds_since(start);
      share.time_budget_seconds = std::max(0.05, left / static_cast<double>(selected.size() - i));
    }
    PropertyResult result = run_property(property, impl, share);
    if (!result.passed) merge_duplicate(result, suite.properties);
    // Once the implementation has a minimal report, later failures are most
    // likely the same bug: they get a short shrink budget, not a long wait.
    if (result.counterexample && result.counterexample->status == harness::kMinimal)
      share.shrink_budget_seconds = std::min(share.shrink_budget_seconds > 0 ? share.shrink_budget_seconds : kAfterMinimalShrinkSeconds,
                                             kAfterMinimalShrinkSeconds);
    suite.properties.push_back(std::move(result));
    if (options.stop_at_first_failure && !suite.properties.back().passed) break;
    if (options.stop_requested && options.stop_requested()) break;
    if (share.deadline && Clock::now() >= *share.deadline) break;
  }
  running.memo = outer_memo;
  return suite;
}


}  // namespace chunkmeta::properties
