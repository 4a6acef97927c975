// Guards the generators against silent rot, for every spec: every edge class
// and every invalid rule must keep turning up, generated values must stay in
// their domain, invalid ones must be refused with the error they claim, and
// the shrinker and the fuzz encodings must keep valid workloads valid.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {
namespace {

constexpr int kDraws = 20000;
constexpr double kMinimumShare = 0.01;

template <typename T>
std::vector<T> draw(const rc::Gen<T>& gen, int count) {
  std::vector<T> values;
  rc::Random random(0x5EED);
  for (int i = 0; i < count; ++i) values.push_back(pick(gen, random.split(), i % 101));
  return values;
}

// One spec's generators and the classes they promise.
struct Domain {
  const harness::Spec* spec;
  rc::Gen<Workload> valid;
  std::function<std::vector<std::string>(const Workload&)> classes;
  const std::vector<std::string>& all_classes;
  rc::Gen<Workload> huge;
  std::function<std::vector<std::string>(const Workload&)> huge_classes;
  const std::vector<std::string>& all_huge_classes;
  rc::Gen<InvalidWorkload> invalid;
  const std::vector<std::string>& all_rules;
};

std::vector<Domain> domains() {
  return {
      {&harness::mamba_spec(), valid_workloads(), edge_classes, all_edge_classes(), huge_batches(), huge_batch_classes,
       all_huge_batch_classes(), invalid_workloads(), all_invalid_rules()},
      {&harness::fla_chunk_indices_spec(), fla_valid_workloads(), fla_edge_classes, all_fla_edge_classes(),
       fla_huge_batches(), fla_huge_batch_classes, all_fla_huge_batch_classes(), fla_invalid_workloads(),
       all_fla_invalid_rules()},
  };
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
  for (const Domain& d : domains()) {
    std::cout << d.spec->name() << ":\n";
    std::map<std::string, int> hits;
    for (const auto& w : draw(d.valid, kDraws)) {
      ASSERT_FALSE(d.spec->validate(w).has_value()) << *d.spec->validate(w) << " for " << w;
      // A spec without computed tokens has them all zero, one per row.
      if (!d.spec->reads_computed_tokens()) {
        ASSERT_EQ(w.num_computed_tokens, std::vector<std::int64_t>(w.query_start_loc.size() - 1, 0)) << w;
      }
      for (const auto& cls : d.classes(w)) ++hits[cls];
    }
    expect_every_class_hit(hits, d.all_classes, kDraws, kMinimumShare, "edge class");
  }
}

TEST(Generators, HugeBatchesAreValidAndReachEveryWritePathPastRow32768InMostCases) {
  constexpr int kHugeDraws = 100;  // each has 32,767 to 140,000 rows
  for (const Domain& d : domains()) {
    std::cout << d.spec->name() << ":\n";
    std::map<std::string, int> hits;
    for (const auto& w : draw(d.huge, kHugeDraws)) {
      ASSERT_FALSE(d.spec->validate(w).has_value()) << *d.spec->validate(w);
      ASSERT_GE(w.rows(), 32767u);
      for (const auto& cls : d.huge_classes(w)) ++hits[cls];
    }
    // Every class in at least half the draws (2^16+ rows in about 2 of 3).
    expect_every_class_hit(hits, d.all_huge_classes, kHugeDraws, 0.5, "huge-batch class");
  }
}

TEST(Generators, InvalidWorkloadsBreakEveryRuleAtLeastOnePercentOfTheTimeAndAreRefusedByIt) {
  for (const Domain& d : domains()) {
    std::cout << d.spec->name() << ":\n";
    std::map<std::string, int> hits;
    for (const auto& invalid : draw(d.invalid, kDraws)) {
      ++hits[invalid.rule];
      const auto error = d.spec->validate(invalid.workload);
      ASSERT_TRUE(error.has_value()) << invalid.rule << ": accepted " << invalid.workload;
      ASSERT_TRUE(error->same_rule(invalid.expected))
          << invalid.rule << ": " << invalid.workload << " refused with " << *error << ", not " << invalid.expected;
    }
    expect_every_class_hit(hits, d.all_rules, kDraws, kMinimumShare, "rule");
  }
}

TEST(Generators, EveryShrinkStepOfAValidWorkloadIsValid) {
  for (const Domain& d : domains()) {
    int candidates = 0;
    for (const auto& w : draw(d.valid, 300)) {
      for (const auto& step : harness::shrink_steps(w)) {
        const Workload candidate = harness::apply(w, step);
        ASSERT_FALSE(d.spec->validate(candidate).has_value())
            << d.spec->name() << ": " << *d.spec->validate(candidate) << " for shrink " << candidate << " of " << w;
        ++candidates;
      }
    }
    EXPECT_GT(candidates, 1000) << d.spec->name();
  }
}

// Through a program that hangs or crashes on every batch of two rows or more,
// each accepted step costs a restart or a timeout: the shrinker reaches the
// simplest two-row workload in two (keep the first two rows, then every value
// at its simplest), not one step per halving and per value.
TEST(Shrinker, ReachesTheSimplestFailingBatchOfAFailureOfEveryBigEnoughBatchInTwoSteps) {
  const Workload found{64, {0, 128, 5, 64, 1000, 7, 0, 3, 9, 64, 0, 1, 2, 3},
                       {100, 110, 300, 301, 500, 900, 1000, 1001, 1500, 1600, 1700, 1800, 1900, 2000, 2100}};
  ASSERT_FALSE(harness::mamba_spec().validate(found).has_value());
  const auto shrunk = harness::shrink_batched(found, [](std::span<const Workload> candidates) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].rows() >= 2) return i;
    }
    return std::nullopt;
  });
  EXPECT_TRUE(shrunk.minimal);
  EXPECT_EQ(shrunk.workload, (Workload{1, {0, 0}, {0, 0, 0}}));
  EXPECT_EQ(shrunk.accepted, 2);
}

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

TEST(FuzzInputs, EncodeThenDecodeGivesBackTheCuSeqlensAndTheirDtype) {
  int encoded = 0;
  std::map<harness::Dtype, int> dtypes;
  for (const auto& w : draw(fla_valid_workloads(), 3000)) {
    if (auto bytes = harness::encode_valid_cu_seqlens(w)) {
      ASSERT_EQ(harness::decode_valid_cu_seqlens(*bytes), w);
      ++encoded;
      ++dtypes[w.dtype];
    }
  }
  EXPECT_GT(encoded, 1000);
  EXPECT_GT(dtypes[harness::Dtype::int32], 100);
  EXPECT_GT(dtypes[harness::Dtype::int64], 100);
}

TEST(FuzzInputs, DecodingAnyBytesGivesAValidWorkloadWithinBudgetInArraysOfExactlyItsSize) {
  std::mt19937 rng(99);
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> bytes(rng() % 200);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    const Workload w = harness::decode_valid_workload(bytes);
    ASSERT_FALSE(validate(view_of(w)).has_value()) << *validate(view_of(w)) << " for " << w;
    ASSERT_LE(output_sizes(view_of(w)).value().num_chunks(), 256) << w;
    ASSERT_LE(w.num_computed_tokens.size(), 64u) << w;
    // No spare capacity: ASan then sees an implementation that reads past the last row.
    ASSERT_EQ(w.num_computed_tokens.capacity(), w.num_computed_tokens.size()) << w;
    ASSERT_EQ(w.query_start_loc.capacity(), w.query_start_loc.size()) << w;
    const Workload cu = harness::decode_valid_cu_seqlens(bytes);
    const auto& fla = harness::fla_chunk_indices_spec();
    ASSERT_FALSE(fla.validate(cu).has_value()) << *fla.validate(cu) << " for " << cu;
    ASSERT_LE(fla.chunks(cu).value(), 256) << cu;
    ASSERT_EQ(cu.query_start_loc.capacity(), cu.query_start_loc.size()) << cu;
  }
}

}  // namespace
}  // namespace chunkmeta::properties
