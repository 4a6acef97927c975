// Metamorphic relations: transformations of a workload whose effect on the
// output is known without a reference, so they check an implementation alone.
#pragma once

#include <utility>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta::properties {

// Rows [0, split) and [split, B) as two workloads of their own.
std::pair<Workload, Workload> split_batch(const Workload& workload, std::size_t split);

// The whole batch's result predicted from its halves' results: the right
// half's positions move by `shift` (= q[split] - q[0]), its rows by `left_rows`,
// and its chunk indices by the left half's chunk count.
ChunkMetadata join_results(const ChunkMetadata& left, const ChunkMetadata& right, std::int64_t shift,
                           std::int64_t left_rows);

// Every query_start_loc entry moved by `delta`.
Workload shift_query_start_loc(const Workload& workload, std::int64_t delta);

// num_computed_tokens[i] += multiples[i] * chunk_size.
Workload add_chunk_multiples(const Workload& workload, const std::vector<std::int64_t>& multiples);

}  // namespace chunkmeta::properties
