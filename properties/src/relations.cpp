#include "chunkmeta/properties/relations.hpp"

namespace chunkmeta::properties {

std::pair<Workload, Workload> split_batch(const Workload& w, std::size_t split) {
  const auto at = static_cast<std::ptrdiff_t>(split);
  // Each half keeps the scalars (chunk and block sizes, the optional scalars, the flags) and the dtype.
  Workload left = empty_like(w);
  Workload right = empty_like(w);
  left.num_computed_tokens.assign(w.num_computed_tokens.begin(), w.num_computed_tokens.begin() + at);
  left.query_start_loc.assign(w.query_start_loc.begin(), w.query_start_loc.begin() + at + 1);
  right.num_computed_tokens.assign(w.num_computed_tokens.begin() + at, w.num_computed_tokens.end());
  right.query_start_loc.assign(w.query_start_loc.begin() + at, w.query_start_loc.end());
  // Every other value per row goes with its row.
  const auto split_values = [at](const std::vector<std::int64_t>& values, std::vector<std::int64_t>& into_left,
                                 std::vector<std::int64_t>& into_right) {
    if (values.empty()) return;
    into_left.assign(values.begin(), values.begin() + at);
    into_right.assign(values.begin() + at, values.end());
  };
  split_values(w.second_per_row, left.second_per_row, right.second_per_row);
  for (std::size_t k = 0; k < w.more_per_row.size(); ++k) split_values(w.more_per_row[k], left.more_per_row[k], right.more_per_row[k]);
  return {std::move(left), std::move(right)};
}

Workload shift_query_start_loc(const Workload& w, std::int64_t delta) {
  Workload shifted = w;
  for (auto& q : shifted.query_start_loc) q += delta;
  return shifted;
}

}  // namespace chunkmeta::properties
