// Workload-level shrinking, shared by the property suite (as RapidCheck's
// shrinker) and by anything that holds a failing workload (fuzz findings).
#pragma once

#include <functional>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta::harness {

// One edit that makes a valid workload simpler and keeps it valid. Steps are
// small values; apply() builds the candidate only when it is tried, so a
// 1024-row workload does not materialise thousands of copies at once.
struct ShrinkStep {
  enum class Kind { remove_rows, set_offset, set_chunk_size, set_computed, set_new_tokens };
  Kind kind{};
  std::size_t row = 0;    // first row (remove_rows) or the row edited
  std::size_t count = 0;  // rows removed
  std::int64_t value = 0; // the new value
};

// Steps for a valid `workload`, most aggressive first: fewer rows (halves,
// then smaller blocks, then single rows), q[0] moved toward 0, a smaller chunk
// size, then smaller computed tokens (same residue first) and fewer new tokens
// per row. Each step strictly decreases (rows, q[0], C, computed, new tokens),
// so repeated shrinking terminates; chunk sizes that would multiply the
// number of chunks are skipped so a step never costs more than the failure.
std::vector<ShrinkStep> shrink_steps(const Workload& workload);
Workload apply(const Workload& workload, const ShrinkStep& step);

// Greedy shrinking: repeatedly take the first candidate for which
// `still_fails` holds. Returns the minimal workload reached.
Workload shrink_while(Workload workload, const std::function<bool(const Workload&)>& still_fails);

}  // namespace chunkmeta::harness
