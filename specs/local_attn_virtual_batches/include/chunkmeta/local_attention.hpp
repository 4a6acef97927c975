// chunkmeta::local_attn: the virtual batches of chunked local attention
// (specs/local_attn_virtual_batches). A model whose tokens attend only within
// their attention chunk of A tokens (counted from the sequence's start) runs
// the ordinary varlen kernels over virtual batches: each row's new tokens cut
// at attention-chunk boundaries, each piece a request of its own, in row order:
//   cu_seqlens_q_local         V + 1 entries: the running sum of the pieces' query lengths, from 0;
//   seqlens_k_local            V: each piece's key length (A but for a row's last piece);
//   num_computed_tokens_local  V: key length minus query length;
//   virtual_row                V: the row each piece belongs to;
//   block_start                V: the first block-table column of the piece's keys
//                              (the engine gathers A / P columns from there).
// Total functions: bad input yields an Error naming the field, the index and
// the rule, never an exception or an abort.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "chunkmeta/types.hpp"

namespace chunkmeta::local_attn {

// The inputs as the engine holds them: the attention chunk A, the KV cache's
// page size P (A a multiple of P), query_start_loc (B + 1 cumulative offsets of
// each row's new tokens) and seq_lens (B: each row's tokens in all, the new
// ones included), int32 or int64, read in place.
template <typename Int>
struct BasicView {
  std::int64_t attn_chunk_size = 1;
  std::int64_t block_size = 1;
  std::span<const Int> query_start_loc;
  std::span<const Int> seq_lens;
};
using View32 = BasicView<std::int32_t>;
using View64 = BasicView<std::int64_t>;

// Sizes of the outputs: B rows, V virtual batches (cu_seqlens_q_local has V + 1 entries).
struct Sizes {
  std::int64_t rows = 0;
  std::int64_t virtual_batches = 0;
  friend bool operator==(const Sizes&, const Sizes&) = default;
};

// The rules, in the order they are checked and the first broken one returned:
//   1. attn_chunk_size in [1, 2^31-1] (not_positive, value_too_large);
//   2. block_size in [1, 2^31-1] (not_positive, value_too_large);
//   3. attn_chunk_size a multiple of block_size (not_a_multiple, field attn_chunk_size);
//   4. query_start_loc has at least one entry (length_mismatch, index 0), and
//      seq_lens one per row (length_mismatch, field seq_lens);
//   5. query_start_loc[0] in [0, 2^31-1]; then row by row: query_start_loc[i+1]
//      in [0, 2^31-1] (negative_value, value_too_large), not below the entry
//      before (query_start_loc_decreasing) and above it: every row has new
//      tokens (not_increasing); seq_lens[i] in [0, 2^31-1] and at least the
//      row's new tokens (below_minimum, its bound n_i);
//   6. V against limits.max_chunks (output_too_large, field cu_seqlens_q_local).
std::optional<Error> validate(const View32& view, const Limits& limits = {}) noexcept;
std::optional<Error> validate(const View64& view, const Limits& limits = {}) noexcept;

// Validates and returns the exact output sizes.
Result<Sizes> output_sizes(const View32& view, const Limits& limits = {}) noexcept;
Result<Sizes> output_sizes(const View64& view, const Limits& limits = {}) noexcept;

// The most virtual batches of any valid step with at most `max_tokens` new
// tokens and `max_rows` rows: a row's first piece takes one token, a second
// one more, each further one A more, so V <= B + min(B, T - B) + (T - 2B) / A.
// Engines size their buffers by it (vLLM #49980 sized them by the batch).
Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t attn_chunk_size,
                               std::int64_t block_size, const Limits& limits = {}) noexcept;

// The five outputs.
struct VirtualBatches {
  Int32Array cu_seqlens_q_local{0};
  Int32Array seqlens_k_local;
  Int32Array num_computed_tokens_local;
  Int32Array virtual_row;
  Int32Array block_start;
  friend bool operator==(const VirtualBatches&, const VirtualBatches&) = default;
};

// vLLM's make_local_attention_virtual_batches, its numpy steps ported one by
// one in 64-bit arithmetic: the oracle.
Result<VirtualBatches> reference(const View64& view, const Limits& limits = {});

// Production: one pass per row in closed form. `_into` writes the caller's
// buffers and allocates nothing (V + 1 entries of cu_seqlens_q_local, V of
// each other; entries past them are left as they were). A buffer too short is
// output_buffer_too_small with the size it needs; on an error the buffers'
// contents are not defined.
struct Buffers {
  std::span<std::int32_t> cu_seqlens_q_local;
  std::span<std::int32_t> seqlens_k_local;
  std::span<std::int32_t> num_computed_tokens_local;
  std::span<std::int32_t> virtual_row;
  std::span<std::int32_t> block_start;
};
Result<Sizes> virtual_batches_into(const View32& view, const Buffers& out, const Limits& limits = {}) noexcept;
Result<Sizes> virtual_batches_into(const View64& view, const Buffers& out, const Limits& limits = {}) noexcept;

Result<VirtualBatches> virtual_batches(const View32& view, const Limits& limits = {});
Result<VirtualBatches> virtual_batches(const View64& view, const Limits& limits = {});

// The local block table, gathered from the engine's as vLLM gathers it: for
// virtual batch v, pages = A / P columns from block_start[v] of row
// virtual_row[v], each column clipped to the table's last. `block_table` is
// row-major, `rows` x `columns`; `out` takes V x pages entries and V is
// returned. Rules: attn_chunk_size and block_size as above; columns >= 1
// (not_positive) and block_table's size rows x columns (length_mismatch);
// virtual_row and block_start of one length (length_mismatch, field
// block_start); each virtual_row in [0, rows) (negative_value, value_too_large
// with its bound rows - 1); each block_start at least 0 (negative_value);
// out's size (output_buffer_too_small, field block_table_local).
Result<std::int64_t> gather_block_table(std::int64_t attn_chunk_size, std::int64_t block_size,
                                        std::span<const std::int32_t> block_table, std::int64_t rows,
                                        std::int64_t columns, std::span<const std::int32_t> virtual_row,
                                        std::span<const std::int32_t> block_start,
                                        std::span<std::int32_t> out) noexcept;

}  // namespace chunkmeta::local_attn
