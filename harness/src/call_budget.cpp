#include "chunkmeta/harness/call_budget.hpp"

#include <algorithm>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

double CallBudget::units_of(const Spec& spec, const Workload& workload) {
  return 1.0 + static_cast<double>(workload.rows()) + static_cast<double>(spec.chunks(workload).value_or(0));
}

CallBudget::Rule CallBudget::rule() const {
  if (shrinking_ || cut_before_) return slowest_ > 0 ? Rule::after_hang : Rule::whole;
  return unit_seconds_ > 0 ? Rule::by_size : Rule::whole;
}

double CallBudget::limit(double units) const {
  if (timeout_ <= 0) return 0;
  if (forced_ > 0) return std::min(timeout_, forced_);
  switch (rule()) {
    case Rule::after_hang: return std::min(timeout_, std::max(0.5, 10 * slowest_));
    case Rule::by_size: return std::min(timeout_, by_size(units));
    case Rule::whole: break;
  }
  return timeout_;
}

std::string_view CallBudget::why_adapted(double units) const {
  if (limit(units) >= timeout_) return "";
  if (forced_ > 0) return " (asked again after a timeout, with a longer limit)";
  switch (rule()) {
    case Rule::after_hang:
      return shrinking_ ? " (while shrinking: 10x its slowest answer)" : " (after an earlier timeout: 10x its slowest answer)";
    case Rule::by_size: return " (20x what its answers so far take for this size)";
    case Rule::whole: break;
  }
  return "";
}

void CallBudget::measured(double units, double seconds) {
  if (shrinking_ || forced_ > 0) return;  // the policy learns from the run's own answers
  slowest_ = std::max(slowest_, seconds);
  unit_seconds_ = std::max(unit_seconds_, seconds / std::max(1.0, units));
}

double CallBudget::by_size(double units) const { return std::max(2.0, 20 * unit_seconds_ * units); }

double CallBudget::confirmation_limit(double expired, double units) const {
  return std::min(timeout_, std::max(2 * expired, by_size(units)));
}

}  // namespace chunkmeta::harness
