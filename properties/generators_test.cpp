// Guards every registered spec's generators against silent rot: every edge
// class and every invalid rule must keep turning up, generated values must
// stay in their domain, invalid ones must be refused with the error they
// claim, and the shrinker must keep valid workloads valid. A spec's own value
// tests (its fuzz encodings) are in its folder.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/properties/tables.hpp"

namespace chunkmeta::properties {
namespace {

constexpr int kDraws = 20000;
constexpr double kMinimumShare = 0.01;

template <typename T>
std::vector<T> draw(const rc::Gen<T>& gen, int count) {
  return draw_values(gen, count);
}

// Every registered spec has a suite (property table and value model) from its folder.
TEST(SpecsRegistry, EverySpecHasAPropertySuiteAndAValueModel) {
  for (const harness::Spec* spec : harness::all_specs()) {
    EXPECT_TRUE(has_suite(*spec)) << spec->name() << " has no suite: its folder's suites_of_ hook does not list it";
    EXPECT_EQ(table_of(*spec).spec, spec);
  }
}

void expect_every_class_hit(const std::map<std::string, int>& hits, const std::vector<std::string>& all, int draws,
                            double minimum, std::string_view what) {
  for (const auto& cls : all) {
    const auto it = hits.find(cls);
    const int count = it == hits.end() ? 0 : it->second;
    const double share = static_cast<double>(count) / draws;
    std::cout << "  " << share * 100 << "%  " << cls << "\n";
    EXPECT_GE(share, minimum) << what << " '" << cls << "' is hit only " << count << " times in " << draws;
  }
}

TEST(Generators, ValidWorkloadsAreValidAndHitEveryEdgeClassAtLeastOnePercentOfTheTime) {
  for (const harness::Spec* spec : harness::all_specs()) {
    const ValueModel& d = values_of(*spec);
    std::cout << spec->name() << ":\n";
    std::map<std::string, int> hits;
    for (const auto& w : draw(d.valid, kDraws)) {
      ASSERT_FALSE(spec->validate(w).has_value()) << *spec->validate(w) << " for " << w;
      // A spec without per-row values has them all zero, one per row.
      if (!spec->reads(harness::Slot::per_row)) {
        ASSERT_EQ(w.num_computed_tokens, std::vector<std::int64_t>(w.query_start_loc.size() - 1, 0)) << w;
      }
      for (const auto& cls : d.classes(w)) ++hits[cls];
    }
    expect_every_class_hit(hits, d.all_classes, kDraws, kMinimumShare, "edge class");
  }
}

TEST(Generators, HugeBatchesAreValidAndReachEveryWritePathPastRow32768InMostCases) {
  constexpr int kHugeDraws = 100;  // each has 32,767 to 140,000 rows
  for (const harness::Spec* spec : harness::all_specs()) {
    const ValueModel& d = values_of(*spec);
    std::cout << spec->name() << ":\n";
    std::map<std::string, int> hits;
    for (const auto& w : draw(d.huge, kHugeDraws)) {
      ASSERT_FALSE(spec->validate(w).has_value()) << *spec->validate(w);
      ASSERT_GE(w.rows(), 32767u);
      for (const auto& cls : d.huge_classes(w)) ++hits[cls];
    }
    // Every class in at least half the draws (2^16+ rows in about 2 of 3).
    expect_every_class_hit(hits, d.all_huge_classes, kHugeDraws, 0.5, "huge-batch class");
  }
}

TEST(Generators, InvalidWorkloadsBreakEveryRuleAtLeastOnePercentOfTheTimeAndAreRefusedByIt) {
  for (const harness::Spec* spec : harness::all_specs()) {
    const ValueModel& d = values_of(*spec);
    std::cout << spec->name() << ":\n";
    std::map<std::string, int> hits;
    for (const auto& invalid : draw(d.invalid, kDraws)) {
      ++hits[invalid.rule];
      const auto error = spec->validate(invalid.workload);
      ASSERT_TRUE(error.has_value()) << invalid.rule << ": accepted " << invalid.workload;
      ASSERT_TRUE(error->same_rule(invalid.expected))
          << invalid.rule << ": " << invalid.workload << " refused with " << *error << ", not " << invalid.expected;
    }
    expect_every_class_hit(hits, d.all_rules, kDraws, kMinimumShare, "rule");
  }
}

// The shrinker knows no spec: a step may leave a spec's domain (a row emptied
// where every row needs a token), and the run loop skips it. What shrinking
// needs is that a valid workload that can shrink has valid smaller candidates,
// and that most candidates are valid (else shrinking would crawl).
TEST(Generators, EveryValidWorkloadThatCanShrinkHasValidSmallerCandidates) {
  for (const harness::Spec* spec : harness::all_specs()) {
    int candidates = 0;
    int valid = 0;
    for (const auto& w : draw(values_of(*spec).valid, 300)) {
      int valid_here = 0;
      const auto steps = harness::shrink_steps(w);
      for (const auto& step : steps) {
        const Workload candidate = harness::apply(w, step);
        ++candidates;
        if (!spec->validate(candidate).has_value()) ++valid_here;
      }
      ASSERT_TRUE(steps.empty() || valid_here > 0) << spec->name() << ": no valid shrink of " << w;
      valid += valid_here;
    }
    EXPECT_GT(valid, 1000) << spec->name();
    EXPECT_GT(valid, candidates / 2) << spec->name() << ": " << valid << " of " << candidates << " candidates valid";
  }
}

}  // namespace
}  // namespace chunkmeta::properties
