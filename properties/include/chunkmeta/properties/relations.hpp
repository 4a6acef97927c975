// Metamorphic relations: transformations of a workload whose effect on the
// outputs is known without a reference, so they check an implementation
// alone; and the relation between the family's specs (SPEC Part 2, "Relation
// to Part 1"), which checks one spec's implementation against the other's reference.
#pragma once

#include <utility>
#include <vector>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::properties {

using harness::Arrays;
using harness::Workload;

// Rows [0, split) and [split, B) as two workloads of their own.
std::pair<Workload, Workload> split_batch(const Workload& workload, std::size_t split);

// A whole batch's outputs predicted from its halves' outputs, per spec: the
// right half's positions move by `shift` (= q[split] - q[0]), its rows by
// `left_rows`, its chunk indices by the left half's chunk count.
Arrays join_results(const harness::Spec& spec, const Arrays& left, const Arrays& right, std::int64_t shift,
                    std::int64_t left_rows);

// Every query_start_loc (cu_seqlens) entry moved by `delta`.
Workload shift_query_start_loc(const Workload& workload, std::int64_t delta);

// num_computed_tokens[i] += multiples[i] * chunk_size.
Workload add_chunk_multiples(const Workload& workload, const std::vector<std::int64_t>& multiples);

// FLA's outputs from Mamba's for the same workload without computed tokens:
// chunk k of row i at cu_chunk_seqlen[k] is (i, (cu_chunk_seqlen[k] - start_i) / C),
// and offsets[i + 1] = last_chunk_indices[i] + 1.
Arrays fla_outputs_from_mamba(const harness::Spec& fla_spec, const Workload& workload, const Arrays& mamba);

}  // namespace chunkmeta::properties
