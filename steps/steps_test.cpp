// Steps: chunkmeta's own functions live every drawn life, in both cache modes;
// each seam's slip (functions each plausible alone, wrong together) is caught
// by the kernels' view and shrunk to a life of a few steps and rows.
#include "chunkmeta/steps/steps.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "chunkmeta/packed_grid.hpp"

namespace chunkmeta::steps {
namespace {

constexpr std::int64_t kLives = 1000;

DrawOptions in_mode(Mode mode, std::optional<std::int64_t> chunk_size = {}, std::optional<std::int64_t> block_size = {}) {
  DrawOptions options;
  options.mode = mode;
  options.chunk_size = chunk_size;
  options.block_size = block_size;
  return options;
}

CheckResult checked(const Functions& functions, DrawOptions options, std::uint64_t seed = 20261207) {
  return check(functions, kLives, seed, options);
}

std::string report(const CheckResult& result) {
  if (!result.minimal) return "no fault in " + std::to_string(result.lives) + " lives";
  return "life " + to_json(result.minimal->life) + ": " + to_string(result.minimal->fault) + "\n  " +
         result.minimal->fault.inputs;
}

TEST(OwnFunctions, LiveAThousandLivesInAllModeReadingAndWritingEveryBlockRight) {
  const auto start = std::chrono::steady_clock::now();
  const CheckResult result = checked(own_functions(), in_mode(Mode::all));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(result.minimal) << report(result);
  EXPECT_EQ(result.lives, kLives);
  // The lives reach every path: resumed rows (prefix hits and later steps), writes, several steps each.
  EXPECT_GT(result.tally.steps, 2 * kLives);
  EXPECT_GT(result.tally.resumed_reads, kLives);
  EXPECT_GT(result.tally.writes, 2 * kLives);
  RecordProperty("seconds", std::to_string(seconds));
}

TEST(OwnFunctions, LiveAThousandLivesInAlignModeWithTheirCheckpointsWhereTheyArePublished) {
  const CheckResult result = checked(own_functions(), in_mode(Mode::align));
  EXPECT_FALSE(result.minimal) << report(result);
  EXPECT_GT(result.tally.resumed_reads, kLives);
  EXPECT_GT(result.tally.checkpoints, kLives / 4);
}

TEST(OwnFunctions, ReadTheStatePrefixHitsResumeFromAtABlockBoundary) {
  Life life;
  life.chunk_size = 4;
  life.block_size = 8;
  life.requests = {Request{0, 16, {5, 7}}, Request{1, 0, {9}}};
  Tally tally;
  EXPECT_FALSE(run(life, own_functions(), &tally));
  EXPECT_EQ(tally.steps, 2);
  EXPECT_EQ(tally.resumed_reads, 2);  // request 0 at 16 (its hit), then at 21
}

// A function replaced by a slip of the field: the rest stay chunkmeta's own.
Functions with_plan(std::function<Answer<PlanOutput>(const PlanInput&)> plan) {
  Functions functions = own_functions();
  functions.plan = std::move(plan);
  return functions;
}

// Part 3's plan in vLLM's closed form, with no check that M is a multiple of C (vLLM #57266/#57278).
Answer<PlanOutput> plan_for_any_block_size(const PlanInput& in) {
  PlanOutput out;
  const std::int64_t chunk = in.chunk_size;
  const std::int64_t block = in.block_size;
  std::int64_t first_chunk = 0;
  const std::size_t rows = in.num_computed_tokens.size();
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t c = in.num_computed_tokens[r];
    const std::int64_t n = in.query_start_loc[r + 1] - in.query_start_loc[r];
    const std::int64_t s = c + n;
    out.block_idx_last_computed_token.push_back(static_cast<std::int32_t>(std::max<std::int64_t>((c + block - 1) / block - 1, 0)));
    // The row's chunks: Part 1's (its first realigns to the grid).
    const std::int64_t realign = c % chunk == 0 ? 0 : chunk - c % chunk;
    const std::int64_t first_piece = std::min(realign, n);
    const std::int64_t chunks = n == 0 ? (c % chunk == 0 ? 0 : 1)
                                       : (first_piece > 0 ? 1 : 0) + (n - first_piece + chunk - 1) / chunk;
    const std::int64_t first_block = c / block;
    const std::int64_t last_block = std::max<std::int64_t>((s + block - 1) / block - 1, 0);
    out.block_idx_first_scheduled_token.push_back(static_cast<std::int32_t>(first_block));
    out.block_idx_last_scheduled_token.push_back(static_cast<std::int32_t>(last_block));
    if (n == 0) {
      first_chunk += chunks;
      continue;
    }
    for (std::int64_t b = first_block; b < last_block; ++b) {
      const std::int64_t k = first_chunk + block / chunk - 1 - (c % block) / chunk + (b - first_block) * (block / chunk);
      out.write_row.push_back(static_cast<std::int32_t>(r));
      out.write_block.push_back(static_cast<std::int32_t>(b));
      out.write_chunk.push_back(static_cast<std::int32_t>(k));
    }
    out.write_row.push_back(static_cast<std::int32_t>(r));
    out.write_block.push_back(static_cast<std::int32_t>(last_block));
    out.write_chunk.push_back(static_cast<std::int32_t>(first_chunk + chunks - 1));
    first_chunk += chunks;
  }
  return out;
}

void expect_minimal(const CheckResult& result, std::size_t most_requests, std::int64_t most_steps) {
  ASSERT_TRUE(result.minimal) << "not caught in " << result.lives << " lives";
  const Life& life = result.minimal->life;
  EXPECT_LE(life.rows(), most_requests) << report(result);
  EXPECT_LE(life.steps(), most_steps) << report(result);
  ::testing::Test::RecordProperty("minimal", report(result));
}

TEST(ASeamSlip, ABlockSizeAcceptedThoughNotAMultipleOfTheChunkSizeWritesStatesFromTheWrongChunkEnds) {
  // vLLM's closed form agrees with chunkmeta's plan wherever M is a multiple of C ...
  const CheckResult agreeing = checked(with_plan(plan_for_any_block_size), in_mode(Mode::all));
  EXPECT_FALSE(agreeing.minimal) << report(agreeing);
  // ... and, accepting C = 4 with M = 6, stores states no block claims.
  const CheckResult result = checked(with_plan(plan_for_any_block_size),
                                     in_mode(Mode::all, 4, 6));
  expect_minimal(result, 1, 1);
  EXPECT_EQ(result.minimal->fault.function, "plan");
  EXPECT_EQ(result.minimal->fault.fault.rule, "cache-adequate") << report(result);
}

TEST(ASeamSlip, AStateColumnComputedWithTheAttentionBlockSizeReadsOrWritesTheWrongBlocks) {
  // vLLM #53142: the align-mode state column seeded with the attention block size, not the Mamba one.
  const auto attention_block_size = [](const PlanInput& in) {
    PlanInput wrong = in;
    wrong.block_size = in.block_size * 2;
    return own_functions().plan(wrong);
  };
  const CheckResult result = checked(with_plan(attention_block_size), in_mode(Mode::all));
  expect_minimal(result, 1, 2);
}

TEST(ASeamSlip, ChunkEndsLookedUpOnTheRequestsOwnGridOverPackedGridMetadataAreNotBlockEnds) {
  // SGLang #31833: the kernel's chunks on the packed batch's grid, the states picked on each request's own.
  Functions functions = own_functions();
  functions.chunks = [](const ChunksInput& in) -> Answer<ChunksOutput> {
    const auto result = packed_grid::metadata(packed_grid::View64{in.chunk_size, in.query_start_loc});
    if (!result) return result.error().message();
    const auto& out = result.value();
    return ChunksOutput{{out.cu_chunk_seqlens.begin(), out.cu_chunk_seqlens.end()},
                        {out.seq_idx.begin(), out.seq_idx.end()},
                        {out.last_chunk_indices.begin(), out.last_chunk_indices.end()},
                        {}};
  };
  const CheckResult result = checked(functions, in_mode(Mode::all));
  expect_minimal(result, 2, 2);
}

TEST(ASeamSlip, ACheckpointPublishedAtThePlannersPositionWhileTheChunkerCutElsewhereHoldsAnotherState) {
  // The chunker counts the offset from the sequence's start, the planner from the query's.
  Functions functions = own_functions();
  functions.chunks = [](const ChunksInput& in) {
    ChunksInput wrong = in;
    for (std::size_t r = 0; r < wrong.checkpoint_offsets.size(); ++r) {
      const std::int64_t o = wrong.checkpoint_offsets[r];
      const std::int64_t n = in.query_start_loc[r + 1] - in.query_start_loc[r];
      if (o > 0) wrong.checkpoint_offsets[r] = std::max<std::int64_t>(1, std::min(o + in.num_computed_tokens[r] % n, n - 1));
    }
    return own_functions().chunks(wrong);
  };
  const CheckResult result = checked(functions, in_mode(Mode::align));
  expect_minimal(result, 1, 2);
  EXPECT_EQ(result.minimal->fault.function, "chunks") << report(result);
}

TEST(ASeamSlip, AWritePlanOneChunkLateOnRowsResumedOffTheGridStoresTheNextChunksState) {
  const auto late = [](const PlanInput& in) -> Answer<PlanOutput> {
    auto answer = own_functions().plan(in);
    auto& plan = std::get<PlanOutput>(answer);
    for (std::size_t w = 0; w < plan.write_row.size(); ++w) {
      const auto row = static_cast<std::size_t>(plan.write_row[w]);
      const bool interior = w + 1 < plan.write_row.size() && plan.write_row[w + 1] == plan.write_row[w];
      if (interior && in.num_computed_tokens[row] % in.chunk_size != 0) ++plan.write_chunk[w];
    }
    return answer;
  };
  const CheckResult result = checked(with_plan(late), in_mode(Mode::all));
  expect_minimal(result, 1, 2);  // resumed off the grid: after a first step (a prefix hit resumes on the grid)
  EXPECT_EQ(result.minimal->fault.fault.rule, "cache-adequate") << report(result);
}

TEST(ASeamSlip, AColumnPublishedWithoutACheckpointIsServedHoldingAStateNeverComputed) {
  // The review of vLLM #53614: a block allocated for a checkpoint the kernel never writes.
  Functions functions = own_functions();
  functions.checkpoints = [](const CheckpointsInput& in) -> Answer<CheckpointsOutput> {
    auto answer = own_functions().checkpoints(in);
    auto& planned = std::get<CheckpointsOutput>(answer);
    for (std::size_t r = 0; r < planned.checkpoint_cols.size(); ++r) {
      if (planned.checkpoint_offsets[r] == 0 && in.seq_lens[r] > 2 * in.mamba_block_size) {
        planned.checkpoint_cols[r] = (in.seq_lens[r] + in.mamba_block_size - 1) / in.mamba_block_size - 2;
      }
    }
    return answer;
  };
  const CheckResult result = checked(functions, in_mode(Mode::align));
  expect_minimal(result, 1, 1);
  EXPECT_EQ(result.minimal->fault.fault.rule, "checkpoint") << report(result);
}

TEST(AFault, NamesTheStepTheRowsRequestAndTheStateReadInWords) {
  // A plan that reads every resumed row from block 0.
  const auto from_block_zero = [](const PlanInput& in) -> Answer<PlanOutput> {
    auto answer = own_functions().plan(in);
    auto& plan = std::get<PlanOutput>(answer);
    std::fill(plan.block_idx_last_computed_token.begin(), plan.block_idx_last_computed_token.end(), 0);
    return answer;
  };
  Life life;
  life.chunk_size = 4;
  life.block_size = 8;
  life.requests = {Request{0, 0, {3}}, Request{0, 0, {20, 4}}};
  const auto fault = run(life, with_plan(from_block_zero));
  ASSERT_TRUE(fault);
  EXPECT_EQ(to_string(*fault),
            "step 1: the plan function's output: read: row 0 (request 1) resumes after 20 tokens from its block 0, "
            "which holds the state after 8 tokens of request 1; it needs the state after 20 tokens of request 1 "
            "(row 0 is request 1)");
}

}  // namespace
}  // namespace chunkmeta::steps
