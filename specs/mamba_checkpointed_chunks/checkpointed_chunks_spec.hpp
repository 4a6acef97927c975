// mamba.checkpointed_chunks (specs/mamba_checkpointed_chunks/README.md) as the
// harness sees it, for the code in this folder.
#pragma once

#include <functional>

#include "chunkmeta/checkpointed_chunks.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

const Spec& checkpointed_chunks_spec();

// The library's view of a workload: Mamba's, and the checkpoint offsets (Workload::second_per_row).
inline checkpointed_chunks::View64 checkpointed_view(const Workload& w) {
  return {w.chunk_size, w.num_computed_tokens, w.query_start_loc, w.second_per_row};
}

// Mamba's workload whose rows are this one's, each row with a checkpoint split
// in two at it ((c, o), then (c + o, n - o)), and for each of this workload's
// rows the index of its first row there: the contract's relation 4.
struct SplitRows {
  Workload mamba;
  std::vector<std::size_t> first_row;
};
// Where a row with a checkpoint o is split: `cut(c, o)` tokens into its query,
// the second part with `after(c, o)` computed tokens; a row whose cut is
// outside (0, n] stays whole. The contract's are o and c + o; a slip varies them.
struct RowSplit {
  std::function<std::int64_t(std::int64_t c, std::int64_t o)> cut = [](std::int64_t, std::int64_t o) { return o; };
  std::function<std::int64_t(std::int64_t c, std::int64_t o)> after = [](std::int64_t c, std::int64_t o) { return c + o; };
};
SplitRows split_at_checkpoints(const Workload& w, const RowSplit& how = {});
// This spec's outputs for `w` from Mamba's for its split rows (a row with two
// split rows has a checkpoint): the same chunks, each row's last chunk its
// last split row's, its checkpoint chunk its first split row's last.
Arrays merged_outputs(const Workload& w, const SplitRows& split, const Arrays& mamba);

}  // namespace chunkmeta::harness
