// The checkpointed chunker's library: the contract's worked examples
// (computed by running vLLM #57329's function), its rules named, the writer
// into caller buffers, and on random workloads: the fast pass against the
// reference (the definition), and the contract's relations (all offsets 0 is
// Mamba's chunking; a row with a checkpoint is Mamba's two rows; the
// planner's offsets fed to it end a chunk exactly at the planned position).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "chunkmeta/checkpointed_chunks.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/prefill_checkpoints.hpp"

namespace chunkmeta::checkpointed_chunks {
namespace {

using I = std::vector<std::int64_t>;
using O = std::vector<std::int32_t>;

O ints(const Int32Array& a) { return {a.begin(), a.end()}; }

Chunks chunked(std::int64_t C, const I& c, const I& q, const I& o) {
  const View64 view{C, c, q, o};
  const auto ref = reference(view);
  const auto fast = chunks(view);
  EXPECT_TRUE(ref.ok() && fast.ok()) << (ref.ok() ? fast.error().message() : ref.error().message());
  EXPECT_EQ(fast.value(), ref.value());
  std::vector<std::int32_t> c32(c.begin(), c.end()), q32(q.begin(), q.end()), o32(o.begin(), o.end());
  EXPECT_EQ(chunks(View32{C, c32, q32, o32}).value(), ref.value());
  return ref.value();
}

TEST(CheckpointedChunks, GivesTheContractsWorkedExamples) {
  auto k = chunked(256, {0, 0}, {0, 700, 1400}, {0, 100});
  EXPECT_EQ(ints(k.cu_chunk_seqlen), (O{0, 256, 512, 700, 800, 956, 1212, 1400}));
  EXPECT_EQ(ints(k.seq_idx), (O{0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(ints(k.last_chunk_indices), (O{2, 6}));
  EXPECT_EQ(ints(k.checkpoint_chunk_indices), (O{-1, 3}));
  k = chunked(256, {300}, {0, 500}, {212});  // the checkpoint is on the grid already: no extra chunk
  EXPECT_EQ(ints(k.cu_chunk_seqlen), (O{0, 212, 468, 500}));
  EXPECT_EQ(ints(k.checkpoint_chunk_indices), (O{0}));
  k = chunked(4, {0, 6, 16}, {0, 20, 33, 36}, {10, 5, 0});
  EXPECT_EQ(ints(k.cu_chunk_seqlen), (O{0, 4, 8, 10, 12, 16, 20, 22, 25, 26, 30, 33, 36}));
  EXPECT_EQ(ints(k.seq_idx), (O{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2}));
  EXPECT_EQ(ints(k.last_chunk_indices), (O{5, 10, 11}));
  EXPECT_EQ(ints(k.checkpoint_chunk_indices), (O{2, 7, -1}));
  k = chunked(4, {8, 0, 3}, {0, 0, 3, 9}, {0, 2, 4});
  EXPECT_EQ(ints(k.cu_chunk_seqlen), (O{0, 2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(ints(k.seq_idx), (O{1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(ints(k.last_chunk_indices), (O{-1, 1, 5}));
  EXPECT_EQ(ints(k.checkpoint_chunk_indices), (O{-1, 0, 3}));
}

TEST(CheckpointedChunks, NamesTheOffsetsRulesAfterMambasDomain) {
  const I c{0, 0}, q{0, 5, 9};
  const auto error = [&](const I& o) { return validate(View64{4, c, q, o}); };
  EXPECT_EQ(error({0})->code, ErrorCode::length_mismatch);
  EXPECT_EQ(error({0})->field, "checkpoint_offsets");
  EXPECT_EQ(error({0, -1})->code, ErrorCode::negative_value);
  EXPECT_EQ(error({0, -1})->index, 1);
  const auto at_end = error({5, 0});  // an offset equal to the row's new tokens: vLLM's loop emits an empty chunk
  ASSERT_TRUE(at_end.has_value());
  EXPECT_EQ(at_end->code, ErrorCode::value_too_large);
  EXPECT_EQ(at_end->index, 0);
  EXPECT_EQ(at_end->bound, 4);
  EXPECT_EQ(error({0, 7})->index, 1);
  EXPECT_FALSE(error({4, 3}).has_value());
  // Mamba's rules come first: a decreasing query_start_loc is named whatever the offsets.
  const I bad_q{0, 5, 4};
  EXPECT_EQ(validate(View64{4, c, bad_q, I{9, 9}})->code, ErrorCode::query_start_loc_decreasing);
  // An offset on a row without new tokens is past them.
  const I empty_q{0, 0, 4};
  EXPECT_EQ(validate(View64{4, c, empty_q, I{1, 0}})->bound, -1);
}

TEST(CheckpointedChunks, CountsTheCheckpointsChunksAgainstTheCap) {
  const I c{0}, q{0, 8}, o{3};
  Limits limits;
  limits.max_chunks = 3;  // C = 4: chunks [0, 3), [3, 4), [4, 8)
  EXPECT_TRUE(chunks(View64{4, c, q, o}, limits).ok());
  limits.max_chunks = 2;
  const auto capped = chunks(View64{4, c, q, o}, limits);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.error().code, ErrorCode::output_too_large);
}

TEST(CheckpointedChunks, WritesIntoCallerBuffersOrNamesTheShortOne) {
  const I c{0, 6, 16}, q{0, 20, 33, 36}, o{10, 5, 0};
  std::vector<std::int32_t> cu(13, 77), seq(12, 77), last(3, 77), ckpt(2, 77);
  const auto short_ckpt = chunks_into(View64{4, c, q, o}, {cu, seq, last, ckpt});
  ASSERT_FALSE(short_ckpt.ok());
  EXPECT_EQ(short_ckpt.error().field, "checkpoint_chunk_indices");
  EXPECT_EQ(cu, O(13, 77));  // nothing written
  ckpt.resize(5, 77);
  const auto written = chunks_into(View64{4, c, q, o}, {cu, seq, last, ckpt});
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written.value().chunks.seq_idx, 12);
  EXPECT_EQ(ckpt, (O{2, 7, -1, 77, 77}));
}

// Buffers sized once from an engine's limits hold every step within them: Mamba's bound and one chunk per row.
TEST(CheckpointedChunks, MaxOutputSizesHoldEveryStepWithinTheLimits) {
  std::mt19937_64 random(19);
  for (int round = 0; round < 2000; ++round) {
    const std::int64_t C = std::int64_t{1} << (random() % 9);
    const auto rows = static_cast<std::size_t>(random() % 6);
    I c(rows), q{0}, o(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      c[i] = static_cast<std::int64_t>(random() % (3 * C + 1));
      const auto n = static_cast<std::int64_t>(random() % (4 * C + 3));
      q.push_back(q.back() + n);
      o[i] = n > 1 && random() % 2 ? 1 + static_cast<std::int64_t>(random() % (n - 1)) : 0;
    }
    const auto bound = max_output_sizes(q.back(), static_cast<std::int64_t>(rows), C);
    const auto sizes = output_sizes(View64{C, c, q, o});
    ASSERT_TRUE(bound.ok() && sizes.ok());
    EXPECT_LE(sizes.value().chunks.cu_chunk_seqlen, bound.value().chunks.cu_chunk_seqlen);
    EXPECT_LE(sizes.value().chunks.seq_idx, bound.value().chunks.seq_idx);
    EXPECT_LE(sizes.value().checkpoints, bound.value().checkpoints);
    std::vector<std::int32_t> c32(c.begin(), c.end()), q32(q.begin(), q.end()), o32(o.begin(), o.end());
    EXPECT_EQ(output_sizes(View32{C, c32, q32, o32}).value(), sizes.value());
    EXPECT_FALSE(validate(View32{C, c32, q32, o32}).has_value());
  }
  EXPECT_EQ(max_output_sizes(-1, 1, 4).error().code, ErrorCode::negative_value);
}

struct Drawn {
  std::int64_t C = 1;
  I c, q, o;
};

// A random batch: rows resumed on and off the grid, rows without new tokens, checkpoints on and off the
// grid and at the first and last allowed token, values near 2^31.
Drawn draw(std::mt19937_64& random) {
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
  };
  Drawn d;
  d.C = pick(0, 3) == 0 ? pick(1, 9) : std::int64_t{1} << pick(0, 8);
  const auto rows = static_cast<std::size_t>(pick(0, 7));
  d.q.push_back(pick(0, 3) == 0 ? pick(0, 100) : 0);
  for (std::size_t i = 0; i < rows; ++i) {
    const bool huge = pick(0, 15) == 0;
    const std::int64_t n = pick(0, 5) == 0 ? 0 : pick(1, 6 * d.C + 5);
    const std::int64_t c = huge ? kMaxValue - n - pick(0, 2 * d.C) : pick(0, 2) == 0 ? pick(0, 5) * d.C : pick(0, 9 * d.C);
    std::int64_t o = 0;
    if (n > 1 && pick(0, 2) != 0) {
      switch (pick(0, 3)) {
        case 0: o = 1; break;
        case 1: o = n - 1; break;
        case 2: o = std::clamp((c / d.C + 1) * d.C - c, std::int64_t{1}, n - 1); break;  // on the grid, where it can be
        default: o = pick(1, n - 1);
      }
    }
    d.c.push_back(c);
    d.o.push_back(o);
    d.q.push_back(std::min(d.q.back() + n, kMaxValue));
  }
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t n = d.q[i + 1] - d.q[i];
    if (d.o[i] >= n) d.o[i] = 0;  // the clamp above may leave an offset past a row cut short near 2^31
    d.c[i] = std::min(d.c[i], kMaxValue - n);
  }
  return d;
}

TEST(CheckpointedChunks, TheFastPassIsTheDefinitionAndKeepsMambasChunkingWhereNoRowHasACheckpoint) {
  std::mt19937_64 random(20261206);
  int checkpoints = 0, on_grid = 0;
  for (int round = 0; round < 20000; ++round) {
    const Drawn d = draw(random);
    const View64 view{d.C, d.c, d.q, d.o};
    const auto ref = reference(view);
    ASSERT_TRUE(ref.ok()) << ref.error().message();
    ASSERT_EQ(chunks(view).value(), ref.value()) << "round " << round;
    // Invariants 2 and 3: the checkpoint chunk ends at c + o in row i; on the grid it adds no chunk.
    const auto mamba = chunkmeta::reference(WorkloadView{d.C, d.c, d.q});
    ASSERT_TRUE(mamba.ok());
    std::int64_t extra = 0;
    for (std::size_t i = 0; i < d.c.size(); ++i) {
      const std::int32_t k = ref.value().checkpoint_chunk_indices[i];
      ASSERT_EQ(k == -1, d.o[i] == 0);
      if (k < 0) continue;
      ++checkpoints;
      const bool grid = (d.c[i] + d.o[i]) % d.C == 0;
      on_grid += grid ? 1 : 0;
      extra += grid ? 0 : 1;
      EXPECT_EQ(ref.value().seq_idx[static_cast<std::size_t>(k)], static_cast<std::int32_t>(i));
      EXPECT_EQ(ref.value().cu_chunk_seqlen[static_cast<std::size_t>(k) + 1], d.q[i] - d.q[0] + d.o[i]);
    }
    EXPECT_EQ(ref.value().seq_idx.size(), mamba.value().seq_idx.size() + static_cast<std::size_t>(extra));
    if (extra == 0 && std::all_of(d.o.begin(), d.o.end(), [](std::int64_t o) { return o == 0; })) {
      EXPECT_EQ(ref.value().cu_chunk_seqlen, mamba.value().cu_chunk_seqlen);
      EXPECT_EQ(ref.value().seq_idx, mamba.value().seq_idx);
      EXPECT_EQ(ref.value().last_chunk_indices, mamba.value().last_chunk_indices);
    }
  }
  EXPECT_GT(checkpoints, 10000);
  EXPECT_GT(on_grid, 1000);
}

// Invariant 4: a row with a checkpoint is chunked as Mamba's two rows (c, o), then (c + o, n - o).
TEST(CheckpointedChunks, ARowWithACheckpointIsChunkedAsMambasTwoRows) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 5000; ++round) {
    const Drawn d = draw(random);
    I c, q{d.q.front()};
    std::vector<std::int32_t> row_of_split;
    for (std::size_t i = 0; i < d.c.size(); ++i) {
      const std::int64_t n = d.q[i + 1] - d.q[i];
      if (d.o[i] > 0) {
        c.push_back(d.c[i]);
        q.push_back(q.back() + d.o[i]);
        c.push_back(d.c[i] + d.o[i]);
        q.push_back(q.back() + n - d.o[i]);
        row_of_split.insert(row_of_split.end(), {static_cast<std::int32_t>(i), static_cast<std::int32_t>(i)});
      } else {
        c.push_back(d.c[i]);
        q.push_back(q.back() + n);
        row_of_split.push_back(static_cast<std::int32_t>(i));
      }
    }
    const auto split = chunkmeta::reference(WorkloadView{d.C, c, q});
    const auto ours = reference(View64{d.C, d.c, d.q, d.o});
    ASSERT_TRUE(split.ok() && ours.ok());
    ASSERT_EQ(ours.value().cu_chunk_seqlen, split.value().cu_chunk_seqlen) << "round " << round;
    Int32Array rows;
    for (const auto r : split.value().seq_idx) rows.push_back(row_of_split[static_cast<std::size_t>(r)]);
    EXPECT_EQ(ours.value().seq_idx, rows);
  }
}

// Invariant 5, lockstep: the planner's offsets are valid input to the chunker (with c = s - n), and the
// checkpoint chunk then ends exactly at the planned position.
TEST(CheckpointedChunks, ThePlannersOffsetsEndAChunkExactlyAtThePlannedPosition) {
  std::mt19937_64 random(11);
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
  };
  int planned = 0;
  for (int round = 0; round < 5000; ++round) {
    const std::int64_t H = std::int64_t{16} << pick(0, 4);
    const std::int64_t M = H << pick(0, 2);
    const std::int64_t C = std::int64_t{1} << pick(3, 8);
    const auto rows = static_cast<std::size_t>(pick(1, 6));
    I s(rows), n(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      const std::int64_t a = pick(0, 1) == 0 ? pick(0, 8) * H : pick(0, 8 * H);
      n[i] = pick(0, 10 * M);
      s[i] = a + n[i];
    }
    const auto plan = prefill_checkpoints::reference({s, n, H, M, pick(0, 1) == 0 ? 1 : 16, pick(0, 1) == 1});
    ASSERT_TRUE(plan.ok());
    I c(rows), q{0}, o(rows);
    for (std::size_t i = 0; i < rows; ++i) {
      c[i] = s[i] - n[i];
      q.push_back(q.back() + n[i]);
      o[i] = plan.value().checkpoint_offsets[i];
    }
    const auto chunked = reference(View64{C, c, q, o});
    ASSERT_TRUE(chunked.ok()) << chunked.error().message();
    for (std::size_t i = 0; i < rows; ++i) {
      const std::int32_t k = chunked.value().checkpoint_chunk_indices[i];
      if (o[i] == 0) continue;
      ++planned;
      ASSERT_GE(k, 0);
      EXPECT_EQ(c[i] + chunked.value().cu_chunk_seqlen[static_cast<std::size_t>(k) + 1] - q[i], c[i] + o[i]);
    }
  }
  EXPECT_GT(planned, 1000);
}

}  // namespace
}  // namespace chunkmeta::checkpointed_chunks
