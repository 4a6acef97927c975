// The packed-grid formulation's library: the contract's worked examples
// (computed by running vLLM's, SGLang's and TensorRT-LLM's functions), its
// rules, caller buffers, and on random batches: the fast writers against the
// definition, the two output forms describing the same pieces, and the exact
// relations to FLA's chunks and to vLLM's builder (Part 1).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/fla.hpp"
#include "chunkmeta/packed_grid.hpp"

namespace chunkmeta::packed_grid {
namespace {

using I = std::vector<std::int64_t>;
using O = std::vector<std::int32_t>;

O ints(const Int32Array& a) { return {a.begin(), a.end()}; }

struct Both {
  Metadata m;
  ChunkIndices c;
};

Both computed(std::int64_t C, const I& q) {
  const View64 view{C, q};
  const auto m = metadata(view), rm = reference_metadata(view);
  const auto c = chunk_indices(view), rc = reference_chunk_indices(view);
  EXPECT_TRUE(m.ok() && rm.ok() && c.ok() && rc.ok()) << "C " << C << ", q " << ::testing::PrintToString(q) << ": "
                                                     << (m.ok() ? "" : m.error().message());
  EXPECT_EQ(m.value(), rm.value());
  EXPECT_EQ(c.value(), rc.value());
  const std::vector<std::int32_t> q32(q.begin(), q.end());
  EXPECT_EQ(metadata(View32{C, q32}).value(), rm.value());
  EXPECT_EQ(output_sizes(View32{C, q32}).value(), output_sizes(view).value());
  EXPECT_FALSE(validate(View32{C, q32}).has_value());
  EXPECT_EQ(chunk_indices(View32{C, q32}).value(), rc.value());
  return {rm.value(), rc.value()};
}

TEST(PackedGrid, GivesTheContractsWorkedExamples) {
  auto b = computed(4, {0, 5, 12});
  EXPECT_EQ(ints(b.c.chunk_indices), (O{0, 1, 1, 2}));
  EXPECT_EQ(ints(b.c.chunk_offsets), (O{0, 0, 1, 0}));
  EXPECT_EQ(ints(b.m.cu_chunk_seqlens), (O{0, 4, 5, 8, 12}));
  EXPECT_EQ(ints(b.m.last_chunk_indices), (O{1, 3}));
  EXPECT_EQ(ints(b.m.seq_idx), (O{0, 0, 1, 1}));
  b = computed(4, {0, 3, 3, 9, 16});
  EXPECT_EQ(ints(b.c.chunk_indices), (O{0, 0, 1, 2, 2, 3}));
  EXPECT_EQ(ints(b.c.chunk_offsets), (O{0, 3, 0, 0, 1, 0}));
  EXPECT_EQ(ints(b.m.cu_chunk_seqlens), (O{0, 3, 4, 8, 9, 12, 16}));
  EXPECT_EQ(ints(b.m.last_chunk_indices), (O{0, -1, 3, 5}));
  EXPECT_EQ(ints(b.m.seq_idx), (O{0, 2, 2, 2, 3, 3}));
}

// Where SGLang's and TensorRT-LLM's torch function raises IndexError (C = 4, q = [0, 4, 4]) or emits a
// zero-length logical chunk (q = [0, 28, 62, 62]; [0, 3, 3, 9, 16] above), the contract has no piece for
// the row without tokens.
TEST(PackedGrid, ARowWithoutTokensAddsNoPieceFirstBetweenOrLast) {
  auto b = computed(4, {0, 4, 4});
  EXPECT_EQ(ints(b.c.chunk_indices), (O{0}));
  EXPECT_EQ(ints(b.m.last_chunk_indices), (O{0, -1}));
  b = computed(4, {0, 28, 62, 62});
  EXPECT_EQ(b.c.chunk_indices.size(), 16u);
  EXPECT_EQ(ints(b.m.last_chunk_indices), (O{6, 15, -1}));
  b = computed(4, {0, 0, 0, 5});
  EXPECT_EQ(ints(b.m.last_chunk_indices), (O{-1, -1, 1}));
  b = computed(4, {0});
  EXPECT_EQ(ints(b.m.cu_chunk_seqlens), (O{0}));
}

TEST(PackedGrid, NamesEachRule) {
  const auto error = [](std::int64_t C, const I& q) { return validate(View64{C, q}); };
  EXPECT_EQ(error(0, {0, 4})->code, ErrorCode::chunk_size_not_positive);
  EXPECT_EQ(error(4, {})->code, ErrorCode::length_mismatch);
  const auto not_from_zero = error(4, {2, 4});
  ASSERT_TRUE(not_from_zero.has_value());
  EXPECT_EQ(not_from_zero->code, ErrorCode::value_too_large);
  EXPECT_EQ(not_from_zero->index, 0);
  EXPECT_EQ(not_from_zero->bound, 0);
  EXPECT_EQ(error(4, {0, 5, 3})->code, ErrorCode::query_start_loc_decreasing);
  EXPECT_EQ(error(4, {0, -1})->code, ErrorCode::negative_value);
  EXPECT_EQ(error(4, {0, kMaxValue + 1})->code, ErrorCode::value_too_large);
  Limits limits;
  limits.max_chunks = 2;
  EXPECT_EQ(validate(View64{4, I{0, 12}}, limits)->code, ErrorCode::output_too_large);
}

TEST(PackedGrid, NamesTheOffsetsAsEachFormsEngineNamesThem) {
  const I decreasing{0, 5, 3};
  const auto as_cu_seqlens = validate(View64{4, decreasing}, {}, Offsets::cu_seqlens);
  ASSERT_TRUE(as_cu_seqlens.has_value());
  EXPECT_EQ(as_cu_seqlens->field, "cu_seqlens");
  EXPECT_EQ(as_cu_seqlens->code, ErrorCode::cu_seqlens_decreasing);
  EXPECT_EQ(chunk_indices(View64{4, decreasing}).error().field, "cu_seqlens");
  EXPECT_EQ(reference_chunk_indices(View64{4, decreasing}).error().field, "cu_seqlens");
  EXPECT_EQ(metadata(View64{4, decreasing}).error().field, "query_start_loc");
  EXPECT_EQ(reference_metadata(View64{4, decreasing}).error().code, ErrorCode::query_start_loc_decreasing);
}

TEST(PackedGrid, WritesIntoCallerBuffersOrNamesTheShortOne) {
  const I q{0, 5, 12};
  std::vector<std::int32_t> cu(5, 9), last(2, 9), seq(3, 9);
  const auto short_seq = metadata_into(View64{4, q}, {cu, last, seq});
  ASSERT_FALSE(short_seq.ok());
  EXPECT_EQ(short_seq.error().field, "seq_idx");
  EXPECT_EQ(cu, O(5, 9));
  std::vector<std::int32_t> indices(4), offsets(3);
  EXPECT_EQ(chunk_indices_into(View64{4, q}, {indices, offsets}).error().field, "chunk_offsets");
  offsets.resize(4);
  ASSERT_TRUE(chunk_indices_into(View64{4, q}, {indices, offsets}).ok());
  EXPECT_EQ(offsets, (O{0, 0, 1, 0}));
}

struct Drawn {
  std::int64_t C = 1;
  I q;
};

// Rows starting on and off the grid, rows shorter than the room left in their physical chunk, rows without
// tokens first, between and last, one row, C = 1, offsets near 2^31.
Drawn draw(std::mt19937_64& random) {
  const auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
  };
  Drawn d;
  const bool near_top = pick(0, 20) == 0;  // offsets near 2^31, with chunks large enough to count them all
  d.C = near_top ? std::int64_t{1} << pick(20, 30)
      : pick(0, 5) == 0 ? 1 : pick(0, 2) == 0 ? pick(2, 9) : std::int64_t{1} << pick(1, 8);
  const auto rows = pick(0, 8);
  d.q.push_back(0);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t n = pick(0, 4) == 0 ? 0 : near_top ? pick(1, 1000) : pick(0, 2) == 0 ? pick(1, d.C) : pick(1, 5 * d.C);
    d.q.push_back(d.q.back() + n);
  }
  if (near_top && d.q.size() > 1) d.q.back() = kMaxValue - pick(0, 3);
  return d;
}

TEST(PackedGrid, TheFastWritersAreTheDefinitionAndTheTwoFormsDescribeTheSamePieces) {
  std::mt19937_64 random(20261206);
  for (int round = 0; round < 20000; ++round) {
    const Drawn d = draw(random);
    const Both b = computed(d.C, d.q);
    ASSERT_EQ(b.m.seq_idx.size(), b.c.chunk_indices.size());
    for (std::size_t k = 0; k < b.c.chunk_indices.size(); ++k) {
      EXPECT_EQ(std::int64_t{b.c.chunk_indices[k]} * d.C + b.c.chunk_offsets[k], b.m.cu_chunk_seqlens[k]);
      EXPECT_LT(b.m.cu_chunk_seqlens[k], b.m.cu_chunk_seqlens[k + 1]);  // no zero-length piece
    }
  }
}

// Each piece's start in the builder's chunks (Part 1) and in FLA's, to compare the pieces.
std::vector<std::int64_t> starts_of(const Int32Array& cu) { return {cu.begin(), cu.end() - 1}; }

TEST(PackedGrid, IsFlasChunkingWhenEveryRowStartsOnTheGridAndExactlyWhenNoRowIsCutDifferently) {
  std::mt19937_64 random(3);
  int on_grid = 0;
  for (int round = 0; round < 5000; ++round) {
    Drawn d = draw(random);
    if (d.q.back() > 1 << 20) continue;
    if (round % 2 == 0) {  // rows moved onto the grid
      for (std::size_t i = 1; i < d.q.size(); ++i) d.q[i] = d.q[i] / d.C * d.C;
    }
    const Both b = computed(d.C, d.q);
    const auto fla = fla::reference(fla::View64{d.C, d.q});
    ASSERT_TRUE(fla.ok());
    std::vector<std::int64_t> fla_starts, fla_rows;
    for (std::size_t k = 0; k < fla.value().chunk_indices.size() / 2; ++k) {
      const auto i = static_cast<std::size_t>(fla.value().chunk_indices[2 * k]);
      fla_starts.push_back(d.q[i] + fla.value().chunk_indices[2 * k + 1] * d.C);
      fla_rows.push_back(static_cast<std::int64_t>(i));
    }
    // The contract's sufficient condition (every row with tokens starts on the grid), and the exact one:
    // each row with tokens starts on the grid or lies inside one physical chunk (neither form cuts it).
    bool every_row_on_grid = true, exactly = true;
    for (std::size_t i = 0; i + 1 < d.q.size(); ++i) {
      if (d.q[i + 1] == d.q[i]) continue;
      every_row_on_grid &= d.q[i] % d.C == 0;
      exactly &= d.q[i] % d.C == 0 || (d.q[i + 1] - 1) / d.C == d.q[i] / d.C;
    }
    const bool same = starts_of(b.m.cu_chunk_seqlens) == fla_starts &&
                      std::vector<std::int64_t>(b.m.seq_idx.begin(), b.m.seq_idx.end()) == fla_rows;
    on_grid += every_row_on_grid ? 1 : 0;
    if (every_row_on_grid) {
      EXPECT_TRUE(same) << "round " << round;
    }
    EXPECT_EQ(same, exactly) << "round " << round;
  }
  EXPECT_GT(on_grid, 2000);
}

// The builder realigns each row to its own computed tokens: the pieces are its chunks exactly when every row
// cut into more than one piece in either form has q[i] = c_i (mod C) (batches whose rows all have tokens).
TEST(PackedGrid, IsTheBuildersChunkingExactlyWhenEveryCutRowIsAlignedAsItsComputedTokens) {
  std::mt19937_64 random(5);
  int equal = 0, differ = 0;
  for (int round = 0; round < 5000; ++round) {
    Drawn d = draw(random);
    if (d.q.back() > 1 << 20) continue;
    I q{0};
    for (std::size_t i = 0; i + 1 < d.q.size(); ++i) q.push_back(q.back() + std::max<std::int64_t>(1, d.q[i + 1] - d.q[i]));
    I c(q.size() - 1);
    for (std::size_t i = 0; i < c.size(); ++i) {
      const std::int64_t aligned = (q[i] % d.C) + d.C * static_cast<std::int64_t>(random() % 4);
      c[i] = random() % 3 == 0 ? static_cast<std::int64_t>(random() % 50) : aligned;
    }
    const Both b = computed(d.C, q);
    const auto builder = chunkmeta::reference(WorkloadView{d.C, c, q});
    ASSERT_TRUE(builder.ok());
    const bool same = starts_of(b.m.cu_chunk_seqlens) == starts_of(builder.value().cu_chunk_seqlen) &&
                      b.m.seq_idx == builder.value().seq_idx;
    bool condition = true;
    std::size_t packed_k = 0, builder_k = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      std::size_t mine = 0, theirs = 0;
      while (packed_k + mine < b.m.seq_idx.size() && b.m.seq_idx[packed_k + mine] == static_cast<std::int32_t>(i)) ++mine;
      while (builder_k + theirs < builder.value().seq_idx.size() &&
             builder.value().seq_idx[builder_k + theirs] == static_cast<std::int32_t>(i))
        ++theirs;
      if ((mine > 1 || theirs > 1) && q[i] % d.C != c[i] % d.C) condition = false;
      packed_k += mine;
      builder_k += theirs;
    }
    EXPECT_EQ(same, condition) << "round " << round;
    (same ? equal : differ) += 1;
  }
  EXPECT_GT(equal, 500);
  EXPECT_GT(differ, 500);
}

}  // namespace
}  // namespace chunkmeta::packed_grid
