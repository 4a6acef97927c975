// Guards the generators against silent rot: every edge class and every
// invalid rule must keep turning up, and generated values must stay in their domain.
#include <gtest/gtest.h>

#include <map>

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {
namespace {

constexpr int kDraws = 20000;
constexpr double kMinimumShare = 0.01;

template <typename T>
std::vector<T> draw(const rc::Gen<T>& gen, int count) {
  std::vector<T> values;
  rc::Random random(0x5EED);
  for (int i = 0; i < count; ++i) {
    values.push_back(gen(random.split(), i % 101).value());
  }
  return values;
}

TEST(Generators, ValidWorkloadsAreValidAndHitEveryEdgeClassAtLeastOnePercentOfTheTime) {
  std::map<std::string, int> hits;
  for (const auto& w : draw(valid_workloads(), kDraws)) {
    ASSERT_FALSE(validate(w).has_value()) << *validate(w) << " for " << w;
    for (const auto& cls : edge_classes(w)) ++hits[cls];
  }
  for (const auto& cls : all_edge_classes()) {
    const double share = static_cast<double>(hits[cls]) / kDraws;
    std::cout << "  " << share * 100 << "%  " << cls << "\n";
    EXPECT_GE(share, kMinimumShare) << "edge class '" << cls << "' is hit only " << hits[cls] << " times in " << kDraws;
  }
}

TEST(Generators, HugeBatchesAreValidAndReachEveryWritePathPastRow32768InMostCases) {
  constexpr int kHugeDraws = 100;  // each has 32,767 to 140,000 rows
  std::map<std::string, int> hits;
  for (const auto& w : draw(huge_batches(), kHugeDraws)) {
    ASSERT_FALSE(validate(w).has_value()) << *validate(w);
    ASSERT_GE(w.num_computed_tokens.size(), 32767u);
    for (const auto& cls : huge_batch_classes(w)) ++hits[cls];
  }
  // Every class in at least half the draws (2^16+ rows in about 2 of 3).
  for (const auto& cls : all_huge_batch_classes()) {
    const double share = static_cast<double>(hits[cls]) / kHugeDraws;
    std::cout << "  " << share * 100 << "%  " << cls << "\n";
    EXPECT_GE(share, 0.5) << "huge-batch class '" << cls << "'";
  }
}

TEST(Generators, InvalidWorkloadsBreakEveryRuleAtLeastOnePercentOfTheTime) {
  std::map<std::string, int> hits;
  for (const auto& invalid : draw(invalid_workloads(), kDraws)) ++hits[invalid.rule];
  for (const auto& rule : all_invalid_rules()) {
    const double share = static_cast<double>(hits[rule]) / kDraws;
    EXPECT_GE(share, kMinimumShare) << "rule '" << rule << "' is broken only " << hits[rule] << " times";
  }
}

TEST(Generators, EveryShrinkOfAValidWorkloadIsValid) {
  int candidates = 0;
  rc::Random random(42);
  for (int i = 0; i < 300; ++i) {
    const auto shrinkable = valid_workloads()(random.split(), 100);
    auto shrinks = shrinkable.shrinks();
    while (auto next = shrinks.next()) {
      const Workload candidate = next->value();
      ASSERT_FALSE(validate(candidate).has_value())
          << *validate(candidate) << " for shrink " << candidate << " of " << shrinkable.value();
      ++candidates;
    }
  }
  EXPECT_GT(candidates, 1000);
}

}  // namespace
}  // namespace chunkmeta::properties

#include <random>

#include "chunkmeta/harness/fuzz_input.hpp"

namespace chunkmeta::properties {
namespace {

// Every corpus file must be readable: the fuzz encodings invert their decoders.
TEST(FuzzInputs, EncodeThenDecodeGivesBackTheWorkload) {
  int differential = 0;
  int robustness = 0;
  for (const auto& w : draw(valid_workloads(), 3000)) {
    if (auto bytes = harness::encode_valid_workload(w)) {
      ASSERT_EQ(harness::decode_valid_workload(*bytes), w);
      ++differential;
    }
    if (auto bytes = harness::encode_any_workload(w)) {
      ASSERT_EQ(harness::decode_any_workload(*bytes), w);
      ++robustness;
    }
  }
  for (const auto& invalid : draw(invalid_workloads(), 3000)) {
    if (auto bytes = harness::encode_any_workload(invalid.workload)) {
      ASSERT_EQ(harness::decode_any_workload(*bytes), invalid.workload);
      ++robustness;
    }
  }
  // Most generated workloads fit the budgets (256 chunks and 64 rows; 255 entries).
  EXPECT_GT(differential, 1000);
  EXPECT_GT(robustness, 3000);
}

TEST(FuzzInputs, DecodingAnyBytesGivesAValidWorkloadWithinBudgetInArraysOfExactlyItsSize) {
  std::mt19937 rng(99);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> bytes(rng() % 200);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    const Workload w = harness::decode_valid_workload(bytes);
    ASSERT_FALSE(validate(w).has_value()) << *validate(w) << " for " << w;
    ASSERT_LE(output_sizes(view_of(w)).value().num_chunks(), 256) << w;
    ASSERT_LE(w.num_computed_tokens.size(), 64u) << w;
    // No spare capacity: ASan then sees an implementation that reads past the last row.
    ASSERT_EQ(w.num_computed_tokens.capacity(), w.num_computed_tokens.size()) << w;
    ASSERT_EQ(w.query_start_loc.capacity(), w.query_start_loc.size()) << w;
  }
}

}  // namespace
}  // namespace chunkmeta::properties
