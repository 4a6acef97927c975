// The virtual batches' library: the contract's two worked examples, its rules
// named in order, the writer into caller buffers, the size bound, and the
// block-table gather with vLLM's comment's table.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "chunkmeta/local_attention.hpp"

namespace chunkmeta::local_attn {
namespace {

using I = std::vector<std::int64_t>;
using O = std::vector<std::int32_t>;

O ints(const Int32Array& a) { return {a.begin(), a.end()}; }

VirtualBatches batched(std::int64_t A, std::int64_t P, const I& q, const I& s) {
  const View64 view{A, P, q, s};
  auto fast = virtual_batches(view);
  auto ref = reference(view);
  EXPECT_TRUE(fast.ok() && ref.ok());
  EXPECT_EQ(fast.value(), ref.value());
  return ref.value();
}

TEST(LocalAttention, GivesTheContractsWorkedExample) {
  const VirtualBatches b = batched(8, 4, {0, 5, 17, 18}, {5, 15, 17});
  EXPECT_EQ(ints(b.cu_seqlens_q_local), (O{0, 5, 10, 17, 18}));
  EXPECT_EQ(ints(b.seqlens_k_local), (O{5, 8, 7, 1}));
  EXPECT_EQ(ints(b.num_computed_tokens_local), (O{0, 3, 0, 0}));
  EXPECT_EQ(ints(b.virtual_row), (O{0, 1, 1, 2}));
  EXPECT_EQ(ints(b.block_start), (O{0, 0, 2, 4}));
}

// vLLM's comment shows cu_seqlens_q_local as [0, 4, 6, 10, 14, 18, 19, 23, 24]:
// the running sum of the key lengths, not of the query lengths.
TEST(LocalAttention, GivesWhatTheFunctionComputesForItsCommentsExample) {
  const VirtualBatches b = batched(4, 2, {0, 4, 14, 19}, {6, 17, 9});
  EXPECT_EQ(ints(b.cu_seqlens_q_local), (O{0, 2, 4, 5, 9, 13, 14, 18, 19}));
  EXPECT_EQ(ints(b.seqlens_k_local), (O{4, 2, 4, 4, 4, 1, 4, 1}));
  EXPECT_EQ(ints(b.block_start), (O{0, 2, 2, 4, 6, 8, 2, 4}));  // k_seqstarts_absolute [0, 4, 4, 8, 12, 16, 4, 8] / 2
  EXPECT_EQ(ints(b.virtual_row), (O{0, 0, 1, 1, 1, 1, 2, 2}));
}

TEST(LocalAttention, GivesAFullLastPieceWhenTheSequenceEndsOnAChunkBoundary) {
  const VirtualBatches b = batched(4, 1, {0, 3}, {8});
  EXPECT_EQ(ints(b.seqlens_k_local), (O{4}));
  EXPECT_EQ(ints(b.num_computed_tokens_local), (O{1}));
  EXPECT_EQ(ints(b.block_start), (O{4}));
}

TEST(LocalAttention, CutsSequencesNearTheInt32LimitIn64Bits) {
  const VirtualBatches b = batched(8192, 16, {0, 9000}, {kMaxValue});
  EXPECT_EQ(ints(b.cu_seqlens_q_local).back(), 9000);
  EXPECT_EQ(b.block_start.back(), (kMaxValue - 1) / 8192 * 8192 / 16);
}

TEST(LocalAttention, NamesEveryRuleInTheContractsOrder) {
  const auto error_of = [](std::int64_t A, std::int64_t P, const I& q, const I& s, const Limits& limits = {}) {
    const auto error = validate(View64{A, P, q, s}, limits);
    EXPECT_TRUE(error.has_value());
    EXPECT_EQ(reference(View64{A, P, q, s}, limits).error(), *error);
    EXPECT_EQ(virtual_batches(View64{A, P, q, s}, limits).error(), *error);
    return error.value_or(Error{});
  };
  const I q{0, 3};
  const I s{5};
  EXPECT_EQ(error_of(0, 4, q, s).code, ErrorCode::not_positive);
  EXPECT_EQ(error_of(kMaxValue + 1, 4, q, s).field, "attn_chunk_size");
  EXPECT_EQ(error_of(8, 0, q, s).field, "block_size");
  EXPECT_EQ(error_of(8, kMaxValue + 1, q, s).code, ErrorCode::value_too_large);
  const Error multiple = error_of(8, 3, q, s);
  EXPECT_EQ(multiple.code, ErrorCode::not_a_multiple);
  EXPECT_EQ(multiple.field, "attn_chunk_size");
  EXPECT_EQ(multiple.bound, 3);
  EXPECT_EQ(error_of(8, 4, {}, {}).code, ErrorCode::length_mismatch);
  const Error lengths = error_of(8, 4, q, {5, 5});
  EXPECT_EQ(lengths.field, "seq_lens");
  EXPECT_EQ(lengths.index, 1);
  EXPECT_EQ(error_of(8, 4, {-1, 3}, s).code, ErrorCode::negative_value);
  EXPECT_EQ(error_of(8, 4, {0, kMaxValue + 1}, s).code, ErrorCode::value_too_large);
  EXPECT_EQ(error_of(8, 4, {4, 3}, s).code, ErrorCode::query_start_loc_decreasing);
  const Error empty_row = error_of(8, 4, {0, 3, 3}, {5, 5});
  EXPECT_EQ(empty_row.code, ErrorCode::not_increasing);
  EXPECT_EQ(empty_row.index, 2);
  EXPECT_EQ(error_of(8, 4, q, {-2}).code, ErrorCode::negative_value);
  EXPECT_EQ(error_of(8, 4, q, {kMaxValue + 1}).code, ErrorCode::value_too_large);
  const Error short_sequence = error_of(8, 4, q, {2});
  EXPECT_EQ(short_sequence.code, ErrorCode::below_minimum);
  EXPECT_EQ(short_sequence.field, "seq_lens");
  EXPECT_EQ(short_sequence.bound, 3);
  Limits one;
  one.max_chunks = 1;
  EXPECT_EQ(error_of(2, 1, {0, 3}, {3}, one).code, ErrorCode::output_too_large);
  EXPECT_EQ(error_of(2, 1, {0, 3}, {3}, one).field, "cu_seqlens_q_local");
}

TEST(LocalAttention, WritesIntoCallerBuffersOrNamesTheFirstShortOne) {
  const I q{0, 5, 17, 18};
  const I s{5, 15, 17};
  std::vector<std::int32_t> b[5];
  for (auto& buffer : b) buffer.assign(7, -5);
  const auto written = virtual_batches_into(View64{8, 4, q, s}, {b[0], b[1], b[2], b[3], b[4]});
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written.value(), (Sizes{3, 4}));
  EXPECT_EQ(O(b[0].begin(), b[0].begin() + 5), (O{0, 5, 10, 17, 18}));
  EXPECT_EQ(b[0][5], -5);  // entries past the batches are left as they were
  EXPECT_EQ(b[4][4], -5);
  std::vector<std::int32_t> four(4);
  std::vector<std::int32_t> three(3);
  const auto refused = virtual_batches_into(View64{8, 4, q, s}, {four, b[1], b[2], three, b[4]});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::output_buffer_too_small);
  EXPECT_EQ(refused.error().field, "cu_seqlens_q_local");
  EXPECT_EQ(refused.error().bound, 5);
  const auto second = virtual_batches_into(View64{8, 4, q, s}, {b[0], b[1], b[2], three, b[4]});
  EXPECT_EQ(second.error().field, "virtual_row");
}

TEST(LocalAttention, MaxOutputSizesHoldEveryStepWithinTheEnginesLimits) {
  std::mt19937_64 random(3);
  for (int trial = 0; trial < 3000; ++trial) {
    const std::int64_t P = 1 + static_cast<std::int64_t>(random() % 4);
    const std::int64_t A = P * (1 + static_cast<std::int64_t>(random() % 6));
    const auto rows = static_cast<std::size_t>(random() % 9);
    I q{0};
    I s;
    for (std::size_t i = 0; i < rows; ++i) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(random() % 40);
      q.push_back(q.back() + n);
      s.push_back(n + static_cast<std::int64_t>(random() % 50));
    }
    const auto sizes = output_sizes(View64{A, P, q, s});
    ASSERT_TRUE(sizes.ok());
    const auto bound = max_output_sizes(q.back(), static_cast<std::int64_t>(rows), A, P);
    ASSERT_TRUE(bound.ok());
    EXPECT_LE(sizes.value().virtual_batches, bound.value().virtual_batches);
  }
  // The bound is reached: two tokens per row, the first ending a chunk.
  EXPECT_EQ(output_sizes(View64{4, 1, I{0, 2, 4}, I{4, 8}}).value().virtual_batches, 2);
  EXPECT_EQ(output_sizes(View64{4, 1, I{0, 2, 4}, I{5, 9}}).value().virtual_batches, 4);
  EXPECT_EQ(max_output_sizes(4, 2, 4, 1).value().virtual_batches, 4);
  EXPECT_EQ(max_output_sizes(100, 4, 6, 4).error().code, ErrorCode::not_a_multiple);
  EXPECT_EQ(max_output_sizes(-1, 4, 8, 4).error().field, "max_tokens");
  EXPECT_EQ(max_output_sizes(1, -4, 8, 4).error().field, "max_rows");
  Limits one;
  one.max_chunks = 1;
  EXPECT_EQ(max_output_sizes(100, 4, 8, 4, one).error().code, ErrorCode::output_too_large);
}

TEST(LocalAttention, TheInt32ViewGivesWhatTheInt64ViewGives) {
  const std::vector<std::int32_t> q{5, 9, 19, 24};
  const std::vector<std::int32_t> s{6, 17, 9};
  const I q64(q.begin(), q.end());
  const I s64(s.begin(), s.end());
  EXPECT_EQ(virtual_batches(View32{4, 2, q, s}).value(), virtual_batches(View64{4, 2, q64, s64}).value());
  EXPECT_EQ(output_sizes(View32{4, 2, q, s}).value(), (Sizes{3, 8}));
  EXPECT_FALSE(validate(View32{4, 2, q, s}).has_value());
  std::vector<std::int32_t> b[5];
  for (auto& buffer : b) buffer.assign(9, 0);
  EXPECT_EQ(virtual_batches_into(View32{4, 2, q, s}, {b[0], b[1], b[2], b[3], b[4]}).value(), (Sizes{3, 8}));
}

// vLLM's comment: block_size 2, rows of ten blocks 0-9, 10-19, 20-29.
TEST(LocalAttention, GathersTheLocalBlockTableAsVllmDoes) {
  std::vector<std::int32_t> table(30);
  for (std::int32_t k = 0; k < 30; ++k) table[static_cast<std::size_t>(k)] = k;
  const VirtualBatches b = batched(4, 2, {0, 4, 14, 19}, {6, 17, 9});
  const O rows = ints(b.virtual_row);
  const O starts = ints(b.block_start);
  std::vector<std::int32_t> local(16, -1);
  ASSERT_EQ(gather_block_table(4, 2, table, 3, 10, rows, starts, local).value(), 8);
  EXPECT_EQ(local, (O{0, 1, 2, 3, 12, 13, 14, 15, 16, 17, 18, 19, 22, 23, 24, 25}));
  // Columns past the table's last are clipped to it.
  const O far{9};
  const O row{2};
  std::vector<std::int32_t> clipped(2);
  ASSERT_TRUE(gather_block_table(4, 2, table, 3, 10, row, far, clipped).ok());
  EXPECT_EQ(clipped, (O{29, 29}));
  const O none;
  EXPECT_EQ(gather_block_table(4, 3, table, 3, 10, none, none, clipped).error().code, ErrorCode::not_a_multiple);
  EXPECT_EQ(gather_block_table(4, 2, table, 3, 0, none, none, clipped).error().code, ErrorCode::not_positive);
  EXPECT_EQ(gather_block_table(4, 2, table, 3, 9, none, none, clipped).error().field, "block_table");
  EXPECT_EQ(gather_block_table(4, 2, table, 3, 10, row, none, clipped).error().field, "block_start");
  const O minus{-1};
  const O three{3};
  EXPECT_EQ(gather_block_table(4, 2, table, 3, 10, minus, far, clipped).error().code, ErrorCode::negative_value);
  EXPECT_EQ(gather_block_table(4, 2, table, 3, 10, three, far, clipped).error().code, ErrorCode::value_too_large);
  EXPECT_EQ(gather_block_table(4, 2, table, 3, 10, row, minus, clipped).error().field, "block_start");
  std::vector<std::int32_t> one(1);
  EXPECT_EQ(gather_block_table(4, 2, table, 3, 10, row, far, one).error().code, ErrorCode::output_buffer_too_small);
}

}  // namespace
}  // namespace chunkmeta::local_attn
