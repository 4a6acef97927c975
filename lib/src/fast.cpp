// Production implementation: validate and count every row in closed form,
// size the outputs once, then fill them row by row with straight-line loops.
#include <algorithm>

#include "checked_sizes.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "row_math.hpp"

namespace chunkmeta {
namespace {

// Rows with at most this many body chunks are written with fixed-length,
// branch-free stores while the output has room for them; the entries past the
// row's own are scratch that the following rows overwrite.
constexpr std::uint32_t kBlock = 8;

// Fills outputs of exactly `chunks` chunks for `workload`, which has passed
// validation. Positions are 32-bit: every one is <= q[B]-q[0] <= 2^31-1.
template <typename Int>
void fill(const BasicWorkloadView<Int>& workload, std::int64_t chunks, std::int32_t* cu, std::int32_t* seq,
          std::int32_t* last) noexcept {
  const detail::Divisor chunk(static_cast<std::uint32_t>(workload.chunk_size));
  const std::size_t rows = workload.num_computed_tokens.size();
  const Int* starts = workload.query_start_loc.data();
  std::int64_t k = 0;  // chunks written: chunk k starts at cu[k] and belongs to row seq[k]
  std::uint32_t pos = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const auto new_tokens = static_cast<std::uint32_t>(starts[i + 1] - starts[i]);
    const auto row = static_cast<std::int32_t>(i);
    const detail::RowCut cut =
        detail::cut_row(static_cast<std::uint32_t>(workload.num_computed_tokens[i]), new_tokens, chunk);
    // The head (if any) starts at pos; body chunk j starts at pos + head + j*C.
    const std::uint32_t body_start = pos + cut.head_length;
    if (cut.body_chunks <= kBlock && k + 1 + kBlock <= chunks) {
      cu[k] = static_cast<std::int32_t>(pos);
      seq[k] = row;
      k += cut.has_head;
      for (std::uint32_t j = 0; j < kBlock; ++j) cu[k + j] = static_cast<std::int32_t>(body_start + j * chunk.divisor());
      for (std::uint32_t j = 0; j < kBlock; ++j) seq[k + j] = row;
    } else {
      if (cut.has_head != 0) {
        cu[k] = static_cast<std::int32_t>(pos);
        seq[k++] = row;
      }
      for (std::uint32_t j = 0; j < cut.body_chunks; ++j)
        cu[k + j] = static_cast<std::int32_t>(body_start + j * chunk.divisor());
      std::fill_n(seq + k, cut.body_chunks, row);
    }
    k += cut.body_chunks;
    pos += new_tokens;
    last[i] = static_cast<std::int32_t>(k - 1);
  }
  cu[k] = static_cast<std::int32_t>(pos);
}

template <typename Int>
Result<ChunkMetadata> fast_returning(const BasicWorkloadView<Int>& workload, const Limits& limits) {
  auto sizes = detail::checked_sizes(workload, limits);
  if (!sizes.ok()) return sizes.error();
  ChunkMetadata out;
  out.cu_chunk_seqlen.resize(static_cast<std::size_t>(sizes.value().cu_chunk_seqlen));
  out.seq_idx.resize(static_cast<std::size_t>(sizes.value().seq_idx));
  out.last_chunk_indices.resize(static_cast<std::size_t>(sizes.value().last_chunk_indices));
  fill(workload, sizes.value().num_chunks(), out.cu_chunk_seqlen.data(), out.seq_idx.data(),
       out.last_chunk_indices.data());
  return out;
}

template <typename Int>
Result<OutputSizes> fast_buffers(const BasicWorkloadView<Int>& workload, const OutputBuffers& out,
                                 const Limits& limits) noexcept {
  auto sizes = detail::checked_sizes(workload, limits);
  if (!sizes.ok()) return sizes;
  const OutputSizes& need = sizes.value();
  const auto too_small = [](std::string_view field, std::size_t have, std::int64_t want) {
    return Error{ErrorCode::output_buffer_too_small, field, Error::kNoIndex, static_cast<std::int64_t>(have), want};
  };
  if (static_cast<std::int64_t>(out.cu_chunk_seqlen.size()) < need.cu_chunk_seqlen)
    return too_small("cu_chunk_seqlen", out.cu_chunk_seqlen.size(), need.cu_chunk_seqlen);
  if (static_cast<std::int64_t>(out.seq_idx.size()) < need.seq_idx)
    return too_small("seq_idx", out.seq_idx.size(), need.seq_idx);
  if (static_cast<std::int64_t>(out.last_chunk_indices.size()) < need.last_chunk_indices)
    return too_small("last_chunk_indices", out.last_chunk_indices.size(), need.last_chunk_indices);
  fill(workload, need.num_chunks(), out.cu_chunk_seqlen.data(), out.seq_idx.data(), out.last_chunk_indices.data());
  return sizes;
}

}  // namespace

Result<ChunkMetadata> fast(const WorkloadView& workload, const Limits& limits) {
  return fast_returning(workload, limits);
}
Result<ChunkMetadata> fast(const WorkloadView32& workload, const Limits& limits) {
  return fast_returning(workload, limits);
}
Result<ChunkMetadata> fast(const Workload& workload, const Limits& limits) {
  return fast_returning(view_of(workload), limits);
}

Result<OutputSizes> fast_into(const WorkloadView& workload, const OutputBuffers& out, const Limits& limits) noexcept {
  return fast_buffers(workload, out, limits);
}
Result<OutputSizes> fast_into(const WorkloadView32& workload, const OutputBuffers& out,
                              const Limits& limits) noexcept {
  return fast_buffers(workload, out, limits);
}

}  // namespace chunkmeta
