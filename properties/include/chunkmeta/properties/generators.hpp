// RapidCheck generators for workloads: every value inside the domain it
// claims, weighted toward the edges where bugs live, shrinking toward fewer
// rows, smaller counts and smaller chunk sizes.
#pragma once

#include <rapidcheck.h>

#include <iosfwd>
#include <string>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta {
// RapidCheck prints generated values with showValue (found by ADL): as JSON.
void showValue(const Workload& workload, std::ostream& os);
}  // namespace chunkmeta

namespace chunkmeta::properties {

// Uniform in [lo, hi] (inclusive); just `lo` when the range is empty.
rc::Gen<std::int64_t> inclusive_range(std::int64_t lo, std::int64_t hi);

// Chunk sizes: powers of two 1..4096, model sizes, cache block sizes (528,
// 1056, ...), arbitrary values and very large ones up to 2^31-1.
rc::Gen<std::int64_t> chunk_sizes();

// Valid workloads over the whole domain, batches of 0..1024 rows (mostly small).
rc::Gen<Workload> valid_workloads();

// The batch-size dimension: 32,767 to 140,000 rows, mostly without chunks,
// with rows of every write path's kind at indices past 2^15 and 2^16, so a
// row index stored in 8 or 16 bits anywhere shows. Costly per case: a
// property of its own runs a share of the cases (see Property::case_share).
rc::Gen<Workload> huge_batches();
std::vector<std::string> huge_batch_classes(const Workload& workload);
const std::vector<std::string>& all_huge_batch_classes();

// A workload that breaks one named rule of the domain, with the error that
// validation must return for it (by the documented order of checks).
struct InvalidWorkload {
  std::string rule;
  Workload workload;
  Error expected;  // code, field and index; value and bound are not compared
};
void showValue(const InvalidWorkload& invalid, std::ostream& os);
rc::Gen<InvalidWorkload> invalid_workloads();

// The edge classes a workload exercises (see all_edge_classes()).
std::vector<std::string> edge_classes(const Workload& workload);
const std::vector<std::string>& all_edge_classes();
// The rules invalid_workloads() breaks.
const std::vector<std::string>& all_invalid_rules();

}  // namespace chunkmeta::properties
