// chunkmeta::packed_grid: the field's other formulation of Mamba-2's chunks
// (specs/mamba_packed_grid, SPEC Part 7): the pieces of the packed batch
// [0, T) cut at every multiple of C and at every row start q[i] (0 < q[i] <
// T), with no realignment for computed tokens; a row without tokens adds no
// piece. Two output forms of the same pieces:
//   mamba.packed_grid (vLLM's compute_varlen_chunk_metadata, its kernel tests'):
//     cu_chunk_seqlens (the starts, then T), last_chunk_indices (row i's last
//     piece, -1 for a row without tokens), seq_idx (each piece's row);
//   mamba_ssm.chunk_indices (SGLang's Mamba2Metadata, TensorRT-LLM's
//     cu_seqlens_to_chunk_indices_offsets): chunk_indices[k] = floor(start_k / C),
//     chunk_offsets[k] = start_k mod C.
// Total functions: invalid input is an Error naming field, index and rule.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "chunkmeta/types.hpp"

namespace chunkmeta::packed_grid {

// A step's batch as these engines see it: the chunk size and the cumulative
// offsets of each row's tokens in the packed batch (q[0] = 0).
template <typename Int>
struct BasicView {
  std::int64_t chunk_size = 1;
  std::span<const Int> query_start_loc;
};
using View32 = BasicView<std::int32_t>;
using View64 = BasicView<std::int64_t>;

// K pieces and B rows.
struct Sizes {
  std::int64_t pieces = 0;
  std::int64_t rows = 0;
  friend bool operator==(const Sizes&, const Sizes&) = default;
};

// mamba.packed_grid's three arrays, in vLLM's helper's order (int32).
struct Metadata {
  Int32Array cu_chunk_seqlens{0};
  Int32Array last_chunk_indices;
  Int32Array seq_idx;
  friend bool operator==(const Metadata&, const Metadata&) = default;
};
struct MetadataBuffers {
  std::span<std::int32_t> cu_chunk_seqlens;  // K + 1
  std::span<std::int32_t> last_chunk_indices;  // B
  std::span<std::int32_t> seq_idx;  // K
};

// mamba_ssm.chunk_indices's two arrays (int32).
struct ChunkIndices {
  Int32Array chunk_indices;
  Int32Array chunk_offsets;
  friend bool operator==(const ChunkIndices&, const ChunkIndices&) = default;
};
struct ChunkIndicesBuffers {
  std::span<std::int32_t> chunk_indices;  // K
  std::span<std::int32_t> chunk_offsets;  // K
};

// What errors call the offsets: each form's engine function names its
// argument query_start_loc (vLLM's helper; the metadata functions) or
// cu_seqlens (mamba_ssm's; the chunk_indices functions, whose decreasing
// entry is cu_seqlens_decreasing as in FLA's).
enum class Offsets : std::uint8_t { query_start_loc, cu_seqlens };

// chunk_size in [1, 2^31-1] (chunk_size_not_positive, value_too_large);
// the offsets of at least one entry (length_mismatch), each in
// [0, 2^31-1] (negative_value, value_too_large), q[0] = 0 (value_too_large
// with bound 0: the grid is the packed batch's, from its first token) and
// non-decreasing (query_start_loc_decreasing); then the cap on the pieces
// (output_too_large).
std::optional<Error> validate(const View64& view, const Limits& limits = {},
                              Offsets offsets = Offsets::query_start_loc) noexcept;
std::optional<Error> validate(const View32& view, const Limits& limits = {},
                              Offsets offsets = Offsets::query_start_loc) noexcept;
Result<Sizes> output_sizes(const View64& view, const Limits& limits = {},
                           Offsets offsets = Offsets::query_start_loc) noexcept;
Result<Sizes> output_sizes(const View32& view, const Limits& limits = {},
                           Offsets offsets = Offsets::query_start_loc) noexcept;

// The contract's definition, step by step: the cut points gathered (every
// multiple of C and every row start inside (0, T)), sorted, the pieces
// between them, each given its row.
Result<Metadata> reference_metadata(const View64& view, const Limits& limits = {});
Result<ChunkIndices> reference_chunk_indices(const View64& view, const Limits& limits = {});

// The fast implementations: one pass over the rows, each row's pieces in closed form.
Result<Metadata> metadata(const View64& view, const Limits& limits = {});
Result<Metadata> metadata(const View32& view, const Limits& limits = {});
Result<ChunkIndices> chunk_indices(const View64& view, const Limits& limits = {});
Result<ChunkIndices> chunk_indices(const View32& view, const Limits& limits = {});

// The same into caller buffers: validate, allocate nothing, write each
// output's prefix and return the sizes (output_buffer_too_small names the
// first short buffer, nothing written).
Result<Sizes> metadata_into(const View64& view, const MetadataBuffers& out, const Limits& limits = {}) noexcept;
Result<Sizes> metadata_into(const View32& view, const MetadataBuffers& out, const Limits& limits = {}) noexcept;
Result<Sizes> chunk_indices_into(const View64& view, const ChunkIndicesBuffers& out, const Limits& limits = {}) noexcept;
Result<Sizes> chunk_indices_into(const View32& view, const ChunkIndicesBuffers& out, const Limits& limits = {}) noexcept;

}  // namespace chunkmeta::packed_grid
