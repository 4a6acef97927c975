#include "chunkmeta/properties/relations.hpp"

namespace chunkmeta::properties {

std::pair<Workload, Workload> split_batch(const Workload& w, std::size_t split) {
  const auto at = static_cast<std::ptrdiff_t>(split);
  Workload left{w.chunk_size, {w.num_computed_tokens.begin(), w.num_computed_tokens.begin() + at},
                {w.query_start_loc.begin(), w.query_start_loc.begin() + at + 1}, w.dtype};
  Workload right{w.chunk_size, {w.num_computed_tokens.begin() + at, w.num_computed_tokens.end()},
                 {w.query_start_loc.begin() + at, w.query_start_loc.end()}, w.dtype};
  return {std::move(left), std::move(right)};
}

namespace {

Arrays join_mamba(const Arrays& left, const Arrays& right, std::int64_t shift, std::int64_t left_rows) {
  Arrays joined = left;
  auto& cu = joined[0];
  // The left half's closing entry is the right half's opening one.
  if (!cu.empty()) cu.pop_back();
  const auto left_chunks = static_cast<std::int64_t>(left[1].size());
  for (auto v : right[0]) cu.push_back(static_cast<std::int32_t>(v + shift));
  for (auto v : right[1]) joined[1].push_back(static_cast<std::int32_t>(v + left_rows));
  for (auto v : right[2]) joined[2].push_back(static_cast<std::int32_t>(v + left_chunks));
  return joined;
}

Arrays join_indices(const Arrays& left, const Arrays& right, std::int64_t left_rows) {
  Arrays joined = left;
  for (std::size_t k = 0; k < right[0].size(); ++k)
    joined[0].push_back(static_cast<std::int32_t>(k % 2 == 0 ? right[0][k] + left_rows : right[0][k]));
  return joined;
}

Arrays join_offsets(const Arrays& left, const Arrays& right) {
  Arrays joined = left;
  // The left half's total is the right half's first offset.
  const std::int64_t base = left[0].empty() ? 0 : left[0].back();
  for (std::size_t i = 1; i < right[0].size(); ++i) joined[0].push_back(static_cast<std::int32_t>(right[0][i] + base));
  return joined;
}

}  // namespace

Arrays join_results(const harness::Spec& spec, const Arrays& left, const Arrays& right, std::int64_t shift,
                    std::int64_t left_rows) {
  if (&spec == &harness::fla_chunk_indices_spec()) return join_indices(left, right, left_rows);
  if (&spec == &harness::fla_chunk_offsets_spec()) return join_offsets(left, right);
  return join_mamba(left, right, shift, left_rows);
}

Workload shift_query_start_loc(const Workload& w, std::int64_t delta) {
  Workload shifted = w;
  for (auto& q : shifted.query_start_loc) q += delta;
  return shifted;
}

Workload add_chunk_multiples(const Workload& w, const std::vector<std::int64_t>& multiples) {
  Workload moved = w;
  for (std::size_t i = 0; i < moved.num_computed_tokens.size() && i < multiples.size(); ++i)
    moved.num_computed_tokens[i] += multiples[i] * w.chunk_size;
  return moved;
}

Arrays fla_outputs_from_mamba(const harness::Spec& fla_spec, const Workload& w, const Arrays& mamba) {
  const auto& cu = mamba[0];
  const auto& seq = mamba[1];
  const auto& last = mamba[2];
  Arrays out(1);
  if (&fla_spec == &harness::fla_chunk_offsets_spec()) {
    out[0].push_back(0);
    for (auto l : last) out[0].push_back(l + 1);
    return out;
  }
  const auto& q = w.query_start_loc;
  for (std::size_t k = 0; k < seq.size(); ++k) {
    const std::int64_t row = seq[k];
    const std::int64_t start = q[static_cast<std::size_t>(row)] - q[0];
    out[0].push_back(seq[k]);
    out[0].push_back(static_cast<std::int32_t>((cu[k] - start) / w.chunk_size));
  }
  return out;
}

}  // namespace chunkmeta::properties
