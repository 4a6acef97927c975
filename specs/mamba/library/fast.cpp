// Production implementation: the shape rules, then the row pass
// (write_rows.hpp), which checks the value rules as it reads the rows,
// counts each row's chunks in closed form and writes them.
#include <algorithm>

#include "checked_sizes.hpp"
#include "chunkmeta/chunkmeta.hpp"
#include "write_rows.hpp"

namespace chunkmeta {
namespace {

// For a workload of valid shape (rules 1-2): runs write_rows and turns
// what went wrong into the error validation would give, then the cap, then
// the buffers' sizes.
template <typename Int>
Result<OutputSizes> write_checked(const BasicWorkloadView<Int>& workload, const OutputBuffers& out,
                                  const Limits& limits) noexcept {
  const auto rows = static_cast<std::int64_t>(workload.num_computed_tokens.size());
  const auto cu_size = static_cast<std::int64_t>(out.cu_chunk_seqlen.size());
  const auto seq_size = static_cast<std::int64_t>(out.seq_idx.size());
  const auto last_size = static_cast<std::int64_t>(out.last_chunk_indices.size());
  const detail::Destination destination{out.cu_chunk_seqlen.data(), out.seq_idx.data(), out.last_chunk_indices.data(),
                                std::max<std::int64_t>(0, std::min(cu_size - 1, seq_size)), cu_size,
                                last_size >= rows};
  const detail::RowsWritten written = detail::write_rows(workload, destination);
  if (written.out_of_domain) return detail::first_broken_rule(workload);
  const std::int64_t chunks = written.chunks;
  if (chunks > detail::chunk_cap(limits)) return detail::output_too_large(chunks, detail::chunk_cap(limits));
  const OutputSizes need{chunks + 1, chunks, rows};
  using detail::buffer_too_small;
  if (cu_size < need.cu_chunk_seqlen) return buffer_too_small("cu_chunk_seqlen", cu_size, need.cu_chunk_seqlen);
  if (seq_size < need.seq_idx) return buffer_too_small("seq_idx", seq_size, need.seq_idx);
  if (last_size < need.last_chunk_indices) return buffer_too_small("last_chunk_indices", last_size, need.last_chunk_indices);
  return need;
}

// Sizes the outputs from an upper bound that needs no pass over the rows
// (a row has at most n/C + 2 chunks), writes once, then trims. Above the cap,
// or where the bound is far above what the rows could need beyond their
// tokens (a long token span), the exact count decides first: one pass over
// the rows with every rule checked, instead of zero-filling up to 2 x 256 MB
// only to reject a workload whose rows break the sequence rule.
template <typename Int>
Result<ChunkMetadata> fast_returning(const BasicWorkloadView<Int>& workload, const Limits& limits) {
  if (auto bad = detail::check_shape(workload)) return *bad;
  const auto rows = static_cast<std::int64_t>(workload.num_computed_tokens.size());
  // Wrapping: values not checked yet may make any span; a negative or large
  // one goes to the exact count, which checks every rule, and write_rows
  // refuses the rest before it writes.
  const auto span = static_cast<std::int64_t>(static_cast<std::uint64_t>(std::int64_t{workload.query_start_loc[rows]}) -
                                              static_cast<std::uint64_t>(std::int64_t{workload.query_start_loc[0]}));
  // Zero-filling this many entries costs more than counting 1/16 as many rows exactly.
  constexpr std::int64_t kCountBeforeFilling = std::int64_t{1} << 16;
  const std::int64_t most_to_fill = std::min(detail::chunk_cap(limits), 16 * rows + kCountBeforeFilling);
  std::int64_t capacity = 0;
  if (span >= 0 && span / workload.chunk_size <= most_to_fill - 2 * rows) {
    capacity = span / workload.chunk_size + 2 * rows;
  } else {
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
  if (auto bad = detail::check_shape(workload)) return *bad;
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
  return fast(view_of(workload), limits);
}

Result<OutputSizes> fast_into(const WorkloadView& workload, const OutputBuffers& out, const Limits& limits) noexcept {
  return validated_write(workload, out, limits);
}
Result<OutputSizes> fast_into(const WorkloadView32& workload, const OutputBuffers& out,
                              const Limits& limits) noexcept {
  return validated_write(workload, out, limits);
}

}  // namespace chunkmeta
