// The prefix-cache checkpoint plan (specs/mamba_checkpoint_plan/README.md) as
// the harness sees it, for the code in this folder.
#pragma once

#include "chunkmeta/checkpoint_plan.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

const Spec& checkpoint_plan_spec();

// The library's view of a workload (block_size is Workload::block_size).
inline checkpoint::View64 checkpoint_view(const Workload& w) {
  return {w.chunk_size, w.block_size, w.num_computed_tokens, w.query_start_loc};
}

// The plan as the harness's arrays, in the spec's output order.
Arrays arrays_of(checkpoint::Plan&& plan);

}  // namespace chunkmeta::harness
