// mamba.prefill_checkpoints (specs/mamba_prefill_checkpoints/README.md) as the
// harness sees it, for the code in this folder.
#pragma once

#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/prefill_checkpoints.hpp"

namespace chunkmeta::harness {

const Spec& prefill_checkpoints_spec();

// The library's view of a workload: seq_lens per row (Workload::num_computed_tokens),
// query_lens (second_per_row), H (chunk_size), M (block_size), the alignment
// (optional_scalar) and drop_eagle_block (flag).
inline prefill_checkpoints::View planner_view(const Workload& w) {
  return {w.num_computed_tokens, w.second_per_row, w.chunk_size, w.block_size, w.optional_scalar, w.flag};
}

// The planner's workload from its arguments, as vLLM's builder passes them.
Workload planner_workload(std::vector<std::int64_t> seq_lens, std::vector<std::int64_t> query_lens,
                          std::int64_t hash_block_size, std::int64_t mamba_block_size,
                          std::optional<std::int64_t> checkpoint_alignment, bool drop_eagle_block);

}  // namespace chunkmeta::harness
