// The spec folders' way into the kernels' view (kernel_view.hpp): a
// workload's batch, and outputs read as the arrays a kernel takes, with the
// fault for outputs too few to read.
#pragma once

#include <optional>

#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/kernel_view/kernel_view.hpp"

namespace chunkmeta::harness {

// The batch of `workload`: its computed tokens (per_row), or none (every row starts at 0).
kernel_view::Batch batch_of(const Workload& workload, bool with_computed);

// The fault of outputs with fewer than `needed` arrays (an implementation's answer may have any shape).
std::optional<kernel_view::Fault> too_few_outputs(const Spec& spec, const Arrays& arrays, std::size_t needed);

// Mamba-2's scan over three of `arrays` (cu_chunk_seqlen, seq_idx,
// last_chunk_indices at those positions): kernel-adequate, then, with
// `cache_block` > 0, cache-adequate for that block size. `scanned`, if given,
// receives the scan (its chunk-end states).
std::optional<kernel_view::Fault> mamba2_states(const Workload& workload, bool with_computed, const Arrays& arrays,
                                                std::size_t cu, std::size_t seq_idx, std::size_t last,
                                                std::int64_t cache_block, kernel_view::Scan* scanned = nullptr);

}  // namespace chunkmeta::harness
