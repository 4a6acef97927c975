// The virtual batches' generators (specs/local_attn_virtual_batches):
// (A, P) pairs as engines configure them, rows with computed tokens on, one
// short of and one past attention-chunk boundaries, and every rule broken.
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

rc::Gen<Workload> local_attn_valid_workloads();

// 32,767 to 140,000 rows, mostly of one token, some spanning many chunks.
rc::Gen<Workload> local_attn_huge_batches();
std::vector<std::string> local_attn_huge_batch_classes(const Workload& workload);
const std::vector<std::string>& all_local_attn_huge_batch_classes();

rc::Gen<InvalidCase> local_attn_invalid_cases();
InvalidWorkload local_attn_invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> local_attn_invalid_workloads();
const std::vector<std::string>& all_local_attn_invalid_rules();

std::vector<std::string> local_attn_edge_classes(const Workload& workload);
const std::vector<std::string>& all_local_attn_edge_classes();

}  // namespace chunkmeta::properties
