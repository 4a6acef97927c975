// chunkmeta::checkpoint: the prefix-cache checkpoint plan of Mamba models
// (specs/mamba_checkpoint_plan): for each row of a prefill batch, the cache
// blocks its initial state is read from and its new tokens touch, and which
// chunk's final state (Mamba's chunk metadata, <chunkmeta/chunkmeta.hpp>) is
// saved into which block:
//   block_idx_last_computed_token[i]   max(ceil(c_i / M) - 1, 0)
//   block_idx_first_scheduled_token[i] floor(c_i / M)
//   block_idx_last_scheduled_token[i]  max(ceil(s_i / M) - 1, 0), s_i = c_i + n_i
//   write_row, write_block, write_chunk the write plan: per row with new tokens,
//       one entry per block boundary strictly inside (c_i, s_i), then the final one.
// Total functions: invalid input is an Error naming field, index and rule.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "chunkmeta/types.hpp"

namespace chunkmeta::checkpoint {

// One step's batch: Mamba's workload (chunk size C, computed tokens c, the
// offsets q of each row's new tokens) and the cache's block size M, a
// multiple of C. Int is the engine arrays' type (int32) or int64.
template <typename Int>
struct BasicView {
  std::int64_t chunk_size = 1;
  std::int64_t block_size = 1;
  std::span<const Int> num_computed_tokens;
  std::span<const Int> query_start_loc;
};
using View32 = BasicView<std::int32_t>;
using View64 = BasicView<std::int64_t>;

// Entries of the outputs: `rows` (B) in each per-row array, `writes` (W) in each write array.
struct Sizes {
  std::int64_t rows = 0;
  std::int64_t writes = 0;
  friend bool operator==(const Sizes&, const Sizes&) = default;
};

// The six outputs, int32 as the engine uploads them.
struct Plan {
  Int32Array block_idx_last_computed_token;
  Int32Array block_idx_first_scheduled_token;
  Int32Array block_idx_last_scheduled_token;
  Int32Array write_row;
  Int32Array write_block;
  Int32Array write_chunk;
  friend bool operator==(const Plan&, const Plan&) = default;
};

// Caller-provided storage for plan_into: each per-row buffer at least B
// entries, each write buffer at least W (output_sizes, or max_output_sizes
// for buffers sized once).
struct Buffers {
  std::span<std::int32_t> block_idx_last_computed_token;
  std::span<std::int32_t> block_idx_first_scheduled_token;
  std::span<std::int32_t> block_idx_last_scheduled_token;
  std::span<std::int32_t> write_row;
  std::span<std::int32_t> write_block;
  std::span<std::int32_t> write_chunk;
};

// Mamba's domain and its rules first, then block_size: at least 1
// (not_positive), at most 2^31-1 (value_too_large), a multiple of chunk_size
// (not_a_multiple); then the cap on Mamba's chunks (output_too_large).
std::optional<Error> validate(const View64& view, const Limits& limits = {}) noexcept;
std::optional<Error> validate(const View32& view, const Limits& limits = {}) noexcept;

// B and W for a valid view, else its error.
Result<Sizes> output_sizes(const View64& view, const Limits& limits = {}) noexcept;
Result<Sizes> output_sizes(const View32& view, const Limits& limits = {}) noexcept;

// The contract's procedure, step by step: Mamba's reference chunk metadata,
// then each block boundary's chunk found by walking the row's chunks.
Result<Plan> reference(const View64& view, const Limits& limits = {});

// The fast implementation: one pass, each chunk index in closed form.
Result<Plan> plan(const View64& view, const Limits& limits = {});
Result<Plan> plan(const View32& view, const Limits& limits = {});

// The same into caller buffers, without allocating: the sizes written, or
// the error (output_buffer_too_small names the first short buffer and the
// entries it needs). Entries past the sizes are left as they were.
Result<Sizes> plan_into(const View64& view, const Buffers& out, const Limits& limits = {}) noexcept;
Result<Sizes> plan_into(const View32& view, const Buffers& out, const Limits& limits = {}) noexcept;

// Sizes that hold every step of an engine whose steps have at most
// max_tokens new tokens and max_rows rows, at chunk_size and block_size:
// B = max_rows, and W at most one write per block boundary crossed plus one
// per row.
Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size,
                               std::int64_t block_size) noexcept;

}  // namespace chunkmeta::checkpoint
