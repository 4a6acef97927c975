// FLA's generators (specs/fla): cu_seqlens, no computed tokens.
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

// Chunk sizes FLA's kernels use (16, 32, 64, 128), 1, odd sizes and large ones.
rc::Gen<std::int64_t> fla_chunk_sizes();

// Valid workloads: empty sequences first, in the middle, last and throughout;
// lengths at multiples of C and one either side; lengths near 2^31 with a
// large C; int32 and int64 cu_seqlens.
rc::Gen<Workload> fla_valid_workloads();

// 32,767 to 140,000 sequences, mostly empty, with chunks at sequence indices
// past 2^15 and 2^16 (a sequence id kept in 16 bits shows).
rc::Gen<Workload> fla_huge_batches();
std::vector<std::string> fla_huge_batch_classes(const Workload& workload);
const std::vector<std::string>& all_fla_huge_batch_classes();

rc::Gen<InvalidCase> fla_invalid_cases();
InvalidWorkload fla_invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> fla_invalid_workloads();
const std::vector<std::string>& all_fla_invalid_rules();

std::vector<std::string> fla_edge_classes(const Workload& workload);
const std::vector<std::string>& all_fla_edge_classes();

}  // namespace chunkmeta::properties
