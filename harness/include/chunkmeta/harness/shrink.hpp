// Workload-level shrinking: the one shrinker, shared by the run loop (for
// every property's cases) and by anything that holds a failing workload (a
// failing corpus entry, a fuzz finding).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chunkmeta/harness/oracle.hpp"

namespace chunkmeta::harness {

// One edit that makes a valid workload simpler and keeps it valid. Steps are
// small values; apply() builds the candidate only when it is tried, so a
// 1024-row workload does not materialise thousands of copies at once.
struct ShrinkStep {
  // cut_new_tokens: set_new_tokens on a row holding much of a huge output, tried first.
  // clear_rows: rows [row, row + count) get 0 computed and 0 new tokens (huge batches only).
  // simplest_values: the rows kept, every value at its simplest (q[0] = 0, C = 1, no tokens): one
  //   step where a failure that needs only the rows (a hang, a crash) would take one per value.
  // narrow_dtype: int64 offsets to int32, the engine's usual (last: the simplest change).
  // set_block_size: the second scalar (Workload::block_size) smaller; like set_chunk_size, keeping
  //   whichever of the two was a multiple of the other so.
  // set_optional_scalar: none (count 0), or `value` (count 1); clear_flag: the flag false.
  // The fields past the named ones (Workload::more_*): set_more_scalar (row: which) toward 0;
  //   set_more_per_row (count: which array) toward 0; set_more_optional (row: which) none (count 0)
  //   or `value` (count 1); clear_more_flag (row: which).
  enum class Kind { cut_new_tokens, remove_rows, clear_rows, simplest_values, set_offset, set_chunk_size,
                    set_block_size, set_computed, set_new_tokens, narrow_dtype, set_second_per_row,
                    set_optional_scalar, clear_flag, set_more_scalar, set_more_per_row, set_more_optional,
                    clear_more_flag };
  Kind kind{};
  std::size_t row = 0;    // first row (remove_rows, clear_rows) or the row edited
  std::size_t count = 0;  // rows removed or cleared
  std::int64_t value = 0; // the new value
};

// Outputs above this many chunks are cut down first (cut_new_tokens).
inline constexpr std::int64_t kHugeOutputChunks = std::int64_t{1} << 20;
// Batches above this many rows (only the huge-batch generator makes them)
// also get clear_rows steps.
inline constexpr std::size_t kManyRows = 1024;

// Steps for a valid `workload`, most aggressive first: for a huge output, the
// biggest rows' new tokens emptied or halved; then fewer rows (halves,
// then smaller blocks, then single rows); above kManyRows rows, blocks of
// rows emptied (so the scattered busy rows of 2^16 go in a few steps, not one
// per row); then every value at its simplest at once; then q[0] moved toward 0, a smaller chunk
// size, then smaller computed tokens (same residue first), fewer new tokens
// and a smaller second value (toward 0) per row. Each step strictly decreases (rows, q[0], C, the block size, computed, new tokens),
// so repeated shrinking terminates (an optional scalar goes to none or a smaller value, a flag to false); chunk sizes that would multiply the
// number of chunks by more than 4 (or grow it past 65,536) are
// skipped, so a step never costs much more than the failure.
std::vector<ShrinkStep> shrink_steps(const Workload& workload);
Workload apply(const Workload& workload, const ShrinkStep& step);

// The same steps in the order a greedy pass should try them after `accepted`
// produced `workload`: from the accepted step's place on (the same block size
// and row, the same row's values, ...), then wrapping round to the steps
// before it. Those were tried on the previous workload and did not reproduce,
// so they most likely still do not; trying them last (instead of first, after
// every accepted step) turns a shrink of a 129-row failure from ~69,000
// implementation calls into ~800 per property, and the fixpoint is
// still a local minimum: a workload is final only once every step was tried.
std::vector<ShrinkStep> shrink_steps_resuming(const Workload& workload, const ShrinkStep& accepted);

// The result of greedy shrinking.
struct Shrunk {
  Workload workload;          // the smallest failing workload reached
  bool minimal = false;       // no step of it fails (false: stopped early)
  int accepted = 0;           // steps taken
};

struct ShrinkOptions {
  // Called with each smaller failing workload as it is found (for reports that
  // show progress while a long shrink runs).
  std::function<void(const Workload&)> on_smaller;
  // Polled between batches; true ends the shrink with the best so far.
  std::function<bool()> stop_requested;
  // The largest batch of candidates judged at once (batches start at one and
  // double while no candidate in them fails).
  std::size_t max_batch = 256;
  // Candidates it may try (empty: all): a stated domain leaves the others out, never sent.
  std::function<bool(const Workload&)> allowed;
};

// Greedy shrinking: repeatedly take the first candidate, in pass order, that
// still fails. `first_failing` judges a batch of candidates and returns the
// index of the first that fails (or nullopt): a subprocess gets the whole
// batch in one round trip, and the result is the same as judging one by one.
Shrunk shrink_batched(Workload workload,
                      const std::function<std::optional<std::size_t>(std::span<const Workload>)>& first_failing,
                      const ShrinkOptions& options = {});

// A failing workload (a fuzz finding, a failing corpus entry) shrunk while an
// implementation still fails on it the way it did (the same kind of finding;
// valid workloads only: the shrinker keeps validity), then the counterexamples
// of the smallest one reached, each with its status ("minimal", or "not fully
// shrunk (why)" when options.stop_requested ended it). Candidates go to an
// implementation in batches (compute_batch: one round trip for a subprocess).
// `on_smaller` is told each smaller failing case as it is found (options'
// own on_smaller is replaced). Empty if nothing fails.
std::vector<Counterexample> shrink_failure(const Workload& found, std::span<const Implementation> implementations,
                                           const std::string& property, ShrinkOptions options = {},
                                           const std::function<void(const Counterexample&)>& on_smaller = nullptr);

}  // namespace chunkmeta::harness
