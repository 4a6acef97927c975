// The packed grid's generators (specs/mamba_packed_grid): query_start_loc
// from 0, each row's length drawn against the room left in the physical chunk
// it starts in, so rows start on and off the grid, end on it, and fit inside
// one chunk; rows without tokens anywhere, on and off the grid.
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

// The engines' 256 (and 64, 128), 4 as in the contract's examples, 1, powers of two, odd sizes and large ones.
rc::Gen<std::int64_t> packed_grid_chunk_sizes();

rc::Gen<Workload> packed_grid_valid_workloads();
// 2^15 to 140,000 rows, int32: FLA's huge batches (mostly rows without
// tokens) half the time, else every row with tokens, as the engines build them.
rc::Gen<Workload> packed_grid_huge_batches();

// Invalid workloads by named rule, the offsets named as the spec names them
// ("query_start_loc" or "cu_seqlens", whose decreasing entry is cu_seqlens_decreasing).
rc::Gen<InvalidCase> packed_grid_invalid_cases();
InvalidWorkload packed_grid_invalid_of(const InvalidCase& invalid, std::string_view offsets_field);
const std::vector<std::string>& all_packed_grid_invalid_rules(std::string_view offsets_field);

std::vector<std::string> packed_grid_edge_classes(const Workload& workload);
const std::vector<std::string>& all_packed_grid_edge_classes();

// The same batch with each row's length rounded down to whole chunks but the
// last row with tokens: every row with tokens then starts on the grid.
Workload rows_on_the_grid(Workload w);
// The same batch without its rows without tokens.
Workload rows_with_tokens(Workload w);

}  // namespace chunkmeta::properties
