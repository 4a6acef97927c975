// The packed grid's slips (specs/mamba_packed_grid), each a rewrite wrong one
// way, for the mutant catalogue: the field's own (the engines' torch loop on
// rows without tokens, vLLM's builder passed off as the grid) and those a
// rewrite of either form invites.
#include <utility>

#include "mamba/mamba_spec.hpp"
#include "mutants.hpp"
#include "packed_grid_spec.hpp"

namespace chunkmeta::mutants {
namespace {

using harness::Workload;

enum class GridSlip {
  no_cut_at_off_grid_row_start,  // cuts at the grid's multiples only: a row starting off it shares a piece
  offsets_from_row_start,        // chunk_offsets counted from the row's start, not the physical chunk's
  engines_torch_loop,            // mamba_ssm's loop: an empty row off the grid inserts a zero-length chunk
  empty_row_last_from_row_before,  // last_chunk_indices[i] = len(seq_idx) - 1 for a row without tokens too
  builder_chunks,                // vLLM's builder (chunks realigned to each row's start) passed off as the grid
};

// The pieces' starts: every multiple of C and every row start inside (0, T), or the multiples alone.
std::vector<std::int64_t> starts_of(const Workload& w, bool cut_at_row_starts) {
  const auto& q = w.query_start_loc;
  const std::int64_t C = w.chunk_size;
  std::vector<std::int64_t> starts;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    const std::int64_t a = q[i];
    const std::int64_t b = q[i + 1];
    if (b == a) continue;
    if (a % C == 0 || cut_at_row_starts || starts.empty()) starts.push_back(a);
    for (std::int64_t at = (a / C + 1) * C; at < b; at += C) starts.push_back(at);
  }
  return starts;
}

// mamba_ssm's cu_seqlens_to_chunk_indices_offsets, its torch loop step by
// step: N counts every off-grid row start, an empty row's included, so such a
// row inserts a zero-length logical chunk. Where torch raises IndexError (an
// empty row at the end on the grid: chunk_offsets[N]), the write is dropped.
harness::Arrays engines_torch_loop(const Workload& w) {
  const auto& q = w.query_start_loc;
  const std::int64_t C = w.chunk_size;
  std::int64_t N = (q.back() + C - 1) / C;
  for (std::size_t i = 1; i + 1 < q.size(); ++i) N += q[i] % C > 0 ? 1 : 0;
  harness::Arrays out(2);
  for (std::int64_t k = 0; k < N; ++k) {
    out[0].push_back(static_cast<std::int32_t>(k));
    out[1].push_back(0);
  }
  std::int64_t p = 0;  // insertions so far
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    const std::int64_t s = q[i];
    const std::int64_t e = q[i + 1];
    p += s % C > 0 ? 1 : 0;
    const std::int64_t from = s / C + p;
    const std::int64_t to = std::min(N, e / C + p + (e % C > 0 ? 1 : 0));
    for (std::int64_t k = from; k < to; ++k) out[0][static_cast<std::size_t>(k)] -= static_cast<std::int32_t>(p);
    if (from < N) out[1][static_cast<std::size_t>(from)] = static_cast<std::int32_t>(s % C);
  }
  return out;
}

harness::Outcome grid_with(GridSlip slip, const harness::Spec& spec, const Workload& w) {
  if (auto error = spec.validate(w)) return *error;  // every mutant validates correctly
  const auto& q = w.query_start_loc;
  switch (slip) {
    case GridSlip::no_cut_at_off_grid_row_start: return harness::pieces_as(spec, w, starts_of(w, false));
    case GridSlip::engines_torch_loop: return engines_torch_loop(w);
    case GridSlip::offsets_from_row_start: {
      harness::Arrays out = harness::pieces_as(spec, w, starts_of(w, true));
      std::size_t k = 0;
      for (std::size_t i = 0; i + 1 < q.size(); ++i) {
        for (std::int64_t at = q[i]; at < q[i + 1]; at = (at / w.chunk_size + 1) * w.chunk_size, ++k)
          out[1][k] = static_cast<std::int32_t>((at - q[i]) % w.chunk_size);
      }
      return out;
    }
    case GridSlip::empty_row_last_from_row_before: {
      harness::Arrays out = harness::pieces_as(spec, w, starts_of(w, true));
      std::int32_t pieces_so_far = 0;
      for (std::size_t i = 0; i + 1 < q.size(); ++i) {
        if (q[i + 1] > q[i]) pieces_so_far = out[1][i] + 1;
        out[1][i] = pieces_so_far - 1;
      }
      return out;
    }
    case GridSlip::builder_chunks: {
      Workload builder = w;
      builder.num_computed_tokens.assign(w.rows(), 0);
      harness::Outcome chunks = harness::mamba_spec().reference(builder);
      if (!chunks.ok()) return chunks;
      harness::Arrays arrays = std::move(chunks).value();
      // (cu_chunk_seqlen, seq_idx, last_chunk_indices): the helper's order is (cu, last, seq).
      std::swap(arrays[1], arrays[2]);
      return arrays;
    }
  }
  return harness::Arrays{};
}

Mutant make_grid(std::string name, const harness::Spec& spec, GridSlip slip, std::string description,
                 std::size_t fewest_failing_rows) {
  return {harness::in_process(std::move(name), description, spec,
                              [slip, &spec](const Workload& w) { return grid_with(slip, spec, w); }),
          std::move(description), fewest_failing_rows};
}

}  // namespace

std::vector<Mutant> mutants_of_mamba_packed_grid() {
  const harness::Spec& indices = harness::mamba_ssm_chunk_indices_spec();
  const harness::Spec& metadata = harness::packed_grid_spec();
  return {
      make_grid("grid-no-cut-at-off-grid-row-start", indices, GridSlip::no_cut_at_off_grid_row_start,
                "cuts only at the grid's multiples of C: a row starting off the grid shares a piece with the row before",
                2),
      make_grid("grid-offsets-from-row-start", indices, GridSlip::offsets_from_row_start,
                "chunk_offsets counted from the row's start, not from its physical chunk's", 2),
      make_grid("grid-zero-length-logical-chunk", indices, GridSlip::engines_torch_loop,
                "mamba_ssm's torch loop (SGLang, TensorRT-LLM): a row without tokens off the grid inserts a "
                "zero-length logical chunk (and one at the end on the grid indexes past the arrays)",
                2),
      make_grid("grid-no-cut-at-off-grid-row-start-metadata", metadata, GridSlip::no_cut_at_off_grid_row_start,
                "cuts only at the grid's multiples of C: a row starting off the grid shares a piece with the row before",
                2),
      make_grid("grid-empty-row-last-from-row-before", metadata, GridSlip::empty_row_last_from_row_before,
                "last_chunk_indices[i] = len(seq_idx) - 1 for a row without tokens too: the row before's last piece, "
                "not -1",
                2),
      make_grid("grid-builder-chunks", metadata, GridSlip::builder_chunks,
                "vLLM's metadata builder passed off as the grid: each row's chunks realigned to its own start (what "
                "compute_varlen_chunk_metadata's docstring claims it mirrors)",
                2),
  };
}

}  // namespace chunkmeta::mutants
