// mamba.prefill_checkpoints (specs/mamba_prefill_checkpoints/README.md) as the
// harness sees it, for the code in this folder.
#pragma once

#include <algorithm>
#include <limits>

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

// The contract's arithmetic for this folder's harness-side code (its invariants, generators
// and slips; the library ports the rule on its own): floor and ceiling division by d >= 1
// (floor((a - 1) / M) is -1 for a = 0), and the position p_i a row's checkpoint would take.
constexpr std::int64_t floor_div(std::int64_t x, std::int64_t d) { return x >= 0 ? x / d : -((-x + d - 1) / d); }
constexpr std::int64_t ceil_div(std::int64_t x, std::int64_t d) { return -floor_div(-x, d); }
constexpr std::int64_t checkpoint_position(std::int64_t s, std::int64_t H, bool drop_eagle_block) {
  return std::max(floor_div(s - 1, H) * H - (drop_eagle_block ? H : 0), std::int64_t{0});
}

// The chunker's workload (mamba.checkpointed_chunks) a plan feeds, for rows [first, first + count):
// each row's query from its computed tokens a_i = s_i - n_i, packed from 0, with its planned
// checkpoint offset (`offsets`, one per row of the plan), at chunk size `chunk_size`.
Workload chunker_workload_of(const Workload& plan, std::span<const std::int32_t> offsets, std::int64_t chunk_size,
                             std::size_t first = 0, std::size_t count = std::numeric_limits<std::size_t>::max());

// The planner's workload from its arguments, as vLLM's builder passes them.
Workload planner_workload(std::vector<std::int64_t> seq_lens, std::vector<std::int64_t> query_lens,
                          std::int64_t hash_block_size, std::int64_t mamba_block_size,
                          std::optional<std::int64_t> checkpoint_alignment, bool drop_eagle_block);

}  // namespace chunkmeta::harness
