// The virtual batches of chunked local attention
// (specs/local_attn_virtual_batches/README.md) as the harness sees them, for
// the code in this folder.
#pragma once

#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/local_attention.hpp"

namespace chunkmeta::harness {

const Spec& local_attn_spec();

// The library's view of a workload: A is Workload::chunk_size, P
// Workload::block_size, seq_lens the per-row values.
inline local_attn::View64 local_attn_view(const Workload& w) {
  return {w.chunk_size, w.block_size, w.query_start_loc, w.num_computed_tokens};
}

// The virtual batches as the harness's arrays, in the spec's output order.
Arrays arrays_of(local_attn::VirtualBatches&& batches);

}  // namespace chunkmeta::harness
