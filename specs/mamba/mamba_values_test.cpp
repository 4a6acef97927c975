// Mamba's value model beyond what every spec's generators test checks: the
// shrinker's two-step reach on batches, and the fuzz encodings of workloads.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "mamba_generators.hpp"
#include "mamba_spec.hpp"

namespace chunkmeta::properties {
namespace {

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
  for (const auto& w : draw_values(valid_workloads(), 3000)) {
    if (auto bytes = harness::encode_valid_workload(w)) {
      ASSERT_EQ(harness::decode_valid_workload(*bytes), w);
      ++differential;
    }
    if (auto bytes = harness::encode_any_workload(w)) {
      ASSERT_EQ(harness::decode_any_workload(*bytes), w);
      ++robustness;
    }
  }
  for (const auto& invalid : draw_values(invalid_workloads(), 3000)) {
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
    ASSERT_FALSE(validate(view_of(w)).has_value()) << *validate(view_of(w)) << " for " << w;
    ASSERT_LE(output_sizes(view_of(w)).value().num_chunks(), 256) << w;
    ASSERT_LE(w.num_computed_tokens.size(), 64u) << w;
    // No spare capacity: ASan then sees an implementation that reads past the last row.
    ASSERT_EQ(w.num_computed_tokens.capacity(), w.num_computed_tokens.size()) << w;
    ASSERT_EQ(w.query_start_loc.capacity(), w.query_start_loc.size()) << w;
  }
}


}  // namespace
}  // namespace chunkmeta::properties
