// chunkmeta: Mamba chunk metadata (cu_chunk_seqlen, seq_idx, last_chunk_indices).
//
// Three entry families, all total functions: bad input yields an Error value,
// never an exception or an abort.
//   validate   accepts exactly the spec's valid domain (plus the size cap);
//   reference  the spec's procedure, ported line by line: the oracle;
//   fast       the production implementation, with an allocation-free variant.
#pragma once

#include <optional>

#include "chunkmeta/types.hpp"

namespace chunkmeta {

// Checks the workload against the spec's domain, then the size cap.
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

// The largest outputs of any valid workload with at most `max_tokens` new
// tokens in all (q[B] - q[0]) and `max_rows` rows at `chunk_size`, so that an
// engine sizes its buffers for fast_into once, from its own limits:
// K <= min(floor((T + B(C - 2)) / C) + B, T + B) (a row of n >= 1 tokens has
// at most floor((n + C - 2) / C) + 1 chunks and at most n; a row without
// tokens at most one). Reached by one row of C + 2 tokens after C - 1
// computed ones, and by rows without tokens after unaligned computed ones.
// Errors: chunk_size as validate() words them; negative_value for a negative
// max_tokens or max_rows; output_too_large above the cap.
Result<OutputSizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size,
                                     const Limits& limits = {}) noexcept;

// The spec's reference procedure, one chunk at a time. Clarity over speed.
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
