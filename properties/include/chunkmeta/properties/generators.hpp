// What every spec's generators share (each spec's own are in its folder):
// drawing a case's value, ranges, batch sizes, invalid workloads by named
// rule. Shrinking is
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

// `count` values of `gen` from a fixed seed at sizes 0..100 in turn: what a
// test of a generator looks at.
template <typename T>
std::vector<T> draw_values(const rc::Gen<T>& gen, int count) {
  std::vector<T> values;
  rc::Random random(0x5EED);
  for (int i = 0; i < count; ++i) values.push_back(pick(gen, random.split(), i % 101));
  return values;
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
}  // namespace chunkmeta::properties
