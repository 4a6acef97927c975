// The checkpoint plan's library: the contract's worked example, its rules
// named, 64-bit block arithmetic near 2^31, the writer into caller buffers,
// and the size bound for buffers sized once.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "checkpoint_plan_spec.hpp"
#include "chunkmeta/checkpoint_plan.hpp"

namespace chunkmeta::checkpoint {
namespace {

using I = std::vector<std::int64_t>;
using O = std::vector<std::int32_t>;

O ints(const Int32Array& a) { return {a.begin(), a.end()}; }

Plan planned(std::int64_t C, std::int64_t M, const I& c, const I& q) {
  const View64 view{C, M, c, q};
  auto fast = plan(view);
  auto ref = reference(view);
  EXPECT_TRUE(fast.ok() && ref.ok());
  EXPECT_EQ(fast.value(), ref.value());
  return ref.value();
}

TEST(CheckpointPlan, GivesTheContractsWorkedExample) {
  const Plan p = planned(4, 8, {0, 6, 16}, {0, 20, 33, 36});
  EXPECT_EQ(ints(p.block_idx_last_computed_token), (O{0, 0, 1}));
  EXPECT_EQ(ints(p.block_idx_first_scheduled_token), (O{0, 0, 2}));
  EXPECT_EQ(ints(p.block_idx_last_scheduled_token), (O{2, 2, 2}));
  EXPECT_EQ(ints(p.write_row), (O{0, 0, 0, 1, 1, 1, 2}));
  EXPECT_EQ(ints(p.write_block), (O{0, 1, 2, 0, 1, 2, 2}));
  EXPECT_EQ(ints(p.write_chunk), (O{1, 3, 4, 5, 7, 8, 9}));
}

// vLLM's loop makes a final write for this row 0 without new tokens, over the
// block that holds the state after its first 8 tokens; the contract writes nothing.
TEST(CheckpointPlan, WritesNothingForARowWithoutNewTokens) {
  const Plan p = planned(4, 8, {8, 0}, {0, 0, 3});
  EXPECT_EQ(ints(p.write_row), (O{1}));
  EXPECT_EQ(ints(p.write_block), (O{0}));
  EXPECT_EQ(ints(p.write_chunk), (O{0}));
  EXPECT_EQ(ints(p.block_idx_last_computed_token), (O{0, 0}));
  EXPECT_EQ(ints(p.block_idx_first_scheduled_token), (O{1, 0}));
}

TEST(CheckpointPlan, ComputesBlocksIn64BitsWhereComputedPlusBlockSizeLeavesInt32) {
  const std::int64_t c = kMaxValue - 10;
  const Plan p = planned(256, 2048, {c}, {0, 5});
  EXPECT_EQ(p.block_idx_first_scheduled_token[0], c / 2048);
  EXPECT_EQ(p.block_idx_last_scheduled_token[0], (c + 4) / 2048);
  EXPECT_EQ(p.block_idx_last_computed_token[0], (c - 1) / 2048);
}

TEST(CheckpointPlan, NamesTheBlockSizesRulesAfterMambasDomain) {
  const I c{0};
  const I q{0, 4};
  const auto error_of = [&](std::int64_t C, std::int64_t M) { return validate(View64{C, M, c, q}); };
  EXPECT_EQ(error_of(4, 6)->code, ErrorCode::not_a_multiple);
  EXPECT_EQ(error_of(4, 6)->field, "block_size");
  EXPECT_EQ(error_of(4, 6)->bound, 4);
  EXPECT_EQ(error_of(4, 2)->code, ErrorCode::not_a_multiple);  // M < C
  EXPECT_EQ(error_of(4, 0)->code, ErrorCode::not_positive);
  EXPECT_EQ(error_of(4, -8)->code, ErrorCode::not_positive);
  EXPECT_EQ(error_of(1, kMaxValue + 1)->code, ErrorCode::value_too_large);
  EXPECT_EQ(error_of(0, 6)->code, ErrorCode::chunk_size_not_positive);  // Mamba's rule first
  EXPECT_FALSE(error_of(4, 8).has_value());
  Limits small;
  small.max_chunks = 0;
  EXPECT_EQ(validate(View64{4, 6, c, q}, small)->code, ErrorCode::not_a_multiple);  // the domain before the cap
  EXPECT_EQ(validate(View64{4, 8, c, q}, small)->code, ErrorCode::output_too_large);
  EXPECT_EQ(plan(View64{4, 6, c, q}).error().code, ErrorCode::not_a_multiple);
}

TEST(CheckpointPlan, WritesIntoCallerBuffersOrNamesTheFirstShortOne) {
  const I c{0, 6, 16};
  const I q{0, 20, 33, 36};
  const View64 view{4, 8, c, q};
  std::vector<std::int32_t> b[6];
  for (auto& buffer : b) buffer.assign(9, -5);
  const auto written = plan_into(view, {b[0], b[1], b[2], b[3], b[4], b[5]});
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written.value(), (Sizes{3, 7}));
  EXPECT_EQ(O(b[5].begin(), b[5].begin() + 7), (O{1, 3, 4, 5, 7, 8, 9}));
  EXPECT_EQ(b[5][7], -5);  // entries past the plan are left as they were
  EXPECT_EQ(b[0][3], -5);
  std::vector<std::int32_t> shorter(6);
  const auto refused = plan_into(view, {b[0], b[1], b[2], b[3], shorter, b[5]});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::output_buffer_too_small);
  EXPECT_EQ(refused.error().field, "write_block");
  EXPECT_EQ(refused.error().bound, 7);
}

TEST(CheckpointPlan, MaxOutputSizesHoldEveryStepWithinTheEnginesLimits) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::int64_t C = std::int64_t{1} << (random() % 9);
    const std::int64_t M = C * static_cast<std::int64_t>(1 + random() % 8);
    const auto rows = static_cast<std::size_t>(random() % 9);
    I c;
    I q{0};
    for (std::size_t i = 0; i < rows; ++i) {
      c.push_back(static_cast<std::int64_t>(random() % 5000));
      q.push_back(q.back() + static_cast<std::int64_t>(random() % 3000));
    }
    const auto sizes = output_sizes(View64{C, M, c, q});
    ASSERT_TRUE(sizes.ok());
    const auto bound = max_output_sizes(q.back(), static_cast<std::int64_t>(rows), C, M);
    ASSERT_TRUE(bound.ok());
    EXPECT_LE(sizes.value().writes, bound.value().writes);
    EXPECT_EQ(sizes.value().rows, bound.value().rows);
  }
  EXPECT_EQ(max_output_sizes(100, 4, 4, 6).error().code, ErrorCode::not_a_multiple);
  EXPECT_EQ(max_output_sizes(-1, 4, 4, 8).error().field, "max_tokens");
}

TEST(CheckpointPlan, TheInt32ViewPlansAndRejectsAsTheInt64ViewDoes) {
  const std::vector<std::int32_t> c{0, 6, 16, 3};
  const std::vector<std::int32_t> q{5, 25, 38, 41, 41};
  const I c64(c.begin(), c.end());
  const I q64(q.begin(), q.end());
  EXPECT_EQ(plan(View32{4, 8, c, q}).value(), plan(View64{4, 8, c64, q64}).value());
  EXPECT_FALSE(validate(View32{4, 8, c, q}).has_value());
  const auto rejected32 = validate(View32{4, 6, c, q});
  const auto rejected64 = validate(View64{4, 6, c64, q64});
  ASSERT_TRUE(rejected32.has_value() && rejected64.has_value());
  EXPECT_EQ(rejected32->code, ErrorCode::not_a_multiple);
  EXPECT_EQ(rejected32->field, rejected64->field);
}

}  // namespace
}  // namespace chunkmeta::checkpoint
