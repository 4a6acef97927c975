// The run loop, owned here: RapidCheck gives the generators and the random
// stream (public Gen, Random), nothing else. Per property: draw the cases,
// answer them in batches, judge them in order, shrink the first failure with
// the project's shrinker, report it as it shrinks.
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

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "shrink_watch.hpp"

namespace chunkmeta::engine {

const Property* PropertyTable::find(std::string_view name) const {
  for (const auto& property : properties) {
    if (property.name == name) return &property;
  }
  return nullptr;
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

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The size of case i of a run of `cases`, 0 to 100 spread evenly with the
// largest used: small cases first, so most bugs are met on small workloads.
// (RapidCheck's own schedule, so a seed draws what it drew under RapidCheck.)
int size_for(int cases, int i) {
  constexpr int kMaxSize = 100;
  constexpr int kSizes = kMaxSize + 1;
  const int regular = (cases / kSizes) * kSizes;
  if (i < regular) return i % kSizes;
  const int rest = cases - regular;
  if (rest == 1) return 0;
  return ((i % kSizes) * kMaxSize) / (rest - 1);
}

// Answers given while shrinking, shared by the properties of one suite run:
// they start from the same seed, so their shrinks ask for many of the same
// workloads, and a hang or a crash costs seconds each time it is asked again.
// (Shrinking already assumes a deterministic implementation.)
class AnswerMemo {
 public:
  const Answer* find(const harness::Spec& spec, const Workload& workload) const {
    const auto it = answers_.find(harness::request_line(0, spec, workload));
    return it == answers_.end() ? nullptr : &it->second;
  }
  void keep(const harness::Spec& spec, const Workload& workload, const Answer& answer) {
    std::string key = harness::request_line(0, spec, workload);
    std::size_t bytes = 2 * key.size() + 256;
    if (const auto* outcome = std::get_if<harness::Outcome>(&answer); outcome != nullptr && outcome->ok())
      bytes += 4 * spec.entries(outcome->value());
    if (bytes > kLargestAnswerBytes) return;  // copying it costs more than asking again
    if (bytes_ + bytes > kBudgetBytes) {
      answers_.clear();
      bytes_ = 0;
    }
    if (answers_.emplace(std::move(key), answer).second) bytes_ += bytes;
  }

 private:
  static constexpr std::size_t kBudgetBytes = std::size_t{256} << 20;  // then it starts again empty
  static constexpr std::size_t kLargestAnswerBytes = std::size_t{4} << 20;
  std::unordered_map<std::string, Answer> answers_;
  std::size_t bytes_ = 0;
};

// A failing case: its counterexample as the property judged it.
struct Failure {
  Case found;
  Counterexample counterexample;
};

// One property on one implementation for one seed: the cases, then the
// shrink of the first failure.
class Round {
 public:
  Round(const Property& property, const Implementation& impl, const SuiteOptions& options,
        AnswerMemo* memo, const std::vector<Counterexample>* known)
      : property_(property), impl_(impl), spec_(*impl.spec), options_(options), memo_(memo),
        known_(known) {}

  PropertyResult run(std::uint64_t seed, int cases) {
    result_.property = property_.name;
    result_.implementation = impl_.name;
    result_.seed = seed;
    result_.rounds = 1;
    const auto start = Clock::now();
    detail::ShrinkWatch watch(options_, impl_.name + ", " + property_.name);
    auto failure = search(seed, cases, watch);
    if (failure) {
      report(*failure, seed, watch);
    } else {
      result_.passed = true;
    }
    result_.stopped = watch.stop_reason();
    result_.seconds = seconds_since(start);
    return std::move(result_);
  }

 private:
  // --- Answers ---

  // What the implementation is sent for `ask`: a valid-only implementation
  // (an engine function) is not sent what the reference refuses (invalid
  // input, or above the size cap); it is answered with the refusal.
  std::optional<Answer> not_sent(const Workload& ask) const {
    if (impl_.rejects_invalid_input) return std::nullopt;
    if (auto refused = spec_.validate(ask)) return Answer(harness::Outcome(*refused));
    return std::nullopt;
  }

  // Answers to `asks`, in order, one call each (memoised while shrinking).
  std::vector<Answer> answer_one_by_one(std::span<const Workload> asks, bool shrinking) {
    std::vector<Answer> answers;
    answers.reserve(asks.size());
    for (const auto& ask : asks) {
      if (auto answer = not_sent(ask)) {
        answers.push_back(std::move(*answer));
        continue;
      }
      if (shrinking && memo_ != nullptr) {
        if (const Answer* known = memo_->find(spec_, ask)) {
          answers.push_back(*known);
          continue;
        }
      }
      const auto start = Clock::now();
      answers.push_back(impl_.compute(ask));
      result_.implementation_seconds += seconds_since(start);
      ++result_.implementation_calls;
      if (shrinking && memo_ != nullptr) memo_->keep(spec_, ask, answers.back());
    }
    return answers;
  }

  // The same in round trips through compute_batch, for what is not known or
  // refused. `decided`, told after each round trip how many answers from the
  // front are in, may end the fetching there: the rest of a batch that a
  // crash or a hang cut short is then not sent again when what is in decides.
  // Thread-safe against nothing: one batch at a time, never alongside another call.
  // Returns how many workloads were sent.
  std::size_t answer_in_batch(std::span<const Workload> asks, bool shrinking, std::vector<std::optional<Answer>>& answers,
                              const std::function<bool(std::size_t)>& decided = nullptr) {
    answers.assign(asks.size(), std::nullopt);
    std::vector<Workload> unknown;
    std::vector<std::size_t> unknown_at;
    for (std::size_t i = 0; i < asks.size(); ++i) {
      if (auto refused = not_sent(asks[i])) {
        answers[i] = std::move(*refused);
      } else if (const Answer* seen = shrinking && memo_ != nullptr ? memo_->find(spec_, asks[i]) : nullptr) {
        answers[i] = *seen;
      } else {
        unknown.push_back(asks[i]);
        unknown_at.push_back(i);
      }
    }
    // How many answers from the front are in.
    std::size_t ready = 0;
    const auto advance = [&] {
      while (ready < answers.size() && answers[ready]) ++ready;
    };
    advance();
    std::size_t sent = 0;
    while (sent < unknown.size() && !(decided && decided(ready))) {
      const auto rest = std::span<const Workload>(unknown).subspan(sent);
      std::vector<Answer> batch = harness::answer_batch(impl_, rest);
      for (auto& answer : batch) {
        if (shrinking && memo_ != nullptr) memo_->keep(spec_, unknown[sent], answer);
        answers[unknown_at[sent++]] = std::move(answer);
      }
      advance();
    }
    return sent;
  }

  bool batches() const { return options_.prefetch && static_cast<bool>(impl_.compute_batch); }

  // --- Timeouts re-confirmed ---

  static bool timed_out(const Answer& answer) {
    const auto* m = std::get_if<harness::Misbehaviour>(&answer);
    return m != nullptr && m->kind == harness::FindingKind::timed_out;
  }

  // Whether an earlier property of this run reported a timeout, confirmed: the
  // verdict is then NOT VERIFIED whatever comes, and a re-confirmation (4 s or
  // more each) would only cost time, property after property of a real hang.
  bool timeout_confirmed_before() const {
    if (known_ == nullptr) return false;
    return std::any_of(known_->begin(), known_->end(), [](const Counterexample& cx) {
      return cx.finding.kind == harness::FindingKind::timed_out && cx.status == harness::kMinimal;
    });
  }

  // A timeout counts only when it holds: the workload is asked once more with
  // a longer limit (the door's harness::CallBudget::confirmation_limit). An answer then is
  // judged like any other, and the call is counted as slow; a second timeout
  // is the finding, saying it was asked twice.
  void reconfirm_timeouts(std::span<const Workload> asks, std::vector<Answer>& answers) {
    if (!impl_.confirm || timeout_confirmed_before()) return;
    for (std::size_t a = 0; a < answers.size(); ++a) {
      if (!timed_out(answers[a])) continue;
      const double expired = std::get<harness::Misbehaviour>(answers[a]).limit_seconds;
      const auto start = Clock::now();
      Answer again = impl_.confirm(asks[a], expired);
      result_.implementation_seconds += seconds_since(start);
      ++result_.implementation_calls;
      if (timed_out(again)) {
        std::get<harness::Misbehaviour>(again).summary +=
            " (the second time: it timed out within " + std::to_string(expired).substr(0, 5) + " s first)";
      } else {
        ++result_.slow_calls;
      }
      answers[a] = std::move(again);
    }
  }

  // --- Generation ---

  // Cases drawn together, their asks, and (through a batching implementation)
  // their answers, fetched on another thread while the cases before are judged.
  // The fetch stops at the first misbehaviour (the case it belongs to fails:
  // what comes after is not needed, and through a crashing or hanging
  // implementation each answer could cost a restart or a timeout), and when
  // the chunk is cancelled (a case before it failed); the answers not fetched
  // are asked for one by one if they are needed after all.
  struct Chunk {
    std::vector<Case> cases;
    std::vector<std::size_t> first_ask;  // per case, and one past the last
    std::vector<Workload> asks;
    std::atomic<bool> cancelled{false};
    std::future<std::vector<std::optional<Answer>>> in_flight;
    std::vector<std::optional<Answer>> answers;
  };

  // On the heap: a chunk's answers are fetched from its asks on another
  // thread, which must find them where they were while the chunk is handed on.
  std::unique_ptr<Chunk> draw_chunk(rc::Random& random, int& next_case, int count, int cases) {
    auto chunk = std::make_unique<Chunk>();
    for (int k = 0; k < count; ++k, ++next_case) {
      chunk->cases.push_back(property_.draw(random.split(), size_for(cases, next_case)));
      chunk->first_ask.push_back(chunk->asks.size());
      for (auto& ask : property_.asks(chunk->cases.back())) chunk->asks.push_back(std::move(ask));
    }
    chunk->first_ask.push_back(chunk->asks.size());
    if (batches() && !chunk->asks.empty()) {
      // Fetched ahead, while the chunk before is judged; counted when it lands.
      Chunk* fetched = chunk.get();
      chunk->in_flight = std::async(std::launch::async, [this, fetched] {
        std::vector<std::optional<Answer>> answers;
        answer_in_batch(fetched->asks, false, answers, [&answers, fetched](std::size_t) {
          return fetched->cancelled.load() ||
                 std::any_of(answers.begin(), answers.end(), [](const std::optional<Answer>& answer) {
                   return answer && std::holds_alternative<harness::Misbehaviour>(*answer);
                 });
        });
        return answers;
      });
    }
    return chunk;
  }

  void land(Chunk* chunk) {
    if (chunk == nullptr || !chunk->in_flight.valid()) return;
    const auto start = Clock::now();
    chunk->answers = chunk->in_flight.get();
    result_.implementation_seconds += seconds_since(start);
    const auto fetched = std::count_if(chunk->answers.begin(), chunk->answers.end(),
                                       [](const std::optional<Answer>& answer) { return answer.has_value(); });
    result_.implementation_calls += static_cast<long long>(fetched);
    result_.prefetched += static_cast<long long>(fetched);
  }

  void cancel_and_land(Chunk* chunk) {
    if (chunk == nullptr) return;
    chunk->cancelled = true;
    land(chunk);
  }

  // The run's cases, judged in order; the first failure, or nullopt.
  std::optional<Failure> search(std::uint64_t seed, int cases, detail::ShrinkWatch& watch) {
    rc::Random random(seed);
    int next_case = 0;
    int size = batches() ? 8 : 1;  // the first batch is waited for: small, so the overlap starts soon
    auto current = draw_chunk(random, next_case, std::min(size, cases), cases);
    while (true) {
      land(current.get());
      std::unique_ptr<Chunk> next;
      if (next_case < cases) {
        size = batches() ? std::min(2 * size, kLargestBatch) : 1;
        next = draw_chunk(random, next_case, std::min(size, cases - next_case), cases);
      }
      for (std::size_t k = 0; k < current->cases.size(); ++k) {
        if (watch.should_stop()) {
          cancel_and_land(next.get());
          return std::nullopt;
        }
        const Case& c = current->cases[k];
        const std::size_t first = current->first_ask[k];
        const std::size_t past = current->first_ask[k + 1];
        std::vector<Answer> answers;
        for (std::size_t a = first; a < past; ++a) {
          if (a < current->answers.size() && current->answers[a]) {
            answers.push_back(std::move(*current->answers[a]));
          } else {  // not fetched ahead (no batches, or the fetch stopped early)
            // The implementation takes one caller at a time: the fetch ahead ends first.
            cancel_and_land(next.get());
            answers.push_back(std::move(answer_one_by_one(std::span<const Workload>(&current->asks[a], 1), false)[0]));
          }
        }
        auto verdict = judge(c, answers);
        if (verdict && verdict->finding.kind == harness::FindingKind::timed_out && impl_.confirm) {
          cancel_and_land(next.get());  // the implementation takes one caller at a time
          reconfirm_timeouts(std::span<const Workload>(current->asks).subspan(first, past - first), answers);
          verdict = judge(c, answers);
        }
        if (verdict) {
          cancel_and_land(next.get());  // the implementation is free again before shrinking asks it anything
          return Failure{c, std::move(*verdict)};
        }
        ++result_.cases;
        if (property_.classes) {
          for (const auto& name : property_.classes(c)) ++result_.edge_classes[name];
        }
      }
      if (!next) return std::nullopt;
      current = std::move(next);
    }
  }

  std::optional<Counterexample> judge(const Case& c, std::span<const Answer> answers) {
    auto verdict = property_.judge(impl_, c, answers);
    if (verdict) {
      verdict->implementation = impl_.name;
      verdict->spec = &spec_;
      verdict->property = property_.name;
    }
    return verdict;
  }

  // --- Shrinking ---

  // A candidate made by one step from the case: of its workload (the shared
  // shrinker's steps) or of one parameter (toward 0, halving the distance).
  struct Step {
    bool of_workload = true;
    harness::ShrinkStep workload_step;
    std::size_t parameter = 0;
    std::int64_t value = 0;
  };

  static std::vector<std::int64_t> towards_zero(std::int64_t x) {
    std::vector<std::int64_t> values;
    for (std::int64_t step = x; step != 0; step /= 2) values.push_back(x - step);
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
  }

  static std::vector<Step> steps_of(const Case& c, const std::optional<Step>& accepted) {
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

  static Case apply(const Case& c, const Step& step) {
    if (step.of_workload) return Case{harness::apply(c.workload, step.workload_step), c.parameters};
    Case smaller = c;
    smaller.parameters[step.parameter] = step.value;
    return smaller;
  }

  // The first failing candidate of `candidates`, in order, with its verdict.
  std::optional<std::pair<std::size_t, Counterexample>> first_failing(const std::vector<Case>& candidates) {
    if (!batches()) {
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto asks = property_.asks(candidates[i]);
        const auto answers = answer_one_by_one(asks, true);
        if (auto verdict = judge(candidates[i], answers)) return std::pair{i, std::move(*verdict)};
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
        if (auto verdict = judge(candidates[judged], mine)) failing = std::pair{judged, std::move(*verdict)};
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

  // Greedy shrinking: the first candidate, in pass order, that still fails is
  // taken, and the next pass resumes at its step (harness::shrink_steps_resuming).
  // Batches of candidates double from 1 to 64 while none fails.
  Failure shrink(Failure failure, detail::ShrinkWatch& watch) {
    constexpr std::size_t kLargestShrinkBatch = 64;
    std::optional<Step> accepted;
    while (true) {
      const auto steps = steps_of(failure.found, accepted);
      std::optional<Step> taken;
      std::size_t size = 1;
      for (std::size_t next = 0; next < steps.size() && !taken; size = std::min(2 * size, kLargestShrinkBatch)) {
        if (watch.should_stop()) return failure;
        const std::size_t end = std::min(steps.size(), next + size);
        std::vector<Case> candidates;
        for (std::size_t i = next; i < end; ++i) candidates.push_back(apply(failure.found, steps[i]));
        if (auto failing = first_failing(candidates)) {
          taken = steps[next + failing->first];
          failure = Failure{std::move(candidates[failing->first]), std::move(failing->second)};
          ++result_.shrinks;
          watch.on_failure(failure.counterexample);
        }
        next = end;
      }
      if (!taken) return failure;
      accepted = taken;
    }
  }

  // A minimal timeout is asked again with a longer limit, as the first one
  // was: shrinking cuts calls at 10x the slowest answer, and a stall of the
  // machine while it did must not become the report. If it does not hold, the
  // failure found (confirmed already) is the report, marked not fully shrunk.
  Failure confirmed_minimal(const Failure& found, Failure minimal, detail::ShrinkWatch& watch) {
    if (minimal.counterexample.finding.kind != harness::FindingKind::timed_out || !impl_.confirm) return minimal;
    if (minimal.found.workload == found.found.workload && minimal.found.parameters == found.found.parameters)
      return minimal;
    const auto asks = property_.asks(minimal.found);
    auto answers = answer_one_by_one(asks, true);  // the memo holds the answers that timed out while shrinking
    reconfirm_timeouts(asks, answers);
    if (auto verdict = judge(minimal.found, answers)) return Failure{std::move(minimal.found), std::move(*verdict)};
    watch.stopped_because("a smaller case's timeout did not hold when it was asked again");
    return found;
  }

  // The same bug as an earlier property's minimal report: this property
  // fails on that report's workload too (its own parameters kept), so that
  // workload is this failure's report, without shrinking it again.
  std::optional<Failure> known_bug(const Failure& failure) {
    if (known_ == nullptr) return std::nullopt;
    for (const auto& earlier : *known_) {
      if (earlier.status != harness::kMinimal || !earlier.duplicate_of.empty()) continue;
      Case candidate{earlier.workload, failure.found.parameters};
      if (auto failing = first_failing({candidate})) {
        failing->second.duplicate_of = earlier.property;
        return Failure{std::move(candidate), std::move(failing->second)};
      }
    }
    return std::nullopt;
  }

  void report(Failure failure, std::uint64_t seed, detail::ShrinkWatch& watch) {
    const int cases_before = result_.cases;
    watch.on_failure(failure.counterexample);
    if (impl_.shrinking) impl_.shrinking(true);
    if (auto same = known_bug(failure)) {
      failure = std::move(*same);
      result_.duplicate_of = failure.counterexample.duplicate_of;
    } else {
      failure = confirmed_minimal(failure, shrink(failure, watch), watch);
    }
    if (impl_.shrinking) impl_.shrinking(false);
    Counterexample& cx = failure.counterexample;
    cx.seed = seed;
    cx.cases_before_failure = cases_before;
    cx.reproduce = "--seed " + std::to_string(seed) + " draws it again: case " + std::to_string(cases_before + 1) +
                   " of property " + property_.name + ", then " + std::to_string(result_.shrinks) + " shrink steps";
    if (!options_.rerun_command.empty()) cx.rerun_command = rerun_command(seed);
    std::string error;
    result_.files = watch.finish(cx, &error);
    if (options_.write_reports && !result_.files) result_.message = "could not write the report: " + error;
    result_.counterexample = std::move(cx);
  }

  std::string rerun_command(std::uint64_t seed) const {
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

  static constexpr int kLargestBatch = 256;  // ~1 s of answers through Python at 4 ms each

  const Property& property_;
  const Implementation& impl_;
  const harness::Spec& spec_;
  const SuiteOptions& options_;
  AnswerMemo* memo_;
  const std::vector<Counterexample>* known_;
  PropertyResult result_;
};

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

PropertyResult run_with(const Property& property, const Implementation& impl,
                        const SuiteOptions& options, AnswerMemo* memo, const std::vector<Counterexample>* known) {
  const int planned = planned_cases(property, options);
  // A budget without a case count runs as many as fit; the planned ones must fit to count.
  const int target = options.cases <= 0 && options.time_budget_seconds > 0 ? kBudgetDecides : planned;
  const std::uint64_t seed = seed_of(options);
  if (options.time_budget_seconds <= 0) {
    PropertyResult result = Round(property, impl, options, memo, known).run(seed, target);
    result.planned = planned;
    return result;
  }

  // Rounds: a small first one measures the rate, later ones fill the budget.
  PropertyResult total;
  const auto start = Clock::now();
  for (int round = 0; total.cases < target; ++round) {
    const double left = options.time_budget_seconds - seconds_since(start);
    if (round > 0 && left < 0.02 * options.time_budget_seconds) break;
    const double rate = total.seconds > 0 ? total.cases / total.seconds : 0;
    const double planned = round == 0 ? 200.0 : std::max(50.0, 0.9 * rate * left);
    const int cases = static_cast<int>(std::min<double>(target - total.cases, planned));
    add_round(total, Round(property, impl, options, memo, known).run(seed + static_cast<std::uint64_t>(round), cases));
    if (!total.passed || !total.stopped.empty()) break;
  }
  total.planned = planned;
  if (total.passed && total.cases < planned && total.stopped.empty()) total.stopped = "its share of the time budget was used up";
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

PropertyResult run_property(const Property& property, const Implementation& implementation,
                            const SuiteOptions& options) {
  return run_with(property, implementation, options, nullptr, nullptr);
}

SuiteResult run_suite(const PropertyTable& table, const Implementation& impl, const SuiteOptions& options) {
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
  if (options.time_budget_seconds > 0 && !options.deadline)
    share.deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.time_budget_seconds));
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
    PropertyResult result = run_with(property, impl, share, &memo, &reported);
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
    std::string ended;
    if (options.stop_at_first_failure && !suite.properties.back().passed) ended = "stopped at the first failure";
    if (options.stop_requested && options.stop_requested()) ended = "interrupted";
    if (share.deadline && Clock::now() >= *share.deadline) ended = "the time budget was used up";
    if (!ended.empty()) {
      for (std::size_t rest = i + 1; rest < selected.size(); ++rest) {
        suite.properties.push_back(not_applicable(*selected[rest], impl) ? skipped(*selected[rest], impl)
                                                                         : not_run(*selected[rest], impl, options, ended));
      }
      break;
    }
  }
  return suite;
}

}  // namespace chunkmeta::engine
