// The conv1d program map (specs/conv1d_program_map/README.md) as the harness
// sees it, for the code in this folder.
#pragma once

#include "chunkmeta/conv1d_program_map.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

const Spec& conv1d_program_map_spec();

// The library's view of a workload (block_m is Workload::chunk_size).
inline conv1d::View64 conv1d_view(const Workload& w) { return {w.query_start_loc, w.chunk_size}; }

// The map as the harness's arrays, in the spec's output order.
Arrays arrays_of(conv1d::ProgramMap&& map);

}  // namespace chunkmeta::harness
