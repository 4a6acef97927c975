// Mamba's slips (specs/mamba): each a rewrite of the reference procedure,
// wrong in exactly the named way, for the mutant catalogue.
#include <algorithm>
#include <cmath>

#include "chunkmeta/chunkmeta.hpp"
#include "mamba_spec.hpp"
#include "mutants.hpp"

namespace chunkmeta::mutants {
namespace {

enum class Slip {
  gap_off_by_one,             // realigning chunk one token too long
  head_not_capped,            // realigning chunk not capped by the new tokens
  drops_empty_head,           // no realigning chunk for a row without new tokens
  rowless_last_is_minus_one,  // a row without chunks gets -1, not the previous chunk
  int32_round_up_overflow,    // next multiple of C computed in 32 bits, wraps near 2^31
  seq_idx_by_searchsorted,    // seq_idx from the row starts: empty chunks go to the next row
  ceil_as_floor_plus_one,     // ceil(n / C) written as n / C + 1
  power_of_two_modulo,        // c % C written as c & (C - 1)
  absolute_positions,         // positions taken from q[i], forgetting q[0]
  float32_ceil,               // ceil(n / C) in float32, as a tensor rewrite might
  int8_seq_idx,               // seq_idx kept in an 8-bit buffer: wraps from row 128
  int16_seq_idx_wide_rows,    // a wide-row write path stores seq_idx as 16 bits: wraps from row 32768
};

using harness::Workload;

// One rewrite of the reference procedure, wrong in exactly the named way.
harness::Outcome rewrite_with(Slip slip, const Workload& w) {
  if (auto error = validate(view_of(w))) return *error;  // every mutant validates correctly
  const std::int64_t C = w.chunk_size;
  const std::size_t rows = w.num_computed_tokens.size();
  const auto& q = w.query_start_loc;
  ChunkMetadata out;
  out.cu_chunk_seqlen.clear();
  const auto emit = [&](std::int64_t start, std::size_t row) {
    out.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(start));
    out.seq_idx.push_back(static_cast<std::int32_t>(row));
  };
  std::int64_t pos = slip == Slip::absolute_positions ? q[0] : 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t c = w.num_computed_tokens[i];
    std::int64_t n = q[i + 1] - q[i];
    const std::int64_t chunks_before = static_cast<std::int64_t>(out.seq_idx.size());

    std::int64_t misalignment = slip == Slip::power_of_two_modulo ? (c & (C - 1)) : c % C;
    std::int64_t gap = misalignment == 0 ? 0 : C - misalignment;
    if (slip == Slip::int32_round_up_overflow) {
      std::int64_t sum = c + C - 1;  // int32 arithmetic: wraps past 2^31-1
      if (sum > kMaxValue) sum -= std::int64_t{1} << 32;
      const std::int64_t next = sum / C * C;
      gap = next - c > 0 ? next - c : 0;
      misalignment = gap;
    }
    const bool head = misalignment != 0 && !(slip == Slip::drops_empty_head && n == 0);
    if (head) {
      emit(pos, i);
      std::int64_t length = std::min(n, gap);
      if (slip == Slip::gap_off_by_one) length = std::min(n, gap + 1);
      if (slip == Slip::head_not_capped) length = std::min(gap, n + C);  // bounded so output stays finite
      pos += length;
      n -= length;
    }
    std::int64_t body = (n + C - 1) / C;
    if (slip == Slip::ceil_as_floor_plus_one) body = n / C + 1;
    if (slip == Slip::float32_ceil) body = static_cast<std::int64_t>(std::ceil(static_cast<float>(n) / static_cast<float>(C)));
    // The wide-row path of a fast rewrite: rows with more than 32 body chunks.
    const bool wide_row = body > 32;
    for (std::int64_t k = 0; k < body; ++k) {
      emit(pos, i);
      if (slip == Slip::int16_seq_idx_wide_rows && wide_row) out.seq_idx.back() = static_cast<std::int16_t>(i);
      const std::int64_t length = std::max<std::int64_t>(0, std::min(n, C));
      pos += length;
      n -= length;
    }
    const auto entries = static_cast<std::int64_t>(out.cu_chunk_seqlen.size());
    const bool rowless = static_cast<std::int64_t>(out.seq_idx.size()) == chunks_before;
    out.last_chunk_indices.push_back(
        static_cast<std::int32_t>(slip == Slip::rowless_last_is_minus_one && rowless ? -1 : entries - 1));
  }
  out.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(pos));

  if (slip == Slip::int8_seq_idx) {
    for (auto& row : out.seq_idx) row = static_cast<std::int8_t>(row);
  }
  if (slip == Slip::seq_idx_by_searchsorted) {
    // Row of chunk k = last row whose start is <= the chunk's start.
    std::vector<std::int64_t> starts;
    for (std::size_t i = 0; i < rows; ++i) starts.push_back(q[i] - q[0]);
    for (std::size_t k = 0; k < out.seq_idx.size(); ++k) {
      const auto it = std::upper_bound(starts.begin(), starts.end(), std::int64_t{out.cu_chunk_seqlen[k]});
      out.seq_idx[k] = static_cast<std::int32_t>(it - starts.begin() - 1);
    }
  }
  return harness::arrays_of(std::move(out));
}

Mutant make(std::string name, Slip slip, std::string description, std::size_t fewest_failing_rows = 1) {
  return {harness::in_process(std::move(name), description, harness::mamba_spec(),
                              [slip](const Workload& w) { return rewrite_with(slip, w); }),
          std::move(description), fewest_failing_rows};
}

}  // namespace

std::vector<Mutant> mutants_of_mamba() {
  return {
      make("gap-off-by-one", Slip::gap_off_by_one, "the realigning chunk is one token too long"),
      make("head-not-capped", Slip::head_not_capped, "the realigning chunk is not capped by the new tokens"),
      make("drops-empty-head", Slip::drops_empty_head, "no realigning chunk for a row without new tokens"),
      make("rowless-last-is-minus-one", Slip::rowless_last_is_minus_one,
           "a row without chunks gets last_chunk_indices -1 instead of the previous chunk", 2),
      make("int32-round-up-overflow", Slip::int32_round_up_overflow,
           "the next multiple of the chunk size is computed in 32 bits and wraps near 2^31"),
      make("seq-idx-by-searchsorted", Slip::seq_idx_by_searchsorted,
           "seq_idx is derived from the row starts, so an empty chunk is given to the next row", 2),
      make("ceil-as-floor-plus-one", Slip::ceil_as_floor_plus_one, "ceil(n / C) is written n / C + 1"),
      make("power-of-two-modulo", Slip::power_of_two_modulo, "c % C is written c & (C - 1)"),
      make("absolute-positions", Slip::absolute_positions,
           "positions start at q[0] instead of 0 (only differences may be read)", 0),
      make("float32-ceil", Slip::float32_ceil, "ceil(n / C) is computed in float32, inexact above 2^24 tokens"),
      make("int8-seq-idx", Slip::int8_seq_idx, "seq_idx goes through an 8-bit buffer and wraps from row 128", 129),
      make("int16-seq-idx-wide-rows", Slip::int16_seq_idx_wide_rows,
           "a wide-row path (over 32 body chunks) stores seq_idx in 16 bits, wrapping from row 32768", 32769),
  };
}

}  // namespace chunkmeta::mutants
