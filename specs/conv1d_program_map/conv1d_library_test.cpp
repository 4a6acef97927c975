// The conv1d program map's library: the contract's worked example, its rules
// named in order, the engine's buffers written and padded with -1, and the
// size bound for buffers sized once.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "chunkmeta/conv1d_program_map.hpp"

namespace chunkmeta::conv1d {
namespace {

using I = std::vector<std::int64_t>;
using O = std::vector<std::int32_t>;

O ints(const Int32Array& a) { return {a.begin(), a.end()}; }

ProgramMap mapped(const I& q, std::int64_t M = kDefaultBlockM) {
  const View64 view{q, M};
  auto fast = program_map(view);
  auto ref = reference(view);
  EXPECT_TRUE(fast.ok() && ref.ok());
  EXPECT_EQ(fast.value(), ref.value());
  return ref.value();
}

TEST(Conv1dProgramMap, GivesTheContractsWorkedExample) {
  const ProgramMap map = mapped({0, 5, 5, 21, 22});
  EXPECT_EQ(ints(map.nums), (O{1, 0, 2, 1}));
  EXPECT_EQ(ints(map.batch_ptr), (O{0, 2, 2, 3}));
  EXPECT_EQ(ints(map.token_chunk_offset_ptr), (O{0, 0, 1, 0}));
}

TEST(Conv1dProgramMap, GivesNoProgramsForAnEmptyBatchOrEmptyRows) {
  EXPECT_EQ(mapped({7}), (ProgramMap{}));
  const ProgramMap empty_rows = mapped({3, 3, 3});
  EXPECT_EQ(ints(empty_rows.nums), (O{0, 0}));
  EXPECT_TRUE(empty_rows.batch_ptr.empty() && empty_rows.token_chunk_offset_ptr.empty());
}

TEST(Conv1dProgramMap, CountsProgramsIn32UnsignedBitsWhereLengthPlusBlockMLeavesInt32) {
  const ProgramMap map = mapped({0, kMaxValue}, std::int64_t{1} << 30);
  EXPECT_EQ(ints(map.nums), (O{2}));
  EXPECT_EQ(ints(map.token_chunk_offset_ptr), (O{0, 1}));
}

TEST(Conv1dProgramMap, NamesEveryRuleInTheContractsOrder) {
  const auto error_of = [](const I& q, std::int64_t M, const Limits& limits = {}) {
    const auto error = validate(View64{q, M}, limits);
    EXPECT_TRUE(error.has_value());
    EXPECT_EQ(reference(View64{q, M}, limits).error(), *error);
    EXPECT_EQ(program_map(View64{q, M}, limits).error(), *error);
    return error.value_or(Error{});
  };
  EXPECT_EQ(error_of({0, 4}, 0).code, ErrorCode::not_positive);
  EXPECT_EQ(error_of({0, 4}, 0).field, "block_m");
  EXPECT_EQ(error_of({0, 4}, kMaxValue + 1).code, ErrorCode::value_too_large);
  EXPECT_EQ(error_of({}, 0).code, ErrorCode::not_positive);  // block_m before the array
  EXPECT_EQ(error_of({}, 8).code, ErrorCode::length_mismatch);
  const Error negative = error_of({0, -1, 4}, 8);
  EXPECT_EQ(negative.code, ErrorCode::negative_value);
  EXPECT_EQ(negative.field, "query_start_loc");
  EXPECT_EQ(negative.index, 1);
  EXPECT_EQ(error_of({kMaxValue + 1}, 8).code, ErrorCode::value_too_large);
  const Error decreasing = error_of({0, 9, 4, -1}, 8);  // the first broken entry, not the worst
  EXPECT_EQ(decreasing.code, ErrorCode::query_start_loc_decreasing);
  EXPECT_EQ(decreasing.index, 2);
  Limits none;
  none.max_chunks = 1;
  const Error capped = error_of({0, 9}, 8, none);
  EXPECT_EQ(capped.code, ErrorCode::output_too_large);
  EXPECT_EQ(capped.field, "batch_ptr");
  EXPECT_FALSE(validate(View64{I{0, 8}, 8}, none).has_value());
}

TEST(Conv1dProgramMap, WritesTheEnginesBuffersAndPadsTheirRestWithMinusOne) {
  const I q{0, 5, 5, 21, 22};
  O nums(6, -5);
  O batch(2048, -5);
  O offsets(2048, -5);
  const auto written = program_map_into(View64{q, 8}, {nums, batch, offsets});
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written.value(), (Sizes{4, 4}));
  EXPECT_EQ(O(batch.begin(), batch.begin() + 4), (O{0, 2, 2, 3}));
  EXPECT_EQ(O(offsets.begin(), offsets.begin() + 4), (O{0, 0, 1, 0}));
  EXPECT_EQ(std::count(batch.begin() + 4, batch.end(), kPadding), 2044);
  EXPECT_EQ(std::count(offsets.begin() + 4, offsets.end(), kPadding), 2044);
  EXPECT_EQ(O(nums.begin(), nums.end()), (O{1, 0, 2, 1, -5, -5}));  // nums' rest as it was
}

TEST(Conv1dProgramMap, NamesTheFirstShortBufferWithTheEntriesItNeeds) {
  const I q{0, 5, 5, 21, 22};
  O enough(8);
  O three(3);
  const auto short_of = [&](std::span<std::int32_t> a, std::span<std::int32_t> b, std::span<std::int32_t> c) {
    const auto refused = program_map_into(View64{q, 8}, {a, b, c});
    EXPECT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::output_buffer_too_small);
    return refused.error();
  };
  EXPECT_EQ(short_of(three, three, three).field, "nums");
  EXPECT_EQ(short_of(three, three, three).bound, 4);
  EXPECT_EQ(short_of(enough, three, enough).field, "batch_ptr");
  EXPECT_EQ(short_of(enough, enough, three).field, "token_chunk_offset_ptr");
  EXPECT_EQ(short_of(enough, enough, three).bound, 4);
}

TEST(Conv1dProgramMap, MaxOutputSizesHoldEveryStepWithinTheEnginesLimits) {
  std::mt19937_64 random(5);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::int64_t M = 1 + static_cast<std::int64_t>(random() % 20);
    const auto rows = static_cast<std::size_t>(random() % 9);
    I q{static_cast<std::int64_t>(random() % 100)};
    for (std::size_t i = 0; i < rows; ++i) q.push_back(q.back() + static_cast<std::int64_t>(random() % 3000));
    const auto sizes = output_sizes(View64{q, M});
    ASSERT_TRUE(sizes.ok());
    const auto bound = max_output_sizes(q.back() - q.front(), static_cast<std::int64_t>(rows), M);
    ASSERT_TRUE(bound.ok());
    EXPECT_LE(sizes.value().programs, bound.value().programs);
    EXPECT_EQ(sizes.value().rows, bound.value().rows);
  }
  EXPECT_EQ(max_output_sizes(100, 4, 0).error().field, "block_m");
  EXPECT_EQ(max_output_sizes(-1, 4).error().field, "max_tokens");
  EXPECT_EQ(max_output_sizes(1, -4).error().field, "max_rows");
  Limits none;
  none.max_chunks = 1;
  EXPECT_EQ(max_output_sizes(100, 4, 8, none).error().code, ErrorCode::output_too_large);
}

TEST(Conv1dProgramMap, TheInt32ViewGivesWhatTheInt64ViewGives) {
  const std::vector<std::int32_t> q{5, 25, 38, 41, 41, 60};
  const I q64(q.begin(), q.end());
  EXPECT_EQ(program_map(View32{q, 8}).value(), program_map(View64{q64, 8}).value());
  EXPECT_EQ(output_sizes(View32{q, 8}).value(), (Sizes{5, 9}));
  EXPECT_FALSE(validate(View32{q, 8}).has_value());
  O nums(5);
  O batch(9);
  O offsets(9);
  EXPECT_EQ(program_map_into(View32{q, 8}, {nums, batch, offsets}).value(), (Sizes{5, 9}));
  EXPECT_EQ(batch, ints(program_map(View64{q64, 8}).value().batch_ptr));
}

}  // namespace
}  // namespace chunkmeta::conv1d
