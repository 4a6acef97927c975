// FLA's generators (specs/fla): cu_seqlens, no computed tokens.
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

// Chunk sizes FLA's kernels use (16, 32, 64, 128), 1, odd sizes and large ones.
rc::Gen<std::int64_t> fla_chunk_sizes();

// Valid workloads: empty sequences first, in the middle, last and throughout;
// lengths at multiples of C and one either side; lengths near 2^31 with a
// large C; int32 and int64 cu_seqlens. `chunk_sizes` draws C (the conv1d
// program map draws cu_seqlens the same way around its own block length).
rc::Gen<Workload> fla_valid_workloads(rc::Gen<std::int64_t> chunk_sizes = fla_chunk_sizes());

// 32,767 to 140,000 sequences, mostly empty, with chunks at sequence indices
// past 2^15 and 2^16 (a sequence id kept in 16 bits shows). C from
// `chunk_sizes` (FLA's, 1 to 300), each long sequence 32-64 chunks.
rc::Gen<std::int64_t> fla_huge_batch_chunk_sizes();
rc::Gen<Workload> fla_huge_batches(rc::Gen<std::int64_t> chunk_sizes = fla_huge_batch_chunk_sizes());
std::vector<std::string> fla_huge_batch_classes(const Workload& workload);
const std::vector<std::string>& all_fla_huge_batch_classes();

rc::Gen<InvalidCase> fla_invalid_cases(rc::Gen<Workload> valid = fla_valid_workloads());
InvalidWorkload fla_invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> fla_invalid_workloads();
const std::vector<std::string>& all_fla_invalid_rules();

std::vector<std::string> fla_edge_classes(const Workload& workload);
const std::vector<std::string>& all_fla_edge_classes();

}  // namespace chunkmeta::properties
