// chunkmeta: Mamba chunk metadata (cu_chunk_seqlen, seq_idx, last_chunk_indices).
//
// Three entry families, all total functions: bad input yields an Error value,
// never an exception or an abort.
//   validate   accepts exactly the SPEC's valid domain (plus the size cap);
//   reference  the SPEC's procedure, ported line by line: the oracle;
//   fast       the production implementation, with an allocation-free variant.
#pragma once

#include <optional>

#include "chunkmeta/types.hpp"

namespace chunkmeta {

inline constexpr std::string_view kVersion = "0.1.0";

// Checks the workload against the SPEC's domain, then the size cap.
// Checks run in a documented order and the first broken rule is returned:
//   1. chunk_size (not positive, too large);
//   2. the length of query_start_loc (B + 1 entries);
//   3. num_computed_tokens[0..B) (negative, too large);
//   4. query_start_loc[0..B] (negative, too large, decreasing), per entry in that order;
//   5. rows 0..B-1: num_computed_tokens[i] + new tokens <= 2^31-1;
//   6. the number of chunks against limits.max_chunks.
std::optional<Error> validate(const WorkloadView& workload, const Limits& limits = {});
std::optional<Error> validate(const WorkloadView32& workload, const Limits& limits = {});
std::optional<Error> validate(const Workload& workload, const Limits& limits = {});

// Validates and returns the exact output sizes {K+1, K, B}.
Result<OutputSizes> output_sizes(const WorkloadView& workload, const Limits& limits = {});
Result<OutputSizes> output_sizes(const WorkloadView32& workload, const Limits& limits = {});

// The SPEC's reference procedure, one chunk at a time. Clarity over speed.
Result<ChunkMetadata> reference(const WorkloadView& workload, const Limits& limits = {});
Result<ChunkMetadata> reference(const WorkloadView32& workload, const Limits& limits = {});
Result<ChunkMetadata> reference(const Workload& workload, const Limits& limits = {});

// Production implementation: closed-form chunk counts, outputs sized once.
Result<ChunkMetadata> fast(const WorkloadView& workload, const Limits& limits = {});
Result<ChunkMetadata> fast(const WorkloadView32& workload, const Limits& limits = {});
Result<ChunkMetadata> fast(const Workload& workload, const Limits& limits = {});

// Writes into caller buffers at least output_sizes() long, allocating nothing,
// in a single pass over the rows. Returns the sizes written; only that prefix
// of each buffer is meaningful (the rest may be used as scratch).
// output_buffer_too_small names the first short buffer (cu_chunk_seqlen,
// seq_idx, last_chunk_indices) with the size it needs. On any error the
// buffers' contents are unspecified.
Result<OutputSizes> fast_into(const WorkloadView& workload, const OutputBuffers& out,
                              const Limits& limits = {}) noexcept;
Result<OutputSizes> fast_into(const WorkloadView32& workload, const OutputBuffers& out,
                              const Limits& limits = {}) noexcept;

}  // namespace chunkmeta
