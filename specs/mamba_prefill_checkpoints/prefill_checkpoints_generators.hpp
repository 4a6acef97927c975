// The prefill checkpoint planner's generators (specs/mamba_prefill_checkpoints):
// H, M, the alignment and the flag drawn against one another (H < M, = M, > M;
// no alignment, 1, 16, a multiple of H, one that rejects), and each row's
// query start and length drawn against the rule's edges (on and off the hash
// grid, a checkpoint at the first and last allowed token, the initial state's
// block at its edge, rows without new tokens, values near 2^31).
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

rc::Gen<Workload> planner_valid_workloads();
// 2^15 to 140,000 rows, drawn as the valid ones are.
rc::Gen<Workload> planner_huge_batches();
std::vector<std::string> planner_huge_batch_classes(const Workload& workload);
const std::vector<std::string>& all_planner_huge_batch_classes();

// Each rule of the domain, in the order validation checks them.
rc::Gen<InvalidCase> planner_invalid_cases();
InvalidWorkload planner_invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> planner_invalid_workloads();
const std::vector<std::string>& all_planner_invalid_rules();

std::vector<std::string> planner_edge_classes(const Workload& workload);
const std::vector<std::string>& all_planner_edge_classes();

}  // namespace chunkmeta::properties
