// Mamba's chunk metadata also cut at internal prefill checkpoints
// (specs/mamba_checkpointed_chunks): validation, the contract's definition
// ported step by step (a row's cut points gathered and sorted), and the fast
// writer that chunks each row as Mamba's one or two rows in closed form.
// 64-bit arithmetic throughout.
#include "chunkmeta/checkpointed_chunks.hpp"

#include <algorithm>
#include <vector>

#include "checked_sizes.hpp"
#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta::checkpointed_chunks {
namespace {

constexpr std::string_view kCheckpointOffsets = "checkpoint_offsets";

// Mamba's chunks of a row with `computed` tokens before it and `tokens` new
// ones: the realigning chunk when `computed` is off the grid (emitted even
// without tokens), then the body, C at a time.
struct Piece {
  std::int64_t head = 0;         // 1 when computed is off the grid
  std::int64_t head_tokens = 0;  // the realigning chunk's length
  std::int64_t chunks = 0;
};
Piece piece(std::int64_t computed, std::int64_t tokens, std::int64_t C) noexcept {
  Piece p;
  const std::int64_t off_grid = computed % C;
  p.head = off_grid != 0 ? 1 : 0;
  p.head_tokens = p.head == 1 ? std::min(C - off_grid, tokens) : 0;
  const std::int64_t body_tokens = tokens - p.head_tokens;
  p.chunks = p.head + body_tokens / C + (body_tokens % C != 0 ? 1 : 0);
  return p;
}

// A row: Mamba's one row, or its two around the checkpoint.
struct Row {
  std::int64_t computed = 0;
  std::int64_t tokens = 0;
  std::int64_t offset = 0;  // 0: no checkpoint
  Piece first;              // (computed, offset) with a checkpoint, else the whole row
  Piece second;             // (computed + offset, tokens - offset), with a checkpoint
  std::int64_t chunks() const noexcept { return first.chunks + (offset > 0 ? second.chunks : 0); }
};

template <typename Int>
Row row_of(const BasicView<Int>& view, std::size_t i) noexcept {
  Row row;
  row.computed = view.num_computed_tokens[i];
  row.tokens = std::int64_t{view.query_start_loc[i + 1]} - std::int64_t{view.query_start_loc[i]};
  row.offset = view.checkpoint_offsets[i];
  if (row.offset > 0) {
    row.first = piece(row.computed, row.offset, view.chunk_size);
    row.second = piece(row.computed + row.offset, row.tokens - row.offset, view.chunk_size);
  } else {
    row.first = piece(row.computed, row.tokens, view.chunk_size);
  }
  return row;
}

template <typename Int>
std::optional<Error> check_offsets(const BasicView<Int>& view) noexcept {
  const auto rows = static_cast<std::int64_t>(view.num_computed_tokens.size());
  const auto given = static_cast<std::int64_t>(view.checkpoint_offsets.size());
  if (given != rows) return Error{ErrorCode::length_mismatch, kCheckpointOffsets, std::min(given, rows), given, rows};
  for (std::size_t i = 0; i < view.checkpoint_offsets.size(); ++i) {
    const std::int64_t o = view.checkpoint_offsets[i];
    const auto at = static_cast<std::int64_t>(i);
    if (o < 0) return Error{ErrorCode::negative_value, kCheckpointOffsets, at, o, 0};
    const std::int64_t n = std::int64_t{view.query_start_loc[i + 1]} - std::int64_t{view.query_start_loc[i]};
    if (o > 0 && o >= n) return Error{ErrorCode::value_too_large, kCheckpointOffsets, at, o, n - 1};
  }
  return std::nullopt;
}

template <typename Int>
Result<Sizes> sizes_of(const BasicView<Int>& view, const Limits& limits) noexcept {
  // Mamba's domain without its cap, then the offsets, then the cap on every chunk: a rule is named before a limit.
  Limits uncapped;
  uncapped.max_chunks = Limits::kMaxChunksCap;
  if (auto error = chunkmeta::validate(detail::mamba_workload_of(view), uncapped)) return *error;
  if (auto error = check_offsets(view)) return *error;
  std::int64_t chunks = 0;
  for (std::size_t i = 0; i < view.num_computed_tokens.size(); ++i) chunks += row_of(view, i).chunks();
  const std::int64_t cap = detail::chunk_cap(limits);
  if (chunks > cap) return detail::output_too_large(chunks, cap);
  const auto rows = static_cast<std::int64_t>(view.num_computed_tokens.size());
  return Sizes{OutputSizes{chunks + 1, chunks, rows}, rows};
}

std::optional<Error> short_buffer(const Buffers& out, const Sizes& sizes) noexcept {
  const std::pair<std::string_view, std::pair<std::span<std::int32_t>, std::int64_t>> wanted[] = {
      {"cu_chunk_seqlen", {out.cu_chunk_seqlen, sizes.chunks.cu_chunk_seqlen}},
      {"seq_idx", {out.seq_idx, sizes.chunks.seq_idx}},
      {"last_chunk_indices", {out.last_chunk_indices, sizes.chunks.last_chunk_indices}},
      {"checkpoint_chunk_indices", {out.checkpoint_chunk_indices, sizes.checkpoints}}};
  for (const auto& [name, buffer] : wanted) {
    const auto have = static_cast<std::int64_t>(buffer.first.size());
    if (have < buffer.second) return detail::buffer_too_small(name, have, buffer.second);
  }
  return std::nullopt;
}

// Writes a piece's chunks from position `pos` (in the packed batch), as row `row`.
struct Writer {
  const Buffers& out;
  std::int64_t C;
  std::int64_t k = 0;    // chunks written
  std::int64_t pos = 0;  // packed position

  void write(const Piece& p, std::int64_t tokens, std::int64_t row) noexcept {
    std::int64_t left = tokens;
    for (std::int64_t j = 0; j < p.chunks; ++j) {
      out.cu_chunk_seqlen[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(pos);
      out.seq_idx[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(row);
      const std::int64_t length = j == 0 && p.head == 1 ? p.head_tokens : std::min(C, left);
      pos += length;
      left -= length;
      ++k;
    }
  }
};

template <typename Int>
Result<Sizes> write_chunks(const BasicView<Int>& view, const Buffers& out, const Limits& limits) noexcept {
  auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  if (auto error = short_buffer(out, sizes.value())) return *error;
  Writer writer{out, view.chunk_size};
  for (std::size_t i = 0; i < view.num_computed_tokens.size(); ++i) {
    const Row row = row_of(view, i);
    const auto r = static_cast<std::int64_t>(i);
    if (row.offset > 0) {
      writer.write(row.first, row.offset, r);
      out.checkpoint_chunk_indices[i] = static_cast<std::int32_t>(writer.k - 1);
      writer.write(row.second, row.tokens - row.offset, r);
    } else {
      writer.write(row.first, row.tokens, r);
      out.checkpoint_chunk_indices[i] = -1;
    }
    out.last_chunk_indices[i] = static_cast<std::int32_t>(writer.k - 1);
  }
  out.cu_chunk_seqlen[static_cast<std::size_t>(writer.k)] = static_cast<std::int32_t>(writer.pos);
  return sizes;
}

Buffers buffers_of(Chunks& c) noexcept {
  return {c.cu_chunk_seqlen, c.seq_idx, c.last_chunk_indices, c.checkpoint_chunk_indices};
}

template <typename Int>
Result<Chunks> allocated(const BasicView<Int>& view, const Limits& limits) {
  auto sizes = sizes_of(view, limits);
  if (!sizes.ok()) return sizes.error();
  Chunks result;
  result.cu_chunk_seqlen.resize(static_cast<std::size_t>(sizes.value().chunks.cu_chunk_seqlen));
  result.seq_idx.resize(static_cast<std::size_t>(sizes.value().chunks.seq_idx));
  result.last_chunk_indices.resize(static_cast<std::size_t>(sizes.value().chunks.last_chunk_indices));
  result.checkpoint_chunk_indices.resize(static_cast<std::size_t>(sizes.value().checkpoints));
  auto written = write_chunks(view, buffers_of(result), limits);
  if (!written.ok()) return written.error();
  return result;
}

}  // namespace

std::optional<Error> validate(const View64& view, const Limits& limits) noexcept {
  return detail::error_of(sizes_of(view, limits));
}
std::optional<Error> validate(const View32& view, const Limits& limits) noexcept {
  return detail::error_of(sizes_of(view, limits));
}

Result<Sizes> output_sizes(const View64& view, const Limits& limits) noexcept { return sizes_of(view, limits); }
Result<Sizes> output_sizes(const View32& view, const Limits& limits) noexcept { return sizes_of(view, limits); }

Result<Sizes> max_output_sizes(std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size) noexcept {
  const auto mamba = chunkmeta::max_output_sizes(max_tokens, max_rows, chunk_size);
  if (!mamba.ok()) return mamba.error();
  OutputSizes sizes = mamba.value();
  sizes.cu_chunk_seqlen += max_rows;
  sizes.seq_idx += max_rows;
  return Sizes{sizes, max_rows};
}

Result<Chunks> reference(const View64& view, const Limits& limits) {
  if (auto error = validate(view, limits)) return *error;
  const std::int64_t C = view.chunk_size;
  Chunks result;
  result.cu_chunk_seqlen.clear();
  std::int64_t pos = 0;
  std::vector<std::int64_t> cuts;    // each row's, reused: the oracle runs on every case of the suite
  std::vector<std::int64_t> starts;
  for (std::size_t i = 0; i < view.num_computed_tokens.size(); ++i) {
    const std::int64_t c = view.num_computed_tokens[i];
    const std::int64_t n = view.query_start_loc[i + 1] - view.query_start_loc[i];
    const std::int64_t o = view.checkpoint_offsets[i];
    // Step 1: the row's cut points inside (c, c + n), in order and once each: every multiple of C, and
    // the checkpoint c + o (inserted in its place among them).
    cuts.clear();
    for (std::int64_t m = (c / C + 1) * C; m < c + n; m += C) cuts.push_back(m);
    if (o > 0) cuts.insert(std::upper_bound(cuts.begin(), cuts.end(), c + o), c + o);
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    // Step 2: the pieces between c, the cuts and c + n; a row without new tokens off the grid keeps
    // Mamba's empty realigning chunk.
    starts.clear();
    if (n == 0) {
      if (c % C != 0) starts.push_back(c);
    } else {
      starts.push_back(c);
      starts.insert(starts.end(), cuts.begin(), cuts.end());
    }
    // Step 3: emit them, each at its packed position, and the checkpoint's chunk: the one ending at c + o.
    std::int32_t checkpoint = -1;
    for (std::size_t j = 0; j < starts.size(); ++j) {
      const std::int64_t end = j + 1 < starts.size() ? starts[j + 1] : c + n;
      result.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(pos + (starts[j] - c)));
      result.seq_idx.push_back(static_cast<std::int32_t>(i));
      if (o > 0 && end == c + o) checkpoint = static_cast<std::int32_t>(result.seq_idx.size() - 1);
    }
    pos += n;
    result.last_chunk_indices.push_back(static_cast<std::int32_t>(result.seq_idx.size()) - 1);
    result.checkpoint_chunk_indices.push_back(checkpoint);
  }
  result.cu_chunk_seqlen.push_back(static_cast<std::int32_t>(pos));
  return result;
}

Result<Chunks> chunks(const View64& view, const Limits& limits) { return allocated(view, limits); }
Result<Chunks> chunks(const View32& view, const Limits& limits) { return allocated(view, limits); }

Result<Sizes> chunks_into(const View64& view, const Buffers& out, const Limits& limits) noexcept {
  return write_chunks(view, out, limits);
}
Result<Sizes> chunks_into(const View32& view, const Buffers& out, const Limits& limits) noexcept {
  return write_chunks(view, out, limits);
}

}  // namespace chunkmeta::checkpointed_chunks
