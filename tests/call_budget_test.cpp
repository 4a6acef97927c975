// The per-call limit (harness/call_budget.hpp) over a generated matrix of
// functions, machine speeds and timeouts, fed the seconds its answers would
// take (no clock is read: nothing here depends on this machine's speed).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "chunkmeta/harness/call_budget.hpp"

namespace chunkmeta::harness {
namespace {

// A function whose call on `units` costs overhead + per_unit x units^power seconds.
struct Cost {
  double overhead = 0;
  double per_unit = 0;
  double power = 1;
  double operator()(double units) const { return overhead + per_unit * std::pow(units, power); }
};

// The run's answered calls: sizes 1, 2, 4, ... up to `largest` units, each measured.
CallBudget measured_up_to(double timeout, const Cost& cost, double largest) {
  CallBudget budget(timeout);
  for (double units = 1; units <= largest; units *= 2) budget.measured(units, cost(units));
  return budget;
}

struct Machine {
  double slower;  // how many times slower than the fastest machine of the matrix
};

const std::vector<double> kTimeouts = {2, 10, 30};
const std::vector<Machine> kMachines = {{1}, {3}, {10}};
// Seconds per unit of work on the fastest machine: a C++ function, a torch loop, a slow Python loop.
const std::vector<double> kUnitCosts = {1e-7, 2e-5, 3e-4};
const std::vector<double> kLargestMeasured = {64, 2048};
const std::vector<double> kHowMuchLarger = {1, 8, 64, 512};

TEST(CallBudget, GivesALinearFunctionsLargeCallItsSizesTimeOnAnyMachineUpToTenTimesTheTimeout) {
  for (double timeout : kTimeouts) {
    for (const Machine& machine : kMachines) {
      for (double unit_cost : kUnitCosts) {
        for (double largest : kLargestMeasured) {
          for (double larger : kHowMuchLarger) {
            const Cost cost{50e-6 * machine.slower, unit_cost * machine.slower, 1};
            const CallBudget budget = measured_up_to(timeout, cost, largest);
            const double units = largest * larger;
            const double needs = cost(units);
            SCOPED_TRACE("timeout " + std::to_string(timeout) + ", machine " + std::to_string(machine.slower) +
                         "x, unit cost " + std::to_string(unit_cost) + ", " + std::to_string(units) + " units, needs " +
                         std::to_string(needs) + " s");
            // At least 5x what it needs (a shared machine may run it slower than it measured), within the ceiling.
            EXPECT_GE(budget.limit(units), std::min(10 * timeout, 5 * needs));
            EXPECT_LE(budget.limit(units), 10 * timeout);
          }
        }
      }
    }
  }
}

TEST(CallBudget, CutsAWorkloadNoLargerThanTheFastCallsMeasuredWithinTheTimeout) {
  for (double timeout : kTimeouts) {
    for (double largest : kLargestMeasured) {
      // Fast enough that its largest answered call takes at most a hundredth of the timeout.
      const Cost cost{1e-5, timeout / 100 / largest, 1};
      CallBudget budget = measured_up_to(timeout, cost, largest);
      for (double units = 1; units <= largest; units *= 4) {
        SCOPED_TRACE("timeout " + std::to_string(timeout) + ", " + std::to_string(units) + " units");
        EXPECT_LE(budget.limit(units), timeout);
        budget.set_shrinking(true);
        EXPECT_LE(budget.limit(units), timeout);
        budget.set_shrinking(false);
      }
    }
  }
}

TEST(CallBudget, GivesTheWholeTimeoutBeforeAnyAnswerAndNoLimitWithoutATimeout) {
  for (double timeout : kTimeouts) {
    const CallBudget unmeasured(timeout);
    for (double units : {1.0, 1e3, 1e6}) EXPECT_EQ(unmeasured.limit(units), timeout);
  }
  const CallBudget unlimited = measured_up_to(0, Cost{0, 1e-3, 1}, 1024);
  for (double units : {1.0, 1e3, 1e6}) EXPECT_EQ(unlimited.limit(units), 0);
}

TEST(CallBudget, ConfirmsALongCallsTimeoutWithTwiceTheLimitThatRanOutWithinTheCeilingAnyOtherWithinTheTimeout) {
  for (double timeout : kTimeouts) {
    for (double larger : kHowMuchLarger) {
      const CallBudget budget = measured_up_to(timeout, Cost{0, 1e-3, 1}, 2048);
      const double units = 2048 * larger;
      const double expired = budget.limit(units);
      SCOPED_TRACE("timeout " + std::to_string(timeout) + ", " + std::to_string(units) + " units");
      if (expired > timeout) {  // a long call
        EXPECT_GE(budget.confirmation_limit(expired, units), std::min(10 * timeout, 2 * expired));
        EXPECT_LE(budget.confirmation_limit(expired, units), 10 * timeout);
      } else {
        EXPECT_LE(budget.confirmation_limit(expired, units), timeout);
      }
    }
  }
}

TEST(CallBudget, CountsACutAsPastTheTimeoutExactlyWhenItsSizeGaveItMoreThanTheTimeoutOutsideAConfirmation) {
  for (double timeout : kTimeouts) {
    for (double larger : kHowMuchLarger) {
      CallBudget budget = measured_up_to(timeout, Cost{0, 1e-3, 1}, 2048);
      const double units = 2048 * larger;
      SCOPED_TRACE("timeout " + std::to_string(timeout) + ", " + std::to_string(units) + " units");
      // Past the timeout: its own confirmation (the run loop does not ask it again with up to 10x the timeout).
      EXPECT_EQ(budget.past_the_timeout(units), budget.limit(units) > timeout);
      // A confirmation's limit is forced: never past the timeout by size.
      budget.confirming(budget.limit(units), units, [&] {
        EXPECT_FALSE(budget.past_the_timeout(units));
        return 0;
      });
    }
  }
  EXPECT_FALSE(CallBudget(0).past_the_timeout(1e9));  // no timeout: no limit to be past
}

// A confirmation of a workload `larger` times the largest measured, after its limit ran out, answering in its cost.
std::string growth_of(const Cost& cost, double largest, double larger) {
  CallBudget budget = measured_up_to(10, cost, largest);
  const double units = largest * larger;
  const double expired = std::min(cost(units) / 1.5, budget.limit(units));
  budget.confirming(expired, units, [&] {
    budget.measured(units, cost(units));
    return 0;
  });
  return budget.cost_growth();
}

TEST(CallBudget, NamesACostThatGrowsFasterThanTheWorkWithItsPower) {
  for (double power : {2.0, 3.0}) {
    for (double largest : kLargestMeasured) {
      for (double larger : {8.0, 64.0}) {
        const std::string figures = growth_of(Cost{0, 1e-6, power}, largest, larger);
        SCOPED_TRACE("power " + std::to_string(power) + ", " + std::to_string(largest) + " x " + std::to_string(larger));
        EXPECT_NE(figures.find("grows faster than its work (about units^" + std::to_string(power).substr(0, 3) + ")"),
                  std::string::npos)
            << figures;
      }
    }
  }
}

TEST(CallBudget, DoesNotNameALinearCostOrAStallOnAWorkloadOfTheMeasuredSizeAsGrowing) {
  for (double largest : kLargestMeasured) {
    for (double larger : kHowMuchLarger) {
      // Linear: its time is what its size predicts, however large.
      EXPECT_EQ(growth_of(Cost{50e-6, 1e-4, 1}, largest, larger), "");
    }
    // A workload no larger than those measured that is slow for a while is a stall, whatever its time.
    CallBudget budget = measured_up_to(10, Cost{0, 1e-4, 1}, largest);
    budget.confirming(2, largest, [&] {
      budget.measured(largest, 100);
      return 0;
    });
    EXPECT_EQ(budget.cost_growth(), "");
  }
}

// Each size measured three times, as a run's answers are.
CallBudget measured_three_times(double timeout, const Cost& cost, double largest) {
  CallBudget budget(timeout);
  for (int time = 0; time < 3; ++time) {
    for (double units = 1; units <= largest; units *= 2) budget.measured(units, cost(units));
  }
  return budget;
}

TEST(CallBudget, NamesACutOfAFunctionWhoseCostPerUnitRisesWithSizeAsSuperlinearCostWithItsPower) {
  for (double power : {1.6, 2.0, 3.0}) {
    for (double largest : kLargestMeasured) {
      for (double larger : {2.0, 64.0}) {
        const Cost cost{0, 1e-5, power};
        const double timeout = 1e-3;  // below every long call's limit here
        CallBudget budget = measured_three_times(timeout, cost, largest);
        const double units = largest * larger;
        Misbehaviour cut{FindingKind::timed_out, "gave no answer", ""};
        cut.limit_seconds = budget.limit(units);
        ASSERT_GT(cut.limit_seconds, timeout);
        budget.explain_cut(cut, units);
        SCOPED_TRACE("power " + std::to_string(power) + ", " + std::to_string(units) + " units");
        EXPECT_EQ(cut.kind, FindingKind::superlinear_cost) << cut.summary;
        EXPECT_NE(cut.summary.find("(about units^" + std::to_string(power).substr(0, 3) + ")"), std::string::npos)
            << cut.summary;
      }
    }
  }
}

TEST(CallBudget, LeavesACutOfALinearFunctionOrOfAWorkloadNoLargerThanMeasuredATimeout) {
  for (double largest : kLargestMeasured) {
    for (double larger : kHowMuchLarger) {
      // Linear, however slow: a cut is a hang.
      for (double unit_cost : kUnitCosts) {
        const Cost linear{50e-6, unit_cost * 10, 1};
        CallBudget budget = measured_three_times(10, linear, largest);
        Misbehaviour cut{FindingKind::timed_out, "gave no answer", ""};
        cut.limit_seconds = budget.limit(largest * larger);
        budget.explain_cut(cut, largest * larger);
        EXPECT_EQ(cut.kind, FindingKind::timed_out) << cut.summary;
      }
    }
    // Its cost per unit seeming to rise (the workloads' mix can do that), but cut on a workload the size of
    // those it answered, or within the timeout: a hang (or a stall) there.
    const Cost seemingly_quadratic{0, 1e-5, 2};
    CallBudget budget = measured_three_times(1e-3, seemingly_quadratic, largest);
    Misbehaviour cut{FindingKind::timed_out, "gave no answer", ""};
    cut.limit_seconds = 1;
    budget.explain_cut(cut, largest);
    EXPECT_EQ(cut.kind, FindingKind::timed_out) << cut.summary;
    CallBudget within_the_timeout = measured_three_times(1e3, seemingly_quadratic, largest);
    cut.limit_seconds = 1e3;
    within_the_timeout.explain_cut(cut, 64 * largest);
    EXPECT_EQ(cut.kind, FindingKind::timed_out) << cut.summary;
  }
}

}  // namespace
}  // namespace chunkmeta::harness
