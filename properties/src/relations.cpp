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
  const auto from = other_per_row(w);
  const auto to_left = other_per_row(left);
  const auto to_right = other_per_row(right);
  for (std::size_t a = 0; a < from.size(); ++a) {
    if (from[a]->empty()) continue;
    to_left[a]->assign(from[a]->begin(), from[a]->begin() + at);
    to_right[a]->assign(from[a]->begin() + at, from[a]->end());
  }
  return {std::move(left), std::move(right)};
}

Workload shift_query_start_loc(const Workload& w, std::int64_t delta) {
  Workload shifted = w;
  for (auto& q : shifted.query_start_loc) q += delta;
  return shifted;
}

}  // namespace chunkmeta::properties
