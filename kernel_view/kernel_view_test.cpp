// SPEC Part 8's worked examples, each through the model, and the faults said
// in words: states that name their own position make every wrong piece of
// metadata say which token ran from which state.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "chunkmeta/kernel_view/kernel_view.hpp"

namespace chunkmeta::kernel_view {
namespace {

using I64 = std::vector<std::int64_t>;
using I32 = std::vector<std::int32_t>;

struct Chunked {
  I64 computed, q;
  I32 cu, seq_idx, last;
  Batch batch() const { return {computed, q}; }
  ThreeArrays arrays() const { return {cu, seq_idx, last}; }
  Scan run(std::int64_t chunk_size) const { return scan(batch(), chunk_size, arrays()); }
};

std::vector<State> states(std::initializer_list<std::pair<std::int64_t, std::int64_t>> pairs) {
  std::vector<State> out;
  for (auto [r, p] : pairs) out.push_back({r, p});
  return out;
}

TEST(TheKernelsView, RunsPart1sChunksToTheStatesPart8Lists) {
  const Chunked part1{{0, 6}, {0, 5, 12}, {0, 4, 5, 7, 11, 12}, {0, 0, 1, 1, 1}, {1, 4}};
  const Scan s = part1.run(4);
  EXPECT_FALSE(s.fault) << to_string(*s.fault);
  EXPECT_EQ(s.ends, states({{0, 4}, {0, 5}, {1, 8}, {1, 12}, {1, 13}}));
  EXPECT_FALSE(cache_adequate(part1.batch(), 8, part1.arrays(), s));
  EXPECT_FALSE(cache_adequate(part1.batch(), 4, part1.arrays(), s));
}

TEST(TheKernelsView, FindsThePackedGridKernelAdequateButNotCacheAdequateWhenARowStartsOffTheGrid) {
  const Chunked packed{{0, 6}, {0, 5, 12}, {0, 4, 5, 8, 12}, {0, 0, 1, 1}, {1, 3}};
  const Scan s = packed.run(4);
  EXPECT_FALSE(s.fault) << to_string(*s.fault);
  EXPECT_EQ(s.ends, states({{0, 4}, {0, 5}, {1, 9}, {1, 13}}));
  const auto fault = cache_adequate(packed.batch(), 8, packed.arrays(), s);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->rule, "cache-adequate");
  EXPECT_EQ(fault->row, 1);
  EXPECT_EQ(fault->chunk, 2);
  EXPECT_EQ(fault->what,
            "no chunk of row 1 ends after 8 tokens, where its block 0 ends (block size 8): the state that block claims is "
            "never computed; chunk 2 runs it from 6 to 9 tokens");
}

TEST(TheKernelsView, MakesAChunkRunAsAnotherRowBad) {
  const Chunked wrong_rows{{0, 0}, {0, 8, 12}, {0, 4, 8, 12}, {0, 1, 0}, {2, 1}};
  const Scan s = wrong_rows.run(4);
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->chunk, 1);
  EXPECT_EQ(s.fault->what, "chunk 1 runs packed tokens 4..7 as row 1, but packed token 4 is row 0's: its state is BAD");
}

TEST(TheKernelsView, CannotWriteABlockThatEndsInsideAChunkWhenTheBlockSizeIsNoMultipleOfTheChunkSize) {
  // #57266's class: C = 4, M = 6; chunk ends 4, 8, 12, 13, block 0 needs (0, 6).
  const Chunked chunks{{0}, {0, 13}, {0, 4, 8, 12, 13}, {0, 0, 0, 0}, {3}};
  const Scan s = chunks.run(4);
  ASSERT_FALSE(s.fault);
  const auto fault = cache_adequate(chunks.batch(), 6, chunks.arrays(), s);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->chunk, 1);
  EXPECT_EQ(fault->what,
            "no chunk of row 0 ends after 6 tokens, where its block 0 ends (block size 6): the state that block claims is "
            "never computed; chunk 1 runs it from 4 to 8 tokens");
}

TEST(TheKernelsView, SaysFromWhichStateAChunkRunsWhenItSkipsTokens) {
  // An empty chunk of row 0 between two of row 1's: the scan restarts row 1 from its initial state.
  const Chunked restarted{{0, 6}, {0, 5, 12}, {0, 4, 5, 7, 7, 11, 12}, {0, 0, 1, 0, 1, 1}, {1, 5}};
  const Scan s = restarted.run(4);
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->chunk, 4);
  EXPECT_EQ(s.fault->what, "chunk 4 runs row 1's tokens 8..11 from the state after 6 tokens of row 1: its state is BAD");
  // ... and that a row's final state is read from the wrong chunk.
  const Chunked early_last{{0, 6}, {0, 5, 12}, {0, 4, 5, 7, 11, 12}, {0, 0, 1, 1, 1}, {1, 3}};
  const Scan t = early_last.run(4);
  ASSERT_TRUE(t.fault);
  EXPECT_EQ(t.fault->what,
            "row 1's final state is read from chunk 3, the state after 12 tokens of row 1; it must be the state after 13 "
            "tokens of row 1");
  // ... and a chunk longer than the kernel's.
  const Chunked long_chunk{{0}, {0, 5}, {0, 5}, {0}, {0}};
  // A row without tokens needs no final state, but its gathered index must name a chunk or be -1.
  const Chunked empty_row_far{{0, 0}, {0, 4, 4}, {0, 4}, {0}, {0, 2147483647}};
  ASSERT_TRUE(empty_row_far.run(4).fault);
  EXPECT_EQ(empty_row_far.run(4).fault->what,
            "row 1 has no tokens, and its final state is gathered from chunk 2147483647, which does not exist (1 chunk)");
  const Chunked empty_row_none{{0, 0}, {0, 4, 4}, {0, 4}, {0}, {0, -1}};
  EXPECT_FALSE(empty_row_none.run(4).fault);
  ASSERT_TRUE(long_chunk.run(4).fault);
  EXPECT_EQ(long_chunk.run(4).fault->what, "chunk 0 holds 5 tokens, more than chunk_size 4: the kernel runs 4 of them");
}

TEST(TheKernelsView, StoresWhatEachBlockOfPart3sExampleClaims) {
  // C = 4, M = 8, c = [0, 6, 16], q = [0, 20, 33, 36]: Part 1's chunks and the plan.
  const Chunked step{{0, 6, 16}, {0, 20, 33, 36}, {0, 4, 8, 12, 16, 20, 22, 26, 30, 33, 36}, {0, 0, 0, 0, 0, 1, 1, 1, 1, 2},
                     {4, 8, 9}};
  const Scan s = step.run(4);
  ASSERT_FALSE(s.fault) << to_string(*s.fault);
  const I32 rows{0, 0, 0, 1, 1, 1, 2}, blocks{0, 1, 2, 0, 1, 2, 2}, chunks{1, 3, 4, 5, 7, 8, 9};
  const I32 reads{0, 0, 1};
  EXPECT_FALSE(cache_writes(step.batch(), 8, s, {rows, blocks, chunks}, reads));
  std::vector<State> stored;
  for (auto k : chunks) stored.push_back(s.ends[k]);
  EXPECT_EQ(stored, states({{0, 8}, {0, 16}, {0, 20}, {1, 8}, {1, 16}, {1, 19}, {2, 19}}));
  // A write one chunk late stores the state after 12 tokens where block (1, 0) claims 8.
  const I32 late{1, 3, 4, 6, 7, 8, 9};
  const auto fault = cache_writes(step.batch(), 8, s, {rows, blocks, late}, reads);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "block (1, 0) holds the state after 12 tokens of row 1 (write 3, chunk 6); it claims the state after 8 "
                         "tokens of row 1");
  // A read from a block that holds fewer tokens than the row has computed.
  const I32 wrong_read{0, 0, 0};
  const auto read = cache_writes(step.batch(), 8, s, {rows, blocks, chunks}, wrong_read);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->what, "row 2 reads its initial state from block (2, 0), which holds the state after 8 tokens of row 2; it "
                        "has computed 16 tokens, held by block (2, 1)");
  // A block never written.
  const I32 fewer_rows{0, 0, 0, 1, 1, 2}, fewer_blocks{0, 1, 2, 0, 2, 2}, fewer_chunks{1, 3, 4, 5, 8, 9};
  const auto gap = cache_writes(step.batch(), 8, s, {fewer_rows, fewer_blocks, fewer_chunks}, reads);
  ASSERT_TRUE(gap);
  EXPECT_EQ(gap->what, "block (1, 1) is never written: it should hold the state after 16 tokens of row 1, which a later step "
                       "resumes from");
}

TEST(TheKernelsView, ReadsAnAdequateFormulationsEndStatesOnDemandAsItsScanComputesThem) {
  std::mt19937_64 random(20261208);
  const auto draw = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(random); };
  for (int batch = 0; batch < 2000; ++batch) {
    const std::int64_t chunk_size = draw(1, 8);
    Chunked cut;
    cut.q = {draw(0, 3)};
    cut.cu = {0};
    for (std::int64_t rows = draw(0, 6), r = 0; r < rows; ++r) {
      const std::int64_t tokens = draw(0, 3) == 0 ? 0 : draw(1, 30);
      cut.computed.push_back(draw(0, 40));
      cut.q.push_back(cut.q.back() + tokens);
      // Any cutting into pieces of at most C tokens is kernel-adequate; a row without tokens has no chunk.
      for (std::int64_t at = 0; at < tokens;) {
        at = std::min(tokens, at + draw(1, chunk_size));
        cut.cu.push_back(static_cast<std::int32_t>(cut.q[static_cast<std::size_t>(r)] - cut.q.front() + at));
        cut.seq_idx.push_back(static_cast<std::int32_t>(r));
      }
      cut.last.push_back(tokens == 0 ? -1 : static_cast<std::int32_t>(cut.seq_idx.size()) - 1);
    }
    const Scan s = cut.run(chunk_size);
    ASSERT_FALSE(s.fault) << to_string(*s.fault);
    const ChunkEnds on_demand(cut.batch(), cut.arrays());
    ASSERT_EQ(on_demand.size(), s.ends.size());
    for (std::size_t k = 0; k < s.ends.size(); ++k) ASSERT_EQ(on_demand[k], s.ends[k]) << "chunk " << k;
  }
}

TEST(TheKernelsView, JudgesAWritePlanOutOfOrderByItsLastWriteToEachBlock) {
  // Part 3's example, C = 4, M = 8: the plan's writes in another order store the same states.
  const Chunked step{{0, 6, 16}, {0, 20, 33, 36}, {0, 4, 8, 12, 16, 20, 22, 26, 30, 33, 36}, {0, 0, 0, 0, 0, 1, 1, 1, 1, 2},
                     {4, 8, 9}};
  const Scan s = step.run(4);
  const ChunkEnds on_demand(step.batch(), step.arrays());
  const I32 reads{0, 0, 1};
  const I32 rows{2, 1, 0, 1, 0, 0, 1}, blocks{2, 2, 2, 0, 1, 0, 1}, chunks{9, 8, 4, 5, 3, 1, 7};
  EXPECT_FALSE(cache_writes(step.batch(), 8, s, {rows, blocks, chunks}, reads));
  EXPECT_FALSE(cache_writes(step.batch(), 8, on_demand, {rows, blocks, chunks}, reads));
  // A wrong write to block (1, 0) that a later write to it replaces is harmless; the other way round it is not.
  const I32 twice_rows{1, 0, 0, 0, 1, 1, 1, 2}, twice_blocks{0, 0, 1, 2, 0, 1, 2, 2}, right_last{6, 1, 3, 4, 5, 7, 8, 9};
  EXPECT_FALSE(cache_writes(step.batch(), 8, on_demand, {twice_rows, twice_blocks, right_last}, reads));
  const I32 swapped_rows{1, 0, 0, 0, 1, 1, 1, 2}, wrong_last{5, 1, 3, 4, 6, 7, 8, 9};
  for (const ChunkEnds& ends : {ChunkEnds(s), on_demand}) {
    const auto fault = cache_writes(step.batch(), 8, ends, {swapped_rows, twice_blocks, wrong_last}, reads);
    ASSERT_TRUE(fault);
    EXPECT_EQ(fault->what, "block (1, 0) holds the state after 12 tokens of row 1 (write 4, chunk 6); it claims the state "
                           "after 8 tokens of row 1");
  }
}

TEST(TheKernelsView, CatchesVllmsFinalWriteOfARowWithoutTokens) {
  // c = [8, 0], q = [0, 0, 3], C = 4, M = 8: the loop's final write for row 0 (last chunk -1, read by
  // Python as the batch's last) overwrites block (0, 0), which holds (0, 8), with row 1's state.
  const Chunked step{{8, 0}, {0, 0, 3}, {0, 3}, {1}, {-1, 0}};
  const Scan s = step.run(4);
  ASSERT_FALSE(s.fault) << to_string(*s.fault);
  const I32 rows{0, 1}, blocks{0, 0}, chunks{0, 0};
  const auto fault = cache_writes(step.batch(), 8, s, {rows, blocks, chunks}, I32{0, 0});
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "block (0, 0) holds the state after 3 tokens of row 1 (write 0, chunk 0); it claims the state after "
                         "8 tokens of row 0");
  // Writing a row without tokens its own state again changes nothing: no fault.
  const Chunked realigned{{6, 0}, {0, 0, 3}, {0, 0, 3}, {0, 1}, {0, 1}};
  const Scan t = realigned.run(4);
  ASSERT_FALSE(t.fault) << to_string(*t.fault);
  EXPECT_FALSE(cache_writes(realigned.batch(), 8, t, {I32{0, 1}, I32{0, 0}, I32{0, 1}}, I32{0, 0}));
}

TEST(TheKernelsView, HoldsEachCheckpointAtThePositionItsRowClaims) {
  // Part 6: C = 4, c = [0, 6, 16], q = [0, 20, 33, 36], o = [10, 5, 0].
  const Chunked step{{0, 6, 16}, {0, 20, 33, 36}, {0, 4, 8, 10, 12, 16, 20, 22, 25, 26, 30, 33, 36},
                     {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2}, {5, 10, 11}};
  const Scan s = step.run(4);
  ASSERT_FALSE(s.fault) << to_string(*s.fault);
  const I64 offsets{10, 5, 0};
  EXPECT_FALSE(checkpoints(step.batch(), offsets, s, I32{2, 7, -1}));
  const auto fault = checkpoints(step.batch(), offsets, s, I32{2, 8, -1});
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "row 1's checkpoint (chunk 8) holds the state after 12 tokens of row 1; it claims the state after "
                         "11 tokens of row 1");
  ASSERT_TRUE(checkpoints(step.batch(), offsets, s, I32{2, 7, 11}));
}

TEST(TheKernelsView, ReadsMambaSsmsChunkIndicesAsThePackedGridsPieces) {
  // C = 4, q = [0, 3, 3, 9, 16]: chunk_indices [0, 0, 1, 2, 2, 3], chunk_offsets [0, 3, 0, 0, 1, 0].
  const I64 q{0, 3, 3, 9, 16};
  const I32 indices{0, 0, 1, 2, 2, 3}, offsets{0, 3, 0, 0, 1, 0};
  ThreeArrayStorage storage;
  ASSERT_FALSE(read_chunk_indices({{}, q}, 4, {indices, offsets}, storage));
  EXPECT_EQ(storage.cu_chunk_seqlen, (I32{0, 3, 4, 8, 9, 12, 16}));
  EXPECT_EQ(storage.seq_idx, (I32{0, 2, 2, 2, 3, 3}));
  EXPECT_EQ(storage.last_chunk_indices, (I32{0, -1, 3, 5}));
  EXPECT_FALSE(scan({{}, q}, 4, storage.view()).fault);
  // A piece that runs across a row start runs the next row's tokens from this row's state.
  const I32 no_cut_indices{0, 1, 2, 3}, no_cut_offsets{0, 0, 0, 0};
  ASSERT_FALSE(read_chunk_indices({{}, q}, 4, {no_cut_indices, no_cut_offsets}, storage));
  const Scan s = scan({{}, q}, 4, storage.view());
  ASSERT_TRUE(s.fault);
  EXPECT_EQ(s.fault->what, "chunk 0 runs packed tokens 0..3 as row 0, but packed token 3 is row 2's: its state is BAD");
}

TEST(TheKernelsView, RunsFlasPairsAsEachSequencesPiecesInOrder) {
  // C = 4, cu_seqlens = [0, 0, 5, 5, 9]: [[1, 0], [1, 1], [3, 0]], offsets [0, 0, 2, 2, 3].
  const I64 cu{0, 0, 5, 5, 9};
  EXPECT_FALSE(fla_pairs(cu, 4, I32{1, 0, 1, 1, 3, 0}));
  EXPECT_FALSE(fla_state_entries(cu, 4, I32{0, 0, 2, 2, 3}));
  // The older formulation's ids: every chunk after an empty sequence gets an earlier one's.
  const auto older = fla_pairs(cu, 4, I32{0, 0, 0, 1, 1, 0});
  ASSERT_TRUE(older);
  EXPECT_EQ(older->what, "chunk 0 is (0, 0): sequence 0 has 0 pieces of 4 tokens (0 tokens), so it runs none");
  const auto skipped = fla_pairs(cu, 4, I32{1, 0, 3, 0});
  ASSERT_TRUE(skipped);
  EXPECT_EQ(skipped->what, "chunk 1 is (3, 0), sequence 3's tokens 0..3 from the state after 0 of its tokens, where the kernel "
                           "needs sequence 1's token 4: sequence 1's token 4 is not run here, in their order");
  const auto short_pairs = fla_pairs(cu, 4, I32{1, 0, 1, 1});
  ASSERT_TRUE(short_pairs);
  EXPECT_EQ(short_pairs->what, "sequence 3's tokens 0..3 are never run: the chunks end after 2");
  const auto shared = fla_state_entries(cu, 4, I32{0, 0, 1, 1, 2});
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->what, "state entry 1 holds both the state after 4 tokens of sequence 1 and after 0 tokens of sequence 3: "
                          "one of them reads the other's");
}

TEST(TheKernelsView, CoversEveryTokenOnceWithTheConv1dPrograms) {
  // q = [0, 5, 5, 21, 22], M_b = 8: batch_ptr [0, 2, 2, 3], offsets [0, 0, 1, 0], then padding.
  const I64 q{0, 5, 5, 21, 22};
  EXPECT_FALSE(conv1d_programs(q, 8, I32{0, 2, 2, 3, -1, -1}, I32{0, 0, 1, 0, -1, -1}));
  const auto older = conv1d_programs(q, 8, I32{0, 1, 1, 2}, I32{0, 0, 1, 0});
  ASSERT_TRUE(older);
  EXPECT_EQ(older->what, "program 1 is (1, 0): row 1 has 0 pieces of 8 tokens (0 tokens), so it runs none");
  const auto twice = conv1d_programs(q, 8, I32{0, 2, 2, 2, 3}, I32{0, 0, 1, 1, 0});
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->what, "program 3 is (2, 1), row 2's tokens 8..15 from the state after 8 of its tokens, where the kernel "
                         "needs row 3's token 0: row 2's tokens 8..15 run twice");
}

TEST(TheKernelsView, SaysAStateInWords) {
  EXPECT_EQ(to_string(State{1, 8}), "the state after 8 tokens of row 1");
  EXPECT_EQ(to_string(State{0, 1}, "sequence"), "the state after 1 token of sequence 0");
  EXPECT_EQ(to_string(kBad), "a BAD state");
}

// Speculative rows (Part 8's last section), made as vLLM's GDN builder makes
// them: rows with drafts (drafts[r] >= 0) go to the speculative kernel, the
// others to the ordinary ones; each partition's tokens are listed in batch
// order; slots come from the block table's first num_spec + 1 columns.
struct SpeculativeBatch {
  I64 computed, q, drafts, accepted;  // accepted: each row's count at the step before (speculative rows)
  std::vector<I32> block_table;       // per row, num_spec + 1 slots
  std::int64_t num_spec = 2;
  // What the builder gives (filled by build()).
  I32 spec_tokens, spec_q{0}, spec_slots, counts, other_tokens, other_q{0}, other_slots;
  std::int64_t decodes = 0, prefills = 0;

  void build() {
    for (std::size_t r = 0; r + 1 < q.size(); ++r) {
      const bool spec = drafts[r] >= 0;
      I32& tokens = spec ? spec_tokens : other_tokens;
      for (std::int64_t t = q[r]; t < q[r + 1]; ++t) tokens.push_back(static_cast<std::int32_t>(t));
      (spec ? spec_q : other_q).push_back(static_cast<std::int32_t>(tokens.size()));
      if (spec) {
        spec_slots.insert(spec_slots.end(), block_table[r].begin(), block_table[r].begin() + num_spec + 1);
        counts.push_back(static_cast<std::int32_t>(accepted[r]));
      } else {
        other_slots.push_back(block_table[r][0]);
        (q[r + 1] - q[r] == 1 ? decodes : prefills) += 1;
      }
    }
  }
  Batch batch() const { return {computed, q}; }
  SpeculativeKernel speculative() const { return {{spec_tokens, spec_q}, spec_slots, num_spec + 1, counts}; }
  OrdinaryKernels ordinary() const { return {{other_tokens, other_q}, other_slots, decodes, prefills}; }
  std::optional<Fault> run(Slots& slots) const { return speculative_step(batch(), speculative(), ordinary(), slots); }
};

// The batch as vLLM orders it, decodes first: row 0 decodes with 2 drafts (3 tokens, c = 10), row 1 decodes 1
// token without drafts (c = 7), row 2 decodes with 1 draft (c = 20), row 3 prefills 5 tokens from 0. Rows 0
// and 2 accepted 2 and 1 tokens at the step before: their states are in the slots those counts name.
SpeculativeBatch two_kernels() {
  SpeculativeBatch b;
  b.computed = {10, 7, 20, 0};
  b.q = {0, 3, 4, 6, 11};
  b.drafts = {2, -1, 1, -1};
  b.accepted = {2, 0, 1, 0};
  b.block_table = {{100, 101, 102}, {110, 111, 112}, {120, 121, 122}, {130, 131, 132}};
  b.build();
  return b;
}
Slots before_two_kernels() { return {{101, State{0, 10}}, {110, State{1, 7}}, {120, State{2, 20}}}; }

TEST(TheSpeculativeView, RunsEachKernelsRowsFromTheSlotTheirCountNamesAndKeepsAStatePerToken) {
  const auto b = two_kernels();
  Slots slots = before_two_kernels();
  const auto fault = b.run(slots);
  EXPECT_EQ(fault, std::nullopt) << to_string(*fault);
  // Slot j of a speculative row holds (r, c_r + j + 1); an ordinary row's slot its final state.
  EXPECT_EQ(slots.at(100), (State{0, 11}));
  EXPECT_EQ(slots.at(101), (State{0, 12}));
  EXPECT_EQ(slots.at(102), (State{0, 13}));
  EXPECT_EQ(slots.at(110), (State{1, 8}));
  EXPECT_EQ(slots.at(120), (State{2, 21}));
  EXPECT_EQ(slots.at(121), (State{2, 22}));
  EXPECT_EQ(slots.at(130), (State{3, 5}));
  // The next step: row 0 accepted 2 of its 3 tokens, so it has computed 12 and reads column 1.
  SpeculativeBatch next;
  next.computed = {12};
  next.q = {0, 3};
  next.drafts = {2};
  next.accepted = {2};
  next.block_table = {{100, 101, 102}};
  next.build();
  const auto next_fault = next.run(slots);
  EXPECT_EQ(next_fault, std::nullopt) << to_string(*next_fault);
}

TEST(TheSpeculativeView, ReadsNoSlotForACountOfZero) {
  // vLLM #50021 / #48475: a count of 0 read as column -1.
  auto b = two_kernels();
  b.counts[1] = 0;
  Slots slots = before_two_kernels();
  const auto fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->rule, "speculative");
  EXPECT_EQ(fault->row, 2);
  EXPECT_EQ(fault->what, "the speculative kernel's row 1 (row 2) reads its initial state from column -1 of its 3 slots "
                         "(num_accepted_tokens 0), which does not exist: a count is 1 to 3");
}

TEST(TheSpeculativeView, ReadsTheWrongStateWhenTheCountsComeFromTheWrongPartition) {
  // vLLM #55504: the counts of every row, not the speculative rows': row 2 is given row 1's entry.
  auto b = two_kernels();
  b.counts = {static_cast<std::int32_t>(b.accepted[0]), static_cast<std::int32_t>(b.accepted[1] + 2)};
  Slots slots = before_two_kernels();
  const auto fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "the speculative kernel's row 1 runs row 2's tokens 20..21 from slot 121, which no step has "
                         "written; it must hold the state after 20 tokens of row 2 (the slot its accepted count names)");
}

TEST(TheSpeculativeView, LosesTheTokensOfARowNoKernelRunsOrThatTheDecodeKernelCutsToOne) {
  auto b = two_kernels();
  b.prefills = 0;  // the prefill counted out: row 1's tokens never run
  Slots slots = before_two_kernels();
  auto fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "packed tokens 6..10 never run by any kernel: row 3's tokens 0..4 are lost");
  b = two_kernels();
  b.decodes = 2;  // the prefill counted as a decode: the decode kernel runs one of its 5 tokens
  b.prefills = 0;
  slots = before_two_kernels();
  fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "the decode kernel's row 1 is row 3, with 5 tokens: the decode kernel runs one, the rest "
                         "(tokens 1..4) never run");
  b = two_kernels();
  b.prefills = 2;  // a row counted twice
  slots = before_two_kernels();
  fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "the ordinary kernels are told of 1 decode and 2 prefills; their partition has 2 rows: the "
                         "kernels run rows that are not there");
}

TEST(TheSpeculativeView, RunsATokenListedTwiceTwiceAndOneOfAnotherRowFromABadState) {
  auto b = two_kernels();
  b.other_tokens.insert(b.other_tokens.begin() + 1, 5);  // row 2's last token also run by the prefill kernel
  for (std::size_t k = 2; k < b.other_q.size(); ++k) ++b.other_q[k];
  Slots slots = before_two_kernels();
  auto fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "the prefill kernel's row 1 runs packed token 6 (row 3's token at 0) after packed token 5 (row "
                         "2's token at 21): from the state after 22 tokens of row 2, its state is BAD");
  b = two_kernels();
  b.other_tokens.insert(b.other_tokens.begin(), 3);  // row 1's decode listed twice, from the same slot
  b.other_q.insert(b.other_q.begin() + 1, 1);
  for (std::size_t k = 2; k < b.other_q.size(); ++k) ++b.other_q[k];
  b.other_slots.insert(b.other_slots.begin(), 110);
  ++b.decodes;
  slots = before_two_kernels();
  fault = b.run(slots);
  ASSERT_TRUE(fault);
  // Run twice from one slot: the two rows of one launch also both write it, which is found first.
  EXPECT_EQ(fault->what, "the decode kernel's row 0 and the decode kernel's row 1 both write slot 110 in one launch of "
                         "the ordinary kernels: it holds the state after 8 tokens of row 1 or the state after 8 tokens "
                         "of row 1, whichever lands last");
  b = two_kernels();
  std::swap(b.spec_tokens[0], b.spec_tokens[1]);
  slots = before_two_kernels();
  fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->rule, "speculative");
  EXPECT_EQ(fault->row, 0);
}

// Generated: random batches over two steps, made as the builder makes them, are right; any other count a
// speculative row is given at the second step names a slot holding another state (or none): a fault, every time.
TEST(TheSpeculativeView, PassesTheBuildersMetadataAcrossStepsAndFaultsEveryOtherCount) {
  std::mt19937_64 random(20261207);
  const auto draw = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(random);
  };
  int counts_tried = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t num_spec = draw(1, 4), rows = draw(1, 6);
    SpeculativeBatch first;
    first.num_spec = num_spec;
    first.q = {0};
    Slots slots;
    // Decodes first (with drafts or not), then prefills, as vLLM orders the batch.
    std::vector<int> kind(static_cast<std::size_t>(rows));
    for (auto& k : kind) k = static_cast<int>(draw(0, 2));  // 0: speculative, 1: decode, 2: prefill
    std::sort(kind.begin(), kind.end(), [](int a, int b) { return (a == 2) < (b == 2); });
    for (std::int64_t r = 0; r < rows; ++r) {
      const int k = kind[static_cast<std::size_t>(r)];
      const std::int64_t c = k == 2 ? draw(0, 1) * draw(1, 50) : draw(1, 1000);
      const std::int64_t drafts = k == 0 ? draw(0, num_spec) : -1;
      const std::int64_t n = k == 0 ? 1 + drafts : k == 1 ? 1 : draw(2, 40);
      first.computed.push_back(c);
      first.q.push_back(first.q.back() + n);
      first.drafts.push_back(drafts);
      first.accepted.push_back(k == 0 ? draw(1, num_spec + 1) : 0);
      I32 table;
      for (std::int64_t j = 0; j <= num_spec; ++j) table.push_back(static_cast<std::int32_t>(1000 * r + j));
      first.block_table.push_back(table);
      // Its state before the step, where the builder's metadata says it is read from.
      if (c > 0) slots[table[static_cast<std::size_t>(k == 0 ? first.accepted.back() - 1 : 0)]] = State{r, c};
    }
    first.build();
    auto fault = first.run(slots);
    ASSERT_EQ(fault, std::nullopt) << to_string(*fault);
    // Step two: every row decodes on, each speculative row having accepted some of its tokens.
    SpeculativeBatch second;
    second.num_spec = num_spec;
    second.q = {0};
    second.block_table = first.block_table;
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const std::int64_t ran = first.q[i + 1] - first.q[i];
      const bool spec = first.drafts[i] >= 0;
      const std::int64_t accepted = spec ? draw(1, ran) : ran;
      second.computed.push_back(first.computed[i] + accepted);
      second.accepted.push_back(spec ? accepted : 0);
      second.drafts.push_back(spec ? draw(0, num_spec) : -1);
      second.q.push_back(second.q.back() + (spec ? 1 + second.drafts.back() : 1));
    }
    second.build();
    Slots after = slots;
    fault = second.run(after);
    ASSERT_EQ(fault, std::nullopt) << to_string(*fault);
    for (std::size_t k = 0; k < second.counts.size(); ++k) {
      for (std::int32_t other = 0; other <= static_cast<std::int32_t>(num_spec) + 1; ++other) {
        if (other == second.counts[k]) continue;
        SpeculativeBatch wrong = second;
        wrong.counts[k] = other;
        Slots tried = slots;
        EXPECT_TRUE(wrong.run(tried)) << "count " << other << " instead of " << second.counts[k] << ", trial " << trial;
        ++counts_tried;
      }
    }
  }
  EXPECT_GT(counts_tried, 300);
}

// One speculative row over three steps (num_spec 2): step 1 runs 3 tokens and accepts 1; step 2 runs 1
// token; step 3 claims 2 accepted. Slot 101 still holds the state after the draft token that step 1 ran at
// position 11 and the row rejected: not the row's state after 12 tokens, whatever position it names.
TEST(TheSpeculativeView, ReadsARejectedDraftsStateAsBad) {
  Slots slots{{100, State{0, 10}}};
  const auto step = [&](std::int64_t computed, std::int64_t tokens, std::int32_t count) {
    SpeculativeBatch b;
    b.computed = {computed};
    b.q = {0, tokens};
    b.drafts = {tokens - 1};
    b.accepted = {count};
    b.block_table = {{100, 101, 102}};
    b.build();
    return b.run(slots);
  };
  ASSERT_EQ(step(10, 3, 1), std::nullopt);
  ASSERT_EQ(step(11, 1, 1), std::nullopt);
  const auto fault = step(12, 1, 2);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "the speculative kernel's row 0 runs row 0's token 12 from slot 101, which holds a BAD state; "
                         "it must hold the state after 12 tokens of row 0 (the slot its accepted count names)");
}

TEST(TheSpeculativeView, FaultsTwoRowsOfOneLaunchThatTouchOneSlot) {
  // Row 0 keeps its third token's state in slot 201, which row 1 (one token, count 2) reads in the same launch.
  SpeculativeBatch b;
  b.computed = {10, 20};
  b.q = {0, 3, 4};
  b.drafts = {2, 0};
  b.accepted = {2, 2};
  b.block_table = {{100, 101, 201}, {200, 201, 203}};
  b.build();
  Slots slots{{101, State{0, 10}}, {201, State{1, 20}}};
  auto fault = b.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "the speculative kernel's row 1 reads slot 201, which the speculative kernel's row 0 writes in "
                         "the same launch of the speculative kernel: it reads the state after 20 tokens of row 1 or the "
                         "state after 13 tokens of row 0, whichever comes first");
  // A decode and a fresh prefill given one slot.
  SpeculativeBatch shared;
  shared.computed = {7, 0};
  shared.q = {0, 1, 6};
  shared.drafts = {-1, -1};
  shared.accepted = {0, 0};
  shared.block_table = {{110, 0, 0}, {110, 0, 0}};
  shared.build();
  slots = {{110, State{0, 7}}};
  fault = shared.run(slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "the decode kernel's row 0 and the prefill kernel's row 1 both write slot 110 in one launch of "
                         "the ordinary kernels: it holds the state after 8 tokens of row 0 or the state after 5 tokens "
                         "of row 1, whichever lands last");
}

TEST(TheSpeculativeView, RefusesASlotWidthWhoseProductWrapsAndSaysAGapPerRow) {
  const I64 computed{1, 1, 1, 1}, q{0, 1, 2, 3, 4};
  const I32 tokens{0, 1, 2, 3}, spec_q{0, 1, 2, 3, 4}, counts{1, 1, 1, 1}, none{}, other_q{0};
  Slots slots;
  auto fault = speculative_step({computed, q}, {{tokens, spec_q}, none, std::int64_t{1} << 62, counts},
                                {{none, other_q}, none, 0, 0}, slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->rule, "speculative");
  // A gap over two rows names the first row's tokens, in the grammar of their count.
  const I64 c2{7, 0}, q2{0, 1, 6};
  const I32 in_order_q{0, 1, 6}, two_slots{110, 111};
  fault = speculative_step({c2, q2}, {{none, I32{0}}, none, 1, none}, {{none, in_order_q, true}, two_slots, 0, 0}, slots);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->what, "packed token 0 never run by any kernel: row 0's token 7 is lost");
}

}  // namespace
}  // namespace chunkmeta::kernel_view
