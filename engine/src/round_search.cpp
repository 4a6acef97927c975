// A Round's cases: drawn in chunks whose answers are fetched on another
// thread while the cases before are judged, judged in order, the first
// failure reported.
#include <algorithm>

#include "round.hpp"

namespace chunkmeta::engine::detail {

namespace {

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

}  // namespace

PropertyResult Round::run(std::uint64_t seed, int cases) {
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

std::unique_ptr<Round::Chunk> Round::draw_chunk(rc::Random& random, int& next_case, int count, int cases) {
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

void Round::land(Chunk* chunk) {
  if (chunk == nullptr || !chunk->in_flight.valid()) return;
  const auto start = Clock::now();
  chunk->answers = chunk->in_flight.get();
  result_.implementation_seconds += seconds_since(start);
  const auto fetched = std::count_if(chunk->answers.begin(), chunk->answers.end(),
                                     [](const std::optional<Answer>& answer) { return answer.has_value(); });
  result_.implementation_calls += static_cast<long long>(fetched);
  result_.prefetched += static_cast<long long>(fetched);
}

void Round::cancel_and_land(Chunk* chunk) {
  if (chunk == nullptr) return;
  chunk->cancelled = true;
  land(chunk);
}

std::optional<Failure> Round::search(std::uint64_t seed, int cases, int from, detail::ShrinkWatch& watch) {
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
      const auto asks = std::span<const Workload>(current->asks).subspan(first, past - first);
      auto verdict = judge(c, asks, answers);
      if (verdict && unconfirmed_timeout(*verdict)) {
        // A stall of the machine is over at once: asked again with the
        // ordinary limit, the case passes, and costs no shrink. A hang
        // times out again, and is shrunk, then confirmed (confirmed()).
        cancel_and_land(next.get());  // the implementation takes one caller at a time
        ask_timeouts_again(asks, answers, Limit::ordinary);
        verdict = judge(c, asks, answers);
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

std::string Round::excluded(std::span<const Workload> asks) const {
  if (table_ == nullptr || options_.excluded_classes.empty()) return "";
  for (const auto& ask : asks) {
    if (std::string left_out = outside_domain(*table_, options_, ask); !left_out.empty()) return left_out;
  }
  return "";
}

std::string Round::excluded(const Case& c) const {
  return options_.excluded_classes.empty() ? "" : excluded(property_.asks(c));
}

void Round::count_passed(const Case& c) {
  ++result_.cases;
  if (property_.classes) {
    for (const auto& name : property_.classes(c)) ++result_.edge_classes[name];
  }
}

std::optional<Counterexample> Round::judge(const Case& c, std::span<const Workload> asks,
                                           std::span<const Answer> answers) {
  // Every answer against the truth first, whatever the property: a relation
  // compares answers with each other, and a function that turns wrong after
  // N calls is consistently wrong. The property's own judgement adds to that.
  auto verdict = against_the_truth(c, asks, answers);
  if (!verdict && property_.judge) verdict = property_.judge(impl_, c, answers);
  if (verdict) {
    verdict->implementation = impl_.name;
    verdict->spec = &spec_;
    verdict->property = property_.name;
  }
  return verdict;
}

std::optional<Counterexample> Round::against_the_truth(const Case& c, std::span<const Workload> asks,
                                                       std::span<const Answer> answers) const {
  for (std::size_t i = 0; i < asks.size() && i < answers.size(); ++i) {
    auto finding = harness::judge(spec_, asks[i], answers[i]);
    if (!finding) continue;
    Counterexample cx;
    cx.workload = asks[i];
    cx.finding = std::move(*finding);
    if (asks.size() > 1 && !(asks[i] == c.workload)) {
      cx.related.push_back({"the case it was asked for, with " + std::to_string(asks.size() - 1) +
                                " more workload(s) (" + property_.sentence + ")",
                            c.workload, std::nullopt, nullptr});
    }
    return cx;
  }
  return std::nullopt;
}

}  // namespace chunkmeta::engine::detail
