// The checkpointed chunks' slips (specs/mamba_checkpointed_chunks), each a
// rewrite of the contract wrong one way, for the mutant catalogue: the slips
// vLLM #57329's change to _compute_chunk_metadata invites.
#include "checkpointed_chunks_spec.hpp"
#include "mamba/mamba_spec.hpp"
#include "mutants.hpp"

namespace chunkmeta::mutants {
namespace {

using harness::Arrays;
using harness::Workload;

enum class ChunkSlip {
  offset_from_sequence_start,  // the checkpoint at absolute position o, not c + o
  no_realignment_after_checkpoint,  // the tokens after it chunked C at a time from it, off the row's grid
  empty_chunk_on_the_grid,     // a checkpoint already on the grid still gets its own (empty) chunk
  index_one_chunk_late,        // checkpoint_chunk_indices names the chunk that starts at it
  offset_at_new_tokens_accepted,  // o = n taken as valid (vLLM's loop then emits an empty chunk)
  int32_round_up_after_checkpoint,  // the grid after c + o found by an int32 round-up, which wraps near 2^31
};

// The chunks of `w` as Mamba's rows split where the slip splits them, merged back.
harness::Outcome split_with(const Workload& w, const harness::RowSplit& how) {
  const harness::SplitRows split = harness::split_at_checkpoints(w, how);
  const auto theirs = harness::mamba_spec().reference(split.mamba);
  if (!theirs.ok()) return theirs.error();
  return harness::merged_outputs(w, split, theirs.value());
}

harness::Outcome chunks_with(ChunkSlip slip, const Workload& w) {
  const harness::Spec& spec = harness::checkpointed_chunks_spec();
  const auto C = w.chunk_size;
  const harness::RowSplit contract;  // the cut at o, the rest from c + o
  if (slip == ChunkSlip::offset_at_new_tokens_accepted) {
    // Validation that lets o = n through: each such refusal is waved on (the offset taken as n - 1 to go on checking).
    Workload loose = w;
    while (auto error = spec.validate(loose)) {
      const auto j = static_cast<std::size_t>(error->index);
      const bool at_new_tokens = error->code == ErrorCode::value_too_large && error->field == "checkpoint_offsets" &&
                                 loose.second_per_row[j] == w.query_start_loc[j + 1] - w.query_start_loc[j];
      if (!at_new_tokens) return *error;
      loose.second_per_row[j] -= 1;
    }
    return split_with(w, contract);
  }
  if (auto error = spec.validate(w)) return *error;  // the other slips validate correctly
  switch (slip) {
    case ChunkSlip::offset_from_sequence_start:
      return split_with(w, {[](std::int64_t c, std::int64_t o) { return o - c; }, contract.after});
    case ChunkSlip::no_realignment_after_checkpoint:
      return split_with(w, {contract.cut, [](std::int64_t, std::int64_t) { return std::int64_t{0}; }});
    case ChunkSlip::int32_round_up_after_checkpoint:
      return split_with(w, {contract.cut, [C](std::int64_t c, std::int64_t o) {
                          const std::int64_t at = c + o;
                          return at + C - 1 > kMaxValue ? at - at % C : at;  // the wrapped round-up reads as "on the grid"
                        }});
    default:
      break;
  }
  harness::Outcome chunked = split_with(w, contract);
  if (!chunked.ok()) return chunked;
  Arrays out = std::move(chunked).value();
  for (std::size_t i = 0; i < w.rows(); ++i) {
    const std::int32_t k = out[3][i];
    if (k < 0) continue;
    if (slip == ChunkSlip::index_one_chunk_late) {
      out[3][i] = k + 1;
      continue;
    }
    // empty_chunk_on_the_grid: an empty chunk after the checkpoint's when it lies on the grid.
    const std::int64_t at = w.num_computed_tokens[i] + w.second_per_row[i];
    if (at % C != 0) continue;
    const auto after = static_cast<std::size_t>(k) + 1;
    out[0].insert(out[0].begin() + static_cast<std::ptrdiff_t>(after), out[0][after]);
    out[1].insert(out[1].begin() + static_cast<std::ptrdiff_t>(after), static_cast<std::int32_t>(i));
    for (std::size_t r = i; r < w.rows(); ++r) {
      out[2][r] += 1;
      if (r > i && out[3][r] >= 0) out[3][r] += 1;
    }
    out[3][i] = k + 1;
  }
  return out;
}

Mutant make_chunks(std::string name, ChunkSlip slip, std::string description, bool of_validation = false) {
  return {harness::in_process(std::move(name), description, harness::checkpointed_chunks_spec(),
                              [slip](const Workload& w) { return chunks_with(slip, w); }),
          std::move(description), 1, of_validation};
}

}  // namespace

std::vector<Mutant> mutants_of_mamba_checkpointed_chunks() {
  return {
      make_chunks("ckpt-offset-from-sequence-start", ChunkSlip::offset_from_sequence_start,
                  "the checkpoint placed at absolute position o (counted from the sequence's start), not c + o"),
      make_chunks("ckpt-no-realignment-after-checkpoint", ChunkSlip::no_realignment_after_checkpoint,
                  "the tokens after the checkpoint chunked C at a time from it, not realigned to the row's grid"),
      make_chunks("ckpt-empty-chunk-on-the-grid", ChunkSlip::empty_chunk_on_the_grid,
                  "a checkpoint already on the grid still gets a chunk of its own: an empty one after it"),
      make_chunks("ckpt-index-one-chunk-late", ChunkSlip::index_one_chunk_late,
                  "checkpoint_chunk_indices names the chunk that starts at the checkpoint, not the one ending there"),
      make_chunks("ckpt-offset-at-new-tokens-accepted", ChunkSlip::offset_at_new_tokens_accepted,
                  "an offset equal to the row's new tokens accepted (vLLM's loop then emits an empty chunk)", true),
      make_chunks("ckpt-int32-round-up-after-checkpoint", ChunkSlip::int32_round_up_after_checkpoint,
                  "the grid after c + o found by rounding up in int32, which wraps within C of 2^31: the chunks after "
                  "the checkpoint are taken as aligned"),
  };
}

}  // namespace chunkmeta::mutants
