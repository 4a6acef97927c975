// chunkmeta::conv1d: the causal conv1d kernel's program map
// (specs/conv1d_program_map), which every Mamba, gated-delta-net and
// short-conv layer's conv1d over prefill tokens starts its programs by: one
// program per block of block_m tokens of a row,
//   nums                    B entries, ceil(n_i / block_m) programs of row i;
//   batch_ptr               the row of each program, in row order;
//   token_chunk_offset_ptr  its block within the row: program p covers tokens
//                           [q[r] + block_m o, min(q[r] + block_m (o + 1), q[r + 1]))
//                           of row r = batch_ptr[p], o = token_chunk_offset_ptr[p].
// The pure form has tot = sum(nums) programs; the writer into the engine's
// persistent buffers pads the rest of batch_ptr and token_chunk_offset_ptr
// with -1 (vLLM's PAD_SLOT_ID), which the kernel reads as "no work".
// Total functions: bad input yields an Error naming the field, the index and
// the rule, never an exception or an abort.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta::conv1d {

// vLLM's block length (BLOCK_M in compute_causal_conv1d_metadata).
inline constexpr std::int64_t kDefaultBlockM = 8;
// What the writer pads batch_ptr and token_chunk_offset_ptr with (PAD_SLOT_ID).
inline constexpr std::int32_t kPadding = -1;

// The inputs as the engine holds them: query_start_loc (B + 1 cumulative
// offsets, int32 or int64, read in place) and the block length.
template <typename Int>
struct BasicView {
  std::span<const Int> query_start_loc;
  std::int64_t block_m = kDefaultBlockM;
};
using View32 = BasicView<std::int32_t>;
using View64 = BasicView<std::int64_t>;

// Sizes of the outputs: B entries of nums, tot programs (entries of batch_ptr
// and of token_chunk_offset_ptr).
struct Sizes {
  std::int64_t rows = 0;
  std::int64_t programs = 0;
  friend bool operator==(const Sizes&, const Sizes&) = default;
};

// The rules, in the order they are checked and the first broken one returned:
//   1. block_m in [1, 2^31-1] (not_positive, value_too_large);
//   2. query_start_loc has at least one entry (length_mismatch, index 0);
//   3. query_start_loc[0..B]: each in [0, 2^31-1] (negative_value,
//      value_too_large) and not below the one before
//      (query_start_loc_decreasing), entry by entry;
//   4. tot against limits.max_chunks (output_too_large, field batch_ptr).
std::optional<Error> validate(const View32& view, const Limits& limits = {}) noexcept;
std::optional<Error> validate(const View64& view, const Limits& limits = {}) noexcept;

// Validates and returns the exact output sizes.
Result<Sizes> output_sizes(const View32& view, const Limits& limits = {}) noexcept;
Result<Sizes> output_sizes(const View64& view, const Limits& limits = {}) noexcept;

// The largest outputs of any valid input with at most `max_tokens` tokens and
// `max_rows` rows: tot <= floor(T / block_m) + min(B, T). vLLM sizes its
// buffers 2 max(1024, tot); a buffer of this size is enough for every step.
Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t block_m = kDefaultBlockM,
                               const Limits& limits = {}) noexcept;

// The three arrays of the pure form.
struct ProgramMap {
  Int32Array nums;
  Int32Array batch_ptr;
  Int32Array token_chunk_offset_ptr;
  friend bool operator==(const ProgramMap&, const ProgramMap&) = default;
};

// vLLM's procedure, step by step (nums by negated floor division, the row
// list repeated, the offsets a range per row): the oracle.
Result<ProgramMap> reference(const View64& view, const Limits& limits = {});

// Production: one pass over query_start_loc. `_into` writes the caller's
// buffers and allocates nothing: nums' first B entries (its rest kept), then
// tot programs into batch_ptr and token_chunk_offset_ptr and kPadding into
// every entry after them (the engine's persistent buffers, as its kernel
// expects). A buffer too short is output_buffer_too_small with the size it
// needs; on an error the buffers' contents are not defined.
struct Buffers {
  std::span<std::int32_t> nums;
  std::span<std::int32_t> batch_ptr;
  std::span<std::int32_t> token_chunk_offset_ptr;
};
Result<Sizes> program_map_into(const View32& view, const Buffers& out, const Limits& limits = {}) noexcept;
Result<Sizes> program_map_into(const View64& view, const Buffers& out, const Limits& limits = {}) noexcept;

// The same, returning the pure form (arrays of exactly their size).
Result<ProgramMap> program_map(const View32& view, const Limits& limits = {});
Result<ProgramMap> program_map(const View64& view, const Limits& limits = {});

}  // namespace chunkmeta::conv1d
