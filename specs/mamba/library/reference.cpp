// The spec's reference procedure, ported step by step from its prose. It is the
// oracle every other implementation is compared with: keep it obvious.
#include "checked_sizes.hpp"
#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta {
namespace {

template <typename Int>
Result<ChunkMetadata> reference_procedure(const BasicWorkloadView<Int>& workload, const Limits& limits) {
  const auto sizes = detail::checked_sizes(workload, limits);
  if (!sizes.ok()) return sizes.error();

  // 64-bit throughout: c + C and n + C - 1 can exceed 2^31-1.
  const std::int64_t chunk = workload.chunk_size;
  const std::size_t rows = workload.num_computed_tokens.size();
  ChunkMetadata out;
  out.cu_chunk_seqlen.clear();
  // The appends below never reallocate (the sizes are known): growing by
  // doubling copied every output ~2x over and cost ~25 allocations a call.
  out.cu_chunk_seqlen.reserve(static_cast<std::size_t>(sizes.value().cu_chunk_seqlen));
  out.seq_idx.reserve(static_cast<std::size_t>(sizes.value().seq_idx));
  out.last_chunk_indices.reserve(static_cast<std::size_t>(sizes.value().last_chunk_indices));
  std::int64_t pos = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    const std::int64_t computed = workload.num_computed_tokens[i];
    std::int64_t n = std::int64_t{workload.query_start_loc[i + 1]} - std::int64_t{workload.query_start_loc[i]};

    // Step 1: a realigning chunk up to the next multiple of C, emitted whatever n is.
    if (computed % chunk != 0) {
      out.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(pos));
      out.seq_idx.push_back(static_cast<std::int32_t>(i));
      const std::int64_t distance = chunk - computed % chunk;
      const std::int64_t length = n < distance ? n : distance;
      pos += length;
      n -= length;
    }

    // Step 2: ceil(n / C) chunks of at most C tokens.
    const std::int64_t further = (n + chunk - 1) / chunk;
    for (std::int64_t k = 0; k < further; ++k) {
      out.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(pos));
      out.seq_idx.push_back(static_cast<std::int32_t>(i));
      const std::int64_t length = n < chunk ? n : chunk;
      pos += length;
      n -= length;
    }

    // Step 3: the index of the latest entry, whether or not this row added one.
    out.last_chunk_indices.push_back(static_cast<std::int32_t>(out.cu_chunk_seqlen.size()) - 1);
  }
  out.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(pos));
  return out;
}

}  // namespace

Result<ChunkMetadata> reference(const WorkloadView& workload, const Limits& limits) {
  return reference_procedure(workload, limits);
}
Result<ChunkMetadata> reference(const WorkloadView32& workload, const Limits& limits) {
  return reference_procedure(workload, limits);
}
Result<ChunkMetadata> reference(const Workload& workload, const Limits& limits) {
  return reference(view_of(workload), limits);
}

}  // namespace chunkmeta
