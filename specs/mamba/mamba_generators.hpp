// Mamba's generators (specs/mamba): every value inside the domain it claims,
// weighted toward the edges where bugs live. Shrinking is the engine's.
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

// Chunk sizes: powers of two 1..4096, model sizes, cache block sizes (528,
// 1056, ...), arbitrary values and very large ones up to 2^31-1.
rc::Gen<std::int64_t> chunk_sizes();

// Valid workloads over the whole domain, batches of 0..1024 rows.
rc::Gen<Workload> valid_workloads();

// The batch-size dimension: 32,767 to 140,000 rows, mostly without chunks,
// with rows of every write path's kind at indices past 2^15 and 2^16, so a
// row index stored in 8 or 16 bits anywhere shows.
rc::Gen<Workload> huge_batches();
std::vector<std::string> huge_batch_classes(const Workload& workload);
const std::vector<std::string>& all_huge_batch_classes();

rc::Gen<InvalidCase> invalid_cases();
InvalidWorkload invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> invalid_workloads();

// The edge classes a workload exercises (see all_edge_classes()).
std::vector<std::string> edge_classes(const Workload& workload);
const std::vector<std::string>& all_edge_classes();
// The rules invalid_workloads() breaks.
const std::vector<std::string>& all_invalid_rules();

}  // namespace chunkmeta::properties
