// Metamorphic relations every spec shares: transformations of a workload whose
// effect on the outputs is known without a reference, so they check an
// implementation alone. A spec's own relations are in its folder.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::properties {

using harness::Arrays;
using harness::Workload;

// Rows [0, split) and [split, B) as two workloads of their own.
std::pair<Workload, Workload> split_batch(const Workload& workload, std::size_t split);

// A whole batch's outputs predicted from its halves' outputs (each spec
// gives its own): the right half's positions move by `shift` (= q[split] -
// q[0]), its rows by `left_rows`, its chunk indices by the left half's count.
using JoinResults = std::function<Arrays(const Arrays& left, const Arrays& right, std::int64_t shift,
                                         std::int64_t left_rows)>;

// Every query_start_loc (cu_seqlens) entry moved by `delta`.
Workload shift_query_start_loc(const Workload& workload, std::int64_t delta);

}  // namespace chunkmeta::properties
