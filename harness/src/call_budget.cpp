#include "chunkmeta/harness/call_budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

double CallBudget::units_of(const Spec& spec, const Workload& workload) {
  return 1.0 + static_cast<double>(workload.rows()) + static_cast<double>(spec.chunks(workload).value_or(0));
}

int CallBudget::size_class(double units) {
  return std::clamp(static_cast<int>(std::log2(std::max(1.0, units))), 0, kSizeClasses - 1);
}

CallBudget::Rule CallBudget::rule() const {
  if (shrinking_ || cut_before_) return slowest_ > 0 ? Rule::after_hang : Rule::whole;
  return unit_seconds_ > 0 ? Rule::by_size : Rule::whole;
}

double CallBudget::rule_limit(Rule rule, double units) const {
  switch (rule) {
    case Rule::after_hang: return std::min(timeout_, std::max(0.5, 10 * slowest_));
    case Rule::by_size: return std::min(timeout_, by_size(units));
    case Rule::whole: break;
  }
  return timeout_;
}

double CallBudget::limit(double units) const {
  if (timeout_ <= 0) return 0;
  if (forced_ > 0) return forced_;
  return std::max(rule_limit(rule(), units), long_call(units));
}

std::string CallBudget::why_adapted(double units) const {
  const double given = limit(units);
  if (given == timeout_) return "";
  if (forced_ > 0) return " (asked again after a timeout, with a longer limit)";
  if (given > rule_limit(rule(), units)) {
    char text[200];
    std::snprintf(text, sizeof text,
                  given < ceiling() ? " (10x the %.3g s its size predicts at the cost per unit of its largest answers)"
                                    : " (10x the timeout, the most a call may take; its size predicts %.3g s at the cost "
                                      "per unit of its largest answers)",
                  predicted(units));
    return text;
  }
  switch (rule()) {
    case Rule::after_hang:
      return shrinking_ ? " (while shrinking: 10x its slowest answer)" : " (after an earlier timeout: 10x its slowest answer)";
    case Rule::by_size: return " (20x what its answers so far take for this size)";
    case Rule::whole: break;
  }
  return "";
}

void CallBudget::measured(double units, double seconds) {
  if (forced_ > 0) {
    confirmation_.seconds = seconds;
    return;
  }
  if (shrinking_) return;  // the policy learns from the run's own answers
  slowest_ = std::max(slowest_, seconds);
  const double per_unit = seconds / std::max(1.0, units);
  unit_seconds_ = std::max(unit_seconds_, per_unit);
  Measured& of_size = by_class_[size_class(units)];
  if (per_unit >= of_size.unit_seconds) {
    of_size.unit_seconds = per_unit;
    of_size.units = units;
  }
  if (of_size.first.size() < kKeptPerClass) of_size.first.emplace_back(per_unit, units);
  largest_class_ = std::max(largest_class_, size_class(units));
  largest_units_ = std::max(largest_units_, units);
}

CallBudget::Growth CallBudget::growth() const {
  constexpr std::size_t kSeen = 3;
  constexpr int kApart = 3;  // size classes: at least 8x
  const auto median = [](std::vector<std::pair<double, double>> answers) {
    std::nth_element(answers.begin(), answers.begin() + static_cast<std::ptrdiff_t>(answers.size() / 2), answers.end());
    return answers[answers.size() / 2];
  };
  Growth found;
  for (int large = largest_class_; large >= kApart; --large) {
    if (by_class_[large].first.size() < kSeen) continue;
    for (int small = large - kApart; small >= 0; --small) {
      if (by_class_[small].first.size() < kSeen) continue;
      found.small = median(by_class_[small].first);
      found.large = median(by_class_[large].first);
      if (found.large.first * found.large.second < kTimedSeconds) return Growth{};  // too quick to time
      if (found.small.first > 0 && found.large.first > 0)
        found.power = 1 + std::log(found.large.first / found.small.first) / std::log(found.large.second / found.small.second);
      return found;
    }
  }
  return found;
}

double CallBudget::by_size(double units) const { return std::max(2.0, 20 * unit_seconds_ * units); }

double CallBudget::predicted(double units) const {
  double per_unit = 0;
  for (int size = std::max(0, largest_class_ - kLargestClasses + 1); size <= largest_class_; ++size)
    per_unit = std::max(per_unit, by_class_[size].unit_seconds);
  return per_unit * units;
}

double CallBudget::long_call(double units) const { return std::min(ceiling(), kLongCallTimes * predicted(units)); }

double CallBudget::confirmation_limit(double expired, double units) const {
  const double ordinary = std::min(timeout_, std::max(2 * expired, by_size(units)));
  if (expired <= timeout_ && long_call(units) <= ordinary) return ordinary;
  return std::min(ceiling(), std::max({ordinary, 2 * expired, long_call(units)}));
}

std::string CallBudget::cost_growth() const {
  const auto [units, expired, seconds] = confirmation_;
  if (seconds <= expired || largest_class_ < 0) return "";
  // The reference: the answered call of the largest size class, at its cost per unit.
  const Measured reference = by_class_[largest_class_];
  const double predicted_seconds = predicted(units);
  const double reference_seconds = reference.unit_seconds * reference.units;
  if (reference_seconds <= 0 || units < 2 * reference.units || seconds < kGrowthTimes * predicted_seconds) return "";
  const double power = std::log(seconds / reference_seconds) / std::log(units / reference.units);
  char text[400];
  std::snprintf(text, sizeof text,
                "on %.0f units of work (1 + rows + chunks) it answered in %.1f s, after a limit of %.1f s ran out "
                "on it before; its largest answers so far cost at most %.3g ms per unit (%.0f units in %.3g s), "
                "which predicts %.2f s: its cost grows faster than its work (about units^%.1f)",
                units, seconds, expired, predicted_seconds / units * 1e3, reference.units, reference_seconds,
                predicted_seconds, power);
  return text;
}

void CallBudget::explain_cut(Misbehaviour& cut, double units) const {
  // Only a call given more than the timeout for its size: a cost per unit that seems to rise with size
  // may be the workloads' mix (rows and chunks cost apart), so a timeout within the timeout stays one.
  if (cut.kind != FindingKind::timed_out || cut.limit_seconds <= timeout_ || units <= largest_units_) return;
  const Growth rise = growth();
  if (rise.power < kGrowingPower) return;
  const auto [large_unit_seconds, large_units] = rise.large;
  const double expected = large_unit_seconds * large_units * std::pow(units / large_units, rise.power);
  if (expected < cut.limit_seconds) return;  // its growth says it should have answered: a hang
  char text[400];
  std::snprintf(text, sizeof text,
                "; its answers' time per unit of work (1 + rows + chunks) rises with their size: %.3g ms on %.0f "
                "units, %.3g ms on %.0f (about units^%.1f), which predicts %.3g s for these %.0f units: its cost "
                "grows faster than its work",
                rise.small.first * 1e3, rise.small.second, large_unit_seconds * 1e3, large_units, rise.power, expected,
                units);
  cut.kind = FindingKind::superlinear_cost;
  cut.summary += text;
}

}  // namespace chunkmeta::harness
