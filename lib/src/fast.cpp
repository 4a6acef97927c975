// Production implementation: one pass over the rows validates the sequence
// rule, counts each row's chunks in closed form and writes them, after a
// branch-free (vectorised) scan of the value rules.
#include <algorithm>

#include "checked_sizes.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "row_math.hpp"

namespace chunkmeta {
namespace {

// Rows with at most kBlock (or kWideBlock) body chunks are written with
// fixed-length, branch-free stores while the buffers have room for them; the
// entries past the row's own are scratch that the following rows overwrite.
constexpr std::uint32_t kBlock = 8;
constexpr std::uint32_t kWideBlock = 32;

// Writes a row's head slot and `Width` body slots, of which the row owns
// has_head + body_chunks; `lane` holds j*C.
template <std::uint32_t Width>
void write_block(std::int32_t* cu, std::int32_t* seq, std::int64_t k, const detail::RowCut& cut, std::uint32_t pos,
                 std::int32_t row, const std::uint32_t* lane) noexcept {
  cu[k] = static_cast<std::int32_t>(pos);
  seq[k] = row;
  const std::int64_t body = k + cut.has_head;
  const std::uint32_t body_start = pos + cut.head_length;
  for (std::uint32_t j = 0; j < Width; ++j) cu[body + j] = static_cast<std::int32_t>(body_start + lane[j]);
  for (std::uint32_t j = 0; j < Width; ++j) seq[body + j] = row;
}

// Where the rows go: `room` chunk slots in both cu and seq, cu_size entries
// in cu (its closing entry needs one past the chunks), and last_chunk_indices
// if it holds B entries.
struct Destination {
  std::int32_t* cu;
  std::int32_t* seq;
  std::int32_t* last;
  std::int64_t room;
  std::int64_t cu_size;
  bool last_fits;
};

struct RowsWritten {
  std::int64_t chunks = 0;
  bool sequence_too_long = false;  // some row has c_i + n_i > 2^31-1
  bool overflowed = false;         // some row did not fit in `room`
};

// For a workload whose shape and values are valid. Positions are 32-bit:
// every one is <= q[B]-q[0] <= 2^31-1.
template <typename Int>
RowsWritten write_rows(const BasicWorkloadView<Int>& workload, const Destination& out) noexcept {
  const detail::Divisor chunk(static_cast<std::uint32_t>(workload.chunk_size));
  const std::size_t rows = workload.num_computed_tokens.size();
  const Int* computed = workload.num_computed_tokens.data();
  const Int* starts = workload.query_start_loc.data();
  std::int32_t* const cu = out.cu;
  std::int32_t* const seq = out.seq;
  // j*C for the block stores (wrapping is harmless: lanes past a row's own are scratch).
  std::uint32_t lane[kWideBlock];
  for (std::uint32_t j = 0; j < kWideBlock; ++j) lane[j] = j * chunk.divisor();
  RowsWritten result;
  std::int64_t k = 0;  // chunks so far: chunk k starts at cu[k] and belongs to row seq[k]
  std::uint32_t pos = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const auto c = static_cast<std::uint32_t>(computed[i]);
    const auto n = static_cast<std::uint32_t>(starts[i + 1] - starts[i]);
    result.sequence_too_long |= std::uint64_t{c} + n > static_cast<std::uint64_t>(kMaxValue);
    const detail::RowCut cut = detail::cut_row(c, n, chunk);
    const auto row = static_cast<std::int32_t>(i);
    // The head (if any) starts at pos; body chunk j starts at pos + head + j*C.
    if (cut.body_chunks <= kBlock && k + 1 + kBlock <= out.room) {
      write_block<kBlock>(cu, seq, k, cut, pos, row, lane);
    } else if (cut.body_chunks <= kWideBlock && k + 1 + kWideBlock <= out.room) {
      write_block<kWideBlock>(cu, seq, k, cut, pos, row, lane);
    } else if (k + cut.chunks() <= out.room) {
      if (cut.has_head != 0) {
        cu[k] = static_cast<std::int32_t>(pos);
        seq[k] = row;
      }
      const std::int64_t body = k + cut.has_head;
      const std::uint32_t body_start = pos + cut.head_length;
      for (std::uint32_t j = 0; j < cut.body_chunks; ++j)
        cu[body + j] = static_cast<std::int32_t>(body_start + j * chunk.divisor());
      std::fill_n(seq + body, cut.body_chunks, row);
    } else {
      result.overflowed = true;  // keep counting: the error reports the size needed
    }
    k += cut.chunks();
    pos += n;
    if (out.last_fits) out.last[i] = static_cast<std::int32_t>(k - 1);
  }
  if (k < out.cu_size && !result.overflowed) cu[k] = static_cast<std::int32_t>(pos);
  result.chunks = k;
  return result;
}

// Rules 1-4 (shape and values); write_rows checks rule 5 as it goes.
template <typename Int>
std::optional<Error> check_shape_and_values(const BasicWorkloadView<Int>& workload) noexcept {
  if (auto bad = detail::check_shape(workload)) return bad;
  if (!detail::values_in_domain(workload)) return detail::first_broken_rule(workload);
  return std::nullopt;
}

// For a workload that passed check_shape_and_values: runs write_rows and turns
// what went wrong into the error validation would give, then the cap, then
// the buffers' sizes.
template <typename Int>
Result<OutputSizes> write_checked(const BasicWorkloadView<Int>& workload, const OutputBuffers& out,
                                  const Limits& limits) noexcept {
  const auto rows = static_cast<std::int64_t>(workload.num_computed_tokens.size());
  const auto cu_size = static_cast<std::int64_t>(out.cu_chunk_seqlen.size());
  const auto seq_size = static_cast<std::int64_t>(out.seq_idx.size());
  const auto last_size = static_cast<std::int64_t>(out.last_chunk_indices.size());
  const Destination destination{out.cu_chunk_seqlen.data(), out.seq_idx.data(), out.last_chunk_indices.data(),
                                std::max<std::int64_t>(0, std::min(cu_size - 1, seq_size)), cu_size,
                                last_size >= rows};
  const RowsWritten written = write_rows(workload, destination);
  if (written.sequence_too_long) return detail::first_broken_rule(workload);
  const std::int64_t chunks = written.chunks;
  if (chunks > detail::chunk_cap(limits)) return detail::output_too_large(chunks, detail::chunk_cap(limits));
  const OutputSizes need{chunks + 1, chunks, rows};
  const auto too_small = [](std::string_view field, std::int64_t have, std::int64_t want) {
    return Error{ErrorCode::output_buffer_too_small, field, Error::kNoIndex, have, want};
  };
  if (cu_size < need.cu_chunk_seqlen) return too_small("cu_chunk_seqlen", cu_size, need.cu_chunk_seqlen);
  if (seq_size < need.seq_idx) return too_small("seq_idx", seq_size, need.seq_idx);
  if (last_size < need.last_chunk_indices) return too_small("last_chunk_indices", last_size, need.last_chunk_indices);
  return need;
}

// Sizes the outputs from an upper bound that needs no pass over the rows
// (a row has at most n/C + 2 chunks), writes once, then trims. Above the cap,
// the exact count decides.
template <typename Int>
Result<ChunkMetadata> fast_returning(const BasicWorkloadView<Int>& workload, const Limits& limits) {
  if (auto bad = check_shape_and_values(workload)) return *bad;
  const auto rows = static_cast<std::int64_t>(workload.num_computed_tokens.size());
  const std::int64_t tokens = std::int64_t{workload.query_start_loc[rows]} - std::int64_t{workload.query_start_loc[0]};
  std::int64_t capacity = tokens / workload.chunk_size + 2 * rows;
  if (capacity > detail::chunk_cap(limits)) {
    auto exact = detail::checked_sizes(workload, limits);
    if (!exact.ok()) return exact.error();
    capacity = exact.value().num_chunks();
  }
  ChunkMetadata out;
  out.cu_chunk_seqlen.resize(static_cast<std::size_t>(capacity + 1));
  out.seq_idx.resize(static_cast<std::size_t>(capacity));
  out.last_chunk_indices.resize(static_cast<std::size_t>(rows));
  auto written = write_checked(workload, {out.cu_chunk_seqlen, out.seq_idx, out.last_chunk_indices}, limits);
  if (!written.ok()) return written.error();
  out.cu_chunk_seqlen.resize(static_cast<std::size_t>(written.value().cu_chunk_seqlen));
  out.seq_idx.resize(static_cast<std::size_t>(written.value().seq_idx));
  return out;
}

template <typename Int>
Result<OutputSizes> validated_write(const BasicWorkloadView<Int>& workload, const OutputBuffers& out,
                                    const Limits& limits) noexcept {
  if (auto bad = check_shape_and_values(workload)) return *bad;
  return write_checked(workload, out, limits);
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
  return validated_write(workload, out, limits);
}
Result<OutputSizes> fast_into(const WorkloadView32& workload, const OutputBuffers& out,
                              const Limits& limits) noexcept {
  return validated_write(workload, out, limits);
}

}  // namespace chunkmeta
