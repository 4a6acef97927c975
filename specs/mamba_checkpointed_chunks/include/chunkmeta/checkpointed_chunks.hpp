// chunkmeta::checkpointed_chunks: Mamba's chunk metadata also cut at each
// row's internal prefill checkpoint (specs/mamba_checkpointed_chunks, vLLM
// #57329's _compute_chunk_metadata(..., checkpoint_offsets_p)). Row i's chunks
// are the pieces of its absolute token range [c_i, c_i + n_i) cut at every
// multiple of C inside it and, when o_i > 0, at c_i + o_i; a row without new
// tokens keeps Part 1's convention (an off-grid one has its empty realigning
// chunk). Outputs: Mamba's three arrays and checkpoint_chunk_indices[i], the
// chunk that ends at c_i + o_i (-1 when o_i = 0). Equivalently a row with a
// checkpoint is chunked as two rows of Mamba's: (c_i, o_i), then
// (c_i + o_i, n_i - o_i).
// Total functions: invalid input is an Error naming field, index and rule.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "chunkmeta/types.hpp"

namespace chunkmeta::checkpointed_chunks {

// One step's batch: Mamba's workload and one checkpoint offset per row,
// counted from the row's query start (0: no checkpoint). Int is the engine
// arrays' type (int32) or int64.
template <typename Int>
struct BasicView {
  std::int64_t chunk_size = 1;
  std::span<const Int> num_computed_tokens;
  std::span<const Int> query_start_loc;
  std::span<const Int> checkpoint_offsets;
};
using View32 = BasicView<std::int32_t>;
using View64 = BasicView<std::int64_t>;

// Mamba's three sizes (K + 1, K, B), and B for checkpoint_chunk_indices.
struct Sizes {
  OutputSizes chunks;
  std::int64_t checkpoints = 0;
  friend bool operator==(const Sizes&, const Sizes&) = default;
};

// The four outputs, int32 as the engine uploads them.
struct Chunks {
  Int32Array cu_chunk_seqlen{0};
  Int32Array seq_idx;
  Int32Array last_chunk_indices;
  Int32Array checkpoint_chunk_indices;
  friend bool operator==(const Chunks&, const Chunks&) = default;
};

// Caller-provided storage for chunks_into, each at least its size (output_sizes).
struct Buffers {
  std::span<std::int32_t> cu_chunk_seqlen;
  std::span<std::int32_t> seq_idx;
  std::span<std::int32_t> last_chunk_indices;
  std::span<std::int32_t> checkpoint_chunk_indices;
};

// Mamba's domain and its rules first; then checkpoint_offsets: B entries
// (length_mismatch), each at least 0 (negative_value) and, when above 0,
// below its row's new tokens (value_too_large, bound n_i - 1: vLLM's loop
// emits an empty chunk for o_i = n_i, which its planner never asks for); then
// the cap on the chunks, checkpoints' extra chunks included (output_too_large).
std::optional<Error> validate(const View64& view, const Limits& limits = {}) noexcept;
std::optional<Error> validate(const View32& view, const Limits& limits = {}) noexcept;

// The sizes for a valid view, else its error.
Result<Sizes> output_sizes(const View64& view, const Limits& limits = {}) noexcept;
Result<Sizes> output_sizes(const View32& view, const Limits& limits = {}) noexcept;

// Sizes that hold the outputs of every step of an engine whose steps have at
// most max_tokens new tokens and max_rows rows at chunk_size: Mamba's bound,
// and one chunk more per row (a checkpoint adds at most one).
Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size) noexcept;

// The contract's definition, step by step: each row's cut points gathered
// (multiples of C inside the row, the checkpoint), sorted, and the pieces
// between them emitted.
Result<Chunks> reference(const View64& view, const Limits& limits = {});

// The fast implementation: each row as Mamba's one or two rows, in closed form.
Result<Chunks> chunks(const View64& view, const Limits& limits = {});
Result<Chunks> chunks(const View32& view, const Limits& limits = {});

// The same into caller buffers: validates, allocates nothing, writes each
// output's prefix and returns the sizes written (output_buffer_too_small
// names the first short buffer, nothing written).
Result<Sizes> chunks_into(const View64& view, const Buffers& out, const Limits& limits = {}) noexcept;
Result<Sizes> chunks_into(const View32& view, const Buffers& out, const Limits& limits = {}) noexcept;

}  // namespace chunkmeta::checkpointed_chunks
