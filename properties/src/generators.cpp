// The generators every spec's suite shares: ranges, rule indices, batch
// sizes that grow with RapidCheck's size, the names of an edge class's hits.
#include "chunkmeta/properties/generators.hpp"

#include <algorithm>

namespace chunkmeta::properties {

using rc::Gen;
namespace gen = rc::gen;

// Small cases first: RapidCheck's size parameter grows from 0 to 100 over a
// run, and the largest batch allowed grows with it (4 rows at size 0, all
// 1024 from size 100), so most bugs are met on small workloads in the first
// cases, while a whole run still draws the full distribution.
Gen<std::int64_t> batch_sizes() {
  const Gen<std::int64_t> full = gen::weightedOneOf<std::int64_t>({
      {5, gen::just<std::int64_t>(0)},
      {15, gen::just<std::int64_t>(1)},
      {25, inclusive_range(2, 4)},
      {35, inclusive_range(5, 32)},
      {15, inclusive_range(33, 256)},
      {5, inclusive_range(257, 1024)},
  });
  return gen::withSize([full](int size) {
    const std::int64_t largest = 4 + 10 * static_cast<std::int64_t>(size) * static_cast<std::int64_t>(size);
    return gen::map(full, [largest](std::int64_t rows) { return std::min(rows, largest); });
  });
}

Gen<std::int64_t> inclusive_range(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return gen::just(lo);
  return gen::inRange<std::int64_t>(lo, hi + 1);
}

std::vector<std::string> names_of_hits(const std::vector<std::string>& names, const std::vector<bool>& hit) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (hit[k]) out.push_back(names[k]);
  }
  return out;
}

Gen<std::int64_t> rule_indices(std::size_t rules) {
  std::vector<std::int64_t> indices(rules);
  for (std::size_t k = 0; k < rules; ++k) indices[k] = static_cast<std::int64_t>(k);
  return gen::elementOf(indices);
}

}  // namespace chunkmeta::properties
