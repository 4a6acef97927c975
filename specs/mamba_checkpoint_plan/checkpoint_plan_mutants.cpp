// The checkpoint plan's slips (specs/mamba_checkpoint_plan), each from the
// field's record: a rewrite of the plan wrong in exactly the named way.
#include <algorithm>

#include "checkpoint_plan_spec.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "mutants.hpp"

namespace chunkmeta::mutants {
namespace {

using harness::Workload;

enum class Slip {
  multiple_not_checked,   // a block size that is not a multiple of the chunk size accepted (vLLM #57278)
  row_grid,               // chunks counted on the row's own grid, not the packed batch's (SGLang #31833)
  unaligned_shift_dropped,// the realigning chunk of unaligned computed tokens not counted
  first_from_own_last,    // the row's first chunk taken as its own last chunk index
  final_write_empty_rows, // a final write for rows without new tokens too (vLLM's loop)
  int32_first_block,      // (c + M) / M - 1 computed in int32: wraps for c near 2^31
  last_block_floor,       // the last block as floor(s / M), one off when s ends on a boundary
};

std::int32_t int32_wrap(std::int64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); }

harness::Outcome rewrite_with(Slip slip, const Workload& w) {
  if (slip == Slip::multiple_not_checked) {
    // Validation without the multiple rule: the block size's other rules and Mamba's domain still hold.
    Workload checked = w;
    if (w.block_size >= 1 && w.block_size <= kMaxValue && w.chunk_size >= 1) checked.block_size = w.chunk_size;
    if (auto error = checkpoint::validate(harness::checkpoint_view(checked))) return *error;
  } else if (auto error = checkpoint::validate(harness::checkpoint_view(w))) {
    return *error;
  }
  const std::int64_t C = w.chunk_size;
  const std::int64_t M = w.block_size;
  const auto& q = w.query_start_loc;
  harness::Arrays out(6);
  std::int64_t before = 0;  // chunks of the rows before this one (Mamba's)
  std::int64_t last_chunk = -1;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    total += (c % C != 0 ? 1 : 0) +
             (q[i + 1] - q[i] - (c % C != 0 ? std::min((c + C - 1) / C * C - c, q[i + 1] - q[i]) : 0) + C - 1) / C;
  }
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    const std::int64_t n = q[i + 1] - q[i];
    const std::int64_t s = c + n;
    const std::int64_t head = c % C != 0 ? 1 : 0;
    const std::int64_t aligned = (c + C - 1) / C * C;
    const std::int64_t chunks = head + (n - (head == 1 ? std::min(aligned - c, n) : 0) + C - 1) / C;
    const std::int64_t first_block = slip == Slip::int32_first_block ? int32_wrap(c + M) / M - 1 : c / M;
    const std::int64_t last_block = slip == Slip::last_block_floor ? s / M : (s == 0 ? 0 : (s - 1) / M);
    out[0].push_back(static_cast<std::int32_t>(c == 0 ? 0 : (c - 1) / M));
    out[1].push_back(static_cast<std::int32_t>(first_block));
    out[2].push_back(static_cast<std::int32_t>(last_block));
    std::int64_t first_chunk = slip == Slip::row_grid ? 0 : before;
    if (slip == Slip::first_from_own_last) first_chunk = before + chunks - 1;
    if (chunks > 0) last_chunk = before + chunks - 1;
    if (n > 0) {
      for (std::int64_t b = first_block; b < last_block; ++b) {
        const std::int64_t end = (b + 1) * M;
        const std::int64_t counted = slip == Slip::unaligned_shift_dropped ? 0 : head;
        out[3].push_back(static_cast<std::int32_t>(i));
        out[4].push_back(static_cast<std::int32_t>(b));
        out[5].push_back(static_cast<std::int32_t>(first_chunk + counted + (end - aligned) / C - 1));
      }
      out[3].push_back(static_cast<std::int32_t>(i));
      out[4].push_back(static_cast<std::int32_t>(last_block));
      out[5].push_back(static_cast<std::int32_t>(slip == Slip::row_grid ? chunks - 1 : before + chunks - 1));
    } else if (slip == Slip::final_write_empty_rows) {
      // vLLM writes varlen_states[last_chunk_indices[i]]: the previous row's last chunk, or
      // -1 for a leading row, which Python reads as the batch's last chunk.
      out[3].push_back(static_cast<std::int32_t>(i));
      out[4].push_back(static_cast<std::int32_t>(last_block));
      out[5].push_back(static_cast<std::int32_t>(last_chunk >= 0 ? last_chunk : total - 1));
    }
    before += chunks;
  }
  return out;
}

Mutant make(std::string name, Slip slip, std::string description, std::size_t fewest_failing_rows = 1) {
  return {harness::in_process(std::move(name), description, harness::checkpoint_plan_spec(),
                              [slip](const Workload& w) { return rewrite_with(slip, w); }),
          std::move(description), fewest_failing_rows, slip == Slip::multiple_not_checked};
}

}  // namespace

std::vector<Mutant> mutants_of_mamba_checkpoint_plan() {
  return {
      make("block-size-multiple-not-checked", Slip::multiple_not_checked,
           "a block size that is not a multiple of the chunk size is accepted (vLLM #57278): no chunk need end on a "
           "block boundary",
           0),
      make("states-on-the-row-grid", Slip::row_grid,
           "chunk indices counted on each row's own grid, not the packed batch's (SGLang #31833): states of earlier "
           "rows' chunks are saved",
           2),
      make("unaligned-shift-dropped", Slip::unaligned_shift_dropped,
           "the realigning chunk of unaligned computed tokens is not counted: every interior write saves the chunk "
           "before the boundary's"),
      make("first-chunk-from-own-last", Slip::first_from_own_last,
           "a row's first chunk is taken as its own last chunk index, not the previous row's plus one"),
      make("final-write-for-rows-without-tokens", Slip::final_write_empty_rows,
           "a row without new tokens still gets a final write (vLLM's loop): it saves another row's state over a "
           "block of its own"),
      make("int32-first-block", Slip::int32_first_block,
           "block_idx_first_scheduled_token as (c + M) / M - 1 in int32, which wraps when c + M passes 2^31-1"),
      make("last-block-floor", Slip::last_block_floor,
           "block_idx_last_scheduled_token as floor(s / M): one block too far when the row ends on a block boundary"),
  };
}

}  // namespace chunkmeta::mutants
