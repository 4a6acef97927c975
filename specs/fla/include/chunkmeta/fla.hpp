// chunkmeta::fla: flash-linear-attention's chunk indices and offsets (specs/fla),
// the metadata every gated-delta-net / KDA kernel over a packed
// varlen batch indexes its chunks by:
//   chunk_indices  one row (i, j) per chunk: sequence i, its j-th chunk of C
//                  tokens from the sequence's own start (an empty sequence has
//                  none and keeps its own index); of cu_seqlens' integer type;
//   chunk_offsets  B + 1 entries, the exclusive prefix sum of the chunk counts
//                  ceil(len_i / C); int64.
// Total functions, like the Mamba API: bad input yields an Error naming the
// field, the index and the rule, never an exception or an abort.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta::fla {

// The inputs as the engine holds them: cu_seqlens (B + 1 cumulative offsets,
// int32 or int64, read in place) and the chunk size.
template <typename Int>
struct BasicView {
  std::int64_t chunk_size = 1;
  std::span<const Int> cu_seqlens;
};
using View32 = BasicView<std::int32_t>;
using View64 = BasicView<std::int64_t>;

// Sizes of the outputs: N chunk rows (2N entries in chunk_indices) and B + 1 offsets.
struct Sizes {
  std::int64_t chunks = 0;
  std::int64_t offsets = 1;
  friend bool operator==(const Sizes&, const Sizes&) = default;
};

// The rules, in the order they are checked and the first broken one returned:
//   1. chunk_size in [1, 2^31-1] (chunk_size_not_positive, value_too_large);
//   2. cu_seqlens has at least one entry (length_mismatch, index 0);
//   3. cu_seqlens[0..B]: each in [0, 2^31-1] (negative_value, value_too_large)
//      and not below the one before (cu_seqlens_decreasing), entry by entry;
//   4. N against limits.max_chunks (output_too_large, field chunk_indices).
std::optional<Error> validate(const View32& view, const Limits& limits = {});
std::optional<Error> validate(const View64& view, const Limits& limits = {});

// Validates and returns the exact output sizes.
Result<Sizes> output_sizes(const View32& view, const Limits& limits = {});
Result<Sizes> output_sizes(const View64& view, const Limits& limits = {});

// The largest outputs of any valid input with at most `max_tokens` tokens in
// all and `max_sequences` sequences: N <= floor(T / C) + B (a sequence of
// n tokens has ceil(n / C) <= floor(n / C) + 1 chunks, none when n = 0).
Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_sequences, std::int64_t chunk_size,
                               const Limits& limits = {}) noexcept;

// The spec's procedure, a sequence and a chunk at a time: chunk_indices as
// 2N entries (i0, j0, i1, j1, ...) and chunk_offsets, wide. The oracle.
struct Outputs {
  std::vector<std::int64_t> chunk_indices;
  std::vector<std::int64_t> chunk_offsets{0};
  friend bool operator==(const Outputs&, const Outputs&) = default;
};
Result<Outputs> reference(const View64& view, const Limits& limits = {});

// Production: one pass over cu_seqlens, writing into caller buffers and
// allocating nothing. chunk_indices takes 2 * N entries of cu_seqlens' own
// type and returns N; chunk_offsets takes B + 1 int64 entries and returns B + 1.
// A buffer too short is output_buffer_too_small with the size it needs (only
// the meaningful prefix is defined; on an error the buffer's contents are not).
Result<std::int64_t> chunk_indices_into(const View32& view, std::span<std::int32_t> out,
                                        const Limits& limits = {}) noexcept;
Result<std::int64_t> chunk_indices_into(const View64& view, std::span<std::int64_t> out,
                                        const Limits& limits = {}) noexcept;
Result<std::int64_t> chunk_offsets_into(const View32& view, std::span<std::int64_t> out,
                                        const Limits& limits = {}) noexcept;
Result<std::int64_t> chunk_offsets_into(const View64& view, std::span<std::int64_t> out,
                                        const Limits& limits = {}) noexcept;

// The same, returning new arrays of exactly their size.
Result<std::vector<std::int32_t>> chunk_indices(const View32& view, const Limits& limits = {});
Result<std::vector<std::int64_t>> chunk_indices(const View64& view, const Limits& limits = {});
Result<std::vector<std::int64_t>> chunk_offsets(const View32& view, const Limits& limits = {});
Result<std::vector<std::int64_t>> chunk_offsets(const View64& view, const Limits& limits = {});

}  // namespace chunkmeta::fla
