// The kernels' view (SPEC Part 8): what a chunked kernel and the prefix cache
// compute from host metadata, in token positions. A state names its own
// position, "row r after its first p tokens"; running a row's token at
// position p on (r, p) gives (r, p + 1) and anything else gives BAD. Judged
// so, metadata is right or wrong whatever formulation made it: a fault is
// said in words ("chunk 3 runs row 1's tokens at 9..12 from the state after 8
// tokens of row 1"). Exact and O(chunks + rows + writes), never per token
// (values reach 2^31). Depends on nothing else of the project: any spec's
// outputs, and any formulation without a reference, are read into these forms.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace chunkmeta::kernel_view {

// Row `row` after its first `tokens` tokens (absolute: computed tokens count), or BAD (row < 0).
struct State {
  std::int64_t row = -1;
  std::int64_t tokens = 0;
  bool bad() const { return row < 0; }
  friend bool operator==(const State&, const State&) = default;
};
inline constexpr State kBad{};
// "the state after 8 tokens of row 1", "a BAD state" (`unit`: "row", "sequence").
std::string to_string(State state, const char* unit = "row");
// "1 chunk", "3 chunks", "2 entries": how every fault counts things.
std::string count_words(std::int64_t count, const std::string& noun);

// The first thing a kernel or the cache gets wrong. `rule` names the property
// broken ("kernel-adequate", "cache-adequate", "checkpoint", ...); `what` says it.
struct Fault {
  std::string rule;
  std::string what;
  std::int64_t row = -1;    // -1: not one row's
  std::int64_t chunk = -1;  // the chunk, piece, program or write at fault; -1: none
  friend bool operator==(const Fault&, const Fault&) = default;
};
std::string to_string(const Fault& fault);  // "kernel-adequate: chunk 3 runs ..."

// The batch a step runs: each row's computed tokens c (empty: none, every row
// starts at 0) and its packed offsets q (B + 1 entries; only differences are read).
struct Batch {
  std::span<const std::int64_t> computed;
  std::span<const std::int64_t> query_start_loc;
  std::size_t rows() const { return query_start_loc.empty() ? 0 : query_start_loc.size() - 1; }
  std::int64_t computed_of(std::size_t row) const { return computed.empty() ? 0 : computed[row]; }
  std::int64_t tokens_of(std::size_t row) const { return query_start_loc[row + 1] - query_start_loc[row]; }
};

// Mamba-2's chunked scan on the three-array form (Parts 1, 6, 7): chunk k runs
// packed tokens cu[k] .. cu[k+1] - 1 as row seq_idx[k], from the previous
// chunk's end state when it is the same row's, else from the row's initial
// state (r, c_r); row r's final state is ends[last[r]].
struct ThreeArrays {
  std::span<const std::int32_t> cu_chunk_seqlen;
  std::span<const std::int32_t> seq_idx;
  std::span<const std::int32_t> last_chunk_indices;
};
struct Scan {
  std::vector<State> ends;      // h[k]: the state at each chunk's end (as far as the scan got)
  std::optional<Fault> fault;   // the first fault, in chunk order, then row order
};
// Kernel-adequate: cu covers [0, T) in order, every chunk holds at most C
// tokens, no chunk's state is BAD, every row with tokens ends at (r, c_r + n_r).
Scan scan(const Batch& batch, std::int64_t chunk_size, const ThreeArrays& chunks);
// Cache-adequate for block size M (after an adequate scan): for every row and
// every multiple m of M with c_r < m < c_r + n_r, a chunk of row r ends at (r, m).
// `for_every_multiple`: M is the chunk size standing for every block size that is a multiple of it (said so).
std::optional<Fault> cache_adequate(const Batch& batch, std::int64_t block_size, const ThreeArrays& chunks,
                                    const Scan& scanned, bool for_every_multiple = false);

// mamba_ssm's chunk-indices form (Part 7): piece k starts at packed token
// chunk_indices[k] C + chunk_offsets[k] and runs to the next piece's start
// (the last to T), as the row whose span holds its start. Read into the
// three-array form (`storage` keeps its arrays), or the fault that stops that.
struct ChunkIndices {
  std::span<const std::int32_t> chunk_indices;
  std::span<const std::int32_t> chunk_offsets;
};
struct ThreeArrayStorage {
  std::vector<std::int32_t> cu_chunk_seqlen, seq_idx, last_chunk_indices;
  ThreeArrays view() const { return {cu_chunk_seqlen, seq_idx, last_chunk_indices}; }
};
std::optional<Fault> read_chunk_indices(const Batch& batch, std::int64_t chunk_size, const ChunkIndices& pieces,
                                        ThreeArrayStorage& storage);

// FLA's chunked state passing (Part 2): each (i, j) of `chunk_indices` (pairs,
// flattened) runs piece j of sequence i, [cu[i] + jC, min(cu[i] + (j+1)C, cu[i+1])),
// from the state after jC tokens of sequence i. Adequate when the pairs are,
// in order, exactly each sequence's pieces.
std::optional<Fault> fla_pairs(std::span<const std::int64_t> cu_seqlens, std::int64_t chunk_size,
                               std::span<const std::int32_t> pairs);
// ... and `chunk_offsets` (B + 1): the state entry chunk_offsets[i] + j holds
// the state at piece j of sequence i's start; adequate when every entry a
// piece uses lies in [0, chunk_offsets[B]) and no two pieces share one.
std::optional<Fault> fla_state_entries(std::span<const std::int64_t> cu_seqlens, std::int64_t chunk_size,
                                       std::span<const std::int32_t> chunk_offsets);

// The causal conv1d programs (Part 5): program p covers row batch_ptr[p]'s
// tokens [o M_b, min((o + 1) M_b, n_r)), o = token_chunk_offset_ptr[p]; a
// program of row -1 (vLLM's padding) does nothing. Adequate when the programs
// cover every token once, in row order.
std::optional<Fault> conv1d_programs(std::span<const std::int64_t> query_start_loc, std::int64_t block_m,
                                     std::span<const std::int32_t> batch_ptr,
                                     std::span<const std::int32_t> token_chunk_offset_ptr);

// The prefix cache (Part 3): a write (r, b, k) stores ends[k] into row r's
// block b, which claims the state after min((b + 1) M, c_r + n_r) tokens of
// row r (a block past the row's end claims none). Right when, after the writes
// in order (a later one replaces an earlier), every block written holds its
// claim and every block this step reaches (c_r < (b + 1) M, b M < c_r + n_r,
// n_r > 0) was written. The next step
// reads row r's initial state from block `read_blocks[r]`: right when it holds
// (r, c_r) (the block the step that computed c_r tokens wrote last), for every
// row with c_r > 0.
struct WritePlan {
  std::span<const std::int32_t> rows, blocks, chunks;
};
// The states at the chunks' ends a write stores: the scan's (chunks under
// judgement), or those of chunks known kernel-adequate for the batch (a
// reference's, the truth a plan is judged against), each read on demand in
// O(1): a plan writes a few of many chunks, and they need no scan.
class ChunkEnds {
 public:
  ChunkEnds(const Scan& scanned) : scanned_(&scanned) {}  // NOLINT: a scan is its ends (viewed, as a span views)
  ChunkEnds(const Batch& batch, const ThreeArrays& adequate) : batch_(batch), adequate_(adequate) {}
  std::size_t size() const { return scanned_ != nullptr ? scanned_->ends.size() : adequate_.seq_idx.size(); }
  State operator[](std::size_t chunk) const;

 private:
  const Scan* scanned_ = nullptr;
  Batch batch_{};  // views, as the arrays: a copy costs two spans
  ThreeArrays adequate_{};
};
std::optional<Fault> cache_writes(const Batch& batch, std::int64_t block_size, const ChunkEnds& ends,
                                  const WritePlan& writes, std::span<const std::int32_t> read_blocks);

// Internal checkpoints (Part 6): row r's checkpoint chunk holds (r, c_r + o_r)
// when o_r > 0; -1 exactly when o_r = 0.
std::optional<Fault> checkpoints(const Batch& batch, std::span<const std::int64_t> offsets, const Scan& scanned,
                                 std::span<const std::int32_t> checkpoint_chunk_indices);

// Speculative rows (Part 8's last section; vLLM's GDNAttentionMetadataBuilder):
// a step's packed tokens go to two kernels, each running its partition's rows
// on state slots. A slot holds a state (or was never written).
using Slots = std::map<std::int64_t, State>;
// One kernel's share of the batch: it runs packed tokens
// token_index[query_start_loc[k]] .. token_index[query_start_loc[k+1] - 1] as
// its row k, in that order (the batch's packed tokens themselves when
// `all_tokens_in_order`: vLLM's non-speculative partition of a batch without
// drafts, token_index empty).
struct Partition {
  std::span<const std::int32_t> token_index;
  std::span<const std::int32_t> query_start_loc;
  bool all_tokens_in_order = false;
  std::size_t rows() const { return query_start_loc.empty() ? 0 : query_start_loc.size() - 1; }
};
// The speculative kernel: its row k reads its initial state from slot
// state_indices[k][num_accepted_tokens[k] - 1] (the count its row accepted at
// the step before) and writes the state after its j-th token (from 0) to slot
// state_indices[k][j]; `slots_per_row` = num_spec + 1 columns. The other
// kernel: its row k reads slot state_indices[k] (a row with computed tokens;
// one with none starts from its zero state) and writes its final state there;
// its first `decodes` rows are run by the decode kernel, one token each, and
// the next `prefills` by the prefill kernel (rows past them are not run).
struct SpeculativeKernel {
  Partition tokens;
  std::span<const std::int32_t> state_indices;
  std::int64_t slots_per_row = 1;
  std::span<const std::int32_t> num_accepted_tokens;
};
struct OrdinaryKernels {
  Partition tokens;
  std::span<const std::int32_t> state_indices;
  std::int64_t decodes = 0, prefills = 0;
};
// Right when every packed token of `batch` is run exactly once, by one kernel,
// from the state before it (its row's, after the tokens before it; the first
// of a kernel row from the slot it reads, which must hold (r, c_r)), and no two
// rows of one launch touch a slot one of them writes (they run side by side).
// `slots` holds the states before the step and is left with those after it,
// written launch by launch (speculative first). A slot holding a row's state
// past its computed tokens holds a rejected draft's: BAD. Slots name states by
// batch row: a caller whose rows move between steps renumbers them. The batch
// is taken as valid (computed has B entries or none, q non-decreasing); a row
// with no computed tokens starts from its zero state in the ordinary kernels
// (vLLM's prefill path zeroes it; its decode kernel is assumed to be given a
// zeroed slot). O(rows + listed tokens + slots held). The first fault, in words.
std::optional<Fault> speculative_step(const Batch& batch, const SpeculativeKernel& speculative,
                                      const OrdinaryKernels& ordinary, Slots& slots);

}  // namespace chunkmeta::kernel_view
