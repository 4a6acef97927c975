// The packed-grid formulation (specs/mamba_packed_grid): validation, the
// contract's definition ported step by step (cut points gathered and sorted),
// and the one-pass writers of both output forms.
#include "chunkmeta/packed_grid.hpp"

#include <algorithm>
#include <vector>

#include "checked_sizes.hpp"
#include "offsets.hpp"

namespace chunkmeta::packed_grid {
namespace {

// The offsets field as each form's engine names its argument.
detail::OffsetsField field_of(Offsets offsets) noexcept {
  if (offsets == Offsets::cu_seqlens) return {"cu_seqlens", ErrorCode::cu_seqlens_decreasing};
  return {"query_start_loc", ErrorCode::query_start_loc_decreasing};
}

// Row [a, b)'s pieces: one from a, then one from each multiple of C inside (a, b); none when it is empty.
constexpr std::int64_t pieces_of(std::int64_t a, std::int64_t b, std::int64_t C) noexcept {
  return b > a ? (b - 1) / C - a / C + 1 : 0;
}

template <typename Int>
Result<Sizes> sizes_of(const BasicView<Int>& view, const Limits& limits, Offsets offsets) noexcept {
  if (auto error = detail::check_chunk_size(view.chunk_size)) return *error;
  const auto& q = view.query_start_loc;
  const detail::OffsetsField field = field_of(offsets);
  if (q.empty()) return Error{ErrorCode::length_mismatch, field.name, 0, 0, 1};
  if (!detail::in_value_range(q[0])) return detail::broken_offset(q, 0, field);
  if (q[0] != 0) return Error{ErrorCode::value_too_large, field.name, 0, q[0], 0};
  std::int64_t pieces = 0;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    if (!detail::in_value_range(q[i + 1]) || q[i + 1] < q[i]) return detail::broken_offset(q, i + 1, field);
    pieces += pieces_of(q[i], q[i + 1], view.chunk_size);
  }
  const std::int64_t cap = detail::chunk_cap(limits);
  if (pieces > cap) return detail::output_too_large(pieces, cap);
  return Sizes{pieces, static_cast<std::int64_t>(q.size()) - 1};
}

// Calls piece(k, row, start) for each piece in order, and row_done(row, last) after each row.
template <typename Int, typename Piece, typename RowDone>
void walk(const BasicView<Int>& view, Piece&& piece, RowDone&& row_done) noexcept {
  const auto& q = view.query_start_loc;
  const std::int64_t C = view.chunk_size;
  std::int64_t k = 0;
  for (std::size_t i = 0; i + 1 < q.size(); ++i) {
    const std::int64_t a = q[i];
    const std::int64_t b = q[i + 1];
    const auto row = static_cast<std::int64_t>(i);
    if (b > a) {
      piece(k++, row, a);
      for (std::int64_t start = (a / C + 1) * C; start < b; start += C) piece(k++, row, start);
    }
    row_done(row, b > a ? k - 1 : -1);
  }
}

template <typename Int>
Result<Sizes> write_metadata(const BasicView<Int>& view, const MetadataBuffers& out, const Limits& limits) noexcept {
  const auto sizes = sizes_of(view, limits, Offsets::query_start_loc);
  if (!sizes.ok()) return sizes.error();
  const auto& n = sizes.value();
  const std::pair<std::string_view, std::pair<std::size_t, std::int64_t>> wanted[] = {
      {"cu_chunk_seqlens", {out.cu_chunk_seqlens.size(), n.pieces + 1}},
      {"last_chunk_indices", {out.last_chunk_indices.size(), n.rows}},
      {"seq_idx", {out.seq_idx.size(), n.pieces}}};
  for (const auto& [name, have_need] : wanted) {
    if (static_cast<std::int64_t>(have_need.first) < have_need.second)
      return detail::buffer_too_small(name, static_cast<std::int64_t>(have_need.first), have_need.second);
  }
  walk(
      view,
      [&](std::int64_t k, std::int64_t row, std::int64_t start) {
        out.cu_chunk_seqlens[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(start);
        out.seq_idx[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(row);
      },
      [&](std::int64_t row, std::int64_t last) { out.last_chunk_indices[static_cast<std::size_t>(row)] = static_cast<std::int32_t>(last); });
  out.cu_chunk_seqlens[static_cast<std::size_t>(n.pieces)] = static_cast<std::int32_t>(view.query_start_loc.back());
  return sizes;
}

template <typename Int>
Result<Sizes> write_chunk_indices(const BasicView<Int>& view, const ChunkIndicesBuffers& out, const Limits& limits) noexcept {
  const auto sizes = sizes_of(view, limits, Offsets::cu_seqlens);
  if (!sizes.ok()) return sizes.error();
  const auto& n = sizes.value();
  if (static_cast<std::int64_t>(out.chunk_indices.size()) < n.pieces)
    return detail::buffer_too_small("chunk_indices", static_cast<std::int64_t>(out.chunk_indices.size()), n.pieces);
  if (static_cast<std::int64_t>(out.chunk_offsets.size()) < n.pieces)
    return detail::buffer_too_small("chunk_offsets", static_cast<std::int64_t>(out.chunk_offsets.size()), n.pieces);
  const std::int64_t C = view.chunk_size;
  walk(
      view,
      [&](std::int64_t k, std::int64_t, std::int64_t start) {
        out.chunk_indices[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(start / C);
        out.chunk_offsets[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(start % C);
      },
      [](std::int64_t, std::int64_t) {});
  return sizes;
}

template <typename Int>
Result<Metadata> allocated_metadata(const BasicView<Int>& view, const Limits& limits) {
  const auto sizes = sizes_of(view, limits, Offsets::query_start_loc);
  if (!sizes.ok()) return sizes.error();
  Metadata m;
  m.cu_chunk_seqlens.resize(static_cast<std::size_t>(sizes.value().pieces + 1));
  m.last_chunk_indices.resize(static_cast<std::size_t>(sizes.value().rows));
  m.seq_idx.resize(static_cast<std::size_t>(sizes.value().pieces));
  const auto written = write_metadata(view, {m.cu_chunk_seqlens, m.last_chunk_indices, m.seq_idx}, limits);
  if (!written.ok()) return written.error();
  return m;
}

template <typename Int>
Result<ChunkIndices> allocated_chunk_indices(const BasicView<Int>& view, const Limits& limits) {
  const auto sizes = sizes_of(view, limits, Offsets::cu_seqlens);
  if (!sizes.ok()) return sizes.error();
  ChunkIndices c;
  c.chunk_indices.resize(static_cast<std::size_t>(sizes.value().pieces));
  c.chunk_offsets.resize(static_cast<std::size_t>(sizes.value().pieces));
  const auto written = write_chunk_indices(view, {c.chunk_indices, c.chunk_offsets}, limits);
  if (!written.ok()) return written.error();
  return c;
}

// The definition: the starts of the pieces of [0, T) cut at every multiple of C and every row start
// inside it, each with its row (the row whose tokens it holds).
struct Pieces {
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> rows;
};
Pieces pieces_by_definition(const View64& view) {
  const auto& q = view.query_start_loc;
  const std::int64_t T = q.back();
  const std::int64_t C = view.chunk_size;
  // Step 1: the cut points inside (0, T), with 0 the first piece's start.
  std::vector<std::int64_t> cuts{0};
  for (std::int64_t m = C; m < T; m += C) cuts.push_back(m);
  for (std::size_t i = 1; i + 1 < q.size(); ++i) {
    if (q[i] > 0 && q[i] < T) cuts.push_back(q[i]);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // Step 2: each piece [cut, next cut) belongs to the row whose span holds it
  // (T = 0: no piece). The cuts are sorted, so that row only moves forward.
  Pieces p;
  if (T == 0) return p;
  std::size_t row = 0;
  for (const std::int64_t start : cuts) {
    while (!(q[row] <= start && start < q[row + 1])) ++row;
    p.starts.push_back(start);
    p.rows.push_back(static_cast<std::int64_t>(row));
  }
  return p;
}

}  // namespace

std::optional<Error> validate(const View64& view, const Limits& limits, Offsets offsets) noexcept {
  return detail::error_of(sizes_of(view, limits, offsets));
}
std::optional<Error> validate(const View32& view, const Limits& limits, Offsets offsets) noexcept {
  return detail::error_of(sizes_of(view, limits, offsets));
}
Result<Sizes> output_sizes(const View64& view, const Limits& limits, Offsets offsets) noexcept {
  return sizes_of(view, limits, offsets);
}
Result<Sizes> output_sizes(const View32& view, const Limits& limits, Offsets offsets) noexcept {
  return sizes_of(view, limits, offsets);
}

Result<Metadata> reference_metadata(const View64& view, const Limits& limits) {
  if (auto error = validate(view, limits)) return *error;
  const Pieces p = pieces_by_definition(view);
  Metadata m;
  m.cu_chunk_seqlens.clear();
  for (const auto start : p.starts) m.cu_chunk_seqlens.push_back(static_cast<std::int32_t>(start));
  m.cu_chunk_seqlens.push_back(static_cast<std::int32_t>(view.query_start_loc.back()));
  for (const auto row : p.rows) m.seq_idx.push_back(static_cast<std::int32_t>(row));
  // Step 3: each row's last piece (the last one naming it), -1 for a row without one.
  m.last_chunk_indices.assign(view.query_start_loc.size() - 1, -1);
  for (std::size_t k = 0; k < p.rows.size(); ++k)
    m.last_chunk_indices[static_cast<std::size_t>(p.rows[k])] = static_cast<std::int32_t>(k);
  return m;
}

Result<ChunkIndices> reference_chunk_indices(const View64& view, const Limits& limits) {
  if (auto error = validate(view, limits, Offsets::cu_seqlens)) return *error;
  const Pieces p = pieces_by_definition(view);
  ChunkIndices c;
  for (const auto start : p.starts) {
    c.chunk_indices.push_back(static_cast<std::int32_t>(start / view.chunk_size));
    c.chunk_offsets.push_back(static_cast<std::int32_t>(start % view.chunk_size));
  }
  return c;
}

Result<Metadata> metadata(const View64& view, const Limits& limits) { return allocated_metadata(view, limits); }
Result<Metadata> metadata(const View32& view, const Limits& limits) { return allocated_metadata(view, limits); }
Result<ChunkIndices> chunk_indices(const View64& view, const Limits& limits) { return allocated_chunk_indices(view, limits); }
Result<ChunkIndices> chunk_indices(const View32& view, const Limits& limits) { return allocated_chunk_indices(view, limits); }

Result<Sizes> metadata_into(const View64& view, const MetadataBuffers& out, const Limits& limits) noexcept {
  return write_metadata(view, out, limits);
}
Result<Sizes> metadata_into(const View32& view, const MetadataBuffers& out, const Limits& limits) noexcept {
  return write_metadata(view, out, limits);
}
Result<Sizes> chunk_indices_into(const View64& view, const ChunkIndicesBuffers& out, const Limits& limits) noexcept {
  return write_chunk_indices(view, out, limits);
}
Result<Sizes> chunk_indices_into(const View32& view, const ChunkIndicesBuffers& out, const Limits& limits) noexcept {
  return write_chunk_indices(view, out, limits);
}

}  // namespace chunkmeta::packed_grid
