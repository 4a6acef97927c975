// The conv1d program map's generators (specs/conv1d_program_map): FLA's
// cu_seqlens (the same input domain) around vLLM's block length, int32.
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

// vLLM's 8 most of the time; FLA's chunk sizes (1, powers of two, odd, huge) else.
rc::Gen<std::int64_t> conv1d_block_ms();

rc::Gen<Workload> conv1d_valid_workloads();
rc::Gen<Workload> conv1d_huge_batches();

rc::Gen<InvalidCase> conv1d_invalid_cases();
InvalidWorkload conv1d_invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> conv1d_invalid_workloads();
const std::vector<std::string>& all_conv1d_invalid_rules();

std::vector<std::string> conv1d_edge_classes(const Workload& workload);
const std::vector<std::string>& all_conv1d_edge_classes();

}  // namespace chunkmeta::properties
