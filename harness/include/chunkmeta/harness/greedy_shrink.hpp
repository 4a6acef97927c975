// The one greedy shrink loop, for the run loop's cases (a workload and its
// parameters) and for the shrinker of fuzz findings and corpus entries (a
// workload): each pass tries the current value's steps in order, in batches
// that double from one to `max_batch` while none fails; the first candidate
// that still fails is taken and the next pass resumes at its step. A value is
// final (minimal) only once a whole pass finds nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace chunkmeta::harness {

template <typename Value, typename Step>
struct GreedyShrink {
  // A pass's steps from `value`, resuming after the step last accepted (none in the first pass).
  std::function<std::vector<Step>(const Value& value, const std::optional<Step>& accepted)> steps;
  // The candidate one step makes, or nullopt when it is no candidate (outside a domain: never judged).
  std::function<std::optional<Value>(const Value& value, const Step& step)> candidate;
  // The index of the first candidate of a batch that still fails, judged in order; nullopt if none.
  std::function<std::optional<std::size_t>(std::span<const Value> batch)> first_failing;
  // Told each smaller failing value taken.
  std::function<void(const Value& smaller)> on_smaller;
  // Polled before each batch: true ends the shrink with the smallest value so far.
  std::function<bool()> stop;
  std::size_t max_batch = 64;
};

// Shrinks `value` in place; true if it ended minimal (no step of it fails), false if stopped.
template <typename Value, typename Step>
bool greedy_shrink(Value& value, const GreedyShrink<Value, Step>& how) {
  std::optional<Step> accepted;
  std::vector<Value> batch;
  std::vector<std::size_t> step_of;
  while (true) {
    const std::vector<Step> steps = how.steps(value, accepted);
    std::optional<Step> taken;
    std::size_t size = 1;
    for (std::size_t next = 0; next < steps.size() && !taken; size = std::min(2 * size, how.max_batch)) {
      if (how.stop && how.stop()) return false;
      batch.clear();
      step_of.clear();
      const std::size_t end = std::min(steps.size(), next + size);
      for (std::size_t i = next; i < end; ++i) {
        if (auto made = how.candidate(value, steps[i])) {
          batch.push_back(std::move(*made));
          step_of.push_back(i);
        }
      }
      next = end;
      if (batch.empty()) continue;
      if (const auto failing = how.first_failing(batch)) {
        taken = steps[step_of[*failing]];
        value = std::move(batch[*failing]);
      }
    }
    if (!taken) return true;
    accepted = std::move(taken);
    if (how.on_smaller) how.on_smaller(value);
  }
}

}  // namespace chunkmeta::harness
