#include "chunkmeta/properties/relations.hpp"

namespace chunkmeta::properties {

std::pair<Workload, Workload> split_batch(const Workload& w, std::size_t split) {
  const auto at = static_cast<std::ptrdiff_t>(split);
  Workload left{w.chunk_size, {w.num_computed_tokens.begin(), w.num_computed_tokens.begin() + at},
                {w.query_start_loc.begin(), w.query_start_loc.begin() + at + 1}};
  Workload right{w.chunk_size, {w.num_computed_tokens.begin() + at, w.num_computed_tokens.end()},
                 {w.query_start_loc.begin() + at, w.query_start_loc.end()}};
  return {std::move(left), std::move(right)};
}

ChunkMetadata join_results(const ChunkMetadata& left, const ChunkMetadata& right, std::int64_t shift,
                           std::int64_t left_rows) {
  ChunkMetadata joined = left;
  // The left half's closing entry is the right half's opening one.
  if (!joined.cu_chunk_seqlen.empty()) joined.cu_chunk_seqlen.pop_back();
  const auto left_chunks = static_cast<std::int64_t>(left.seq_idx.size());
  for (auto v : right.cu_chunk_seqlen) joined.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(v + shift));
  for (auto v : right.seq_idx) joined.seq_idx.push_back(static_cast<std::int32_t>(v + left_rows));
  for (auto v : right.last_chunk_indices) joined.last_chunk_indices.push_back(static_cast<std::int32_t>(v + left_chunks));
  return joined;
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

}  // namespace chunkmeta::properties
