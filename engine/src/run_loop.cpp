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

#include "chunkmeta/harness/greedy_shrink.hpp"
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
    // A later answer replaces an earlier one: a timeout that did not hold when asked again.
    if (answers_.insert_or_assign(std::move(key), answer).second) bytes_ += bytes;
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
  int index = -1;               // its case number in the run (as the search found it)
  std::vector<Answer> answers;  // the answers judged, when one timed out: a confirmation asks those again
};

// One property on one implementation for one seed: the cases, then the
// shrink of the first failure.
class Round {
 public:
  Round(const Property& property, const Implementation& impl, const SuiteOptions& options,
        const PropertyTable* table, AnswerMemo* memo, const std::vector<Counterexample>* known)
      : property_(property), impl_(impl), spec_(*impl.spec), options_(options), table_(table), memo_(memo),
        known_(known) {}

  PropertyResult run(std::uint64_t seed, int cases) {
    result_.property = property_.name;
    result_.implementation = impl_.name;
    result_.seed = seed;
    result_.rounds = 1;
    const auto start = Clock::now();
    detail::ShrinkWatch watch(options_, impl_.name + ", " + property_.name);
    result_.passed = true;
    // An earlier property's bug is tried first, as Hypothesis replays its
    // database: a property that fails on it reports that bug in one call. A
    // failure that does not hold (a timeout answered when asked again) is
    // withdrawn, and the search goes on from the case after it.
    std::optional<Failure> failure = earlier_bug(seed);
    for (int from = 0; failure || (failure = search(seed, cases, from, watch)); failure.reset()) {
      if (report(*failure, seed, watch)) {
        result_.passed = false;
        break;
      }
      from = failure->index + 1;
    }
    result_.stopped = watch.stop_reason();
    if (domain_exhausted_ && result_.stopped.empty())
      result_.stopped = "the stated domain left no case: " + std::to_string(kMostSkipped) + " draws in a row were outside it";
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

  // A timeout counts only when it holds: the workloads whose answers timed
  // out are asked once more, with the ordinary limit (a stall of the machine
  // is over by then) or a longer one (the door's
  // harness::CallBudget::confirmation_limit, where a second timeout is the
  // finding and says it was asked twice). An answer then is judged like any
  // other, and the call is counted as slow.
  enum class Limit { ordinary, longer };
  void ask_timeouts_again(std::span<const Workload> asks, std::vector<Answer>& answers, Limit limit) {
    if (!impl_.confirm || timeout_confirmed_before()) return;
    for (std::size_t a = 0; a < answers.size(); ++a) {
      if (!timed_out(answers[a])) continue;
      const auto& timeout = std::get<harness::Misbehaviour>(answers[a]);
      if (limit == Limit::ordinary && timeout.asked_twice) continue;  // the door asked it again already
      const double expired = timeout.limit_seconds;
      const auto start = Clock::now();
      Answer again = limit == Limit::longer ? impl_.confirm(asks[a], expired) : impl_.compute(asks[a]);
      result_.implementation_seconds += seconds_since(start);
      ++result_.implementation_calls;
      if (!timed_out(again)) {
        ++result_.slow_calls;
      } else if (limit == Limit::longer) {
        std::get<harness::Misbehaviour>(again).summary +=
            " (the second time: it timed out within " + std::to_string(expired).substr(0, 5) + " s first)";
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
    std::vector<int> index;  // per case, its number in the run
    std::vector<Case> cases;
    std::vector<std::size_t> first_ask;  // per case, and one past the last
    std::vector<Workload> asks;
    std::atomic<bool> cancelled{false};
    std::future<std::vector<std::optional<Answer>>> in_flight;
    std::vector<std::optional<Answer>> answers;
  };

  // On the heap: a chunk's answers are fetched from its asks on another
  // thread, which must find them where they were while the chunk is handed on.
  // The run's next `count` cases, but those asking for a workload outside
  // the stated domain (tallied, never sent); fewer if none is left.
  std::unique_ptr<Chunk> draw_chunk(rc::Random& random, int& next_case, int count, int cases) {
    auto chunk = std::make_unique<Chunk>();
    for (int outside_in_a_row = 0; static_cast<int>(chunk->cases.size()) < count;) {
      Case c = property_.draw(random.split(), size_for(cases, std::min(next_case, cases - 1)));
      const int index = next_case++;
      auto asks = property_.asks(c);
      if (const std::string left_out = excluded(asks); !left_out.empty()) {
        ++result_.left_out[left_out];
        if (++outside_in_a_row < kMostSkipped) continue;
        domain_exhausted_ = true;
        break;
      }
      outside_in_a_row = 0;
      chunk->index.push_back(index);
      chunk->cases.push_back(std::move(c));
      chunk->first_ask.push_back(chunk->asks.size());
      for (auto& ask : asks) chunk->asks.push_back(std::move(ask));
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

  // The run's cases from case `from` on, judged in order; the first failure, or nullopt.
  std::optional<Failure> search(std::uint64_t seed, int cases, int from, detail::ShrinkWatch& watch) {
    rc::Random random(seed);
    int next_case = 0;
    for (; next_case < from; ++next_case) random.split();  // the cases before, as drawn
    int to_draw = cases - result_.cases;  // every case judged so far passed
    const auto draw = [&](int size) {
      auto chunk = draw_chunk(random, next_case, std::min(size, to_draw), cases);
      to_draw = domain_exhausted_ ? 0 : to_draw - static_cast<int>(chunk->cases.size());
      return chunk;
    };
    int size = batches() ? 8 : 1;  // the first batch is waited for: small, so the overlap starts soon
    auto current = draw(size);
    while (true) {
      land(current.get());
      std::unique_ptr<Chunk> next;
      if (to_draw > 0) {
        size = batches() ? std::min(2 * size, kLargestBatch) : 1;
        next = draw(size);
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
        if (verdict && unconfirmed_timeout(*verdict)) {
          // A stall of the machine is over at once: asked again with the
          // ordinary limit, the case passes, and costs no shrink. A hang
          // times out again, and is shrunk, then confirmed (confirmed()).
          cancel_and_land(next.get());  // the implementation takes one caller at a time
          ask_timeouts_again(std::span<const Workload>(current->asks).subspan(first, past - first), answers,
                             Limit::ordinary);
          verdict = judge(c, answers);
        }
        if (verdict) {
          cancel_and_land(next.get());  // the implementation is free again before shrinking asks it anything
          // A timeout's answers are kept: if its smallest case does not time out
          // again, this one is asked again (confirmed() below).
          if (!unconfirmed_timeout(*verdict)) answers.clear();
          return Failure{c, std::move(*verdict), current->index[k], std::move(answers)};
        }
        count_passed(c);
      }
      if (!next) return std::nullopt;
      current = std::move(next);
    }
  }

  // The excluded class one of these workloads is in, or "" (SuiteOptions::excluded_classes).
  std::string excluded(std::span<const Workload> asks) const {
    if (table_ == nullptr || options_.excluded_classes.empty()) return "";
    for (const auto& ask : asks) {
      if (std::string left_out = outside_domain(*table_, options_, ask); !left_out.empty()) return left_out;
    }
    return "";
  }
  std::string excluded(const Case& c) const {
    return options_.excluded_classes.empty() ? "" : excluded(property_.asks(c));
  }

  void count_passed(const Case& c) {
    ++result_.cases;
    if (property_.classes) {
      for (const auto& name : property_.classes(c)) ++result_.edge_classes[name];
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
  // `only`: a candidate fails only with a finding of this kind.
  std::optional<std::pair<std::size_t, Counterexample>> first_failing(std::span<const Case> candidates,
                                                                       std::optional<harness::FindingKind> only = {}) {
    const auto judged_failing = [&](const Case& candidate, std::span<const Answer> answers) {
      auto verdict = judge(candidate, answers);
      if (verdict && only && verdict->finding.kind != *only) verdict.reset();
      return verdict;
    };
    if (!batches()) {
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto asks = property_.asks(candidates[i]);
        const auto answers = answer_one_by_one(asks, true);
        if (auto verdict = judged_failing(candidates[i], answers)) return std::pair{i, std::move(*verdict)};
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
        if (auto verdict = judged_failing(candidates[judged], mine)) failing = std::pair{judged, std::move(*verdict)};
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

  // The failure shrunk by the greedy loop (harness/greedy_shrink.hpp) over
  // its case's steps, in batches of up to 64 candidates.
  Failure shrink(Failure failure, detail::ShrinkWatch& watch) {
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
    how.first_failing = [&](std::span<const Case> batch) -> std::optional<std::size_t> {
      auto failing = first_failing(batch, only);
      if (!failing) return std::nullopt;
      latest = std::move(failing->second);
      return failing->first;
    };
    how.on_smaller = [&](const Case& smaller) {
      failure = Failure{smaller, std::move(latest), failure.index, {}};
      ++result_.shrinks;
      watch.on_failure(failure.counterexample);
    };
    how.stop = [&watch] { return watch.should_stop(); };
    how.max_batch = 64;
    Case current = failure.found;
    harness::greedy_shrink(current, how);
    return failure;
  }

  // A timeout counts only once asked again with a longer limit
  // (ask_timeouts_again): not when the door cannot ask again, nor once a
  // timeout of this run was confirmed (the verdict is NOT VERIFIED already).
  bool unconfirmed_timeout(const Counterexample& cx) const {
    return cx.finding.kind == harness::FindingKind::timed_out && impl_.confirm && !timeout_confirmed_before();
  }

  // The failure as judged once its timeouts are asked again (its answers as
  // the search kept them, else asked through the shrink's memo), or nullopt
  // when it then answers correctly: a stall, counted as a slow call.
  std::optional<Failure> asked_again(Failure failure) {
    const auto asks = property_.asks(failure.found);
    auto answers = failure.answers.empty() ? answer_one_by_one(asks, true) : std::move(failure.answers);
    ask_timeouts_again(asks, answers, Limit::longer);
    if (memo_ != nullptr) {
      for (std::size_t a = 0; a < asks.size(); ++a) memo_->keep(spec_, asks[a], answers[a]);
    }
    auto verdict = judge(failure.found, answers);
    if (!verdict) return std::nullopt;
    return Failure{std::move(failure.found), std::move(*verdict), failure.index, {}};
  }

  // A timeout is confirmed once, on the smallest case the shrink reached: a
  // real hang pays the long limit once, not for the case found and again for
  // the minimal one. If the minimal one answers, the shrink followed a stall
  // of the machine: the case found is asked again, and reported (not fully
  // shrunk) if it holds. nullopt: nothing held, the failure is withdrawn.
  std::optional<Failure> confirmed(const Failure& found, Failure minimal, detail::ShrinkWatch& watch) {
    if (!unconfirmed_timeout(minimal.counterexample)) return minimal;
    const bool shrunk = !(minimal.found == found.found);
    if (auto held = asked_again(shrunk ? std::move(minimal) : found)) return held;
    if (!shrunk) return std::nullopt;
    watch.stopped_because("a smaller case's timeout did not hold when it was asked again");
    if (!unconfirmed_timeout(found.counterexample)) return found;  // a wrong answer, say: it holds as found
    return asked_again(found);
  }

  // The earlier properties' minimal reports (not duplicates themselves).
  std::vector<const Counterexample*> earlier_reports() const {
    std::vector<const Counterexample*> reports;
    if (known_ == nullptr) return reports;
    for (const auto& earlier : *known_) {
      if (earlier.status == harness::kMinimal && earlier.duplicate_of.empty()) reports.push_back(&earlier);
    }
    return reports;
  }

  // This property's failure on an earlier property's report, before any
  // search: that bug again (unless it is a timeout still to be confirmed).
  // The report's workload is the case, with the parameters of this
  // property's first case set to 0 (a shrink of any case is still a case).
  std::optional<Failure> earlier_bug(std::uint64_t seed) {
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

  // The same bug as an earlier property's minimal report: this property
  // fails on that report's workload too (its own parameters kept), so that
  // workload is this failure's report, without shrinking it again.
  std::optional<Failure> known_bug(const Failure& failure) {
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

  // The earlier report this minimal failure is (the same workload, failing
  // the same way), or "": under distinct_bugs, the only test of sameness.
  std::string shrunk_to_earlier(const Counterexample& cx) const {
    for (const auto* earlier : earlier_reports()) {
      if (earlier->workload == cx.workload && earlier->finding.kind == cx.finding.kind) return earlier->property;
    }
    return "";
  }

  // Shrinks a failure and writes its report, as it shrinks and once done.
  // False when it did not hold (a timeout that answered when asked again):
  // its report is withdrawn and the case counts as passed.
  bool report(Failure& found, std::uint64_t seed, detail::ShrinkWatch& watch) {
    const int cases_before = result_.cases;
    // Marked "shrinking" in place: its outputs may be huge, and it is not copied for that.
    watch.on_failure(found.counterexample, unconfirmed_timeout(found.counterexample));
    if (impl_.shrinking) impl_.shrinking(true);
    std::optional<Failure> held = found.counterexample.duplicate_of.empty() ? known_bug(found) : found;
    if (!held) held = confirmed(found, shrink(found, watch), watch);
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
    cx.reproduce = "--seed " + std::to_string(seed) + " draws it again: case " + std::to_string(cases_before + 1) +
                   " of property " + property_.name + ", then " + std::to_string(result_.shrinks) + " shrink steps";
    if (!options_.rerun_command.empty()) cx.rerun_command = rerun_command(seed);
    std::string error;
    result_.files = watch.finish(cx, &error);
    if (options_.write_reports && !result_.files) result_.message = "could not write the report: " + error;
    result_.counterexample = std::move(cx);
    return true;
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
  static constexpr int kMostSkipped = 10000;  // draws in a row outside the stated domain before the run gives up

  const Property& property_;
  const Implementation& impl_;
  const harness::Spec& spec_;
  const SuiteOptions& options_;
  const PropertyTable* table_;  // for the stated domain (nullptr: none)
  AnswerMemo* memo_;
  const std::vector<Counterexample>* known_;
  PropertyResult result_;
  bool domain_exhausted_ = false;
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
    if (round > 0 && below_floor == 0 && left < 0.02 * options.time_budget_seconds) break;
    const double rate = total.seconds > 0 ? total.cases / total.seconds : 0;
    const double wanted = round == 0 ? std::max(200, below_floor) : std::max({50.0, 0.9 * rate * left, 1.0 * below_floor});
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

PropertyResult run_property(const Property& property, const Implementation& implementation,
                            const SuiteOptions& options, const PropertyTable* table) {
  return run_with(property, implementation, options, table, nullptr, nullptr);
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
  if (options.time_budget_seconds > 0 && options.min_cases <= 0 && !options.deadline)
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
