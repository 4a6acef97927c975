// The prefill checkpoint planner's library: the contract's worked examples
// (computed by running vLLM's function), its rules named in order, 64-bit
// arithmetic near 2^31, the writer into caller buffers, and the fast pass
// against the reference on random workloads with every edge the contract names.
#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <random>
#include <vector>

#include "chunkmeta/prefill_checkpoints.hpp"

namespace chunkmeta::prefill_checkpoints {
namespace {

using I = std::vector<std::int64_t>;
using O = std::vector<std::int32_t>;

struct Planned {
  O offsets;
  I cols;
};

Planned planned(const I& s, const I& n, std::int64_t H, std::int64_t M, std::optional<std::int64_t> alignment,
                bool drop_eagle_block = false) {
  const View view{s, n, H, M, alignment, drop_eagle_block};
  const auto ref = reference(view);
  const auto fast = checkpoints(view);
  EXPECT_TRUE(ref.ok() && fast.ok());
  EXPECT_EQ(fast.value(), ref.value());
  return {{ref.value().checkpoint_offsets.begin(), ref.value().checkpoint_offsets.end()}, ref.value().checkpoint_cols};
}

TEST(PrefillCheckpoints, GivesTheContractsWorkedExamples) {
  const I s{20, 20, 37}, n{20, 12, 37};
  auto p = planned(s, n, 4, 8, 1);
  EXPECT_EQ(p.offsets, (O{16, 8, 36}));
  EXPECT_EQ(p.cols, (I{1, 1, 3}));
  p = planned(s, n, 4, 8, 3);
  EXPECT_EQ(p.offsets, (O{0, 0, 36}));
  EXPECT_EQ(p.cols, (I{-1, -1, 3}));
  p = planned(s, n, 4, 8, 1, true);
  EXPECT_EQ(p.offsets, (O{12, 4, 32}));
  EXPECT_EQ(p.cols, (I{1, 1, 3}));
  p = planned(s, n, 4, 8, std::nullopt);
  EXPECT_EQ(p.offsets, (O{0, 0, 0}));
  EXPECT_EQ(p.cols, (I{-1, -1, -1}));
}

TEST(PrefillCheckpoints, RefusesAQueryOffTheHashGridAndTheInitialStatesBlock) {
  // Row 1's query starts off the hash grid; row 2's checkpoint block would be its initial state's block.
  auto p = planned({36, 40, 41}, {36, 38, 5}, 4, 8, 1);
  EXPECT_EQ(p.offsets, (O{32, 0, 0}));
  EXPECT_EQ(p.cols, (I{3, -1, -1}));
  p = planned({900, 100, 1031}, {900, 100, 7}, 256, 256, 1);
  EXPECT_EQ(p.offsets, (O{768, 0, 0}));
  EXPECT_EQ(p.cols, (I{2, -1, -1}));
}

TEST(PrefillCheckpoints, ComputesIn64BitsNearTwoToTheThirtyOne) {
  const std::int64_t s = kMaxValue;
  const auto p = planned({s}, {s}, 256, 2048, 1);
  const std::int64_t position = (s - 1) / 256 * 256;
  EXPECT_EQ(p.offsets, (O{static_cast<std::int32_t>(position)}));
  EXPECT_EQ(p.cols, (I{(s + 2047) / 2048 - 2}));
}

TEST(PrefillCheckpoints, NamesEachRuleInOrder) {
  const I one{8}, empty{};
  const auto error = [](const View& view) { return validate(view); };
  EXPECT_EQ(error({one, one, 0, 8, 1})->field, "hash_block_size");
  EXPECT_EQ(error({one, one, 0, 8, 1})->code, ErrorCode::not_positive);
  EXPECT_EQ(error({one, one, 4, kMaxValue + 1, 1})->code, ErrorCode::value_too_large);
  EXPECT_EQ(error({one, one, 4, 8, 0})->field, "checkpoint_alignment");
  EXPECT_FALSE(error({one, one, 4, 8, std::nullopt}).has_value());
  EXPECT_EQ(error({one, empty, 4, 8, 1})->code, ErrorCode::length_mismatch);
  const I negative{-1}, big{kMaxValue + 1}, short_seq{3}, long_query{5};
  EXPECT_EQ(error({negative, one, 4, 8, 1})->code, ErrorCode::negative_value);
  EXPECT_EQ(error({big, one, 4, 8, 1})->code, ErrorCode::value_too_large);
  EXPECT_EQ(error({one, negative, 4, 8, 1})->field, "query_lens");
  const auto shorter = error({short_seq, long_query, 4, 8, 1});
  ASSERT_TRUE(shorter.has_value());
  EXPECT_EQ(shorter->code, ErrorCode::below_minimum);
  EXPECT_EQ(shorter->field, "seq_lens");
  EXPECT_EQ(shorter->index, 0);
  EXPECT_EQ(shorter->bound, 5);
  EXPECT_FALSE(checkpoints({short_seq, long_query, 4, 8, 1}).ok());
}

TEST(PrefillCheckpoints, WritesIntoCallerBuffersOrNamesTheShortOne) {
  const I s{20, 20, 37}, n{20, 12, 37};
  std::vector<std::int32_t> offsets(3, 99);
  std::vector<std::int64_t> cols(2, 99);
  const auto short_cols = checkpoints_into({s, n, 4, 8, 1}, {offsets, cols});
  ASSERT_FALSE(short_cols.ok());
  EXPECT_EQ(short_cols.error().field, "checkpoint_cols");
  EXPECT_EQ(offsets, (O(3, 99)));  // nothing written
  cols.resize(4, 99);
  const auto written = checkpoints_into({s, n, 4, 8, 1}, {offsets, cols});
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written.value(), 3);
  EXPECT_EQ(offsets, (O{16, 8, 36}));
  EXPECT_EQ(cols, (I{1, 1, 3, 99}));
}

// Random plans with every edge the contract names: H < M, H = M, H > M; queries on and off the hash grid;
// rows without new tokens; no alignment, alignment 1, 16 and one that rejects; the eagle block on and off;
// sequences near 2^31. Each planned checkpoint lands on the hash grid, a multiple of the alignment from the
// query start, strictly inside the query, in a column at or past 0 that is not the initial state's block.
TEST(PrefillCheckpoints, TheFastPassIsTheReferenceAndEveryPlannedCheckpointKeepsTheContract) {
  std::mt19937_64 random(20261206);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
  };
  int valid_rows = 0;
  for (int round = 0; round < 4000; ++round) {
    const std::int64_t H = std::int64_t{1} << pick(0, 9);
    const std::int64_t M = pick(0, 2) == 0 ? H : H << pick(0, 3) >> pick(0, 3);
    const std::optional<std::int64_t> alignment =
        pick(0, 4) == 0 ? std::nullopt : std::optional<std::int64_t>(std::array<std::int64_t, 4>{1, 16, 3, H}[pick(0, 3)]);
    const bool eagle = pick(0, 1) == 1;
    const auto rows = static_cast<std::size_t>(pick(0, 8));
    I s(rows), n(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      const bool huge = pick(0, 20) == 0;
      const std::int64_t start = pick(0, 3) == 0 ? pick(0, 4 * M) : pick(0, 40) * H;  // on or off the hash grid
      const std::int64_t tokens = pick(0, 6) == 0 ? 0 : pick(0, 12 * std::max(H, M));
      s[i] = huge ? kMaxValue - pick(0, 3 * H) : std::min(start + tokens, kMaxValue);
      n[i] = huge ? std::min(s[i], pick(0, 8 * H)) : s[i] - std::min(start, s[i]);
    }
    const View view{s, n, H, std::max<std::int64_t>(M, 1), alignment, eagle};
    const auto ref = reference(view);
    const auto fast = checkpoints(view);
    ASSERT_TRUE(ref.ok()) << ref.error().message();
    ASSERT_EQ(fast.value(), ref.value()) << "H " << H << " M " << view.mamba_block_size;
    for (std::size_t i = 0; i < rows; ++i) {
      const std::int64_t o = ref.value().checkpoint_offsets[i];
      const std::int64_t col = ref.value().checkpoint_cols[i];
      ASSERT_EQ(o == 0, col == -1);
      if (o == 0) continue;
      ++valid_rows;
      const std::int64_t a = s[i] - n[i];
      EXPECT_EQ((a + o) % H, 0);
      EXPECT_EQ(o % *alignment, 0);
      EXPECT_GT(o, 0);
      EXPECT_LT(o, n[i]);
      EXPECT_GE(col, 0);
      EXPECT_GT(col, a == 0 ? -1 : (a - 1) / view.mamba_block_size);
    }
  }
  EXPECT_GT(valid_rows, 1000);
}

}  // namespace
}  // namespace chunkmeta::prefill_checkpoints
