// The packed grid's two specs (specs/mamba_packed_grid/README.md) as the
// harness sees them, for the code in this folder.
#pragma once

#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/packed_grid.hpp"

namespace chunkmeta::harness {

// vLLM's compute_varlen_chunk_metadata: (cu_chunk_seqlens, last_chunk_indices, seq_idx).
const Spec& packed_grid_spec();
// mamba_ssm's cu_seqlens_to_chunk_indices_offsets: (chunk_indices, chunk_offsets).
const Spec& mamba_ssm_chunk_indices_spec();

// The library's view of a workload (the offsets are Workload::query_start_loc).
inline packed_grid::View64 packed_grid_view(const Workload& w) { return {w.chunk_size, w.query_start_loc}; }

// Each piece's start, from either form's outputs as the harness holds them
// (cu_chunk_seqlens without its last entry; chunk_indices C + chunk_offsets).
std::vector<std::int64_t> piece_starts(const Spec& spec, const Workload& w, const Arrays& arrays);
// The inverse: `spec`'s outputs for pieces starting at `starts` (in [0, T)),
// each piece's row the one holding its start.
Arrays pieces_as(const Spec& spec, const Workload& w, std::span<const std::int64_t> starts);

}  // namespace chunkmeta::harness
