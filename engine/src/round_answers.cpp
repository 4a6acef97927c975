// A Round's answers: one call at a time or in round trips through a
// batching door, memoised while shrinking, and timeouts asked again before
// they count.
#include <algorithm>

#include "round.hpp"

namespace chunkmeta::engine::detail {

std::optional<Answer> Round::not_sent(const Workload& ask) const {
  if (impl_.rejects_invalid_input) return std::nullopt;
  if (auto refused = spec_.validate(ask)) return Answer(harness::Outcome(*refused));
  return std::nullopt;
}

std::vector<Answer> Round::answer_one_by_one(std::span<const Workload> asks, bool shrinking) {
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

std::size_t Round::answer_in_batch(std::span<const Workload> asks, bool shrinking,
                                   std::vector<std::optional<Answer>>& answers,
                                   const std::function<bool(std::size_t)>& decided) {
  answers.assign(asks.size(), std::nullopt);
  std::vector<Workload> unknown;
  std::vector<std::size_t> unknown_at;
  for (std::size_t i = 0; i < asks.size(); ++i) {
    if (auto refused = not_sent(asks[i])) {
      answers[i].emplace(std::move(*refused));
    } else if (const Answer* seen = shrinking && memo_ != nullptr ? memo_->find(spec_, asks[i]) : nullptr) {
      answers[i].emplace(*seen);
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
      answers[unknown_at[sent++]].emplace(std::move(answer));
    }
    advance();
  }
  return sent;
}

bool Round::timed_out(const Answer& answer) {
  const auto* m = std::get_if<harness::Misbehaviour>(&answer);
  return m != nullptr && m->kind == harness::FindingKind::timed_out;
}

bool Round::timeout_confirmed_before() const {
  if (known_ == nullptr) return false;
  return std::any_of(known_->begin(), known_->end(), [](const Counterexample& cx) {
    return cx.finding.kind == harness::FindingKind::timed_out && cx.status == harness::kMinimal;
  });
}

Answer Round::judged_for_its_time(const Workload& ask, Answer answer) const {
  // A wrong answer is the finding whatever its time; a right one that came far
  // slower than its size predicts says the cost grows faster than the work.
  if (!impl_.cost_growth || harness::judge(spec_, ask, answer)) return answer;
  std::string figures = impl_.cost_growth();
  if (figures.empty()) return answer;
  return harness::Misbehaviour{harness::FindingKind::superlinear_cost, std::move(figures),
                               "a correct answer; its time is the finding"};
}

void Round::ask_timeouts_again(std::span<const Workload> asks, std::vector<Answer>& answers, Limit limit) {
  if (!impl_.confirm || timeout_confirmed_before()) return;
  for (std::size_t a = 0; a < answers.size(); ++a) {
    if (!timed_out(answers[a])) continue;
    const auto& timeout = std::get<harness::Misbehaviour>(answers[a]);
    if (limit == Limit::ordinary && timeout.asked_twice) continue;  // the door asked it again already
    if (timeout.idle) continue;  // stuck (idle with its answer due), not slow: asking again changes nothing
    const double expired = timeout.limit_seconds;
    const auto start = Clock::now();
    Answer again = limit == Limit::longer ? impl_.confirm(asks[a], expired) : impl_.compute(asks[a]);
    result_.implementation_seconds += seconds_since(start);
    ++result_.implementation_calls;
    if (!timed_out(again)) {
      ++result_.slow_calls;
      if (limit == Limit::longer) again = judged_for_its_time(asks[a], std::move(again));
    } else if (limit == Limit::longer) {
      std::get<harness::Misbehaviour>(again).summary +=
          " (the second time: it timed out within " + std::to_string(expired).substr(0, 5) + " s first)";
    }
    answers[a] = std::move(again);
  }
}

}  // namespace chunkmeta::engine::detail
