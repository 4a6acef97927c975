// RapidCheck generators for the family's one input domain: every value inside
// the domain it claims, weighted toward the edges where bugs live. Shrinking is
// the engine's (harness::shrink_steps), not RapidCheck's: only values are drawn.
#pragma once

#include <rapidcheck.h>

#include <iosfwd>
#include <string>
#include <vector>

#include "chunkmeta/harness/workload.hpp"

namespace chunkmeta::properties {

using harness::Workload;

// A value of `gen` for one case, drawn as RapidCheck's own property loop drew
// a property's first value (the case's random, split once): the same seed
// draws the same cases it drew under RapidCheck.
template <typename T>
T pick(const rc::Gen<T>& gen, const rc::Random& random, int size) {
  rc::Random own = random;
  return gen(own.split(), size).value();
}

// Uniform in [lo, hi] (inclusive); just `lo` when the range is empty.
rc::Gen<std::int64_t> inclusive_range(std::int64_t lo, std::int64_t hi);

// One of `rules` indices, each as likely (inRange favours small values at small sizes).
rc::Gen<std::int64_t> rule_indices(std::size_t rules);

// The names whose flag is set, in order: a workload's edge classes.
std::vector<std::string> names_of_hits(const std::vector<std::string>& names, const std::vector<bool>& hit);

// Batch sizes 0..1024 (mostly small), the largest allowed growing with the
// size parameter: 4 rows at size 0, all 1024 from size 100.
rc::Gen<std::int64_t> batch_sizes();

// --- Mamba (SPEC Part 1) ---

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

// A workload that breaks one named rule of the domain, with the error
// validation must return for it (by the documented order of checks).
struct InvalidWorkload {
  std::string rule;
  Workload workload;
  Error expected;  // code, field and index; value and bound are not compared
};
// How an invalid workload is made: a valid workload and three parameters (the
// rule, an index into the rules, and two salts), so that it shrinks through
// them: any valid workload and any parameters make an invalid workload.
struct InvalidCase {
  Workload valid;
  std::vector<std::int64_t> parameters;  // rule, salt, amount
};
rc::Gen<InvalidCase> invalid_cases();
InvalidWorkload invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> invalid_workloads();

// The edge classes a workload exercises (see all_edge_classes()).
std::vector<std::string> edge_classes(const Workload& workload);
const std::vector<std::string>& all_edge_classes();
// The rules invalid_workloads() breaks.
const std::vector<std::string>& all_invalid_rules();

// --- FLA (SPEC Part 2): cu_seqlens, no computed tokens ---

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
